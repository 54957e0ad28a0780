"""The bad-input catalogue, signals: SIGTERM and SIGHUP are handled like Ctrl-C.

Real ``rspwb`` child processes are stopped mid-work the way a scheduler, a container stop
or a closing terminal stops them; each must exit 130 with one line on stderr and leave
nothing that looks complete: no output file, no ``.partial``, no bundle marked
``running``, no engine process left behind.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from tests.e2e.bad_inputs_support import EX, PYTHON, ROOMS_STREAM, external_experiment, leftovers, subprocess_env


def start(*argv: object, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([PYTHON, "-m", "rsp_workbench.cli.main", *map(str, argv)], cwd=cwd, env=subprocess_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(condition, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the child never got there"
        time.sleep(0.05)


def catches(child: subprocess.Popen[str], signum: int) -> bool:
    """True once the child has a handler for ``signum`` (Linux: the ``SigCgt`` mask in /proc): rspwb
    installs its stop-signal handlers around a running command, so this is the child saying it runs."""
    status = Path(f"/proc/{child.pid}/status").read_text(encoding="ascii")
    mask = next(int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(mask >> (signum - 1) & 1)


def stopped(child: subprocess.Popen[str], signum: int) -> tuple[int, list[str]]:
    child.send_signal(signum)
    _, err = child.communicate(timeout=60)
    assert "Traceback" not in err, err
    return child.returncode, [line for line in err.splitlines() if line.strip()]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=["TERM", "HUP", "INT"])
def test_generate_stopped_leaves_no_partial(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "s.stream"
    child = start("generate", "--generator", "sg1", "--param", "stations=1000", "--param", "interval=1s",
                  "--param", "duration=10h", "--format", "yabench", "--out", out, "--local", cwd=tmp_path)
    partial = tmp_path / "s.stream.partial"
    wait_for(lambda: partial.exists() and partial.stat().st_size > 1_000_000)
    code, lines = stopped(child, signum)
    assert code == 130 and len(lines) == 1 and ("interrupted" in lines[0] or "cancelled" in lines[0]), lines
    assert list(tmp_path.iterdir()) == []


def _hanging_experiment(tmp_path: Path) -> Path:
    stream = tmp_path / "rooms.stream"
    stream.write_text(ROOMS_STREAM, encoding="utf-8")
    return external_experiment(tmp_path, stream, "hang", timeout=None)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_run_stopped_marks_the_bundle_cancelled_and_stops_the_engine(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "bundle"
    child = start("run", _hanging_experiment(tmp_path), "--out", out, "--yes", "--quiet", cwd=tmp_path)
    parent = psutil.Process(child.pid)

    def engines() -> list[psutil.Process]:
        found = []
        for process in parent.children(recursive=True):
            try:
                if "faulty_engine.py" in " ".join(process.cmdline()):
                    found.append(process)
            except psutil.Error:  # a helper process that just ended
                pass
        return found

    wait_for(lambda: bool(engines()))
    started = engines()
    code, lines = stopped(child, signum)
    assert code == 130 and lines == ["rspwb: cancelling (stopping the engine process)…"], lines
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "cancelled" and manifest["runs"][0]["status"] == "cancelled"
    assert leftovers(out) == []
    gone, alive = psutil.wait_procs(started, timeout=5)
    assert not alive


@pytest.mark.slow
def test_sigterm_is_prompt_while_an_engine_writes_huge_lines(tmp_path: Path) -> None:
    """An engine answering every stimulus with a 45 MB line: SIGTERM mid-run still stops ``rspwb`` within
    seconds (each line is read in bounded pieces and handled off the main thread), cancelled and clean."""
    stream = tmp_path / "rooms.stream"
    stream.write_text(ROOMS_STREAM, encoding="utf-8")
    out = tmp_path / "bundle"
    child = start("run", external_experiment(tmp_path, stream, "big-responses", 45), "--out", out, "--yes", "--quiet",
                  cwd=tmp_path)
    parent = psutil.Process(child.pid)

    def writing() -> bool:
        return any(path.stat().st_size > 10 << 20 for path in out.glob("runs/*/responses.jsonl"))

    wait_for(writing, timeout=120)
    started = parent.children(recursive=True)
    signalled = time.monotonic()
    code, lines = stopped(child, signal.SIGTERM)
    assert time.monotonic() - signalled < 5.0
    # still streaming (the stand cancels) or already judging what came (the judge is interrupted)
    assert code == 130 and lines in (["rspwb: cancelling (stopping the engine process)…"], ["rspwb: interrupted"]), lines
    assert json.loads((out / "manifest.json").read_text())["status"] == "cancelled"
    assert leftovers(out) == []
    _, alive = psutil.wait_procs(started, timeout=5)
    assert not alive


def test_oracle_out_stopped_leaves_nothing(tmp_path: Path) -> None:
    """Stopped while it computes (20,000 elements, 2,000 evaluations): no DIR, no DIR.partial."""
    stream = tmp_path / "s.stream"
    stream.write_text("".join(f'<{EX}p{i % 50}> <{EX}detectedAt> <{EX}r{i % 7}> "{i * 10}" .\n' for i in range(20_000)),
                      encoding="utf-8")
    query = tmp_path / "q.rq"
    query.write_text(f"""REGISTER QUERY q AS SELECT ?a ?r
