"""Engine processes: started isolated and in their own session, and reaped whole at the end.

An experiment file is untrusted input (README.md, "Security"), so the processes a run
starts follow three rules kept here in one place:

* the built-in worker runs Python isolated (``-I``: no current directory, script
  directory, ``PYTHONPATH`` or user site on the import path) with the workbench located
  explicitly, so a module such as ``orjson.py`` next to a downloaded experiment is never
  imported;
* every engine runs in a session of its own and carries a mark in its environment that its
  descendants inherit; on Linux it runs under a keeper (`rsp_workbench.stand.keeper`), a
  child subreaper that every orphan of the engine's tree is re-parented to and that kills
  that whole tree when ``rspwb`` is gone — also after ``kill -9``, also a child or a
  double-forked daemon of the engine, whatever its session or environment;
* at the end of every run, whatever happened, :func:`reap` kills what is left of the
  engine's process tree (through the keeper, then anything still found: its descendants,
  any process carrying the run's mark) and names them for ``run.json``.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import psutil

# how every Python engine program starts (in the engine interface: program engines start Python too)

#: Environment variable every engine process (and all it starts) carries: the run's mark.
RUN_MARK = "RSPWB_ENGINE_RUN"
#: The keeper (Linux): a child subreaper between ``rspwb`` and each engine, run as a script.
KEEPER = Path(__file__).with_name("keeper.py")
REAP_WAIT_S = 3.0  # how long reap waits for the killed processes to be gone

def new_run_mark() -> str:
    """A fresh value of :data:`RUN_MARK` for one run."""
    return uuid.uuid4().hex


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` (Linux), or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    function.restype = ctypes.c_int
    return function


@dataclass
class EngineProcess:
    """A started engine: the process the stand talks to and waits for (the keeper, which passes the
    engine its pipes and exits as the engine did, or the engine itself where there is no keeper),
    the engine's own pid (whose tree the stand measures), and the keeper's report pipe."""

    popen: subprocess.Popen[bytes]
    pid: int
    report: int | None = None  # read end of the keeper's report pipe (None: no keeper)
    reported: bytes = b""  # read from it and not yet taken


_death_lock = threading.Lock()
_death_pipe: list[int] = []  # [read end, write end]; the write end stays open, unshared, while this process lives


def _death_read_end() -> int:
    """The read end of a pipe whose only writer is this process: at EOF, a keeper knows ``rspwb`` is gone."""
    with _death_lock:
        if not _death_pipe:
            _death_pipe.extend(os.pipe())  # both close-on-exec: no other program holds the write end
        return _death_pipe[0]


def start_engine(argv: Sequence[str], *, env: Mapping[str, str], cwd: str | None, mark: str) -> EngineProcess:
    """Start an engine with pipes for the protocol, in a new session, marked with ``mark``, under a
    keeper on Linux (OSError if it cannot start: the engine's own error, as starting it directly gives)."""
    environment = {**env, RUN_MARK: mark}
    pipes: dict[str, Any] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    if _prctl() is None:  # no keeper outside Linux: the engine directly, its tree reaped at the end of the run
        popen = subprocess.Popen(list(argv), **pipes, env=environment, cwd=cwd, start_new_session=True)
        return EngineProcess(popen, popen.pid)
    death = _death_read_end()
    report, report_end = os.pipe()
    try:
        popen = subprocess.Popen([sys.executable, "-I", "-S", str(KEEPER), str(report_end), str(death), "--", *argv],
                                 **pipes, env=environment, cwd=cwd, start_new_session=True,
                                 pass_fds=(report_end, death))
    except BaseException:
        os.close(report)
        raise
    finally:
        os.close(report_end)
    started = EngineProcess(popen, popen.pid, report)
    first = _report_line(started)
    if first.startswith("engine "):
        started.pid = int(first.split()[1])
        return started
    _close(started)
    if first.startswith("error "):
        number, _, reason = first[len("error "):].partition("\t")
        raise OSError(int(number) if number.isdigit() else 0, reason, argv[0])
    raise OSError(f"the engine's keeper ended before starting it (exit code {popen.returncode})")


def _report_line(engine: EngineProcess) -> str:
    """The keeper's first report line (it writes it right after starting the engine); '' at EOF."""
    assert engine.report is not None
    while b"\n" not in engine.reported:
        piece = os.read(engine.report, 4096)
        if not piece:
            break
        engine.reported += piece
    line, _, engine.reported = engine.reported.partition(b"\n")
    return line.decode("utf-8", "replace")


def _close(engine: EngineProcess) -> None:
    """After a failed start: wait for the keeper, close its pipes."""
    engine.popen.wait()
    for stream in (engine.popen.stdin, engine.popen.stdout, engine.popen.stderr):
        if stream is not None:
            stream.close()
    if engine.report is not None:
        os.close(engine.report)
        engine.report = None


def _stop_keeper(engine: EngineProcess) -> list[dict[str, Any]]:
    """Have the keeper end the engine's whole tree (if it has not already) and take what it killed."""
    assert engine.report is not None
    popen = engine.popen
    if popen.poll() is None:
        popen.send_signal(signal.SIGTERM)
        try:
            popen.wait(timeout=REAP_WAIT_S)
        except subprocess.TimeoutExpired:
            popen.kill()  # the engine dies with it (PR_SET_PDEATHSIG); the rest is found below
            with contextlib.suppress(subprocess.TimeoutExpired):
                popen.wait(timeout=REAP_WAIT_S)
    os.set_blocking(engine.report, False)
    with contextlib.suppress(OSError):
        while piece := os.read(engine.report, 1 << 16):
            engine.reported += piece
    os.close(engine.report)
    engine.report = None
    killed: list[dict[str, Any]] = []
    for line in engine.reported.decode("utf-8", "replace").splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "killed":
            pid, name, command = (rest.split("\t", 2) + ["", ""])[:3]
            killed.append({"pid": int(pid) if pid.isdigit() else None, "name": name, "command": command})
        elif kind == "more":
            killed.append({"pid": None, "name": "…", "command": f"{rest} more processes"})
    engine.reported = b""
    return killed


def marked_processes(mark: str) -> list[psutil.Process]:
    """Every process of this user whose environment carries ``mark`` (the engine's and its descendants')."""
    found = []
    me = os.getpid()
    for process in psutil.process_iter():
        if process.pid == me:
            continue
        try:
            if process.environ().get(RUN_MARK) == mark:
                found.append(process)
        except psutil.Error:  # gone, a zombie or another user's
            continue
    return found


def reap(engine: EngineProcess, mark: str, seen: Iterable[psutil.Process] = ()) -> list[dict[str, Any]]:
    """Kill what is left of an engine's process tree and wait until it is gone; returns what was killed.

    First the keeper ends the tree it holds (every orphan of the engine was re-parented to it);
    then whatever is still found is killed: the engine, its descendants now, those ``seen``
    during the run, and every process carrying ``mark`` (found also after leaving the session
    and being re-parented to init, as a double-forked daemon is where there is no keeper).
    The engine (or its keeper) is waited for through ``engine.popen`` (so its exit code is kept).
    """
    popen = engine.popen
    killed = _stop_keeper(engine) if engine.report is not None else []
    candidates: dict[int, psutil.Process] = {process.pid: process for process in seen}
    for pid in {engine.pid, popen.pid}:
        try:
            root = psutil.Process(pid)
            candidates.setdefault(root.pid, root)
            candidates.update({child.pid: child for child in root.children(recursive=True)})
        except psutil.Error:
            pass
    candidates.update({process.pid: process for process in marked_processes(mark)})
    named = {entry["pid"] for entry in killed}
    for pid, process in candidates.items():
        if pid == popen.pid and popen.poll() is not None:
            continue  # exited by itself (and already waited for)
        description = _alive(process)
        if description is None:
            continue
        try:
            process.kill()
        except psutil.Error:
            continue
        if pid in named:  # the keeper killed it; on a loaded machine it was not gone yet
            continue
        if pid != popen.pid or popen.pid == engine.pid:  # a keeper that had to be killed is not the engine's
            killed.append(description)
    if popen.poll() is None:
        try:
            popen.wait(timeout=REAP_WAIT_S)
        except subprocess.TimeoutExpired:
            pass
    _wait_gone([entry["pid"] for entry in killed if entry["pid"] not in (popen.pid, None)])
    return killed


def _alive(process: psutil.Process) -> dict[str, Any] | None:
    """The process as ``run.json`` names it, if it is still running (a zombie is not); else None."""
    try:
        with process.oneshot():
            if not process.is_running() or process.status() == psutil.STATUS_ZOMBIE:
                return None
            command = " ".join(process.cmdline())
            return {"pid": process.pid, "name": process.name(),
                    "command": command if len(command) <= 200 else command[:199] + "…"}
    except psutil.Error:
        return None


def _wait_gone(pids: Sequence[int]) -> None:
    """Wait (at most :data:`REAP_WAIT_S`) until the killed processes are gone (reaping any that is
    this process's child, so that no zombie stays; the others' parents or init reap theirs)."""
    pending = set(pids)
    deadline = time.monotonic() + REAP_WAIT_S
    me = os.getpid()
    while pending and time.monotonic() < deadline:
        for pid in list(pending):
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    pending.discard(pid)
                    continue
            except ChildProcessError:
                pass
            try:
                process = psutil.Process(pid)
                if process.status() == psutil.STATUS_ZOMBIE and process.ppid() != me:
                    pending.discard(pid)  # dead; its own parent reaps it
            except psutil.Error:
                pending.discard(pid)
        if pending:
            time.sleep(0.02)
