"""`rspwb generate`: write a generated stream to a file (docs/design/CLI.md contract).

``rspwb generate --generator sg1 --param stations=50 --param interval=1s --param
duration=30s --param seed=1430236906 --format yabench --out s.stream`` writes exactly what
YABench's SG1 writes. ``rspwb generate EXPERIMENT.yaml --out PATH`` (or ``--experiment
EXPERIMENT.yaml``) generates the stream of one of the experiment's runs (``--case``,
``--repetition``, ``--size``; ``--stream IRI`` picks one of a ``streams:`` experiment's
streams, with the seed ``rspwb run`` gives it). A progress bar goes
to stderr when it is a terminal (not with ``--quiet``); a summary line is always printed.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import threading
import time
from typing import IO, TYPE_CHECKING, Any, Callable, Iterator

from rsp_workbench.errors import UserError

if TYPE_CHECKING:
    from rsp_workbench.experiment.model import Experiment, StreamSpec

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
    parser.add_argument("--experiment", dest="experiment_option", metavar="EXPERIMENT.yaml",
                        help="the same as the EXPERIMENT.yaml argument")
    parser.add_argument("--stream", metavar="IRI",
                        help="experiment form: which stream of a 'streams:' experiment (required when it declares several)")
    parser.add_argument("--generator", metavar="NAME", help="generator name (sg1, lsd-weather, lubm, chain-join)")
    parser.add_argument(
        "--param", action="append", default=[], metavar="KEY=VALUE", help="generator parameter (repeatable)"
    )
    parser.add_argument(
        "--flow-param", action="append", default=[], metavar="KEY=VALUE",
        help="flow shape (Heaven's streamer) applied to the generated or --source triples, e.g. "
        "--flow-param shape=step --flow-param initial=10 --flow-param step=5 --flow-param every=100",
    )
    transform = parser.add_argument_group("streams from files instead of a generator")
    transform.add_argument("--source", metavar="RDF_FILE", help="cut the triples of any RDF file into stimuli with --flow-param")
    transform.add_argument("--replay", metavar="STREAM", help="re-timestamp a recorded stream (with --speed or --rate)")
    transform.add_argument("--speed", type=float, help="--replay: play FACTOR times faster (0.5 = half speed)")
    transform.add_argument("--rate", type=float, help="--replay: the mean rate to replay at, in triples per second")
    transform.add_argument("--merge", action="append", default=[], metavar="STREAM", help="merge several streams into one (repeatable)")
    parser.add_argument("--out", required=True, metavar="PATH",
                        help="output file (written atomically; an existing file is replaced only with --force)")
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    parser.add_argument(
        "--format",
        choices=("yabench", "nquads", "parquet"),
        help="output format (default from the extension: .parquet, .nq/.nquads, else yabench)",
    )
    from rsp_workbench.cli.terminal import add_max_runs

    add_max_runs(parser)
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


def parse_params(pairs: list[str], option: str = "--param") -> dict[str, str]:
    """``["k=v", …]`` → ``{k: v}`` (UserError naming the malformed one)."""
    params: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UserError(f"expected KEY=VALUE, got {pair!r}", field=option)
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
    """The generator, resolved parameters, flow shape and Spark master of the chosen run's chosen stream."""
    from rsp_workbench.experiment import expand_runs, load_experiment

    experiment = load_experiment(args.experiment)
    if args.size:
        from rsp_workbench.experiment import apply_size

        experiment = apply_size(experiment, args.size)
    stream = _chosen_stream(experiment, args.stream, args.experiment)
    if stream.generator is None:
        which = "uses a recorded stream file" if stream.iri is None else f"reads <{stream.iri}> from a recorded file"
        raise UserError(f"the experiment {which}; there is nothing to generate", file=args.experiment, field=stream.path)
    runs = [run for run in expand_runs(experiment) if run.case_index == args.case and run.repetition == args.repetition]
    if not runs:
        raise UserError(f"no run with case {args.case} and repetition {args.repetition}", file=args.experiment,
                        field="--case/--repetition")
    run_stream = next(s for s in runs[0].streams if s.iri == stream.iri)  # seed as `rspwb run` gives it
    flow = None
    if run_stream.flow is not None:
        from rsp_workbench.generators.flows import FlowShape

        flow = FlowShape.from_settings(run_stream.flow.shape, run_stream.flow.settings, field=f"{stream.path}.flow")
    return stream.generator, dict(run_stream.params), flow, experiment.spark_master


