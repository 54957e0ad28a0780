"""The bad-input catalogue: every bad input a careful user tries is a clear error.

Each case runs the real CLI in-process and asserts the exit code, exactly one line on
stderr naming the file (and line or field) at fault, no traceback, and that nothing is
left behind that looks complete. Engine faults run the real stand with a real engine
process (tests/data/engines/faulty_engine.py). Signals are in test_bad_inputs_signals.py,
reader fuzzing in test_reader_fuzz.py.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
import time
from pathlib import Path

import pytest

from tests.e2e.bad_inputs_support import (
    EX,
    PYTHON,
    ROOMS_QUERY,
    ROOMS_STREAM,
    assert_one_line,
    external_experiment,
    leftovers,
    rspwb,
    subprocess_env,
)
from rsp_workbench.streams.model import StreamElement
from tests.paths import ROOT


@pytest.fixture
def query(tmp_path: Path) -> Path:
    path = tmp_path / "rooms.rq"
    path.write_text(ROOMS_QUERY, encoding="utf-8")
    return path


@pytest.fixture
def stream(tmp_path: Path) -> Path:
    path = tmp_path / "rooms.stream"
    path.write_text(ROOMS_STREAM, encoding="utf-8")
    return path


def oracle(stream_path: Path, fmt: str, query: Path, *extra: object):
    return rspwb("oracle", "--stream", stream_path, "--stream-format", fmt, "--query", query, "--system", "csparql",
                 "--json", *extra)


# --- streams: Parquet ---------------------------------------------------------------------


def good_parquet(path: Path, n: int = 300) -> Path:
    from rsp_workbench.streams.writers import write_stream

    write_stream(path, [StreamElement(f"<{EX}m{i % 2 + 1}>", f"<{EX}detectedAt>", f"<{EX}r{i // 7}>", i * 100)
                        for i in range(n)], "parquet")
    return path


def _table(**columns: object):
    import pyarrow as pa

    base = {"subject": [f"<{EX}s>"] * 3, "predicate": [f"<{EX}p>"] * 3, "object": [f"<{EX}o>"] * 3, "t": [1, 2, 3]}
    base.update(columns)  # type: ignore[arg-type]
    return pa.table({name: value for name, value in base.items() if value is not None})


def _parquet_cases() -> list[tuple[str, object, str]]:
    import pyarrow as pa

    return [
        ("empty-file", b"", "Parquet file size is 0 bytes"),
        ("random-bytes", bytes(random.Random(1).randrange(256) for _ in range(5000)), "not a readable Parquet file"),
        ("no-subject", _table(subject=None), "subject"),
        ("other-table", pa.table({"a": [1, 2]}), "missing column"),
        ("t-as-text", _table(t=["1", "2", "3"]), "expected int64"),
        ("t-uint64", _table(t=pa.array([1, 2, 3], pa.uint64())), "expected int64"),
        ("object-null", _table(object=[f"<{EX}o>", None, f"<{EX}o>"]), "row 2: object is null"),
        ("object-not-a-term", _table(object=[f"<{EX}o>", "oops", f"<{EX}o>"]), "row 2: expected an N-Triples term"),
        ("time-backwards", _table(t=[5, 3, 4]), "row 2: time goes backwards"),
        ("subject-int", _table(subject=[1, 2, 3]), "expected string"),
    ]


@pytest.mark.parametrize("case", range(10), ids=[c[0] for c in [
    ("empty-file",), ("random-bytes",), ("no-subject",), ("other-table",), ("t-as-text",), ("t-uint64",),
    ("object-null",), ("object-not-a-term",), ("time-backwards",), ("subject-int",)]])
def test_bad_parquet_stream(tmp_path: Path, query: Path, case: int) -> None:
    import pyarrow.parquet as pq

    name, content, expected = _parquet_cases()[case]
    path = tmp_path / f"{name}.parquet"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        pq.write_table(content, path)
    assert_one_line(oracle(path, "parquet", query), 2, str(path), expected)


def test_truncated_parquet_stream(tmp_path: Path, query: Path) -> None:
    good = good_parquet(tmp_path / "good.parquet")
    path = tmp_path / "truncated.parquet"
    path.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    assert_one_line(oracle(path, "parquet", query), 2, str(path), "not a readable Parquet file")


@pytest.mark.parametrize("seed", range(8))
def test_bit_flipped_parquet_stream_names_the_file(tmp_path: Path, query: Path, seed: int) -> None:
    """Flips in the footer, the page headers or the data: an error naming the file, never a traceback
    (the workbench writes page checksums, so flipped data is detected too)."""
    data = bytearray(good_parquet(tmp_path / "good.parquet").read_bytes())
    rng = random.Random(seed)
    for _ in range(3):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    path = tmp_path / "flipped.parquet"
    path.write_bytes(bytes(data))
    outcome = oracle(path, "parquet", query)
    if outcome.code == 0:  # a flip in unused footer metadata: the stream reads as it was
        assert "Traceback" not in outcome.err
    else:
        assert_one_line(outcome, 2, str(path))


# --- streams: text formats ----------------------------------------------------------------

HUGE = "99999999999999999999999"


@pytest.mark.parametrize(
    ("name", "fmt", "text", "expected"),
    [
        ("beyond-int64.stream", "yabench", f'<{EX}a> <{EX}p> <{EX}b> "{HUGE}" .\n', ":1: time 999"),
        ("below-int64.stream", "yabench", f'<{EX}a> <{EX}p> <{EX}b> "-{HUGE}" .\n', ":1: time -999"),
        ("int64-max-plus-one.stream", "yabench", f'<{EX}a> <{EX}p> <{EX}b> "{2**63}" .\n', "int64"),
        ("garbage.stream", "yabench", ROOMS_STREAM + "this is not a statement\n", ":6:"),
        ("backwards.stream", "yabench", ROOMS_STREAM + f'<{EX}a> <{EX}p> <{EX}b> "5" .\n', ":6: time goes backwards"),
        ("bad-iri.stream", "yabench", f'<{EX}a b> <{EX}p> <{EX}b> "5" .\n', ":1:"),
        ("beyond-int64.nq", "nquads", f"<{EX}a> <{EX}p> <{EX}b> <urn:rspwb:t:{HUGE}> .\n", ":1: time 999"),
        ("timestamp-beyond-int64.nq", "nquads",
         f'<{EX}a> <{EX}p> <{EX}b> <{EX}g1> .\n<{EX}g1> <{EX}meta#hasTimestamp> "{HUGE}" .\n', ":2: time 999"),
        ("garbage.nq", "nquads", f"<{EX}a> <{EX}p> <{EX}b> <urn:rspwb:t:5> .\nnonsense\n", ":2:"),
        ("no-timestamps.nq", "nquads", f"<{EX}a> <{EX}p> <{EX}b> .\n", "no timestamped graphs"),
        ("other-graph.nq", "nquads",
         f"<{EX}a> <{EX}p> <{EX}b> <urn:rspwb:t:5> .\n<{EX}a> <{EX}p> <{EX}b> <{EX}g> .\n", ":2:"),
    ],
)
def test_bad_text_stream(tmp_path: Path, query: Path, name: str, fmt: str, text: str, expected: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert_one_line(oracle(path, fmt, query), 2, str(path), expected)


RELATIVE = "<rooms/r1>"


@pytest.mark.parametrize(("name", "fmt", "line", "token"), [
    ("subject.stream", "yabench", f'{RELATIVE} <{EX}detectedAt> <{EX}r1> "5" .\n', RELATIVE),
    ("predicate.stream", "yabench", f'<{EX}m1> <detectedAt> <{EX}r1> "5" .\n', "<detectedAt>"),
    ("object.stream", "yabench", f'<{EX}m1> <{EX}detectedAt> {RELATIVE} "5" .\n', RELATIVE),
    ("datatype.stream", "yabench", f'<{EX}m1> <{EX}detectedAt> "1"^^<int> "5" .\n', "<int>"),
    ("quirk.stream", "yabench", f'<{EX}m1> <{EX}detectedAt> 76.0^^<float> "5" .\n', "<float>"),
    ("spaced.stream", "yabench", f'<{EX}m1>\t<{EX}detectedAt>  {RELATIVE} "5" .\n', RELATIVE),
    ("object.nq", "nquads", f"<{EX}m1> <{EX}detectedAt> {RELATIVE} <urn:rspwb:t:5> .\n", RELATIVE),
    ("graph.nq", "nquads", f"<{EX}m1> <{EX}detectedAt> <{EX}r1> <g1> .\n<g1> <{EX}hasTimestamp> \"5\" .\n", "<g1>"),
])
@pytest.mark.parametrize("method", ["fast", "reference"])
def test_a_relative_iri_in_a_stream_is_refused(tmp_path: Path, query: Path, name: str, fmt: str, line: str,
                                               token: str, method: str) -> None:
    """N-Triples and N-Quads have no relative IRIs: each reader (the columnar one of the oracle's fast
    path and the Python ones) refuses one at its line, naming the token, after good lines."""
    path = tmp_path / name
    path.write_text((ROOMS_STREAM if fmt == "yabench" else "") + line.replace('"5"', '"30000"'), encoding="utf-8")
    number = 6 if fmt == "yabench" else 1
    text = assert_one_line(oracle(path, fmt, query, "--method", method), 2, f"{path}:{number}",
                           f"relative IRI '{token}'")
    assert "absolute" in text


def test_a_relative_iri_in_a_parquet_stream_is_refused(tmp_path: Path, query: Path) -> None:
    import pyarrow.parquet as pq

    for column, values in (("subject", ["<s>"] * 3), ("predicate", [f"<{EX}p>", f"<{EX}p>", "<p>"]),
                           ("object", [f"<{EX}o>", "<o>", f"<{EX}o>"])):
        path = tmp_path / f"{column}.parquet"
        pq.write_table(_table(**{column: values}), path)
        row = next(index for index, value in enumerate(values) if "ex.org" not in value) + 1
        for method in ("fast", "reference"):
            assert_one_line(oracle(path, "parquet", query, "--method", method), 2, str(path), f"row {row}",
                            f"relative IRI in {column}")


def test_stream_not_utf8(tmp_path: Path, query: Path) -> None:
    path = tmp_path / "latin1.stream"
    path.write_bytes(ROOMS_STREAM.encode() + '<http://ex.org/é> <http://ex.org/p> <http://ex.org/b> "30000" .\n'.encode("latin-1"))
    assert_one_line(oracle(path, "yabench", query), 2, str(path), "UTF-8")


def test_stream_of_random_bytes(tmp_path: Path, query: Path) -> None:
    path = tmp_path / "noise.stream"
    path.write_bytes(bytes(random.Random(7).randrange(256) for _ in range(4000)))
    assert_one_line(oracle(path, "yabench", query), 2, str(path))


def test_corrupt_gzip_stream(tmp_path: Path, query: Path) -> None:
    path = tmp_path / "s.stream.gz"
    data = gzip.compress(ROOMS_STREAM.encode() * 50)
    path.write_bytes(data[: len(data) // 2])
    assert_one_line(oracle(path, "yabench", query), 2, str(path))


def test_missing_stream(tmp_path: Path, query: Path) -> None:
    assert_one_line(oracle(tmp_path / "nowhere.stream", "yabench", query), 2, "nowhere.stream", "--stream")


def test_csrbench_directory_with_time_beyond_int64(tmp_path: Path, query: Path) -> None:
    folder = tmp_path / "stream"
    folder.mkdir()
    (folder / f"data_{HUGE}.ttl").write_text(f"<{EX}a> <{EX}p> <{EX}b> .\n", encoding="utf-8")
    assert_one_line(oracle(folder, "csrbench-dir", query), 2, f"data_{HUGE}.ttl", "int64")


def test_csrbench_directory_without_data(tmp_path: Path, query: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    assert_one_line(oracle(folder, "csrbench-dir", query), 2, str(folder), "no data_NN.ttl")


def test_csrbench_directory_with_bad_turtle(tmp_path: Path, query: Path) -> None:
    folder = tmp_path / "stream"
    folder.mkdir()
    (folder / "data_1.ttl").write_text(f"<{EX}a> <{EX}p> .\n", encoding="utf-8")
    assert_one_line(oracle(folder, "csrbench-dir", query), 2, "data_1.ttl")


def test_empty_streams_are_empty_in_every_format(tmp_path: Path, query: Path) -> None:
    """An empty YABench file and an empty N-Quads file are the same thing: an empty stream."""
    for name, fmt in (("e.stream", "yabench"), ("e.nq", "nquads")):
        path = tmp_path / name
        path.write_text("", encoding="utf-8")
        outcome = oracle(path, fmt, query)
        assert outcome.code == 0 and outcome.err == "", outcome.err
        assert json.loads(outcome.out)["windows"] == json.loads(oracle(tmp_path / "e.stream", "yabench", query).out)["windows"]


@pytest.mark.parametrize("method", ["fast", "reference", "auto"])
def test_on_disorder_warn_sorts_by_time(tmp_path: Path, query: Path, method: str) -> None:
    lines = ROOMS_STREAM.splitlines(keepends=True)
    disordered = tmp_path / "disordered.stream"
    disordered.write_text("".join([lines[1], lines[0], *lines[2:]]), encoding="utf-8")
    outcome = oracle(disordered, "yabench", query, "--on-disorder", "warn", "--method", method)
    line = assert_one_line(outcome, 0, f"{disordered}:2", "time goes backwards once", "sorts them by time")
    assert line.startswith("rspwb: warning:")
    ordered = tmp_path / "ordered.stream"
    ordered.write_text(ROOMS_STREAM, encoding="utf-8")
    expected = oracle(ordered, "yabench", query, "--method", method)
    assert json.loads(outcome.out)["windows"] == json.loads(expected.out)["windows"]


# --- engine outputs (rspwb check) ------------------------------------------------------------


def check(stream_path: Path, query: Path, output: Path, fmt: str):
    return rspwb("check", "--stream", stream_path, "--stream-format", "yabench", "--query", query,
                 "--system", "csparql", "--engine-output", output, "--engine-output-format", fmt, "--json")


def _relation(value: object, t: object = 10000) -> str:
    return json.dumps({"relations": [{"head": {"vars": ["room"]}, "timestamp": t,
                                      "results": {"bindings": [{"binding": {"room": value}}]}}]})


@pytest.mark.parametrize(
    ("name", "fmt", "content", "expected"),
    [
        ("deep.json", "csrbench-json", "[" * 100_000 + "]" * 100_000, "nested more than"),
        ("truncated.json", "csrbench-json", _relation({"type": "uri", "value": f"{EX}r1"})[:-3], "not JSON"),
        ("list-of-numbers.json", "csrbench-json", "[1, 2, 3]", "relations[0]"),
        ("no-relations.json", "csrbench-json", '{"answers": []}', "relations"),
        ("time-1e30.json", "csrbench-json", _relation({"type": "uri", "value": f"{EX}r1"}, 10**30), "int64"),
        ("time-text.json", "csrbench-json", _relation({"type": "uri", "value": f"{EX}r1"}, "soon"), "timestamp"),
        ("bad-term.json", "csrbench-json", _relation({"type": "triple", "value": "x"}), "relations[0]"),
        ("wrong-field.jsonl", "jsonl", '{"bindings": {"room": "<http://ex.org/r1>"}, "application_time": 10000}\n',
         ":1: bindings: unknown field 'bindings'; did you mean 'binding'?"),
        ("no-binding.jsonl", "jsonl", '{"application_time": 10000, "operation": "="}\n', ":1: binding: missing field"),
        ("deep.jsonl", "jsonl", "[" * 100_000 + "]" * 100_000 + "\n", ":1: JSON nested"),
        ("bad-term.jsonl", "jsonl", '{"application_time": 10000, "binding": {"room": "r1"}}\n', ":1: binding.room"),
        ("time-1e30.jsonl", "jsonl", '{"application_time": 1e30, "binding": null}\n', ":1: application_time"),
        ("array-line.jsonl", "jsonl", "[1]\n", ":1: expected a JSON object"),
        ("header-typo.jsonl", "jsonl", '{"record": "header", "varables": ["room"]}\n', ":1: varables"),
        ("qr-garbage", "yabench-qr", "10000\n<unterminated\n", "does not project"),
    ],
)
def test_bad_engine_output(tmp_path: Path, query: Path, stream: Path, name: str, fmt: str, content: str,
                           expected: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    assert_one_line(check(stream, query, path, fmt), 2, str(path), expected)


def test_engine_output_not_utf8(tmp_path: Path, query: Path, stream: Path) -> None:
    path = tmp_path / "answer.json"
    path.write_bytes(b'{"relations": ["\xff\xfe"]}')
    assert_one_line(check(stream, query, path, "csrbench-json"), 2, str(path), "UTF-8")


def test_missing_engine_output(tmp_path: Path, query: Path, stream: Path) -> None:
    assert_one_line(check(stream, query, tmp_path / "none.json", "csrbench-json"), 2, "none.json", "--engine-output")


# --- result bundles (rspwb report) ----------------------------------------------------------


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real finished bundle of the teaching experiment (three engine runs)."""
    out = tmp_path_factory.mktemp("bundle") / "rooms"
    outcome = rspwb("run", ROOT / "sample_experiments" / "teaching" / "rooms.yaml",
                    "--out", out, "--quiet")
    assert outcome.code == 0, outcome.err
    return out


