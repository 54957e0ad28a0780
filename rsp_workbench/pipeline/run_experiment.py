"""``rspwb run``: generate → engines on the test stand → oracle → result bundle.

:func:`run_experiment` validates every run first (unknown engine, a query an engine cannot
run, bad oracle settings: a :class:`UserError` before anything starts), asks for the
confirmation of external commands, generates each distinct stream once into the bundle,
then executes the runs. Each run is :func:`execute_run`: the engine in its own OS process
(`rsp_workbench.stand.host.run_engine`), then the judging of its responses (verdict,
per-window quality or recall: `rsp_workbench.oracle.judge`), written into ``runs/<run_id>/``.
This module only schedules, generates, runs and writes. Failed runs are recorded and the
others continue; cancelling stops the current engine process and marks the bundle
``cancelled``. Layout of the bundle: docs/result-bundle.md.

Scheduling. ``scheduler="local"`` (default) runs at most one measured engine run at a time,
in order, so that measurements never share the CPU (docs/design/ARCHITECTURE.md, measurement
integrity). ``scheduler="spark"`` maps the runs over a Spark RDD with one partition per
run, each task calling the same :func:`execute_run` on an executor (for sweeps on a
cluster whose workers share the bundle folder, e.g. over NFS). Use it with one core per
executor so runs on one machine do not interfere; on ``local[*]`` it runs several engine
runs at once and the measurements are not comparable. Cancelling a Spark sweep cancels
the job group; runs already finished stay in the bundle.
"""

from __future__ import annotations

import itertools
import os
import platform
import shutil
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from rsp_workbench.results.bundle import BUNDLE_FORMAT, EXPERIMENT_COPY, MANIFEST, ORACLE_FILE, RUN_FILE, RUNS_DIR, STREAMS_DIR, SUMMARY, WINDOWS_FILE, YABENCH_DIR, Bundle, run_row
from rsp_workbench.results.json_files import read_json
from rsp_workbench.files import JsonRows, PARTIAL, write_json_atomic, write_lines_atomic, write_text_atomic
from rsp_workbench.errors import UserError
from rsp_workbench.experiment.model import Experiment, RunSpec, RunStream
from rsp_workbench.experiment.runs import expand_runs
from rsp_workbench.experiment.static_data import load_static

SCHEDULERS = ("local", "spark")
STREAM_FORMATS = ("parquet", "nquads")
_STREAM_SUFFIX = {"parquet": ".parquet", "nquads": ".nq"}


@dataclass(frozen=True)
class ExperimentProgress:
    """One progress event: ``stage`` is validate | warning | stream | engine | kpi | oracle | run-done | done.

    ``data`` carries extras for live views: ``validate`` → ``{"streams": n}`` (streams to
    generate); ``engine`` → ``{"engine", "stimuli"}``; ``run-done`` → the run's summary
    row (``rsp_workbench.results.bundle.run_row``); ``kpi`` (only with ``live_kpis``) →
    one probe sample ``{"time", "rss_mb", "cpu_percent", "threads", "responses",
    "stimuli_done"}`` while the engine runs, and a last one with ``"final": True``.
    """

    stage: str
    message: str
    done: int = 0
    total: int = 0
    run_id: str | None = None
    data: Mapping[str, Any] | None = None


ProgressCallback = Callable[[ExperimentProgress], None]


@dataclass(frozen=True)
class StreamRef:
    """A stream the runs read: generated into the bundle, or the experiment's own file.

    ``iri`` is the stream IRI the queries' windows bind to (``streams:`` experiments);
    None for the single ``stream:`` that every window reads.
    """

    key: str
    path: str
    format: str
    generator: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    flow: Mapping[str, Any] | None = None
    interval_ms: int = 1000
    elements: int | None = None
    iri: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.key, "iri": self.iri, "path": self.path, "format": self.format, "generator": self.generator,
            "params": dict(self.params), "flow": self.flow, "interval_ms": self.interval_ms, "elements": self.elements,
        }


@dataclass(frozen=True)
class RunTask:
    """Everything :func:`execute_run` needs for one run; picklable (it travels to Spark executors).

    ``streams`` holds one ref per stream of the experiment, in its order.
    """

    spec: RunSpec
    streams: tuple[StreamRef, ...]
    runs_dir: str
    stand: Mapping[str, Any]
    oracle: Mapping[str, Any]
    static: Mapping[str, Any]

    @property
    def stream(self) -> StreamRef:
        """The first (in a ``stream:`` experiment, the only) stream."""
        return self.streams[0]


# --- validation ------------------------------------------------------------------------


