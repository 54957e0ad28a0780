"""Requests the oracle cannot answer in bounded time and memory are refused up front, with the estimate:
two elements 10^14 ms apart under a 1 ms slide (content change) or a 1 ms period."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rsp_workbench.cli.main import main

FAR = 100_000_000_000_000


@pytest.fixture
def far_apart(tmp_path: Path) -> Path:
    (tmp_path / "s.stream").write_text(
        f'<http://ex.org/a> <http://ex.org/p> <http://ex.org/r> "0" .\n'
        f'<http://ex.org/b> <http://ex.org/p> <http://ex.org/r> "{FAR}" .\n', encoding="utf-8")
    (tmp_path / "q.rq").write_text("REGISTER QUERY q AS SELECT ?a FROM STREAM <http://s> [RANGE 5ms STEP 1ms] "
                                   "WHERE { ?a <http://ex.org/p> ?r }\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("options", "what"), [
    (["--system", "cqels"], "window boundaries lie between"),  # content change: every window border enumerated
    (["--system", "csparql", "--report", "periodic(1ms)"], "periodic evaluations"),
    (["--system", "csparql"], "windows close"),  # window close (refused before this change too)
])
def test_a_request_of_10_to_the_14_evaluations_is_refused_at_once(
        far_apart: Path, options: list[str], what: str, capsys: pytest.CaptureFixture[str]) -> None:
    started = time.process_time()
    code = main(["oracle", "--stream", str(far_apart / "s.stream"), "--stream-format", "yabench",
                 "--query", str(far_apart / "q.rq"), *options, "--t0", "0", "--json"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert what in err and "100,000,000,000,0" in err and "--t0" in err
    assert time.process_time() - started < 10  # before: 728 TiB asked of numpy, or minutes of 1 ms periods