@pytest.fixture
def copy(bundle: Path, tmp_path: Path) -> Path:
    target = tmp_path / "bundle"
    shutil.copytree(bundle, target)
    return target


@pytest.mark.slow
def test_finished_bundle_records_each_run_status(bundle: Path) -> None:
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["status"] == "ok" and [run["status"] for run in manifest["runs"]] == ["ok", "ok", "ok"]
    for run in manifest["runs"]:
        record = json.loads((bundle / "runs" / run["run_id"] / "run.json").read_text())
        assert record["folder"] == str(bundle / "runs" / run["run_id"])  # not the .partial it was written in
    assert leftovers(bundle) == []


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        pytest.param("random-bytes", bytes(random.Random(3).randrange(256) for _ in range(3000)), "not valid JSON",
                     id="random-bytes"),
        ("array", b"[1, 2]", "expected a JSON object, found a list"),
        ("deep", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        ("truncated", b'{"name": "x", "runs": [', "not valid JSON"),
        ("runs-not-a-list", b'{"name": "x", "runs": 5}', "runs: expected a list"),
        ("runs-of-strings", b'{"name": "x", "runs": ["a"]}', "runs: expected a list"),
    ],
)
def test_bad_manifest(copy: Path, name: str, content: bytes, expected: str) -> None:
    (copy / "manifest.json").write_bytes(content)
    assert_one_line(rspwb("report", copy), 2, str(copy / "manifest.json"), expected)


