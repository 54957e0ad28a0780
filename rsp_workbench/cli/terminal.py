"""What every `rspwb` command shares at the terminal: ``--json`` output, stop signals, ``--max-runs``.

Its own module so that the commands and `rsp_workbench.cli.main` (which lists the commands)
do not import each other.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
from typing import Any, Iterator


def add_max_runs(parser: Any) -> None:
    """``--max-runs N``: allow an experiment more runs than the default bound (a typo fails fast without it);
    `rsp_workbench.cli.main` applies it around the command."""
    from rsp_workbench.experiment.runs import MAX_RUNS

    parser.add_argument("--max-runs", type=int, metavar="N", default=None,
                        help=f"allow the experiment up to N runs (default {MAX_RUNS:,})")


def print_json(payload: Any) -> None:
    """``--json`` output: exactly one JSON object on stdout."""
    sys.stdout.write(json.dumps(payload, indent=2, sort_keys=False) + "\n")


# What a scheduler, a container stop or a closing terminal sends: handled like Ctrl-C.
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def _stop_like_ctrl_c(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def forget_stray_interrupt() -> None:
    """Let a handled stop signal end the process with the exit code ``main`` returns.

    CPython 3.11 marks the process "killed by Ctrl-C" when a ``KeyboardInterrupt`` leaves code
    run by ``exec`` of a *string* (``dataclasses`` builds every ``__init__``/``__repr__`` that
    way during imports), even when the interrupt is caught afterwards: at exit it then kills
    itself with SIGINT (exit status -2) instead of returning 130. The flag is reset by the next
    string ``exec`` that completes, so one empty ``exec`` undoes the stale mark.
    """
    exec("")  # noqa: S102 -- a constant empty string: resets CPython's unhandled-interrupt flag


@contextlib.contextmanager
def stop_signals_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP raise ``KeyboardInterrupt`` in the main thread while a command runs.

    Every cleanup path already handles Ctrl-C (``.partial`` files removed, bundles marked
    cancelled, engine processes stopped), so the other stop signals take the same path
    instead of killing the process with files half-written. Handlers are restored after.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _stop_like_ctrl_c) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
