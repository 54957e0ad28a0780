"""`rspwb generate`: write a generated stream to a file (CLI.md contract).

``rspwb generate --generator sg1 --param stations=50 --param interval=1s --param
duration=30s --param seed=1430236906 --format yabench --out s.stream`` writes exactly what
YABench's SG1 writes. ``rspwb generate EXPERIMENT.yaml --out PATH`` generates the stream of
one of the experiment's runs (``--case``, ``--repetition``, ``--size``). A progress bar goes
to stderr when it is a terminal (not with ``--quiet``); a summary line is always printed.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import IO, Any

from workbench.errors import UserError

BAR_WIDTH = 30
REFRESH_SECONDS = 0.1  # at most 10 redraws per second


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "generate",
        help="generate a stream (sg1, lsd-weather, lubm, chain-join) into a file",
        description="Generate a stream with a generator and parameters, or the stream of an "
        "experiment file, into a file in YABench text, timestamped N-Quads or Parquet.",
    )
    parser.add_argument("experiment", nargs="?", metavar="EXPERIMENT.yaml", help="experiment file whose stream to generate")
    parser.add_argument("--generator", metavar="NAME", help="generator name (sg1, lsd-weather, lubm, chain-join)")
    parser.add_argument(
        "--param", action="append", default=[], metavar="KEY=VALUE", help="generator parameter (repeatable)"
    )
    parser.add_argument("--out", required=True, metavar="PATH", help="output file (written atomically)")
    parser.add_argument(
        "--format",
        choices=("yabench", "nquads", "parquet"),
        help="output format (default from the extension: .parquet, .nq/.nquads, else yabench)",
    )
    parser.add_argument("--size", help="experiment form: apply this named size first")
    parser.add_argument("--case", type=int, default=0, help="experiment form: variable combination index (default 0)")
    parser.add_argument("--repetition", type=int, default=0, help="experiment form: repetition (seed) index (default 0)")
    engine = parser.add_mutually_exclusive_group()
    engine.add_argument("--spark", action="store_true", help="run as a Spark job even where one process is faster")
    engine.add_argument("--local", action="store_true", help="run in this process, without Spark")
    parser.add_argument("--spark-master", metavar="URL", help="Spark master URL (implies --spark)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--json", action="store_true", help="print one JSON object with the result on stdout")
    parser.set_defaults(func=run)


def parse_params(pairs: list[str]) -> dict[str, str]:
    """``["k=v", …]`` → ``{k: v}`` (UserError naming the malformed one)."""
    params: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UserError(f"expected KEY=VALUE, got {pair!r}", field="--param")
        params[key.strip()] = value
    return params


def default_format(out: str) -> str:
    lower = out.lower()
    if lower.endswith(".parquet"):
        return "parquet"
    if lower.endswith((".nq", ".nquads")):
        return "nquads"
    return "yabench"


def _experiment_stream(args: argparse.Namespace) -> tuple[str, dict[str, Any], Any, str | None]:
    """The generator, resolved parameters, flow shape and Spark master of the chosen run."""
    from workbench.experiment import load_experiment

    experiment = load_experiment(args.experiment)
    if args.size:
        from workbench.experiment import apply_size

        experiment = apply_size(experiment, args.size)
    if experiment.stream.generator is None:
        raise UserError("the experiment uses a recorded stream file; there is nothing to generate",
                        file=args.experiment, field="stream")
    runs = [run for run in experiment.runs() if run.case_index == args.case and run.repetition == args.repetition]
    if not runs:
        raise UserError(f"no run with case {args.case} and repetition {args.repetition}", file=args.experiment,
                        field="--case/--repetition")
    run_spec = runs[0]
    flow = None
    if run_spec.flow is not None:
        from workbench.generators.flows import FlowShape

        flow = FlowShape.from_settings(run_spec.flow.shape, run_spec.flow.settings, field="stream.flow")
    return experiment.stream.generator, dict(run_spec.stream_params), flow, experiment.spark_master


class ProgressBar:
    """A one-line text progress bar on a terminal stream, redrawn at most 10 times a second."""

    def __init__(self, stream: IO[str], enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled
        self._last = 0.0
        self._drawn = False

    def __call__(self, progress: Any) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < REFRESH_SECONDS:
            return
        self._last = now
        rate = progress.elements / progress.seconds if progress.seconds > 0 else 0.0
        if progress.total_elements:
            fraction = min(1.0, progress.elements / progress.total_elements)
            filled = int(fraction * BAR_WIDTH)
            head = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {fraction * 100:5.1f}%"
            count = f"{progress.elements:,}/{progress.total_elements:,}"
        else:
            head, count = "[generating]", f"{progress.elements:,}"
        self.stream.write(f"\r{head} {count} triples {rate / 1e6:6.2f} M/s {progress.seconds:6.1f} s ")
        self.stream.flush()
        self._drawn = True

    def finish(self) -> None:
        if self._drawn:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()


def run(args: argparse.Namespace) -> int:
    from workbench.cli.main import print_json
    from workbench.pipeline.generate import GenerationCancelled, TaskState, generate

    if args.experiment and (args.generator or args.param):
        raise UserError("give either EXPERIMENT.yaml or --generator/--param, not both", field="--generator")
    flow, master = None, args.spark_master
    if args.experiment:
        generator, params, flow, experiment_master = _experiment_stream(args)
        master = master or experiment_master
    elif args.generator:
        generator, params = args.generator, parse_params(args.param)
    else:
        raise UserError("give an experiment file or --generator NAME", field="--generator")
    fmt = args.format or default_format(args.out)
    engine = "local" if args.local else "spark" if (args.spark or master) else "auto"

    stderr = sys.stderr
    bar = ProgressBar(stderr, enabled=not args.quiet and stderr.isatty())
    try:
        result = generate(
            generator, params, args.out, fmt, engine=engine, spark_master=master,
            state=TaskState(on_progress=bar), flow=flow,
        )
    except GenerationCancelled:
        bar.finish()
        stderr.write("rspwb: generation cancelled; no output written\n")
        return 130
    finally:
        bar.finish()
    rate = result.elements_per_second
    stderr.write(
        f"generated {result.generator} ({result.engine}): {result.elements:,} elements (triples), "
        f"{result.items:,} {result.item_name}, {result.seconds:.2f} s, {rate:,.0f} triples/s -> {result.path}\n"
    )
    if args.json:
        print_json({
            "generator": result.generator,
            "path": str(result.path),
            "format": result.format,
            "engine": result.engine,
            "items": result.items,
            "item_name": result.item_name,
            "elements": result.elements,
            "triples": result.elements,
            "seconds": round(result.seconds, 6),
            "triples_per_second": round(rate, 1) if rate != float("inf") else None,
        })
    return 0