def test_manifest_is_a_directory(copy: Path) -> None:
    (copy / "manifest.json").unlink()
    (copy / "manifest.json").mkdir()
    assert_one_line(rspwb("report", copy), 2, str(copy), "no manifest.json")


@pytest.mark.parametrize(
    ("file", "content", "expected"),
    [
        ("oracle.json", '{"verdict": ', "not valid JSON"),
        ("oracle.json", "[3]", "expected a JSON object"),
        ("run.json", "\x00\x01", "not valid JSON"),
        ("run.json", "[]", "expected a JSON object"),
    ],
)
def test_crashed_bundle_with_a_damaged_run_file(copy: Path, file: str, content: str, expected: str) -> None:
    """Rebuilding a bundle whose writer stopped: the damaged run is named, the others still show."""
    (copy / "summary.json").unlink()
    run_id = json.loads((copy / "manifest.json").read_text())["runs"][1]["run_id"]
    (copy / "runs" / run_id / file).write_text(content, encoding="utf-8")
    outcome = rspwb("report", copy)
    assert_one_line(outcome, 1, "1 of 3 runs missing or damaged", str(copy / "runs" / run_id / file), expected)
    assert outcome.out.count("correct") >= 2  # the other two runs


def test_report_does_not_trust_a_stale_summary(copy: Path) -> None:
    shutil.rmtree(copy / "runs")
    outcome = rspwb("report", copy, "--json")
    assert_one_line(outcome, 1, "3 of 3 runs missing", "runs/")
    assert {row["status"] for row in json.loads(outcome.out)["runs"]} == {"missing"}


