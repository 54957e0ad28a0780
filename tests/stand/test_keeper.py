"""The engine's keeper (Linux): it stands in for the engine, reports what it killed, imports nothing unasked."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import psutil
import pytest

from rsp_workbench.stand.processes import new_run_mark, reap, start_engine

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the keeper is Linux's")


def start(argv: list[str], cwd: Path | None = None):  # type: ignore[no-untyped-def]
    return start_engine(argv, env=dict(os.environ), cwd=str(cwd) if cwd else None, mark=new_run_mark())


def test_the_keeper_exits_as_the_engine_did() -> None:
    """Exit code and death by signal read as the engine's own; the engine's pid is the keeper's child."""
    engine = start(["sh", "-c", "exit 3"])
    assert engine.pid != engine.popen.pid
    assert engine.popen.wait(timeout=30) == 3
    assert reap(engine, "none") == []
    engine = start(["sh", "-c", "kill -TERM $$"])
    assert engine.popen.wait(timeout=30) == -15
    reap(engine, "none")


def test_an_engine_that_cannot_start_is_an_oserror_naming_it() -> None:
    with pytest.raises(FileNotFoundError, match="no-such-engine-program"):
        start(["no-such-engine-program"])


def _sleeping(pid: int) -> int:
    """How many ``sleep`` processes run below ``pid`` (one that ends while it is read does not count:
    the setsid shell exits at once, and psutil may then fail to read its command line)."""
    count = 0
    for process in psutil.Process(pid).children(recursive=True):
        try:
            count += process.cmdline()[:1] == ["sleep"]
        except (psutil.Error, OSError):
            pass
    return count


def test_stopping_kills_the_engine_and_everything_it_started_and_names_them() -> None:
    """A stopped run: the engine, its child and an orphan that left its session are all killed and named."""
    engine = start(["sh", "-c", "sleep 3601 & setsid sh -c 'sleep 3602 & exit' ; sleep 3603"])
    deadline = time.monotonic() + 30
    while _sleeping(engine.popen.pid) < 3:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    killed = reap(engine, "none")
    assert sorted(entry["command"] for entry in killed) == sorted([
        "sh -c sleep 3601 & setsid sh -c 'sleep 3602 & exit' ; sleep 3603", "sleep 3601", "sleep 3602", "sleep 3603"])
    assert engine.popen.returncode == -9
    for entry in killed:
        assert not psutil.pid_exists(entry["pid"]) or psutil.Process(entry["pid"]).status() == psutil.STATUS_ZOMBIE


def test_the_keeper_imports_nothing_from_the_working_directory(tmp_path: Path) -> None:
    """An external engine without a ``cwd`` runs in rspwb's working directory, and so does its keeper:
    modules planted there under the names the keeper imports are never imported."""
    markers = tmp_path / "markers"
    markers.mkdir()
    folder = tmp_path / "downloaded"
    folder.mkdir()
    for name in ("ctypes", "select", "signal", "time", "site", "sitecustomize", "encodings", "json", "subprocess"):
        (folder / f"{name}.py").write_text(f"open({str(markers / name)!r}, 'w').close()\n", encoding="utf-8")
    engine = start(["sh", "-c", "exit 0"], cwd=folder)
    assert engine.popen.wait(timeout=30) == 0
    reap(engine, "none")
    assert list(markers.iterdir()) == []


def test_a_process_that_outlives_its_round_is_named_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a loaded machine a process killed in one round may still be listed in the next (SIGKILL is
    not instant): it is killed again but named once (CI once saw ``sleep 36…`` twice in run.json)."""
    from rsp_workbench.stand import keeper

    rounds = [[101, 102], [102], []]  # 102 still there one round after its SIGKILL
    monkeypatch.setattr(keeper, "descendants", lambda root: rounds.pop(0) if rounds else [])
    monkeypatch.setattr(keeper, "describe", lambda pid: f"{pid}\tsleep\tsleep 36{pid}")
    signals: list[int] = []
    monkeypatch.setattr(keeper.os, "kill", lambda pid, number: signals.append(pid))
    said: list[str] = []
    state = keeper.Keeper.__new__(keeper.Keeper)
    state.reported, state.killed = 0, set()
    monkeypatch.setattr(state, "report", said.append, raising=False)
    monkeypatch.setattr(state, "reap", lambda: None, raising=False)
    state.kill_tree(reporting=True)
    assert signals == [101, 102, 102]
    assert said == ["killed 101\tsleep\tsleep 36101", "killed 102\tsleep\tsleep 36102"]