FROM STREAM <http://s> [RANGE 1s STEP 100ms]
WHERE {{ ?a <{EX}detectedAt> ?r }}
""", encoding="utf-8")
    # The rdflib reference path (one SPARQL evaluation per window): slow enough to be stopped mid-way
    # on any machine; the fast paths can finish this stream within the wait on a quiet one.
    child = start("oracle", "--stream", stream, "--stream-format", "yabench", "--query", query, "--system", "csparql",
                  "--method", "reference", "--out", tmp_path / "expected", cwd=tmp_path)
    wait_for(lambda: child.poll() is not None or catches(child, signal.SIGTERM))  # running, handlers installed
    assert child.poll() is None, "the oracle finished before it could be stopped"
    code, lines = stopped(child, signal.SIGTERM)
    assert code == 130 and lines == ["rspwb: interrupted"], lines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.rq", "s.stream"]



def test_a_stop_during_an_import_still_exits_130(tmp_path: Path) -> None:
    """A stop signal that lands while ``dataclasses`` builds a class (an ``exec`` of a string, during the
    lazy imports of a command) once made CPython 3.11 kill the process with SIGINT (-2) after rspwb had
    handled it; the first signal must still end in exit 130 and one line."""
    (tmp_path / "stopped_in_an_import.py").write_text("""
import argparse, sys
from rsp_workbench.cli import main as cli
def stopped_in_an_exec(args):
    exec("raise KeyboardInterrupt")  # where dataclasses' generated methods are compiled
parser = argparse.ArgumentParser()
parser.set_defaults(func=stopped_in_an_exec)
cli.build_parser = lambda: parser
sys.exit(cli.main([]))
""", encoding="utf-8")
    # run with -m, as `./rspwb` runs the CLI: only that way does CPython act on the stale mark
    env = {**subprocess_env(), "PYTHONPATH": f"{subprocess_env()['PYTHONPATH']}:{tmp_path}"}
    child = subprocess.run([PYTHON, "-m", "stopped_in_an_import"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=60)
    assert child.returncode == 130 and child.stderr.splitlines() == ["rspwb: interrupted"], child.stderr

def test_ctrl_c_while_a_run_is_judged_stops_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Judging polls nothing, so the first Ctrl-C stops it at once (not after the judge, 20–35 s on a big run):
    exit 130, one line, the bundle marked cancelled, no .partial."""
    import os
    import threading

    import rsp_workbench.pipeline.run_one as pipeline
    from tests.e2e.bad_inputs_support import rspwb

    def slow_judge(*args: object, **kwargs: object) -> dict[str, object]:
        threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
        time.sleep(60)
        raise AssertionError("judging was not interrupted")

    monkeypatch.setattr(pipeline, "judge_run", slow_judge)
    out = tmp_path / "bundle"
    started = time.monotonic()
    stream = tmp_path / "rooms.stream"
    stream.write_text(ROOMS_STREAM, encoding="utf-8")
    outcome = rspwb("run", external_experiment(tmp_path, stream, "ok"), "--out", out, "--yes", "--quiet")
    assert time.monotonic() - started < 20
    assert outcome.code == 130 and outcome.lines() == ["rspwb: interrupted"], outcome.err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "cancelled" and manifest["runs"][0]["status"] == "cancelled"
    assert leftovers(out) == []