def test_report_bad_summary(copy: Path) -> None:
    (copy / "summary.json").write_bytes(b"\xff\xfe\x00")
    assert_one_line(rspwb("report", copy), 2, str(copy / "summary.json"))


@pytest.mark.parametrize("what", ["missing", "file", "foreign"])
def test_report_of_something_else(tmp_path: Path, what: str) -> None:
    target = tmp_path / what
    if what == "file":
        target.write_text("x")
    elif what == "foreign":
        target.mkdir()
        (target / "data.csv").write_text("a,b\n")
    assert_one_line(rspwb("report", target), 2, str(target))


# --- experiment files (rspwb validate: what validates also runs) -------------------------------

EXPERIMENT = """\
name: bad
seed: 0
variables: {{WSIZE: 10s{variables}}}
stream:
  generator: {generator}
  params: {{{params}}}
queries:
  - id: q
    text: |
      REGISTER QUERY q AS
      SELECT ?s
      FROM STREAM <http://s> [RANGE ${{WSIZE}} STEP 10s]
      WHERE {{ ?s ?p ?o }}
engines:
  - {{id: e, type: secret, preset: csparql}}
{extra}"""


def experiment(tmp_path: Path, *, variables: str = "", generator: str = "sg1",
               params: str = "stations: 2, interval: 1s, duration: 5s", extra: str = "", wsize: str | None = None) -> Path:
    text = EXPERIMENT.format(variables=variables, generator=generator, params=params, extra=extra)
    if wsize is not None:
        text = text.replace("WSIZE: 10s", f"WSIZE: {wsize}")
    path = tmp_path / "exp.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("wsize", "expected"),
    [
        ("-2s", "WSIZE='-2s'"),
        ("0s", "window size must be greater than 0"),
        ("1e18", "has no time unit"),
        ("1e18s", "longer than the limit"),
        ("1000000000000000000s", "longer than the limit"),
        ("'${WSIZE}'", "unfilled template variable"),
        ("ten", "RANGE needs a duration"),
        ("'10s STEP'", "exp.yaml:12"),
    ],
)
def test_window_size_variable_is_checked_at_validation(tmp_path: Path, wsize: str, expected: str) -> None:
    path = experiment(tmp_path, wsize=wsize)
    line = assert_one_line(rspwb("validate", path), 2, f"{path}:12: queries[0].text", expected)
    assert "query line 3" in line


def test_a_sweep_value_that_breaks_one_combination(tmp_path: Path) -> None:
    path = experiment(tmp_path, extra="sweep: {WSIZE: [5s, 0s]}\n")
    assert_one_line(rspwb("validate", path), 2, f"{path}:12", "WSIZE='0s'", "greater than 0")


def test_a_size_that_breaks_the_window(tmp_path: Path) -> None:
    path = experiment(tmp_path, extra="sizes:\n  smoke: {variables: {WSIZE: 0s}}\n")
    assert_one_line(rspwb("validate", path), 2, str(path), "greater than 0")


@pytest.mark.parametrize(
    ("generator", "params", "field", "expected"),
    [
        ("sg1", "stations: 2, interval: 0s, duration: 5s", "stream.params.interval", "must be positive"),
        ("sg1", "stations: 2, interval: 1s, duration: 1000000000000000000", "stream.params.duration", "longer than the"),
        ("sg1", "stations: 2, interval: 1s, duration: 1.0e+18", "stream.params.duration", "longer than the limit"),
        ("sg1", "stations: 2, interval: 1ms, duration: 100000000h", "stream.params.duration", "limit is 1e+10"),
        ("sg1", "stations: 2, interval: 1s, duration: .inf", "stream.params.duration", "longer than the limit"),
        ("sg1", "stations: 2, interval: 1s, duration: .nan", "stream.params.duration", "longer than the limit"),
        ("sg1", "stations: 2, interval: 1s, duration: 1e18", "stream.params.duration", "invalid duration"),
        ("sg1", "stations: 1000000000000, interval: 1s, duration: 1h", "stream.params.duration", "limit is 1e+10"),
        ("sg1", "stations: 2, interval: 1s, duration: -5s", "stream.params.duration", "invalid duration"),
        ("lsd-weather", "stations: 2, interval: 0s, duration: 5s", "stream.params.interval", "must be positive"),
        ("lsd-weather", "stations: 2, interval: 1ms, duration: 10000000h", "stream.params.duration", "limit is 1e+10"),
        ("chain-join", "duration: 5s, tick: 0s", "stream.params.tick", "must be positive"),
        ("chain-join", "duration: 100000000000s", "stream.params.duration", "limit is 1e+10"),
        ("lubm", "universities: 1000000000", "stream.params.universities", "limit is 1e+10"),
    ],
)
def test_generator_parameters_are_checked_at_validation(tmp_path: Path, generator: str, params: str, field: str,
                                                         expected: str) -> None:
    path = experiment(tmp_path, generator=generator, params=params)
    assert_one_line(rspwb("validate", path), 2, f"{path}:6: {field}", expected)


