"""Helpers shared by several test modules of this folder (constants, builders, comparisons)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
import pytest

from rsp_workbench.cli.main import main


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


def check(capsys: pytest.CaptureFixture[str], folder: Path, system: str, answer: list[dict[str, Any]], *extra: str) -> dict[str, Any]:
    (folder / "answer.json").write_text(json.dumps({"relations": answer}))
    code = main([
        "check", "--stream", str(folder / "stream"), "--stream-format", "csrbench-dir", "--interval", "1000",
        "--query", str(folder / "q.rq"), "--system", system, "--engine-output", str(folder / "answer.json"),
        "--engine-output-format", "csrbench-json", *extra, "--json",
    ])
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert code == (0 if payload["verdict"] == "correct" else 1), captured.err  # exit 1: incorrect
    return payload


CORRECT_ANSWERS = {
    # C-SPARQL: window close & non-empty, Rstream, empty relations notified (t0 = 0)
    "csparql": [relation(10_000, ["r1"]), relation(20_000, ["r2"]), relation(30_000, [])],
    # CQELS: content change, Istream, no empty relations (t0 = 0)
    "cqels": [relation(3_000, ["r1"]), relation(13_000, ["r2"])],
    # SPARQLstream: window close & non-empty, Rstream, no empty relations (t0 = 0)
    "sparqlstream": [relation(10_000, ["r1"]), relation(20_000, ["r2"])],
}


def oracle_args(folder: Path, *extra: str) -> list[str]:
    return ["oracle", "--stream", str(folder / "stream"), "--stream-format", "csrbench-dir", "--query",
            str(folder / "q.rq"), "--system", "csparql", "--t0", "all", *extra]


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    """``rspwb ARGV --json``'s object (the command must succeed)."""
    code = main(argv + ["--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)