def _chosen_stream(experiment: "Experiment", iri: str | None, file: str) -> "StreamSpec":
    """The stream ``--stream IRI`` names; without it, the only stream (an error lists them when there are several)."""
    declared = ", ".join(f"<{stream.iri}>" for stream in experiment.streams)
    if iri is None:
        if len(experiment.streams) > 1:
            raise UserError(f"the experiment declares {len(experiment.streams)} streams; choose one with "
                            f"--stream IRI: {declared}", file=file, field="--stream")
        return experiment.stream
    if not experiment.named_streams:
        raise UserError("--stream chooses among the streams of a 'streams:' experiment; this one has a single "
                        "'stream:' (leave --stream out)", file=file, field="--stream")
    wanted = iri.strip().strip("<>")
    for stream in experiment.streams:
        if stream.iri == wanted:
            return stream
    raise UserError(f"the experiment declares no stream <{wanted}>; it declares {declared}", file=file, field="--stream")


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


def _flow(args: argparse.Namespace) -> Any:
    if not args.flow_param:
        return None
    from rsp_workbench.generators.flows import parse_flow

    settings: dict[str, Any] = dict(parse_params(args.flow_param, option="--flow-param"))
    return parse_flow(settings, field="--flow-param")


def _read_recorded(path: str, option: str) -> Any:
    """The elements of a recorded stream file; anything else is an error naming the option."""
    import os

    from rsp_workbench.streams.readers import detect_format, read_stream

    if not os.path.exists(path):
        raise UserError("no such file or directory", file=path, field=option)
    try:
        fmt = detect_format(path)
    except UserError as error:
        raise UserError(f"not a stream: {error.message}", file=path, field=option) from None
    return read_stream(path, fmt)


def _transform(args: argparse.Namespace, fmt: str) -> int:
    """--source / --replay / --merge: streams made from files (Heaven's streamer tools)."""
    import time

    from rsp_workbench.generators import flows
    from rsp_workbench.streams.writers import write_stream

    forms = [name for name, value in (("--source", args.source), ("--replay", args.replay), ("--merge", args.merge)) if value]
    if len(forms) > 1 or args.experiment or args.generator:
        raise UserError("give one of EXPERIMENT.yaml, --generator, --source, --replay or --merge", field=forms[-1] if forms else "--generator")
    started = time.perf_counter()
    flow = _flow(args)
    if args.source:
        if flow is None:
            raise UserError("cutting a file into stimuli needs a flow shape (--flow-param shape=…)", field="--flow-param")
        try:
            elements: Any = flows.apply_flow(flows.read_triples(args.source), flow)
        except UserError as error:
            raise error.located(file=args.source, field="--source") from None
    elif args.replay:
        if (args.speed is None) == (args.rate is None):
            raise UserError("give exactly one of --speed FACTOR or --rate TRIPLES_PER_S", field="--speed")
        if (args.speed is not None and args.speed <= 0) or (args.rate is not None and args.rate <= 0):
            raise UserError("must be positive", field="--speed" if args.speed is not None else "--rate")
        elements = flows.retime(_read_recorded(args.replay, "--replay"), args.speed, rate=args.rate)
    else:
        if len(args.merge) < 2:
            raise UserError("give at least two streams to merge", field="--merge")
        elements = flows.merge_streams(*(_read_recorded(path, "--merge") for path in args.merge))
    if flow is not None and not args.source:
        elements = flows.apply_flow(elements, flow)
    refuse_to_replace(args.out, args.force)
    try:
        count = write_stream(args.out, elements, fmt)
    except UserError as error:
        raise error.located(field=forms[0]) from None
    seconds = time.perf_counter() - started
    sys.stderr.write(f"wrote {count:,} elements in {seconds:.2f} s -> {args.out}\n")
    if args.json:
        from rsp_workbench.cli.terminal import print_json

        print_json({"out": args.out, "format": fmt, "elements": count, "seconds": round(seconds, 3)})
    return 0