def test_interval_from_a_variable(tmp_path: Path) -> None:
    path = experiment(tmp_path, variables=", STEP: 0s", params="stations: 2, interval: '${STEP}', duration: 5s")
    assert_one_line(rspwb("validate", path), 2, f"{path}:6: stream.params.interval", "STEP")


def test_a_million_variables(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text("name: x\nvariables:\n" + "".join(f"  V{i}: {i}\n" for i in range(1_000_000)), encoding="utf-8")
    assert_one_line(rspwb("validate", path), 2, f"{path}:1", "the limit for an experiment file is 131,072")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "the experiment file is empty"),
        ("name: x\n\tstream: {}\n", "invalid YAML"),
        ("name: x\nstrem: {}\n", "did you mean 'stream'"),
        ("!!python/object:os.system {}\n", "exp.yaml:1"),
    ],
)
def test_malformed_experiment(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text(text, encoding="utf-8")
    assert_one_line(rspwb("validate", path), 2, str(path), expected)


def test_stand_timeout_beyond_the_duration_bound(tmp_path: Path) -> None:
    path = experiment(tmp_path, extra="stand: {timeout: 1000000000000000000s}\n")
    assert_one_line(rspwb("validate", path), 2, f"{path}:16: stand.timeout", "longer than the limit")


def test_experiment_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "exp.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    assert_one_line(rspwb("validate", path), 2, str(path), "UTF-8")


def test_unknown_prefix_in_an_experiment_query_points_at_its_use(tmp_path: Path) -> None:
    path = experiment(tmp_path)
    path.write_text(path.read_text().replace("WHERE { ?s ?p ?o }", "WHERE { ?s foo:p ?o }"), encoding="utf-8")
    assert_one_line(rspwb("validate", path), 2, f"{path}:13:", "Unknown namespace prefix", "foo")


# --- queries and window options ---------------------------------------------------------------


def _query_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "q.rq"
    path.write_text(text, encoding="utf-8")
    return path


def test_unknown_prefix_is_reported_at_its_use(tmp_path: Path) -> None:
    path = _query_file(tmp_path, "PREFIX ex: <http://ex.org/>\n" + ROOMS_QUERY.replace("<http://ex.org/m2>", "foo:m2"))
    assert_one_line(rspwb("query", "explain", path), 2, f"{path}:6:9:", "foo")


def test_a_megabyte_query_is_refused_at_once(tmp_path: Path) -> None:
    path = _query_file(tmp_path, ROOMS_QUERY.replace("SELECT", "SELECT " + "?room " * 200_000))
    assert_one_line(rspwb("query", "explain", path), 2, f"{path}:1:", "the limit is 65,536")


def test_a_query_with_too_many_tokens_is_refused(tmp_path: Path) -> None:
    values = ",".join(str(i) for i in range(6000))
    path = _query_file(tmp_path, ROOMS_QUERY.replace("?room }", f"?room FILTER(?room IN ({values})) }}"))
    assert_one_line(rspwb("query", "explain", path), 2, str(path), "tokens; the limit is 5,000")


def test_too_many_triple_patterns_say_why(tmp_path: Path) -> None:
    patterns = " ".join(f"?s <{EX}p{i}> ?o{i} ." for i in range(400))
    path = _query_file(tmp_path, ROOMS_QUERY.split("WHERE")[0] + "WHERE { " + patterns + " }\n")
    assert_one_line(rspwb("query", "explain", path), 2, str(path), "recursion limit")


def test_unterminated_string_in_a_query(tmp_path: Path) -> None:
    path = _query_file(tmp_path, ROOMS_QUERY.replace("?room }", '?room FILTER(?room = "open) }'))
    assert_one_line(rspwb("query", "explain", path), 2, str(path))


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--window-size", "0"], "--window-size: must be greater than 0"),
        (["--window-size", "5s", "--window-slide", "0"], "--window-slide: must be greater than 0"),
        (["--window-size", "1e18s"], "--window-size"),
        (["--window-size", "-5s"], "--window-size"),
        (["--t0", "soon"], "--t0"),
        (["--end", "soon"], "--end"),
        (["--report", "sometimes"], "--report"),
        (["--var", "NOEQUALS"], "--var"),
    ],
)
def test_bad_oracle_options(tmp_path: Path, query: Path, stream: Path, options: list[str], expected: str) -> None:
    outcome = rspwb("oracle", "--stream", stream, "--query", query, "--system", "csparql", "--json", *options)
    assert_one_line(outcome, 2, expected)


@pytest.mark.parametrize(
    "options",
    [["--size", "0", "--slide", "1"], ["--size", "1e18s", "--slide", "1s"], ["--size", "5", "--slide", "-1"],
     ["--size", "5", "--slide", "2", "--unit", "fortnight"]],
)
def test_bad_window_options(options: list[str]) -> None:
    outcome = rspwb("windows", *options, "--from", "0", "--to", "10")
    assert_one_line(outcome, 2)


# --- generation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (["interval=0"], "param interval: must be positive"),
        (["duration=1000000000000000000"], "param duration"),
        (["duration=1e18s"], "param duration"),
        (["stations=0"], "param stations"),
        (["seed=x"], "param seed"),
        (["nonsense=1"], "nonsense"),
    ],
)
def test_bad_generator_parameters(tmp_path: Path, params: list[str], expected: str) -> None:
    out = tmp_path / "s.stream"
    argv = ["generate", "--generator", "sg1", "--param", "duration=5s", "--out", out]
    for param in params:
        argv += ["--param", param]
    assert_one_line(rspwb(*argv), 2, expected)
    assert list(tmp_path.iterdir()) == []


