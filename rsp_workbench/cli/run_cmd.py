"""`rspwb run`: generate → engines → oracle → result bundle (its summary again: `rspwb report`).

Contract (docs/design/CLI.md):
  rspwb run FILE [--size smoke|full] --out DIR [--yes]
Progress goes to stderr, the summary table to stdout. External engine commands are shown
and must be confirmed: ``--yes``, or a y/N prompt when stdin is a terminal; otherwise the
run stops with exit 2 before anything starts.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any


def register(subparsers: Any) -> None:
    run = subparsers.add_parser(
        "run", help="run an experiment: generate the stream, run the engines, judge them, write a result bundle",
        description="Generate → engines on the test stand → oracle → result bundle (docs/result-bundle.md).",
    )
    run.add_argument("file", metavar="FILE", help="the experiment file (YAML)")
    run.add_argument("--out", required=True, metavar="DIR",
                     help="the result bundle folder: new, empty or an earlier bundle (whose own files are replaced; "
                          "other files in it are kept)")
    run.add_argument("--force", action="store_true",
                     help="write the bundle into an existing folder that is not a bundle (its files are kept)")
    from rsp_workbench.cli.terminal import add_max_runs

    add_max_runs(run)
    run.add_argument("--size", default=None, help="a size the experiment defines (e.g. smoke, full)")
    run.add_argument("--yes", action="store_true", help="confirm the external engine commands the experiment runs")
    run.add_argument("--scheduler", choices=("local", "spark"), default="local",
                     help="local (default): one measured engine run at a time; spark: one Spark task per run")
    run.add_argument("--stream-format", choices=("parquet", "nquads"), default="parquet",
                     help="format of generated streams in the bundle (default parquet)")
    run.add_argument("--json", action="store_true", help="print the summary as one JSON object (as report --json)")
    run.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    run.set_defaults(func=run_command)


def ask_on_terminal(prompt: str) -> bool:
    """A y/N question on stderr, answered on stdin (external commands are confirmed like this)."""
    sys.stderr.write(prompt + " [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def run_command(args: argparse.Namespace) -> int:
    from rsp_workbench.results.bundle import format_table
    from rsp_workbench.cli.terminal import STOP_SIGNALS, print_json
    from rsp_workbench.experiment import load_experiment
    from rsp_workbench.pipeline.run_experiment import run_experiment
    from rsp_workbench.pipeline.run_task import ExperimentProgress

    experiment = load_experiment(args.file)
    cancel = threading.Event()

    stage = ["validate"]  # the phase the run is in, for the stop signals

    def progress(event: ExperimentProgress) -> None:
        if event.stage != "kpi":
            stage[0] = event.stage
        if args.quiet:
            return
        counter = f"[{event.done}/{event.total}] " if event.stage == "run-done" else ""
        sys.stderr.write(f"rspwb: {counter}{event.message}\n")
        sys.stderr.flush()

    def interrupted(signum: int, frame: Any) -> None:  # first Ctrl-C/SIGTERM: cancel cleanly; second: abort
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        if stage[0] not in ("engine", "stream"):  # only the stand and the generators poll `cancel`: elsewhere
            raise KeyboardInterrupt  # (judging, reading inputs) stop now; the run is recorded as cancelled
        sys.stderr.write("rspwb: cancelling (stopping the engine process)…\n")

    handled = (signal.SIGINT, *STOP_SIGNALS)
    previous = ({signum: signal.signal(signum, interrupted) for signum in handled}
                if threading.current_thread() is threading.main_thread() else {})
    from rsp_workbench.pipeline.spark import active_spark, stop_spark

    session_before = active_spark()
    try:
        summary = run_experiment(
            experiment, args.out, size=args.size, assume_yes=args.yes, ask=ask_on_terminal if sys.stdin.isatty() else None,
            cancel=cancel, progress=progress, scheduler=args.scheduler, stream_format=args.stream_format,
            force=args.force,
        )
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if session_before is None and active_spark() is not None:
            stop_spark()  # a session this command started: a cluster must see the app end, not its executors die
    if args.json:
        print_json(summary.to_json())
    else:
        print(format_table(summary))
    failed = [row for row in summary.rows if row.get("status") not in ("ok", "cancelled")]
    if summary.status == "failed" and failed:  # one line on stderr for scripts; every error is in the table
        first = failed[0]
        reason = str(first.get("error") or first.get("status")).splitlines()[0]
        sys.stderr.write(f"rspwb: {len(failed)} of {len(summary.rows)} runs failed; {first.get('run_id')}: {reason}\n")
    return 0 if summary.status == "ok" else (130 if summary.status == "cancelled" else 1)