@contextlib.contextmanager
def cancel_on_stop_signals(cancel: Callable[[], None]) -> Iterator[None]:
    """Ctrl-C, SIGTERM or SIGHUP: the first cancels (``cancel`` runs on its own thread, since it may call
    into the JVM, which a signal handler must not); a second one interrupts at once."""
    from rsp_workbench.cli.terminal import STOP_SIGNALS

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    requested = threading.Event()

    def stop(signum: int, frame: Any) -> None:
        if requested.is_set():  # the user insists: stop now, without Py4J's logged stack traces
            logging.disable(logging.CRITICAL)
            raise KeyboardInterrupt
        requested.set()
        threading.Thread(target=cancel, name="rspwb-cancel", daemon=True).start()

    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, *STOP_SIGNALS)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def refuse_to_replace(out: str, force: bool) -> None:
    """An existing ``--out`` is the user's until they say otherwise: replaced only with ``--force``
    (never a folder, nor what a symbolic link points to)."""
    import os

    if os.path.isdir(out):
        raise UserError("is a folder; give a file name", file=out, field="--out")
    if os.path.lexists(out) and not force:
        raise UserError("exists; pass --force to replace it", file=out, field="--out")


def run(args: argparse.Namespace) -> int:
    from rsp_workbench.cli.terminal import print_json
    from rsp_workbench.pipeline.generate import GenerationCancelled, TaskState, generate

    if args.experiment_option:
        if args.experiment and args.experiment != args.experiment_option:
            raise UserError("give the experiment file once (EXPERIMENT.yaml or --experiment)", field="--experiment")
        args.experiment = args.experiment_option
    if args.stream is not None and not args.experiment:
        raise UserError("--stream chooses a stream of an experiment file; give EXPERIMENT.yaml too", field="--stream")
    if args.source or args.replay or args.merge:
        return _transform(args, args.format or default_format(args.out))
    if args.experiment and (args.generator or args.param):
        raise UserError("give either EXPERIMENT.yaml or --generator/--param, not both", field="--generator")
    flow, master = None, args.spark_master
    if args.experiment:
        generator, params, flow, experiment_master = _experiment_stream(args)
        master = master or experiment_master
    elif args.generator:
        generator, params = args.generator, parse_params(args.param)
        flow = _flow(args)
    else:
        raise UserError("give an experiment file or --generator NAME", field="--generator")
    fmt = args.format or default_format(args.out)
    engine = "local" if args.local else "spark" if (args.spark or master) else "auto"
    refuse_to_replace(args.out, args.force)  # after the arguments are known good: their errors come first

    stderr = sys.stderr
    bar = ProgressBar(stderr, enabled=not args.quiet and stderr.isatty())
    state = TaskState(on_progress=bar)
    from rsp_workbench.pipeline.spark import active_spark, stop_spark

    session_before = active_spark()
    try:
        with cancel_on_stop_signals(state.cancel):
            result = generate(generator, params, args.out, fmt, engine=engine, spark_master=master, state=state,
                              flow=flow)
    except (GenerationCancelled, KeyboardInterrupt):
        bar.finish()
        stderr.write("rspwb: generation cancelled; no output written\n")
        return 130
    finally:
        bar.finish()
        if session_before is None and active_spark() is not None:
            stop_spark()  # a session this command started: stopped before exit, not killed with its workers
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
