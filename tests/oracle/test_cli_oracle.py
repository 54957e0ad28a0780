"""`rspwb check` and `rspwb oracle` on a small CSRBench-layout directory (the rooms stream)
with CSRBench-JSON answers written by hand for each preset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rsp_workbench.cli.main import main
from tests.oracle.cli_support import CORRECT_ANSWERS, QUERY, ROOMS, check, oracle_args, relation, run_json  # noqa: F401


@pytest.mark.parametrize("system", sorted(CORRECT_ANSWERS))
@pytest.mark.parametrize("match", ["strict", "csrbench"])
def test_correct_answers_per_preset(capsys: pytest.CaptureFixture[str], rooms: Path, system: str, match: str) -> None:
    payload = check(capsys, rooms, system, CORRECT_ANSWERS[system], "--match", match)
    assert payload["verdict"] == "correct"
    assert 0 in payload["t0"]
    assert payload["first_divergence"] is None


def test_contract_form_csrbench_match(capsys: pytest.CaptureFixture[str], rooms: Path) -> None:
    payload = check(capsys, rooms, "csparql", CORRECT_ANSWERS["csparql"], "--match", "csrbench")
    assert set(payload) >= {"verdict", "t0", "first_divergence"}


def test_correct_for_t0_2s_not_for_0(capsys: pytest.CaptureFixture[str], rooms: Path) -> None:
    """CSRBench Fig. 1: with t0 = 2 s m1 and m2 never share a window: empty relations."""
    payload = check(capsys, rooms, "csparql", [relation(12_000, []), relation(22_000, []), relation(32_000, [])])
    assert payload["verdict"] == "correct" and payload["t0"] == [2000]  # strict compares evaluation times


def test_incorrect_names_first_divergence(capsys: pytest.CaptureFixture[str], rooms: Path) -> None:
    payload = check(capsys, rooms, "sparqlstream", [relation(10_000, ["r1"]), relation(20_000, ["r3"])])
    assert payload["verdict"] == "incorrect"
    divergence = payload["first_divergence"]
    assert divergence["t0"] == 0 and divergence["index"] == 1
    assert divergence["missing"] == [{"binding": {"room": "<http://ex.org/r2>"}}]
    assert divergence["extra"] == [{"binding": {"room": "<http://ex.org/r3>"}}]


def test_csrbench_mode_accepts_a_contiguous_run(capsys: pytest.CaptureFixture[str], rooms: Path) -> None:
    payload = check(capsys, rooms, "sparqlstream", [relation(99, ["r2"])], "--match", "csrbench")
    assert payload["verdict"] == "correct"
    payload = check(capsys, rooms, "sparqlstream", [relation(99, ["r3"])], "--match", "csrbench")
    assert payload["verdict"] == "incorrect"


def test_output_of_a_different_query_is_reported(capsys: pytest.CaptureFixture[str], rooms: Path) -> None:
    (rooms / "answer.json").write_text(json.dumps({"relations": [relation(10_000, ["r1"], variable="sensor")]}))
    code = main([
        "check", "--stream", str(rooms / "stream"), "--stream-format", "csrbench-dir", "--query", str(rooms / "q.rq"),
        "--system", "csparql", "--engine-output", str(rooms / "answer.json"), "--json",
    ])
    assert code == 2
    assert "different query" in capsys.readouterr().err


def test_malformed_engine_output_names_the_record(capsys: pytest.CaptureFixture[str], rooms: Path) -> None:
    (rooms / "answer.json").write_text('{"relations": [{"timestamp": "soon"}]}')
    code = main([
        "check", "--stream", str(rooms / "stream"), "--stream-format", "csrbench-dir", "--query", str(rooms / "q.rq"),
        "--system", "csparql", "--engine-output", str(rooms / "answer.json"), "--engine-output-format", "csrbench-json",
    ])
    assert code == 2
    err = capsys.readouterr().err
    assert "answer.json" in err and "relations[0]" in err and "Traceback" not in err


def test_oracle_json_windows(capsys: pytest.CaptureFixture[str], rooms: Path) -> None:
    code = main([
        "oracle", "--stream", str(rooms / "stream"), "--stream-format", "csrbench-dir", "--query", str(rooms / "q.rq"),
        "--system", "csparql", "--t0", "0", "--json",
    ])
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert [(w["start"], w["end"], w["triples"], w["expected"]) for w in payload["windows"]] == [
        (0, 10_000, 2, 1), (10_000, 20_000, 2, 1), (20_000, 30_000, 1, 0),
    ]


def test_json_names_the_path_that_ran(capsys: pytest.CaptureFixture[str], rooms: Path) -> None:
    payload = run_json(capsys, oracle_args(rooms))
    assert (payload["method"], payload["engine"], payload["method_reason"]) == ("fast", "python", None)
    assert run_json(capsys, oracle_args(rooms, "--method", "reference"))["method"] == "reference"
    (rooms / "limit.rq").write_text(QUERY.rstrip() + " LIMIT 1\n")
    limited = run_json(capsys, oracle_args(rooms)[:6] + [str(rooms / "limit.rq")] + oracle_args(rooms)[7:])
    assert limited["method"] == "reference" and "LIMIT" in limited["method_reason"]


def test_out_folder_is_complete_with_a_manifest(capsys: pytest.CaptureFixture[str], rooms: Path) -> None:
    out = rooms / "expected"
    payload = run_json(capsys, oracle_args(rooms, "--out", str(out)))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["t0_candidates"] == payload["t0_candidates"]
    assert sorted(manifest["files"]) == sorted(p.name for p in out.iterdir() if p.name != "manifest.json")
    assert (out / "windows_t0_0.json").exists() and not (rooms / "expected.partial").exists()
    run_json(capsys, oracle_args(rooms, "--t0", "0", "--out", str(out)))  # an earlier output is replaced
    assert sorted(p.name for p in out.iterdir()) == ["expected_t0_0.jsonl", "manifest.json", "windows_t0_0.json"]


def test_cancelled_out_leaves_no_result_that_looks_complete(rooms: Path) -> None:
    """Interrupted after the first file: no DIR, no DIR.partial; an earlier DIR is kept."""
    from rsp_workbench.oracle.commands import oracle_answers, write_expected_folder

    result = oracle_answers(rooms / "stream", rooms / "q.rq", stream_format="csrbench-dir", system="csparql", t0="all")

    def interrupt(name: str) -> None:
        raise KeyboardInterrupt

    out = rooms / "expected"
    label = str(rooms / "q.rq")
    with pytest.raises(KeyboardInterrupt):
        write_expected_folder(str(out), result, query_label=label, after_file=interrupt)
    assert not out.exists() and not (rooms / "expected.partial").exists()
    files = write_expected_folder(str(out), result, query_label=label)
    before = {name: (out / name).read_bytes() for name in files + ["manifest.json"]}
    with pytest.raises(KeyboardInterrupt):
        write_expected_folder(str(out), result, query_label=label, after_file=interrupt)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert not (rooms / "expected.partial").exists()


def test_out_refuses_a_foreign_folder(capsys: pytest.CaptureFixture[str], rooms: Path) -> None:
    (rooms / "mine").mkdir()
    (rooms / "mine" / "notes.txt").write_text("keep me")
    assert main(oracle_args(rooms, "--out", str(rooms / "mine"))) == 2
    assert "--out" in capsys.readouterr().err and (rooms / "mine" / "notes.txt").read_text() == "keep me"


@pytest.mark.slow
@pytest.mark.spark
def test_spark_method_gives_the_same_windows_and_verdicts(capsys: pytest.CaptureFixture[str], rooms: Path,
                                                          spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from rsp_workbench.oracle import paths as oracle_paths

    python = run_json(capsys, oracle_args(rooms))
    on_spark = run_json(capsys, oracle_args(rooms, "--method", "spark"))
    assert (on_spark["engine"], on_spark["method"]) == ("spark", "fast-vectorised")
    assert on_spark["windows"] == python["windows"] and on_spark["by_t0"] == python["by_t0"]
    monkeypatch.setattr(oracle_paths, "SPARK_THRESHOLD", 3)  # auto: big streams go to Spark
    assert run_json(capsys, oracle_args(rooms))["engine"] == "spark"
    payload = check(capsys, rooms, "cqels", CORRECT_ANSWERS["cqels"], "--method", "spark")
    assert payload["verdict"] == "correct" and payload["engine"] == "spark" and 0 in payload["t0"]


def test_the_plain_table_stops_after_forty_rows_and_says_how_many_more(capsys: pytest.CaptureFixture[str],
                                                                       tmp_path: Path) -> None:
    """At BIG the table printed 2.1 million lines even with --out."""
    from rsp_workbench.cli.oracle_cmd import TABLE_ROWS

    stream = tmp_path / "many.stream"
    stream.write_text("".join(f'<http://ex.org/s{i}> <http://ex.org/p> "{i}" "{i}" .\n' for i in range(100)))
    query = tmp_path / "q.rq"
    query.write_text("REGISTER QUERY q AS SELECT ?s FROM STREAM <http://ex.org/s> [RANGE 10s STEP 10s] "
                     "WHERE { ?s <http://ex.org/p> ?o }\n")
    argv = ["oracle", "--stream", str(stream), "--stream-format", "yabench", "--query", str(query),
            "--system", "cqels", "--t0", "0"]
    evaluations = len(run_json(capsys, argv)["windows"])
    assert evaluations > 100  # one per element, and more
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{evaluations} evaluations for t0 = 0") and len(lines) == 2 + TABLE_ROWS + 1
    assert lines[-1] == (f"  … {evaluations - TABLE_ROWS} more evaluations "
                         "(--json prints them all, --out DIR writes every t0's)")


def test_the_json_row_writer_knows_the_summary_rows_keys() -> None:
    """The CLI's fast row formatter repeats the keys (no numpy at start): they must stay the same."""
    from rsp_workbench.cli.oracle_cmd import _ROW_KEYS, _row_json
    from rsp_workbench.oracle.deltas import SUMMARY_KEYS

    assert _ROW_KEYS == SUMMARY_KEYS
    row = dict(zip(SUMMARY_KEYS, (0, 5000, 12, 3, 1, 2, True)))
    assert _row_json(row) == json.dumps(row) and _row_json({**row, "emitted": False}) == json.dumps({**row, "emitted": False})
