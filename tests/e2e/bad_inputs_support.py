"""Shared helpers of the bad-input catalogue (tests/test_bad_inputs*.py).

``rspwb(...)`` runs the real CLI in-process (``rsp_workbench.cli.main.main``) and captures exit
code, stdout and stderr; ``assert_one_line`` states the contract every user-facing failure
keeps: the exit code, exactly one line on stderr naming the file/line/field, no traceback.
"""

from __future__ import annotations

import io
import os
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from tests.paths import ROOT

FAULTY_ENGINE = ROOT / "tests" / "data" / "engines" / "faulty_engine.py"
EX = "http://ex.org/"

ROOMS_QUERY = f"""REGISTER QUERY rooms AS
SELECT ?room
FROM STREAM <http://www.example.org/stream1> [RANGE 10s STEP 10s]
WHERE {{ <{EX}m1> <{EX}detectedAt> ?room .
        <{EX}m2> <{EX}detectedAt> ?room }}
"""
ROOMS_STREAM = "".join(
    f'<{EX}{who}> <{EX}detectedAt> <{EX}{room}> "{t}" .\n'
    for who, room, t in (("m1", "r1", 1000), ("m2", "r1", 3000), ("m1", "r2", 11000), ("m2", "r2", 13000),
                         ("p3", "r3", 25000))
)


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str

    def lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


def rspwb(*argv: object) -> Outcome:
    """The CLI in this process: ``main(argv)`` with stdout/stderr captured (argparse exits caught)."""
    from rsp_workbench.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main([str(part) for part in argv])
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return Outcome(code, out.getvalue(), err.getvalue())


def assert_one_line(outcome: Outcome, code: int, *names: str) -> str:
    """Exit ``code``, one stderr line containing every one of ``names``, no traceback; returns the line."""
    assert "Traceback" not in outcome.err and "Traceback" not in outcome.out, outcome.err[-2000:]
    lines = outcome.lines()
    assert outcome.code == code, (outcome.code, outcome.err[-2000:])
    assert len(lines) == 1, outcome.err[-2000:]
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


def leftovers(folder: Path) -> list[str]:
    """Files under ``folder`` that look half-written (``.partial``)."""
    return sorted(str(path) for path in folder.rglob("*.partial"))


def subprocess_env() -> dict[str, str]:
    """The environment for a real ``python -m rsp_workbench.cli.main`` child running this checkout."""
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


PYTHON = sys.executable


def external_experiment(tmp_path: Path, stream: Path, mode: str, size: int = 1, timeout: str | None = "30s") -> Path:
    """An experiment running ``faulty_engine.py MODE SIZE`` as an external engine over ``stream``."""
    timeout = f", timeout: {timeout}" if timeout else ""
    path = tmp_path / f"{mode}.yaml"
    path.write_text(f"""\
name: faulty-{mode}
stream: {{file: {stream}, format: yabench}}
queries:
  - id: q
    text: |
      REGISTER QUERY q AS SELECT ?x FROM STREAM <http://s> [RANGE 10s STEP 10s]
      WHERE {{ ?x <{EX}detectedAt> ?r }}
engines:
  - id: e
    type: external
    parameters:
      command: ["{PYTHON}", "{FAULTY_ENGINE}", "{mode}", "{size}"]
stand: {{mode: absolute-time{timeout}}}
""", encoding="utf-8")
    return path
