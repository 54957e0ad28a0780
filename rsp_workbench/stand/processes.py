"""Engine processes: started isolated and in their own session, and reaped whole at the end.

An experiment file is untrusted input (README.md, "Security"), so the processes a run
starts follow three rules kept here in one place:

* the built-in worker runs Python isolated (``-I``: no current directory, script
  directory, ``PYTHONPATH`` or user site on the import path) with the workbench located
  explicitly, so a module such as ``orjson.py`` next to a downloaded experiment is never
  imported;
* every engine runs in a session of its own, carries a mark in its environment that its
  descendants inherit, and on Linux is killed by the kernel when the thread that started
  it dies (``PR_SET_PDEATHSIG``), so a SIGKILLed ``rspwb`` leaves no engine behind;
* at the end of every run, whatever happened, :func:`reap` kills what is left of the
  engine's process tree: its descendants, and any process carrying the run's mark (a
  daemon that double-forked and left the session), and names them for ``run.json``.
"""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import psutil

#: The folder that holds the ``rsp_workbench`` package this process runs (a checkout or site-packages).
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
#: Environment variable every engine process (and all it starts) carries: the run's mark.
RUN_MARK = "RSPWB_ENGINE_RUN"
REAP_WAIT_S = 3.0  # how long reap waits for the killed processes to be gone
_PR_SET_PDEATHSIG = 1  # prctl(2)

# ``python -I -c BOOTSTRAP ROOT MODULE ARGS…``: ROOT first on the import path (unless it is there
# already), then MODULE run as ``__main__`` — ``python -m MODULE`` without the current directory.
_BOOTSTRAP = ("import runpy, sys; root = sys.argv.pop(1); module = sys.argv.pop(1); "
              "root in sys.path or sys.path.insert(0, root); "
              "runpy.run_module(module, run_name='__main__', alter_sys=True)")


def isolated_python_command(module: str, *args: str) -> list[str]:
    """``python -m MODULE ARGS`` for this interpreter, isolated from the working directory and environment.

    ``-I`` would also hide a workbench found only through ``PYTHONPATH``; the package's own
    folder is therefore put on the path explicitly (the same code as this process runs).
    ``-u``: unbuffered, as ``PYTHONUNBUFFERED`` (ignored under ``-I``) made it before.
    """
    return [sys.executable, "-I", "-u", "-c", _BOOTSTRAP, str(PACKAGE_ROOT), module, *args]


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
    return function  # type: ignore[no-any-return]


def _die_with_parent_hook() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGKILL when its parent dies (Linux), else None.

    Resolved before the fork (the hook itself only calls prctl and getppid). If the parent is
    already gone by the time the hook runs, the child ends at once.
    """
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return hook


def start_engine(argv: Sequence[str], *, env: Mapping[str, str], cwd: str | None, mark: str) -> subprocess.Popen[bytes]:
    """Start an engine with pipes for the protocol, in a new session, marked with ``mark``,
    dying with this process (OSError if it cannot start)."""
    return subprocess.Popen(
        list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**env, RUN_MARK: mark}, cwd=cwd, start_new_session=True, preexec_fn=_die_with_parent_hook(),
    )


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


def reap(engine: subprocess.Popen[bytes], mark: str, seen: Iterable[psutil.Process] = ()) -> list[dict[str, Any]]:
    """Kill what is left of an engine's process tree and wait until it is gone; returns what was killed.

    The tree is the engine, its descendants now, those ``seen`` during the run, and every
    process carrying ``mark`` (found also after leaving the session and being re-parented to init,
    as a double-forked daemon is).
    The engine itself is waited for through ``engine`` (so its exit code is kept).
    """
    candidates: dict[int, psutil.Process] = {process.pid: process for process in seen}
    try:
        root = psutil.Process(engine.pid)
        candidates.setdefault(root.pid, root)
        candidates.update({child.pid: child for child in root.children(recursive=True)})
    except psutil.Error:
        pass
    candidates.update({process.pid: process for process in marked_processes(mark)})
    killed: list[dict[str, Any]] = []
    for pid, process in candidates.items():
        if pid == engine.pid and engine.poll() is not None:
            continue  # exited by itself (and already waited for)
        description = _alive(process)
        if description is None:
            continue
        try:
            process.kill()
            killed.append(description)
        except psutil.Error:
            continue
    if engine.poll() is None:
        try:
            engine.wait(timeout=REAP_WAIT_S)
        except subprocess.TimeoutExpired:
            pass
    _wait_gone([entry["pid"] for entry in killed if entry["pid"] != engine.pid])
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
