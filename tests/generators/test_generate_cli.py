"""`rspwb generate` (docs/design/CLI.md contract) run in-process through ``rsp_workbench.cli.main.main``."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rsp_workbench.cli.main import main
from rsp_workbench.generators import sg1

CONTRACT = ["--generator", "sg1", "--param", "stations=50", "--param", "interval=1s",
            "--param", "duration=30s", "--param", "seed=1430236906"]


def reference(**params) -> bytes:
    return "".join(sg1.reference_text(params)).encode("utf-8")


def test_contract_writes_what_yabench_writes(tmp_path: Path, capsys) -> None:
    out = tmp_path / "s.stream"
    assert main(["generate", *CONTRACT, "--format", "yabench", "--out", str(out)]) == 0
    assert out.read_bytes() == reference(stations=50, interval="1s", duration="30s", seed=1430236906)
    err = capsys.readouterr().err
    assert "10,500 elements (triples)" in err and "1,500 observations" in err and "triples/s" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.stream"]


def test_legacy_and_temperature_range(tmp_path: Path) -> None:
    out = tmp_path / "legacy.stream"
    args = [*CONTRACT, "--param", "legacy_v110=true", "--param", "min_temp=-10", "--param", "max_temp=40"]
    assert main(["generate", *args, "--format", "yabench", "--out", str(out), "--quiet"]) == 0
    expected = reference(stations=50, interval="1s", duration="30s", seed=1430236906, legacy_v110=True,
                         min_temp=-10, max_temp=40)
    assert out.read_bytes() == expected
    assert expected != reference(stations=50, interval="1s", duration="30s", seed=1430236906, min_temp=-10, max_temp=40)


def test_negative_and_min_long_seeds(tmp_path: Path) -> None:
    for seed in ("-5", "-9223372036854775808"):
        out = tmp_path / f"s{seed}.stream"
        args = ["generate", "--generator", "sg1", "--param", "stations=3", "--param", "duration=5s",
                "--param", "interval=1s", "--param", f"seed={seed}", "--out", str(out), "--quiet"]
        assert main(args) == 0
        assert out.read_bytes() == reference(stations=3, duration="5s", interval="1s", seed=int(seed))


def test_json_and_format_from_extension(tmp_path: Path, capsys) -> None:
    out = tmp_path / "s.parquet"
    assert main(["generate", *CONTRACT, "--out", str(out), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["format"] == "parquet" and payload["triples"] == 10500 and payload["items"] == 1500
    assert pq.read_table(out).num_rows == 10500
    nq = tmp_path / "s.nq"
    assert main(["generate", *CONTRACT, "--out", str(nq), "--quiet"]) == 0
    assert nq.read_text(encoding="utf-8").splitlines()[0].endswith("<urn:rspwb:t:0> .")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--generator", "sg9"], "unknown generator 'sg9'"),
        (["--generator", "sg1", "--param", "stations=0", "--param", "duration=1s"], "param stations"),
        (["--generator", "sg1", "--param", "interval=-1s", "--param", "duration=1s"], "param interval"),
        (["--generator", "sg1", "--param", "max_temp=0", "--param", "duration=1s"], "param max_temp"),
        (["--generator", "sg1", "--param", "speed=3", "--param", "duration=1s"], "param speed"),
        (["--generator", "sg1", "--param", "duration"], "--param"),
        (["--generator", "sg1"], "param duration"),
        ([], "--generator"),
    ],
)
def test_user_errors_exit_2_naming_the_parameter(tmp_path: Path, capsys, args: list[str], message: str) -> None:
    out = tmp_path / "x.stream"
    assert main(["generate", *args, "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_bad_format_exits_2(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["generate", *CONTRACT, "--format", "csv", "--out", str(tmp_path / "x")])
    assert info.value.code == 2
    assert "--format" in capsys.readouterr().err


def test_experiment_form(tmp_path: Path) -> None:
    experiment = tmp_path / "e.yaml"
    experiment.write_text(
        """\
name: sg1-small
seed: 1430236906
engines:
  - id: secret
    type: secret