def _json_parameters(parameters: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in parameters.items():
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        elif isinstance(value, tuple):
            value = list(value)
        out[key] = value
    return out


def engine_config(spec: RunSpec) -> Any:
    """The stand's EngineConfig for a run (preset + overrides + faults from the EngineSpec)."""
    from rsp_workbench.engine import engine_config_from_spec

    return engine_config_from_spec(spec.engine, _json_parameters(spec.engine_parameters))


def _static_graphs(static: Mapping[str, Any]) -> Any:
    from rsp_workbench.engine import StaticGraphs

    return StaticGraphs(tuple(map(tuple, static.get("default", ()))),
                        {g: tuple(map(tuple, rows)) for g, rows in (static.get("named") or {}).items()})


def validate_runs(experiment: Experiment, runs: Sequence[RunSpec], static: Mapping[str, Any]) -> None:
    """Reject what would fail for every run, before anything starts (UserError naming engine and query).

    Checks: the engine type exists; its query parses; a built-in engine accepts the query
    (registered in-process, which builds its plan without any data); the external
    command's program exists; a shipped program engine is installed; the query can be
    written in the engine's dialect; the oracle's preset exists and can compute the query.
    """
    from rsp_workbench.engine import EXTERNAL_TYPE, PROGRAM_ENGINES
    from rsp_workbench.engines import create_engine
    from rsp_workbench.oracle.judge import oracle_semantics
    from rsp_workbench.query.parser import parse_query
    from rsp_workbench.query.writer import write_query
    from rsp_workbench.stand.host import engine_command

    seen: set[tuple[str, str, str]] = set()
    graphs = _static_graphs(static)
    for spec in runs:
        key = (spec.engine.id, spec.query.id, spec.query_text)
        if key in seen:
            continue
        seen.add(key)
        where = f"engine {spec.engine.id}, query {spec.query.id}"
        config = engine_config(spec)
        try:
            argv = engine_command(config)
        except UserError as error:
            raise UserError(f"{where}: {error.message}", file=_file(experiment), field=f"engines.{spec.engine.id}") from None
        try:
            query = parse_query(spec.query_text, syntax=spec.query.syntax)
        except UserError as error:
            if spec.query.file is not None:  # the position is in the query file
                raise error.located(file=str(spec.query.file), field=f"queries.{spec.query.id}") from None
            inner = UserError(error.message, line=error.line, column=error.column)
            raise UserError(f"{where}: query text {inner}", file=_file(experiment),
                            field=f"queries.{spec.query.id}") from None
        _check_stream_bindings(experiment, spec, query)
        if config.dialect is not None:
            try:
                write_query(query, config.dialect)
            except UserError as error:
                raise UserError(f"{where}: {error.message}", file=_file(experiment),
                                field=f"engines.{spec.engine.id}.dialect") from None
        if config.type in PROGRAM_ENGINES:
            pass  # a shipped program: engine_command above checked that it is installed
        elif config.type == EXTERNAL_TYPE:
            program = argv[0]
            cwd = spec.engine_parameters.get("cwd") or experiment.base_dir
            if shutil.which(program) is None and not (Path(cwd) / program).is_file():
                raise UserError(f"{where}: external command {program!r} not found", file=_file(experiment),
                                field=f"engines.{spec.engine.id}.parameters.command")
        else:
            try:
                engine = create_engine(config)
                engine.register(query, graphs)
                engine.close()
            except UserError as error:
                raise UserError(f"{where}: the engine cannot run this query: {error.message}", file=_file(experiment),
                                field=f"engines.{spec.engine.id}") from None
        try:
            oracle_semantics(_oracle_settings(experiment), spec.engine.semantics)
        except (UserError, KeyError, ValueError) as error:
            message = error.message if isinstance(error, UserError) else str(error)
            raise UserError(f"oracle: {message}", file=_file(experiment), field="oracle.system") from None


def _check_stream_bindings(experiment: Experiment, spec: RunSpec, query: Any) -> None:
    """In a ``streams:`` experiment every window must name a declared stream IRI (the loader checks it too)."""
    from rsp_workbench.experiment.query_section import undeclared_stream_error

    index = next(i for i, q in enumerate(experiment.queries) if q.id == spec.query.id)
    error = undeclared_stream_error(experiment, index, query)
    if error is not None:
        raise error


def _file(experiment: Experiment) -> str | None:
    return str(experiment.file) if experiment.file is not None else None


def _oracle_settings(experiment: Experiment) -> dict[str, Any]:
    oracle = experiment.oracle
    raw_t0 = (experiment.raw.get("oracle") or {}).get("t0") if isinstance(experiment.raw.get("oracle"), Mapping) else None
    return {
        "system": oracle.system,
        "semantics_overrides": dict(oracle.semantics_overrides),
        "match": oracle.match,
        "gracious": oracle.gracious,
        # an explicit `t0: all` enumerates the admissible set; unset: the semantics' own t0 if it fixes one
        "t0": "all" if raw_t0 == "all" else oracle.t0,
        "end": oracle.end,
        "regroup": oracle.regroup,
        "method": "auto",  # where the expected answers are computed (rsp_workbench.oracle.paths)
        "spark_master": experiment.spark_master,
    }


#: Bytes the judging of one run holds per stream element, measured on YABench Exp. 1 at BIG
#: (2.1 M elements): under content change with a tuple tick every element is an evaluation
#: (its window's quality, its expected and actual relation); else the responses and the
#: expected answers of the windows only. Plus the Spark driver's JVM above the Spark threshold.
JUDGED_BYTES_PER_ELEMENT = {"per-element": 800, "per-window": 200}
SPARK_DRIVER_BYTES = 1 << 30


def judging_estimate(experiment: Experiment, spec: RunSpec, elements: int) -> int:
    """Bytes that judging one run over ``elements`` stream elements holds (the largest part of a run)."""
    from rsp_workbench.core.semantics import Strategy, Tick
    from rsp_workbench.oracle.judge import oracle_semantics
    from rsp_workbench.oracle.paths import SPARK_THRESHOLD

    semantics = oracle_semantics(_oracle_settings(experiment), spec.engine.semantics)
    per_element = semantics.tick is Tick.TUPLE and Strategy.CONTENT_CHANGE in semantics.report.strategies
    held = elements * JUDGED_BYTES_PER_ELEMENT["per-element" if per_element else "per-window"]
    return held + (SPARK_DRIVER_BYTES if elements > SPARK_THRESHOLD else 0)


def refuse_what_cannot_fit(experiment: Experiment, runs: Sequence[RunSpec], *, sizes: Sequence[str] = (),
                           available: int | None = None) -> None:
    """A `UserError` before anything starts when judging a run would not fit in the memory this
    machine has available now (the stand streams the stimuli and writes the responses as they
    come, so judging is what grows with the stream); the message gives the estimate."""
    import psutil

    available = psutil.virtual_memory().available if available is None else available
    counted: dict[tuple[Any, ...], int | None] = {}
    for spec in runs:
        elements = 0
        for stream in spec.streams:
            key = _stream_key(stream)
            if key not in counted:
                counted[key] = _stream_size(stream)
            elements += counted[key] or 0
        need = judging_estimate(experiment, spec, elements)
        if need > available:
            defined = ", ".join(sizes or experiment.sizes) or "none"
            raise UserError(
                f"run {spec.run_id}: judging {elements:,} stream elements ({spec.engine.id}, "
                f"{spec.engine.semantics.report}) would hold about {need / 2**30:.1f} GB and {available / 2**30:.1f} GB "
                f"are available: ask for a smaller size (this experiment defines: {defined}) or a shorter stream",
                file=_file(experiment), field="stream")


def _stream_size(stream: RunStream) -> int | None:
    """Elements of a run's stream, known without generating or reading it (None: unknown)."""
    from rsp_workbench.pipeline.generate import estimated_elements

    if stream.spec.generator is not None:
        return estimated_elements(stream.spec.generator, dict(stream.params))
    if (stream.spec.format or "") == "parquet" or str(stream.spec.file).endswith((".parquet", ".pq")):
        from rsp_workbench.streams.readers import StreamFile

        try:
            return len(StreamFile(str(stream.spec.file), "parquet"))
        except UserError:
            return None  # the stand reports the unreadable file
    return None


# --- confirmation ----------------------------------------------------------------------


def _confirm(experiment: Experiment, assume_yes: bool, ask: Callable[[str], bool] | None) -> None:
    if not experiment.requires_confirmation:
        return
    from rsp_workbench.stand.confirm import confirm_commands

    confirm_commands(experiment, assume_yes=assume_yes, ask=ask)


# --- streams ---------------------------------------------------------------------------


def _stream_key(stream: RunStream) -> tuple[Any, ...]:
    """What makes a stream distinct: its IRI (``streams:``) and its file, or generator + params + flow."""
    import json

    if stream.spec.generator is None:
        return (stream.iri, "file", str(stream.spec.file))
    flow = None if stream.flow is None else (stream.flow.shape, json.dumps(dict(stream.flow.settings), sort_keys=True, default=str))
    return (stream.iri, stream.spec.generator, json.dumps(dict(stream.params), sort_keys=True, default=str), flow)


def _cancel_state(cancel: threading.Event) -> Any:
    """A generation TaskState whose cancel flag is the experiment's cancel Event."""
    from rsp_workbench.pipeline.generate import TaskState

    class _State(TaskState):
        @property
        def cancelled(self) -> bool:
            return cancel.is_set()

    return _State()


@contextmanager
def _on_cancel(cancel: threading.Event, action: Callable[[], None], name: str) -> Iterator[None]:
    """Call ``action`` once if ``cancel`` is set while the block runs (e.g. cancel a Spark job group now,
    not when the job ends); the watcher thread ends with the block."""
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.2):
            if cancel.is_set():
                action()
                return

    watcher = threading.Thread(target=watch, name=name, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join(timeout=1)


def generated_stream_count(runs: Sequence[RunSpec]) -> int:
    """How many distinct streams :func:`prepare_streams` generates for ``runs``."""
    return len({_stream_key(stream) for spec in runs for stream in spec.streams if stream.spec.generator is not None})


def prepare_streams(
    experiment: Experiment, runs: Sequence[RunSpec], out: Path, *, fmt: str, cancel: threading.Event,
    progress: ProgressCallback,
) -> dict[tuple[Any, ...], StreamRef]:
    """Generate each distinct (IRI, generator, params, flow) once into ``streams/``; reference files.

    Every stream of every run gets a ref (keyed by :func:`_stream_key`), so a ``streams:``
    experiment has one manifest entry per stream IRI (per repetition, if generated).
    """
    from rsp_workbench.pipeline.generate import generate
    from rsp_workbench.streams.readers import detect_format

    refs: dict[tuple[Any, ...], StreamRef] = {}
    to_generate = generated_stream_count(runs)
    generated = 0
    for run_stream in (stream for spec in runs for stream in spec.streams):
        key = _stream_key(run_stream)
        if key in refs:
            continue
        if cancel.is_set():
            break
        ident = f"stream{len(refs)}"
        stream, params, iri = run_stream.spec, run_stream.params, run_stream.iri
        if stream.generator is None:
            assert stream.file is not None
            path = stream.file  # the loader already resolved it against the experiment's folder
            refs[key] = StreamRef(ident, str(path.resolve()), stream.format or detect_format(path),
                                  interval_ms=stream.interval_ms or 1000, iri=iri)
            continue
        target = out / STREAMS_DIR / f"{ident}{_STREAM_SUFFIX[fmt]}"
        progress(ExperimentProgress("stream", f"generating {ident}{f' <{iri}>' if iri else ''}: {stream.generator} "
                                    + ", ".join(f"{k}={v}" for k, v in params.items()),
                                    done=generated, total=to_generate))
        generated += 1
        flow = None if run_stream.flow is None else {"shape": run_stream.flow.shape, **dict(run_stream.flow.settings)}
        state = _cancel_state(cancel)
        with _on_cancel(cancel, state.cancel, "rspwb-generate-cancel"):  # interrupts a running Spark job
            result = generate(stream.generator, dict(params), target, fmt, engine="auto",
                              spark_master=experiment.spark_master, state=state, flow=flow)
        refs[key] = StreamRef(ident, f"{STREAMS_DIR}/{target.name}", fmt, stream.generator, dict(params),
                              flow, elements=result.elements, iri=iri)
    return refs


# --- one run ---------------------------------------------------------------------------

_STREAM_CACHE: dict[tuple[Any, ...], Any] = {}
_STREAM_CACHE_LOCK = threading.Lock()


def _elements(stream: StreamRef, bundle: Path, keep: Sequence[StreamRef] = ()) -> Any:
    """The stream's elements, as a `StreamFile` read only when needed. The streams last read are
    kept (runs of one case share them): this one and those in ``keep`` (the other streams of
    the same run)."""
    from rsp_workbench.streams.readers import StreamFile

    def key_of(ref: StreamRef) -> tuple[Any, ...]:
        path = ref.path if os.path.isabs(ref.path) else str(bundle / ref.path)
        try:  # a stream regenerated into the same bundle is another stream
            stat = os.stat(path)
            return (path, ref.format, stat.st_size, stat.st_mtime_ns)
        except OSError:
            return (path, ref.format)

    key = key_of(stream)
    with _STREAM_CACHE_LOCK:
        if key not in _STREAM_CACHE:
            wanted = {key_of(ref) for ref in keep}
            for old in [k for k in _STREAM_CACHE if k not in wanted]:
                del _STREAM_CACHE[old]
            _STREAM_CACHE[key] = StreamFile(key[0], stream.format, interval_ms=stream.interval_ms)
        return _STREAM_CACHE[key]


class _StimuliOf:
    """The stimuli of a run's streams, grouped as the stand sends them, read from their files
    each time they are iterated (never all held: a BIG stream is 2.1 M elements).

    Untagged: the stimuli of the one stream. Tagged: the merged, time-ordered stimuli of the
    streams by IRI, each element tagged with its stream (`rsp_workbench.engine.iter_merged_stimuli`,
    which reads the files side by side, one element ahead each).
    """

    def __init__(self, streams: Mapping[str, Any], *, tagged: bool) -> None:
        assert tagged or len(streams) == 1
        self.streams = streams
        self.tagged = tagged
        self._count: int | None = None

    def __iter__(self) -> Iterator[Any]:
        from rsp_workbench.engine import iter_merged_stimuli
        from rsp_workbench.stand.streamer import iter_stimuli

        if self.tagged:
            return iter_merged_stimuli({iri: elements.read() for iri, elements in self.streams.items()})
        return iter_stimuli(next(iter(self.streams.values())).read())

    def __len__(self) -> int:
        from rsp_workbench.streams.readers import instants_of

        if self._count is None:
            self._count = instants_of(list(self.streams.values()))
        return self._count


def run_inputs(task: RunTask, query: Any) -> tuple[dict[str, Any], Any]:
    """The query's streams by IRI and the stimuli the stand feeds (RSP-QL Def. 14).

    ``stream:``: every window reads the one stream (each IRI of the query gets its
    elements). ``streams:``: each window reads the stream of its IRI, and the stimuli are
    the merged, time-ordered elements of the streams the query reads, each tagged with
    its stream, so an element only enters the windows over its own stream. A window-less
    query (an eviction join) reads every stream. The streams are `StreamFile`s, and the
    stimuli are read from their files as the stand sends them (`_StimuliOf`).
    """
    bundle = Path(task.runs_dir).parent
    if task.stream.iri is None:
        elements = _elements(task.stream, bundle)
        streams = {iri: elements for iri in query.streams}
        # one stream (or a window-less query, e.g. an eviction join over the whole stream): plain stimuli
        if len(streams) > 1:
            return streams, _StimuliOf(streams, tagged=True)
        return streams or {"": elements}, _StimuliOf({"": elements}, tagged=False)
    used = [ref for ref in task.streams if ref.iri in query.streams] or list(task.streams)
    streams = {str(ref.iri): _elements(ref, bundle, keep=used) for ref in used}
    return streams, _StimuliOf(streams, tagged=True)


def execute_run(task: RunTask, cancel: threading.Event | None = None,
                progress: ProgressCallback | None = None, live_kpis: bool = False,
                spark_oracle: bool = True) -> dict[str, Any]:
    """One engine run on the test stand, then the oracle; writes ``runs/<run_id>/``; returns its summary row.

    The run is written into ``runs/<run_id>.partial/`` and renamed when its files are
    complete. Engine misbehaviour and oracle errors are recorded, never raised.
    ``live_kpis`` reports the stand's probe samples as ``kpi`` events while the engine runs.
    ``spark_oracle=False`` (a run that is itself a Spark task) judges without starting a Spark job.
    If the run cannot be carried out at all (its stream cannot be read, the disk is full), its
    ``.partial`` folder is removed and the error raised.
    """
    spec = task.spec
    cancel = cancel or threading.Event()
    report = progress or (lambda event: None)
    runs_dir = Path(task.runs_dir)
    final = runs_dir / spec.run_id
    folder = runs_dir / (spec.run_id + PARTIAL)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    try:
        return _execute_into(task, folder, final, cancel, report, live_kpis, spark_oracle)
    except BaseException:  # a stream that cannot be read, a full disk, a second Ctrl-C: no half-written run stays
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _execute_into(task: RunTask, folder: Path, final: Path, cancel: threading.Event, report: ProgressCallback,
                  live_kpis: bool, spark_oracle: bool) -> dict[str, Any]:
    """`execute_run` once its ``.partial`` folder exists: run, judge, write, rename to ``final``."""
    from rsp_workbench.oracle.run import end_by_rule
    from rsp_workbench.query.parser import parse_query
    from rsp_workbench.stand.host import StandOptions, run_engine

    spec = task.spec
    meta = _run_meta(spec, task.stream, task.streams)
    query = parse_query(spec.query_text, syntax=spec.query.syntax)
    streams, stimuli = run_inputs(task, query)
    end = end_by_rule(task.oracle.get("end", "after-last-window"), query, streams)  # the oracle's and the stand's
    stand = dict(task.stand)
    _check_real_time_wall(task, streams, end)
    startup = spec.engine_parameters.get("startup_timeout")
    per_stimulus = spec.engine_parameters.get("stimulus_timeout")  # an engine whose stimuli may take long
    options = StandOptions(
        mode=stand["mode"], time_scale=stand["time_scale"], sampling_ms=stand["sampling_ms"],
        run_timeout_s=stand.get("run_timeout_s"), start_timeout_s=startup / 1000.0 if startup else 60.0, end=end,
        **({"batch": stand["batch"]} if stand.get("batch") is not None else {}),  # else the stand's default
        **({"stimulus_timeout_s": per_stimulus / 1000.0} if per_stimulus else {}),
        **({"max_output_bytes": stand["max_output_mb"] << 20} if stand.get("max_output_mb") else {}),
        **({"max_message_bytes": stand["max_message_mb"] << 20} if stand.get("max_message_mb") else {}),
    )
    config = engine_config(spec)
    command = [str(part) for part in spec.engine_parameters["command"]] if config.type == "external" else None
    report(ExperimentProgress("engine", f"{spec.run_id}: {spec.engine.id} on {spec.query.id}", run_id=spec.run_id,
                              data={"engine": spec.engine.id, "stimuli": len(stimuli)}))

    def on_sample(sample: dict[str, float]) -> None:
        report(ExperimentProgress("kpi", spec.run_id, run_id=spec.run_id, data=sample))

    result = run_engine(
        config, spec.query_text, stimuli, folder, syntax=spec.query.syntax, static=_static_graphs(task.static),
        options=options, cancel=cancel, name=spec.engine.id, query_id=spec.query.id, command=command,
        on_sample=on_sample if live_kpis else None,
    )
    if live_kpis:
        report(ExperimentProgress("kpi", spec.run_id, run_id=spec.run_id, data={
            "final": True, "status": result.status, "responses": result.responses,
            "stimuli_done": result.stimuli_done, "peak_rss_mb": result.peak_rss_mb}))
    failure = None
    oracle: dict[str, Any] | None = None
    if result.ok and not cancel.is_set():
        report(ExperimentProgress("oracle", f"{spec.run_id}: oracle", run_id=spec.run_id))
        try:
            oracle = judge_run(task, query, streams, stimuli, end, folder, allow_spark=spark_oracle)
        except UserError as error:  # e.g. a malformed term in the engine's answers: the run failed
            failure = str(error).replace(str(folder), str(final))
            oracle = {"verdict": "error", "error": failure}
        except Exception as error:  # an oracle bug must not stop the other runs, nor pass for a result
            failure = f"oracle failed: {type(error).__name__}: {error}".replace(str(folder), str(final))
            oracle = {"verdict": "error", "error": failure}
        if not len(stimuli):  # a verdict over nothing must not read as a result
            empty = "the stream has no elements: nothing was judged"
            oracle["warning"] = f"{empty}; {oracle['warning']}" if oracle.get("warning") else empty
        write_json_atomic(folder / ORACLE_FILE, oracle)
    _record_outcome(folder / RUN_FILE, final, failure)
    write_json_atomic(folder / "run-spec.json", meta)
    if final.exists():
        shutil.rmtree(final)
    os.replace(folder, final)
    meta["status"] = "failed" if failure else result.status
    return run_row(final, meta, oracle=oracle)  # not read back: a long run's oracle.json is large


#: The longest real-time run (wall clock) that starts without ``stand.timeout`` saying so: a typo such as
#: ``time_scale: 0.000001`` must fail in a second, not start a run of months.
MAX_REAL_TIME_WALL_S = 24 * 3600


def _check_real_time_wall(task: RunTask, streams: Mapping[str, Sequence[Any]], end: int | None) -> None:
    """A `UserError` before a real-time run whose streams would take longer than :data:`MAX_REAL_TIME_WALL_S`
    of wall time, unless the experiment's ``stand.timeout`` allows at least that long."""
    stand = task.stand
    if stand.get("mode") != "real-time":
        return
    from rsp_workbench.streams.readers import last_time

    firsts = [element.t for stream in streams.values() for element in itertools.islice(iter(stream), 1)]
    lasts = [t for t in (last_time(stream) for stream in streams.values()) if t is not None]
    if not firsts or not lasts:
        return
    span_ms = max([*lasts, *([end] if end is not None else [])]) - min(firsts)
    wall_s = span_ms / float(stand.get("time_scale") or 1.0) / 1000.0
    allowed = max(MAX_REAL_TIME_WALL_S, stand.get("run_timeout_s") or 0)
    if wall_s > allowed:
        raise UserError(f"run {task.spec.run_id}: in real time at time_scale {stand.get('time_scale')} the stream's "
                        f"{span_ms:,} ms take {wall_s / 3600:,.1f} hours of wall time, more than the "
                        f"{MAX_REAL_TIME_WALL_S // 3600} hours a run may take unless stand.timeout allows it",
                        field="stand.time_scale")


def _record_outcome(run_file: Path, final: Path, failure: str | None) -> None:
    """``run.json`` names the run's final folder (not ``.partial``) and, if judging failed, says so.

    A run whose answers cannot be judged is a failed run (status ``failed``, exit 1), not a
    green one with a verdict nobody reads.
    """
    if not run_file.is_file():
        return
    record = read_json(run_file)
    record["folder"] = str(final)
    if failure:
        record["status"] = "failed"
        record["error"] = failure
    write_json_atomic(run_file, record)


def _run_meta(spec: RunSpec, stream: StreamRef, streams: Sequence[StreamRef] = ()) -> dict[str, Any]:
    named = {ref.iri: ref.key for ref in streams if ref.iri is not None}
    return {**({"streams": named} if named else {}), 
        "run_id": spec.run_id, "index": spec.index, "case": spec.case_index, "repetition": spec.repetition,
        "variables": dict(spec.variables), "engine": spec.engine.id, "engine_type": spec.engine.type,
        "preset": spec.engine.preset, "faults": {k: v for k, v in spec.engine.faults.items() if v},
        "semantics": spec.engine.semantics.describe(), "query": spec.query.id, "query_text": spec.query_text,
        "syntax": spec.query.syntax, "seed": spec.seed, "stream": stream.key,
    }


def _streams_identity(task: RunTask) -> tuple[Any, ...]:
    """What identifies the content of a run's streams across bundles: absolute path, size, mtime."""
    bundle = Path(task.runs_dir).parent
    identity: list[tuple[str | None, str, int | None, int | None, int]] = []
    for ref in task.streams:
        path = Path(ref.path) if os.path.isabs(ref.path) else bundle / ref.path
        try:
            stat = path.stat()
            identity.append((ref.iri, str(path.resolve()), stat.st_size, stat.st_mtime_ns, ref.interval_ms))
        except OSError:
            identity.append((ref.iri, str(path), None, None, ref.interval_ms))
    return tuple(identity)


def judge_run(task: RunTask, query: Any, streams: Mapping[str, Sequence[Any]], stimuli: Sequence[Any], end: int,
              folder: Path, *, allow_spark: bool = True) -> dict[str, Any]:
    """The oracle on one finished run (`rsp_workbench.oracle.judge`); writes ``ORACLE_<engine>`` and
    ``windows.parquet``, returns ``oracle.json``.

    The expected answers come from the path the ``auto`` rule picks (`rsp_workbench.oracle.paths`:
    the Spark job for big streams, as ``rspwb oracle``/``check`` do); ``oracle.json`` records it.
    """
    from rsp_workbench.oracle.judge import JudgeOptions, RecordedRun, judge, oracle_semantics, report_due_at
    from rsp_workbench.oracle.paths import expected_function
    from rsp_workbench.pipeline.oracle_job import spark_expected
    from rsp_workbench.responses.readers import read_response_log
    from rsp_workbench.results.windows_file import ROW_GROUP_WINDOWS, write_windows

    spec = task.spec
    settings = task.oracle
    log = read_response_log(folder / "responses.jsonl")
    engine_t0 = spec.engine_parameters.get("t0") if (settings.get("system") or "engine") == "engine" else None
    t0 = settings.get("t0")
    if t0 is None and engine_t0 is not None:  # the engine's own t0 (one per window if a list)
        t0 = tuple(engine_t0) if isinstance(engine_t0, list) else tuple(engine_t0 for _ in query.windows)
    run = RecordedRun(
        query=query, streams=streams, log=log, semantics=oracle_semantics(settings, spec.engine.semantics), end=end,
        engine_type=spec.engine.type, engine_parameters=spec.engine_parameters, static=task.static, stimuli=stimuli,
        due_at=report_due_at(folder / "trace.jsonl", task.stand, log.run_start),
        streams_key=(_streams_identity(task), spec.query_text, spec.query.syntax),
        semantics_declared=spec.engine.declares_semantics or (settings.get("system") or "engine") != "engine",
        end_fixed=isinstance(settings.get("end"), int),
    )
    options = JudgeOptions(
        t0=t0, match=settings.get("match", "strict"), gracious=bool(settings.get("gracious")),
        regroup=None if settings.get("regroup") is None else bool(settings["regroup"]),
        report_window=int(spec.engine_parameters.get("report_window", 0)),  # part of the policy (RSP-QL Example 9)
        window_rows=False,  # written row by row into oracle.json (a content-change run has one per element)
    )
    bundle = Path(task.runs_dir).parent
    parquet_files = {
        iri: (ref.path if os.path.isabs(ref.path) else str(bundle / ref.path), streams[iri])
        for iri in streams for ref in task.streams
        if ref.format == "parquet" and (ref.iri == iri or ref.iri is None)
    }
    expected = expected_function(settings.get("method") or "auto", parquet_files=parquet_files, spark=spark_expected,
                                 spark_master=settings.get("spark_master"), allow_spark=allow_spark)
    judgement = judge(run, options, expected)
    if judgement.quality is not None:
        write_lines_atomic(folder / f"ORACLE_{spec.engine.id}", (w.oracle_line() + "\n" for w in judgement.quality))
        write_windows(folder / WINDOWS_FILE, judgement.window_batches(ROW_GROUP_WINDOWS))  # a row group at a time
        judgement.payload["windows"] = JsonRows(judgement.window_rows, len(judgement.quality))
    return judgement.payload


def _execute_task_in_spark(item: tuple[int, RunTask]) -> tuple[int, dict[str, Any]]:
    index, task = item
    return index, execute_run(task, spark_oracle=False)


# --- the experiment --------------------------------------------------------------------


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def machine_info() -> dict[str, Any]:
    import psutil

    return {
        "platform": platform.platform(), "machine": platform.machine(), "processor": platform.processor(),
        "hostname": platform.node(), "cpus": os.cpu_count(), "cpus_physical": psutil.cpu_count(logical=False),
        "memory_mb": round(psutil.virtual_memory().total / 1024 / 1024),
    }


def versions() -> dict[str, Any]:
    from importlib import metadata

    from rsp_workbench import __version__

    found: dict[str, Any] = {"workbench": __version__, "python": platform.python_version()}
    for name in ("pyspark", "rdflib", "psutil", "pyarrow"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def run_experiment(
    experiment: Experiment,
    out_dir: str | os.PathLike[str],
    *,
    size: str | None = None,
    assume_yes: bool = False,
    ask: Callable[[str], bool] | None = None,
    cancel: threading.Event | None = None,
    progress: ProgressCallback | None = None,
    scheduler: str = "local",
    stream_format: str = "parquet",
    live_kpis: bool = False,
    force: bool = False,
) -> Bundle:
    """Run the whole experiment into the bundle folder ``out_dir``; return its summary.

    ``out_dir`` must be new, empty or a bundle of ours (``force``: any folder); only the
    previous bundle's own entries are replaced, and a second run into it at the same
    time is refused (`rsp_workbench.results.bundle_folder`).

    Raises UserError before anything is written for invalid runs or unconfirmed external
    commands (``assume_yes`` confirms; else ``ask(prompt)`` is asked). ``cancel`` stops
    the current engine process (or generation) and marks the bundle ``cancelled``.
    ``live_kpis`` adds ``kpi`` progress events while engines run (local scheduler only:
    Spark executors cannot report back).
    """
    if scheduler not in SCHEDULERS:
        raise UserError(f"unknown scheduler {scheduler!r}; expected one of {', '.join(SCHEDULERS)}", field="scheduler")
    if stream_format not in STREAM_FORMATS:
        raise UserError(f"streams are written as {' or '.join(STREAM_FORMATS)}", field="stream_format")
    from rsp_workbench.experiment.loader import apply_size

    cancel = cancel or threading.Event()
    report = progress or (lambda event: None)
    sizes = tuple(experiment.sizes)
    if size is not None:
        experiment = apply_size(experiment, size)
    runs = expand_runs(experiment)
    report(ExperimentProgress("validate", f"{experiment.name}: {len(runs)} runs", total=len(runs),
                              data={"streams": generated_stream_count(runs)}))
    static = load_static(experiment)
    validate_runs(experiment, runs, static)
    refuse_what_cannot_fit(experiment, runs, sizes=sizes)
    _warn_assumed_semantics(experiment, report)
    _confirm(experiment, assume_yes, ask)

    from rsp_workbench.results.bundle_folder import locked_bundle_folder

    with locked_bundle_folder(Path(out_dir), force=force) as out:
        return _write_bundle(experiment, runs, static, out, size=size, scheduler=scheduler,
                             stream_format=stream_format, cancel=cancel, report=report, live_kpis=live_kpis)


def _write_bundle(experiment: Experiment, runs: Sequence[RunSpec], static: Mapping[str, Any], out: Path, *,
                  size: str | None, scheduler: str, stream_format: str, cancel: threading.Event,
                  report: ProgressCallback, live_kpis: bool) -> Bundle:
    """Generate the streams, execute the runs and write the bundle into ``out`` (claimed and locked)."""
    from rsp_workbench.experiment.loader import experiment_to_yaml

    (out / RUNS_DIR).mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / EXPERIMENT_COPY, experiment_to_yaml(experiment))
    manifest: dict[str, Any] = {
        "format": BUNDLE_FORMAT,
        "name": experiment.name,
        "description": experiment.description,
        "experiment_file": str(experiment.file.resolve()) if experiment.file else None,
        "experiment": EXPERIMENT_COPY,
        "size": size,
        "seed": experiment.seed,
        "repetitions": experiment.repetitions,
        "scheduler": scheduler,
        "versions": versions(),
        "machine": machine_info(),
        "command_line": sys.argv,
        "started": _now(),
        "finished": None,
        "status": "running",
        "streams": [],
        "runs": [],
    }
    write_json_atomic(out / MANIFEST, manifest)

    rows: dict[int, dict[str, Any]] = {}
    status = "ok"
    try:
        refs = prepare_streams(experiment, runs, out, fmt=stream_format, cancel=cancel, progress=report)
        manifest["streams"] = [ref.to_json() for ref in refs.values()]
        tasks = []
        settings = _oracle_settings(experiment)
        stand = {
            "mode": experiment.stand.mode, "time_scale": experiment.stand.time_scale,
            "sampling_ms": experiment.kpis.sampling_ms,
            "run_timeout_s": experiment.stand.timeout_ms / 1000.0 if experiment.stand.timeout_ms else None,
            "batch": experiment.stand.batch,
            "max_output_mb": experiment.stand.max_output_mb,
            "max_message_mb": experiment.stand.max_message_mb,
        }
        run_refs: dict[int, tuple[StreamRef, ...]] = {}
        for spec in runs:
            found = tuple(refs.get(_stream_key(stream)) for stream in spec.streams)
            if any(ref is None for ref in found):  # cancelled while generating
                continue
            run_refs[spec.index] = found  # type: ignore[assignment]
            # absolute: Spark executors run in their own working directory
            tasks.append(RunTask(spec, run_refs[spec.index], str((out / RUNS_DIR).resolve()), stand, settings, static))
        manifest["runs"] = [
            {**(_run_meta(spec, run_refs[spec.index][0], run_refs[spec.index]) if spec.index in run_refs else
                {"run_id": spec.run_id, "index": spec.index, "engine": spec.engine.id, "query": spec.query.id}),
             "status": "not-run"}
            for spec in runs
        ]
        write_json_atomic(out / MANIFEST, manifest)
        if scheduler == "local":
            for done, task in enumerate(tasks):
                if cancel.is_set():
                    break
                try:
                    row = execute_run(task, cancel, report, live_kpis)
                except UserError as error:  # the run could not be carried out: it failed, and the experiment stops
                    rows[task.spec.index] = _failed_row(out, task, error)
                    raise
                rows[task.spec.index] = row
                report(ExperimentProgress("run-done", f"{task.spec.run_id}: {row.get('verdict') or row.get('status')}",
                                          done=done + 1, total=len(tasks), run_id=task.spec.run_id, data=row))
        else:
            rows.update(_run_on_spark(experiment, tasks, cancel, report))
        if cancel.is_set():
            status = "cancelled"
        elif any(row.get("status") != "ok" for row in rows.values()):
            status = "failed"
    except BaseException as error:
        from rsp_workbench.pipeline.generate import GenerationCancelled

        status = "cancelled" if isinstance(error, (GenerationCancelled, KeyboardInterrupt)) or cancel.is_set() else "failed"
        manifest["error"] = f"{type(error).__name__}: {error}"
        if not isinstance(error, (GenerationCancelled,)):
            _finish(out, manifest, runs, rows, status)
            raise
    return _finish(out, manifest, runs, rows, status)



def _failed_row(out: Path, task: RunTask, error: UserError) -> dict[str, Any]:
    """The summary row of a run that could not be carried out (no run folder): failed, with the error."""
    meta = _run_meta(task.spec, task.stream, task.streams)
    row = run_row(out / RUNS_DIR / task.spec.run_id, {**meta, "status": "not-run"})
    return {**row, "status": "failed", "verdict": "failed", "error": str(error)}


def _warn_assumed_semantics(experiment: Experiment, report: ProgressCallback) -> None:
    """Say up front when the oracle will judge an engine under semantics nobody declared."""
    from rsp_workbench.oracle.judge import assumed_semantics_warning

    if experiment.oracle.system != "engine":
        return
    for engine in experiment.engines:
        if not engine.declares_semantics:
            report(ExperimentProgress("warning", f"warning: engine {engine.id}: "
                                      + assumed_semantics_warning(engine.semantics)))


def _finish(out: Path, manifest: dict[str, Any], runs: Sequence[RunSpec], rows: Mapping[int, dict[str, Any]],
            status: str) -> Bundle:
    """summary.json, the YABench files across repetitions, then the manifest's final status (last)."""
    ordered = []
    for spec, meta in zip(runs, manifest.get("runs") or [{} for _ in runs]):
        row = rows.get(spec.index)
        if row is None:
            row = run_row(out / RUNS_DIR / spec.run_id, {**meta, "status": "cancelled" if status == "cancelled" else "not-run"})
            if row["verdict"] is None:
                row["verdict"] = row["status"]
        if meta:
            meta["status"] = row.get("status")
        ordered.append(row)
    _write_yabench_files(out, runs, ordered)
    write_json_atomic(out / SUMMARY, {"name": manifest["name"], "status": status, "runs": ordered})
    manifest["finished"] = _now()
    manifest["status"] = status
    write_json_atomic(out / MANIFEST, manifest)
    return Bundle(out, manifest["name"], status, tuple(ordered), manifest)


def _write_yabench_files(out: Path, runs: Sequence[RunSpec], rows: Sequence[Mapping[str, Any]]) -> None:
    """``yabench/case<c>-<query>/ORACLE_<engine>_<n>`` per repetition and ``BOXPLOTS_<engine>`` (YABench layout).

    Both come from the runs' own ``ORACLE_<engine>`` files (one line per window), read line by
    line, so that runs over long streams are never held whole."""
    from rsp_workbench.oracle.quality import boxplots_lines

    groups: dict[tuple[int, str, str], list[Path | None]] = {}
    for spec, row in zip(runs, rows):
        run_folder = out / RUNS_DIR / spec.run_id
        if row.get("status") != "ok" or not (run_folder / ORACLE_FILE).is_file():
            continue
        lines = run_folder / f"ORACLE_{spec.engine.id}"
        groups.setdefault((spec.case_index, spec.query.id, spec.engine.id), []).append(
            lines if lines.is_file() else None)  # judged without windows (e.g. an error verdict)
    for (case, query, engine), files in groups.items():
        folder = out / YABENCH_DIR / f"case{case}-{query}"
        folder.mkdir(parents=True, exist_ok=True)
        for n, oracle_lines in enumerate(files, 1):
            write_lines_atomic(folder / f"ORACLE_{engine}_{n}", _lines_of(oracle_lines))
        write_lines_atomic(folder / f"BOXPLOTS_{engine}", boxplots_lines(engine, [_lines_of(f) for f in files]))


def _lines_of(path: Path | None) -> Iterator[str]:
    """The lines of a text file, read lazily (none for None)."""
    if path is None:
        return
    with open(path, encoding="utf-8") as handle:
        yield from handle


def _run_on_spark(experiment: Experiment, tasks: Sequence[RunTask], cancel: threading.Event,
                  report: ProgressCallback) -> dict[int, dict[str, Any]]:
    """One Spark task per run (an RDD with one partition per run), each calling :func:`execute_run`."""
    import uuid

    from rsp_workbench.pipeline.spark import cancel_job_group, get_spark, job_group

    if not tasks:
        return {}
    spark = get_spark(experiment.spark_master)
    group = f"rspwb-run-{uuid.uuid4().hex[:8]}"
    report(ExperimentProgress("engine", f"{len(tasks)} runs as Spark tasks on {spark.sparkContext.master}",
                              total=len(tasks)))
    try:
        with _on_cancel(cancel, lambda: cancel_job_group(group), "rspwb-run-cancel"), \
                job_group(spark, group, f"rspwb run {experiment.name}"):
            rdd = spark.sparkContext.parallelize(list(enumerate(tasks)), len(tasks))
            results = rdd.map(_execute_task_in_spark).collect()
    except Exception:
        if cancel.is_set():
            return {}
        raise
    return {tasks[index].spec.index: row for index, row in results}