def test_generate_to_a_path_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    outcome = rspwb("generate", "--generator", "sg1", "--param", "duration=5s", "--out", tmp_path / "file" / "s.stream")
    assert_one_line(outcome, 2, str(tmp_path / "file"))


@pytest.mark.parametrize("fmt", ["parquet", "nquads", "yabench"])
@pytest.mark.slow
def test_generate_into_a_full_disk_names_the_file(tmp_path: Path, fmt: str) -> None:
    """A real file-size limit (RLIMIT_FSIZE, as a full quota would) on a real child process."""
    import resource
    import signal
    import subprocess

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    out = tmp_path / f"s.{fmt}"
    child = subprocess.run(
        [PYTHON, "-m", "rsp_workbench.cli.main", "generate", "--generator", "sg1", "--param", "stations=50",
         "--param", "interval=1s", "--param", "duration=10m", "--format", fmt, "--out", str(out), "--local"],
        capture_output=True, text=True, env=subprocess_env(), preexec_fn=limit, timeout=60,
    )
    lines = [line for line in child.stderr.splitlines() if line.strip()]
    assert child.returncode == 2 and len(lines) == 1 and "Traceback" not in child.stderr, child.stderr
    assert lines[0].startswith(f"{out}: cannot write: ") and "large" in lines[0], lines
    assert list(tmp_path.iterdir()) == []


# --- engine runs: honest bundles and bounded engine output -----------------------------------


@pytest.mark.slow
def test_a_run_into_a_full_disk_fails_at_once_naming_the_file(tmp_path: Path, stream: Path) -> None:
    """A real file-size limit (RLIMIT_FSIZE, as a full quota would) while the stand writes the engine's
    stderr: the run fails at once naming the file, no thread traceback, no 30 s wait, no .partial."""
    import resource
    import subprocess

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    out = tmp_path / "bundle"
    started = time.monotonic()
    child = subprocess.run(
        [PYTHON, "-m", "rsp_workbench.cli.main", "run", str(external_experiment(tmp_path, stream, "stderr-flood", 2)),
         "--out", str(out), "--yes", "--quiet"],
        capture_output=True, text=True, env=subprocess_env(), preexec_fn=limit, timeout=120,
    )
    assert time.monotonic() - started < 25
    lines = [line for line in child.stderr.splitlines() if line.strip()]
    assert child.returncode == 1 and len(lines) == 1 and "Traceback" not in child.stderr, child.stderr
    assert "1 of 1 runs failed" in lines[0] and "cannot write" in lines[0] and "stderr.log: File too large" in lines[0]
    assert json.loads((out / "manifest.json").read_text())["runs"][0]["status"] == "failed"
    assert leftovers(out) == []


def test_a_malformed_stream_fails_the_run_and_leaves_no_partial_folder(tmp_path: Path) -> None:
    bad = tmp_path / "bad.stream"
    bad.write_text(ROOMS_STREAM + "garbage here\n", encoding="utf-8")
    out = tmp_path / "bundle"
    outcome = rspwb("run", external_experiment(tmp_path, bad, "ok"), "--out", out, "--yes", "--quiet")
    assert_one_line(outcome, 2, f"{bad}:6:1", "expected a subject")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["runs"][0]["status"] == "failed"
    assert leftovers(out) == [] and list((out / "runs").iterdir()) == []
    report = rspwb("report", out, "--json")
    assert json.loads(report.out)["runs"][0]["status"] == "failed" and "expected a subject" in report.out