queries:
  - id: q1
    text: |
      REGISTER RSTREAM <http://ex.org/out> AS
      SELECT ?s FROM NAMED WINDOW <http://ex.org/w> ON <http://ex.org/s> [RANGE PT5S STEP PT1S]
      WHERE { WINDOW <http://ex.org/w> { ?s ?p ?o } }
stream:
  generator: sg1
  params:
    stations: 50
    interval: 1s
    duration: 30s
""",
        encoding="utf-8",
    )
    out = tmp_path / "s.stream"
    assert main(["generate", str(experiment), "--out", str(out), "--quiet"]) == 0
    # the experiment seed fills the generator's unset seed (repetition 0)
    assert out.read_bytes() == reference(stations=50, interval="1s", duration="30s", seed=1430236906)
    assert main(["generate", str(experiment), "--generator", "sg1", "--out", str(out)]) == 2


def test_experiment_flow_shape_retimes_the_generated_triples(tmp_path: Path) -> None:
    """A flow shape in the experiment cuts the generator's triples into stimuli (Heaven)."""
    experiment = tmp_path / "e.yaml"
    experiment.write_text(
        "name: shaped\n"
        "spark: {master: 'local[1]'}\n"
        "stream:\n"
        "  generator: chain-join\n"
        "  params: {duration: 2s, rate: 200, seed: 3}\n"
        "  flow: {shape: step, initial: 10, step: 5, every: 2, period: 100ms, stimuli: 6}\n"
        "queries: [{id: q, text: 'SELECT * WHERE { ?s ?p ?o }'}]\n"
        "engines: [{id: e, type: secret, preset: cqels}]\n"
    )
    from rsp_workbench.experiment import load_experiment

    assert load_experiment(experiment).spark_master == "local[1]"
    out = tmp_path / "shaped.nq"
    # the flow forces the local path, so the master is recorded but no JVM starts
    assert main(["generate", str(experiment), "--out", str(out), "--local", "--quiet"]) == 0
    from collections import Counter

    from rsp_workbench.streams.readers import read_stream

    sizes = Counter(element.t for element in read_stream(out, "nquads"))
    assert sorted(sizes.items()) == [(0, 10), (100, 10), (200, 15), (300, 15), (400, 20), (500, 20)]


def test_source_replay_merge_forms(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Heaven's streamer over any RDF file; replay at another rate; merging streams."""
    from collections import Counter

    from rsp_workbench.streams.readers import read_stream

    data = tmp_path / "data.ttl"
    data.write_text("@prefix ex: <http://ex.org/> .\n" + "".join(f"ex:s{i} ex:p ex:o{i} .\n" for i in range(5)))
    shaped, replayed, merged = tmp_path / "shaped.nq", tmp_path / "replay.stream", tmp_path / "merged.parquet"
    assert main(["generate", "--source", str(data), "--flow-param", "shape=constant", "--flow-param", "size=2",
                 "--flow-param", "period=1s", "--out", str(shaped)]) == 0
    assert sorted(Counter(e.t for e in read_stream(shaped, "nquads")).items()) == [(0, 2), (1000, 2), (2000, 1)]
    assert main(["generate", "--replay", str(shaped), "--speed", "2", "--out", str(replayed)]) == 0
    assert [e.t for e in read_stream(replayed, "yabench")] == [0, 0, 500, 500, 1000]
    assert main(["generate", "--merge", str(shaped), "--merge", str(replayed), "--out", str(merged)]) == 0
    assert [e.t for e in read_stream(merged, "parquet")] == [0, 0, 0, 0, 500, 500, 1000, 1000, 1000, 2000]
    capsys.readouterr()
    assert main(["generate", "--replay", str(data), "--speed", "2", "--out", str(tmp_path / "x")]) == 2
    assert "--replay: not a stream" in capsys.readouterr().err
    assert main(["generate", "--source", str(data), "--out", str(tmp_path / "y")]) == 2
    assert "--flow-param" in capsys.readouterr().err
    assert main(["generate", "--replay", str(shaped), "--speed", "0", "--out", str(tmp_path / "z")]) == 2
    assert "--speed: must be positive" in capsys.readouterr().err


def test_generator_with_flow_param(tmp_path: Path) -> None:
    from collections import Counter

    from rsp_workbench.streams.readers import read_stream

    out = tmp_path / "f.stream"
    assert main(["generate", "--generator", "sg1", "--param", "stations=2", "--param", "duration=3s",
                 "--param", "interval=1s", "--flow-param", "shape=step", "--flow-param", "initial=3",
                 "--flow-param", "step=1", "--flow-param", "every=1", "--flow-param", "period=500ms",
                 "--out", str(out), "--quiet"]) == 0
    assert sorted(Counter(e.t for e in read_stream(out, "yabench")).items()) == [
        (0, 3), (500, 4), (1000, 5), (1500, 6), (2000, 7), (2500, 8), (3000, 9),
    ]


def test_experiment_with_several_streams_needs_stream(tmp_path: Path, capsys) -> None:
    """`streams:` experiments: --stream IRI picks one (with the seed `rspwb run` derives for that IRI);
    without it an experiment that declares several is an error listing their IRIs."""
    from rsp_workbench.experiment.runs import derive_stream_seed

    (tmp_path / "rec.nq").write_text('<http://ex.org/a> <http://ex.org/p> "1" <urn:rspwb:t:0> .\n', encoding="utf-8")
    experiment = tmp_path / "e.yaml"
    experiment.write_text(
        "name: two\nseed: 7\n"
        "streams:\n"
        "  http://ex.org/S_a: {generator: sg1, params: {stations: 3, interval: 1s, duration: 5s}}\n"
        "  http://ex.org/S_b: {generator: sg1, params: {stations: 4, interval: 1s, duration: 5s}}\n"
        "  http://ex.org/S_rec: {file: rec.nq}\n"
        "queries: [{id: q, text: 'SELECT * WHERE { ?s ?p ?o }'}]\n"
        "engines: [{id: e, type: secret}]\n",
        encoding="utf-8",
    )
    out = tmp_path / "s.stream"
    assert main(["generate", str(experiment), "--out", str(out), "--local"]) == 2
    err = capsys.readouterr().err
    assert f"{experiment}: --stream: the experiment declares 3 streams; choose one with --stream IRI: " \
           "<http://ex.org/S_a>, <http://ex.org/S_b>, <http://ex.org/S_rec>" in err
    assert not out.exists()
    for form in (["--experiment", str(experiment)], [str(experiment)]):  # the second replaces the first's file
        assert main(["generate", *form, "--stream", "<http://ex.org/S_b>", "--out", str(out), "--local", "--quiet",
                     "--force"]) == 0
        assert out.read_bytes() == reference(stations=4, interval="1s", duration="5s",
                                             seed=derive_stream_seed(7, "http://ex.org/S_b"))
    assert main(["generate", str(experiment), "--stream", "http://ex.org/S_z", "--out", str(out)]) == 2
    assert "declares no stream <http://ex.org/S_z>; it declares <http://ex.org/S_a>" in capsys.readouterr().err
    assert main(["generate", str(experiment), "--stream", "http://ex.org/S_rec", "--out", str(out)]) == 2
    assert "streams.http://ex.org/S_rec: the experiment reads <http://ex.org/S_rec> from a recorded file" in capsys.readouterr().err
    assert main(["generate", "--generator", "sg1", "--stream", "http://ex.org/S_a", "--out", str(out)]) == 2
    assert "--stream" in capsys.readouterr().err


def test_stream_option_on_a_single_stream_experiment(tmp_path: Path, capsys) -> None:
    experiment = tmp_path / "e.yaml"
    experiment.write_text(
        "name: one\nstream: {generator: sg1, params: {stations: 2, interval: 1s, duration: 2s, seed: 5}}\n"
        "queries: [{id: q, text: 'SELECT * WHERE { ?s ?p ?o }'}]\nengines: [{id: e, type: secret}]\n",
        encoding="utf-8",
    )
    out = tmp_path / "s.stream"
    assert main(["generate", "--experiment", str(experiment), "--out", str(out), "--local", "--quiet"]) == 0
    assert out.read_bytes() == reference(stations=2, interval="1s", duration="2s", seed=5)
    assert main(["generate", str(experiment), "--stream", "http://ex.org/s", "--out", str(out)]) == 2
    assert "has a single 'stream:' (leave --stream out)" in capsys.readouterr().err
