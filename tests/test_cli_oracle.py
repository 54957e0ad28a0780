"""`rspwb check` and `rspwb oracle` on a small CSRBench-layout directory (the rooms stream)
with CSRBench-JSON answers written by hand for each preset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workbench.cli.main import main

ROOMS = {1: [("m1", "r1")], 3: [("m2", "r1")], 11: [("m1", "r2")], 13: [("m2", "r2")], 25: [("p3", "r3")]}
QUERY = """REGISTER QUERY query AS SELECT ?room
FROM STREAM <http://www.example.org/stream1> [RANGE 10s STEP 10s]
WHERE { <http://ex.org/m1> <http://ex.org/detectedAt> ?room . <http://ex.org/m2> <http://ex.org/detectedAt> ?room }
"""


def relation(timestamp: int, rooms: list[str], variable: str = "room") -> dict[str, Any]:
    return {
        "head": {"vars": [variable]},
        "timestamp": timestamp,
        "results": {"bindings": [
            {"timestamp": timestamp, "binding": {variable: {"type": "uri", "value": f"http://ex.org/{room}"}}}
            for room in rooms
        ]},
    }


@pytest.fixture
def rooms(tmp_path: Path) -> Path:
    stream = tmp_path / "stream"
    stream.mkdir()
    for n in range(26):
        lines = ["@prefix ex: <http://ex.org/> ."] + [f"ex:{who} ex:detectedAt ex:{room} ." for who, room in ROOMS.get(n, [])]
        (stream / f"data_{n:02d}.ttl").write_text("\n".join(lines) + "\n")
    (tmp_path / "q.rq").write_text(QUERY)
    return tmp_path


def check(capsys: pytest.CaptureFixture[str], folder: Path, system: str, answer: list[dict[str, Any]], *extra: str) -> dict[str, Any]:
    (folder / "answer.json").write_text(json.dumps({"relations": answer}))
    code = main([
        "check", "--stream", str(folder / "stream"), "--stream-format", "csrbench-dir", "--interval", "1000",
        "--query", str(folder / "q.rq"), "--system", system, "--engine-output", str(folder / "answer.json"),
        "--engine-output-format", "csrbench-json", *extra, "--json",
    ])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


CORRECT_ANSWERS = {
    # C-SPARQL: window close & non-empty, Rstream, empty relations notified (t0 = 0)
    "csparql": [relation(10_000, ["r1"]), relation(20_000, ["r2"]), relation(30_000, [])],
    # CQELS: content change, Istream, no empty relations (t0 = 0)
    "cqels": [relation(3_000, ["r1"]), relation(13_000, ["r2"])],
    # SPARQLstream: window close & non-empty, Rstream, no empty relations (t0 = 0)
    "sparqlstream": [relation(10_000, ["r1"]), relation(20_000, ["r2"])],
}


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