def test_a_malformed_term_fails_the_run_and_names_the_final_file(tmp_path: Path, stream: Path) -> None:
    out = tmp_path / "bundle"
    outcome = rspwb("run", external_experiment(tmp_path, stream, "bad-term"), "--out", out, "--yes", "--quiet")
    run = out / "runs" / "case0-rep0-e-q"
    assert_one_line(outcome, 1, "1 of 1 runs failed", f"{run}/responses.jsonl:2: binding.x", "not a term")
    assert ".partial" not in outcome.err + outcome.out
    record = json.loads((run / "run.json").read_text())
    assert record["status"] == "failed" and record["folder"] == str(run) and ".partial" not in record["error"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["runs"][0]["status"] == "failed"
    assert leftovers(out) == []
    report = rspwb("report", out, "--json")
    assert json.loads(report.out)["runs"][0]["status"] == "failed"


@pytest.mark.parametrize("mode, line, field", [
    ("t-string", 2, "response: field 't'"), ("t-list", 2, "response: field 't'"),
    ("t-infinity", 2, "response: field 't'"), ("t-nan", 2, "response: field 't'"),
    ("stimulus-mapping", 2, "response: field 'stimulus'"), ("binding-nan", 2, "response: field 'bindings', variable 'x'"),
    ("done-list", 3, "done: field 'stimulus'"),
    ("advance-null", 12, "done: field 'advance'"), ("advance-string", 12, "done: field 'advance'"),
])
def test_a_malformed_protocol_field_fails_the_run_at_once(tmp_path: Path, stream: Path, mode: str, line: int,
                                                           field: str) -> None:
    """A field of the wrong type is a protocol error naming the message, its line on the engine's stdout
    and the field, at once: the stand's receiver never dies on it, no 30 s timeout."""
    out = tmp_path / "bundle"
    started = time.monotonic()
    outcome = rspwb("run", external_experiment(tmp_path, stream, mode), "--out", out, "--yes", "--quiet")
    assert time.monotonic() - started < 20
    assert_one_line(outcome, 1, "1 of 1 runs failed", f"protocol error: line {line} of the engine's stdout: {field}")
    record = json.loads((out / "runs" / "case0-rep0-e-q" / "run.json").read_text())
    assert record["status"] == "failed" and "protocol error" in record["error"]
    assert leftovers(out) == []


def test_a_flood_on_stderr_is_capped_and_said(tmp_path: Path, stream: Path) -> None:
    from rsp_workbench.stand.host import STDERR_TAIL_LINE_CHARS
    from rsp_workbench.stand.run_folder import STDERR_LOG_BYTES

    out = tmp_path / "bundle"
    outcome = rspwb("run", external_experiment(tmp_path, stream, "stderr-flood", 20), "--out", out, "--yes", "--quiet")
    assert outcome.code == 0 and outcome.err == "", outcome.err
    run = out / "runs" / "case0-rep0-e-q"
    assert (run / "stderr.log").stat().st_size < STDERR_LOG_BYTES + 200
    record = json.loads((run / "run.json").read_text())
    assert len(record["stderr_tail"]) < 40 * (STDERR_TAIL_LINE_CHARS + 40)
    assert f"stderr was {20 << 20} bytes; stderr.log keeps the first 16 MiB" in record["error"]


def test_one_endless_stdout_line_fails_the_run_at_the_limit(tmp_path: Path, stream: Path) -> None:
    out = tmp_path / "bundle"
    outcome = rspwb("run", external_experiment(tmp_path, stream, "long-line", 65), "--out", out, "--yes", "--quiet")
    assert_one_line(outcome, 1, "1 of 1 runs failed", "more than 64 MiB on stdout")
    assert json.loads((out / "manifest.json").read_text())["runs"][0]["status"] == "failed"
    assert leftovers(out) == []


def test_one_stdout_line_is_bounded_by_the_setting_that_names_it(tmp_path: Path, stream: Path) -> None:
    """``stand.max_message_mb`` bounds one engine line while it is read: a 2 MiB response line against a
    1 MiB limit fails the run at that line, naming the limit and the setting; nothing of it is kept."""
    path = tmp_path / "limited.yaml"
    path.write_text(external_experiment(tmp_path, stream, "big-responses", 2).read_text()
                    .replace("stand: {mode: absolute-time, timeout: 30s}",
                             "stand: {mode: absolute-time, timeout: 30s, max_message_mb: 1}"), encoding="utf-8")
    out = tmp_path / "bundle"
    assert_one_line(rspwb("run", path, "--out", out, "--yes", "--quiet"), 1, "1 of 1 runs failed",
                    "a line of more than 1 MiB on stdout (line 2", "stand.max_message_mb")
    assert (out / "runs" / "case0-rep0-e-q" / "responses.jsonl").stat().st_size < 1 << 20
    assert leftovers(out) == []
    bad = tmp_path / "zero.yaml"
    bad.write_text(path.read_text().replace("max_message_mb: 1", "max_message_mb: 0"), encoding="utf-8")
    assert_one_line(rspwb("validate", bad), 2, str(bad), "stand.max_message_mb")


def test_a_run_into_a_foreign_folder_is_refused(tmp_path: Path, stream: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("keep me")
    outcome = rspwb("run", external_experiment(tmp_path, stream, "ok"), "--out", out, "--yes", "--quiet")
    assert_one_line(outcome, 2, str(out), "--out")
    assert (out / "thesis.tex").read_text() == "keep me"


def test_a_run_without_confirmation_starts_nothing(tmp_path: Path, stream: Path) -> None:
    out = tmp_path / "bundle"
    outcome = rspwb("run", external_experiment(tmp_path, stream, "ok"), "--out", out, "--quiet")
    assert_one_line(outcome, 2, "--yes")
    assert not (out / "manifest.json").exists()


@pytest.mark.parametrize("line, expected", [
    (b'{"type":"response","t":1000.0,"bindings":[]}', None),  # an integral float is a time (JavaScript writes them)
    (b'{"type":"response","t":null,"stimulus":null,"bindings":[{"x":null}]}', None),
    (b'{"type":"response","t":true,"bindings":[]}', "response: field 't' must be an integer time in ms or null, not true"),
    (b'{"type":"response","t":1.5,"bindings":[]}', "field 't'"),
    (b'{"type":"response","t":9223372036854775808,"bindings":[]}', "field 't'"),
    (b'{"type":"response","t":1,"bindings":[{"x":1}]}', "variable 'x' must be a term (N-Triples text) or null, not 1"),
    (b'{"type":"done","stimulus":1,"closed":true}', "exactly one of stimulus, advance, closed"),
    (b'{"type":"done","closed":1}', "done: field 'closed' must be true, not 1"),
    (b'{"type":"done","advance":"' + b"9" * 100 + b'"}', 'not "' + "9" * 38 + "…"),  # the token, cut short
    (b'{"type":"error","message":"x","fatal":"no"}', "error: field 'fatal'"),
])
def test_protocol_fields_are_checked_when_read(line: bytes, expected: str | None) -> None:
    from rsp_workbench.stand.protocol import ProtocolError, parse_engine_line

    if expected is None:
        assert parse_engine_line(line)["type"] == "response"
    else:
        with pytest.raises(ProtocolError) as raised:
            parse_engine_line(line)
        assert expected in str(raised.value)


@pytest.mark.parametrize("extra, field", [
    ("repetitions: 1000000000\n", "repetitions"),
    ("sweep: {A: [" + ", ".join(map(str, range(1000))) + "], B: [" + ", ".join(map(str, range(1000))) + "]}\n", "sweep"),
])
def test_an_experiment_beyond_the_run_bound_fails_in_a_second(tmp_path: Path, extra: str, field: str) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text((ROOT / "sample_experiments" / "teaching" / "rooms.yaml").read_text()
                    .replace("seed: 0\n", "seed: 0\n" + extra), encoding="utf-8")
    shutil.copy(ROOT / "sample_experiments" / "teaching" / "rooms.stream", tmp_path)
    started = time.monotonic()
    for command in (("validate", path), ("run", path, "--out", tmp_path / "b"), ("generate", path, "--out", tmp_path / "s")):
        line = assert_one_line(rspwb(*command), 2, f"{path}:9: {field}", "more than the 10,000 runs", "--max-runs")
        assert f"--max-runs {int(line.split(' runs (')[0].split()[-1].replace(',', ''))}" in line
    assert time.monotonic() - started < 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["huge.yaml", "rooms.stream"]


def test_max_runs_allows_more_runs(tmp_path: Path) -> None:
    rooms = ROOT / "sample_experiments" / "teaching" / "rooms.yaml"
    assert_one_line(rspwb("validate", rooms, "--max-runs", "2"), 2, "3 runs", "--max-runs 3")
    assert rspwb("validate", rooms, "--max-runs", "3").code == 0



def test_an_empty_stream_is_said_not_judged_green(tmp_path: Path) -> None:
    empty = tmp_path / "empty.stream"
    empty.write_text("", encoding="utf-8")
    out = tmp_path / "bundle"
    outcome = rspwb("run", external_experiment(tmp_path, empty, "ok"), "--out", out, "--yes", "--quiet")
    assert outcome.code == 0 and "warning: the stream has no elements: nothing was judged" in outcome.out
    row = json.loads(rspwb("report", out, "--json").out)["runs"][0]
    assert row["warning"].startswith("the stream has no elements: nothing was judged") and row["windows"] == 0


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_a_stream_that_is_a_pipe_or_a_device_is_refused_up_front(tmp_path: Path, special: str) -> None:
    """A FIFO nobody writes would block the run in open(), where SIGTERM/Ctrl-C cannot reach it."""
    import os

    path = tmp_path / "fifo.stream"
    if special == "fifo":
        os.mkfifo(path)
    else:
        path = Path(special)
    for command in ("validate", "run"):
        extra = ("--out", tmp_path / "b", "--yes") if command == "run" else ()
        line = assert_one_line(rspwb(command, external_experiment(tmp_path, path, "ok"), *extra), 2, "stream.file",
                               "expected a file or a folder")
        assert ("named pipe" if special == "fifo" else "is a device") in line
    assert not (tmp_path / "b").exists()


def test_a_real_time_run_of_months_is_refused_before_it_starts(tmp_path: Path, stream: Path) -> None:
    path = tmp_path / "rt.yaml"
    path.write_text(external_experiment(tmp_path, stream, "ok").read_text()
                    .replace("stand: {mode: absolute-time, timeout: 30s}", "stand: {mode: real-time, time_scale: 0.000001}"),
                    encoding="utf-8")
    started = time.monotonic()
    out = tmp_path / "bundle"
    line = assert_one_line(rspwb("run", path, "--out", out, "--yes", "--quiet"), 2, "stand.time_scale",
                           "9,444.4 hours of wall time", "more than the 24 hours", "stand.timeout")
    assert "run case0-rep0-e-q" in line and time.monotonic() - started < 20
    assert json.loads((out / "manifest.json").read_text())["runs"][0]["status"] == "failed"
    assert leftovers(out) == []


def test_what_an_engine_writes_in_one_run_is_capped(tmp_path: Path, stream: Path) -> None:
    """``stand.max_output_mb`` caps an engine's stdout over the run (responses.jsonl grows with it)."""
    path = tmp_path / "capped.yaml"
    path.write_text(external_experiment(tmp_path, stream, "big-responses", 1).read_text()
                    .replace("stand: {mode: absolute-time, timeout: 30s}",
                             "stand: {mode: absolute-time, timeout: 30s, max_output_mb: 2}"), encoding="utf-8")
    out = tmp_path / "bundle"
    assert_one_line(rspwb("run", path, "--out", out, "--yes", "--quiet"), 1, "1 of 1 runs failed",
                    "the engine wrote more than 2 MiB on stdout (by line 4", "stand.max_output_mb")
    run = out / "runs" / "case0-rep0-e-q"
    assert (run / "responses.jsonl").stat().st_size < 3 << 20
    assert leftovers(out) == []


@pytest.mark.parametrize("name, folder, expected", [
    ("data_1.5.ttl", False, "not data_NN.ttl with NN a whole number (data_1.5.ttl)"),
    ("data_abc.ttl", False, "not data_NN.ttl"), ("data_-3.ttl", False, "not data_NN.ttl"),
    ("data_2.ttl", True, "a folder"),
])
def test_a_csrbench_file_that_would_be_skipped_is_named(tmp_path: Path, query: Path, name: str, folder: bool,
                                                          expected: str) -> None:
    directory = tmp_path / "csr"
    directory.mkdir()
    (directory / "data_0.ttl").write_text(f"<{EX}m1> <{EX}detectedAt> <{EX}r1> .\n", encoding="utf-8")
    (directory / name).mkdir() if folder else (directory / name).write_text(f"<{EX}m2> <{EX}p> <{EX}o> .\n")
    outcome = rspwb("oracle", "--stream", directory, "--stream-format", "csrbench-dir", "--interval", "1000",
                    "--query", query, "--system", "csparql", "--json")
    assert_one_line(outcome, 2, str(directory / name), expected)


@pytest.mark.parametrize("system", ["yabench-content-change", "csparql"])
def test_windows_far_apart_are_refused_with_the_estimate_not_allocated(tmp_path: Path, system: str) -> None:
    """A 1 ms slide over two elements 10¹⁴ ms apart: refused up front with the number, no 728 TiB allocation."""
    stream = tmp_path / "far.stream"
    stream.write_text(f'<{EX}m1> <{EX}detectedAt> <{EX}r1> "0" .\n'
                      f'<{EX}m2> <{EX}detectedAt> <{EX}r1> "100000000000000" .\n', encoding="utf-8")
    query = tmp_path / "far.rq"
    query.write_text(f"REGISTER QUERY q AS SELECT ?room FROM STREAM <http://s> [RANGE 10ms STEP 1ms]\n"
                     f"WHERE {{ ?x <{EX}detectedAt> ?room }}\n", encoding="utf-8")
    started = time.monotonic()
    outcome = rspwb("oracle", "--stream", stream, "--stream-format", "yabench", "--query", query, "--system", system,
                    "--json")
    assert_one_line(outcome, 2, "--t0", "about 100,000,000,000,0")
    assert time.monotonic() - started < 20


def test_oracle_out_never_deletes_files_it_did_not_write(tmp_path: Path, query: Path, stream: Path) -> None:
    out = tmp_path / "expected"
    args = ("oracle", "--stream", stream, "--stream-format", "yabench", "--query", query, "--system", "csparql",
            "--out", out)
    assert rspwb(*args).code == 0 and rspwb(*args).code == 0  # an earlier output of ours is replaced
    (out / "notes.md").write_text("mine")
    assert_one_line(rspwb(*args), 2, str(out), "--out", "files rspwb did not write (notes.md)")
    assert (out / "notes.md").read_text() == "mine"
