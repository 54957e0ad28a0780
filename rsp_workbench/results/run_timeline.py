"""One run of a result bundle as the window timeline shows it, without Qt.

:func:`timeline_run` reads what the timeline draws for a run of an opened bundle
(:func:`rsp_workbench.results.reader.open_bundle`; docs/result-bundle.md):
the stream, the window spec (the query's report window, the border convention of the
oracle's semantics, the ``quality_t0`` the oracle measured windows against), the expected
evaluation instants, the engine's emissions (``responses.jsonl``; application times, or
the stimulus in flight from ``trace.jsonl`` when an engine does not report them), the
windows measured as diverging and gracious mode's reconstructed borders.
:func:`window_bindings` gives one window's expected vs actual bindings: the oracle
recomputed on that window only (a slice of the stream, checked to reproduce the
evaluation instants of the whole stream, else the whole stream), and the responses
paired with its evaluations as the oracle pairs them (`oracle.run.responses_by_evaluation`).
Runs in the timeline's loader thread; every problem is a :class:`UserError` naming the
file (and line or field).
"""

from __future__ import annotations

import bisect
import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np

from rsp_workbench.results.bundle import EXPERIMENT_COPY, MANIFEST, ORACLE_FILE, RESPONSES_FILE as RESPONSES, RUN_FILE, RUN_SPEC_FILE as RUN_SPEC, RUNS_DIR, WINDOWS_FILE, Bundle
from rsp_workbench.results.json_files import read_json
from rsp_workbench.results.tables import stream_path
from rsp_workbench.results.bundle import read_experiment_copy, run_folder as checked_run_folder
from rsp_workbench.files import PARTIAL
from rsp_workbench.results.oracle_file import ColumnKind, read_oracle
from rsp_workbench.results.yabench_files import first_of_each_pair
from rsp_workbench.core.report import Evaluation
from rsp_workbench.core.semantics import EngineSemantics
from rsp_workbench.core.windows import WindowInstance, WindowSpec
from rsp_workbench.errors import UserError
from rsp_workbench.results.stream_lanes import StreamLanes
from rsp_workbench.query.model import ContinuousQuery
from rsp_workbench.responses.model import ResponseLog
from rsp_workbench.streams.model import StreamElement

TRACE = "trace.jsonl"
CONTEXT_WIDENING = (1, 4)  # slice contexts (× the largest window) tried before the whole stream

Progress = Callable[[float, str], None]
ORACLE_SHARE = 0.1  # of the loading progress: reading oracle.json (then the stream, up to 0.6)
#: What the timeline draws of ``oracle.json``'s windows (read as columns: a content-change run has millions).
ORACLE_COLUMNS: Mapping[str, ColumnKind] = {
    "start": "int", "end": "int", "precision": "optional", "recall": "optional",
    "reconstructed_start": "optional", "reconstructed_end": "optional",
    "expected_size": "optional", "actual_size": "optional", "window_triples": "optional",  # the per-window export
}


class LoadCancelled(Exception):
    """The user started another load or closed the view."""


@dataclass(frozen=True)
class BundleStream:
    """A stream of the bundle (manifest ``streams`` entry), read once."""

    key: str
    path: Path
    format: str
    elements: list[StreamElement]  # in time order (the readers check it)
    lanes: StreamLanes


class StreamCache:
    """Streams already read, by (path, format): runs overlaid on one stream share it (thread-safe)."""

    def __init__(self, limit: int = 2) -> None:
        self._lock = threading.Lock()
        self._streams: dict[tuple[str, str], BundleStream] = {}
        self.limit = limit

    def get(self, path: Path, fmt: str) -> BundleStream | None:
        with self._lock:
            return self._streams.get((str(path), fmt))

    def put(self, stream: BundleStream) -> None:
        with self._lock:
            self._streams[(str(stream.path), stream.format)] = stream
            while len(self._streams) > self.limit:
                self._streams.pop(next(iter(self._streams)))


@dataclass
class BundleRun:
    """Everything the timeline shows for one engine run of a bundle."""

    bundle: Path
    run_id: str
    engine: str
    engine_type: str
    query_id: str
    status: str
    verdict: str | None
    precision: float | None
    recall: float | None
    query: ContinuousQuery
    semantics: EngineSemantics
    report_window: int
    t0: tuple[int, ...]
    spec: WindowSpec
    end: int
    stream: BundleStream  # the report window's stream: the lanes drawn
    oracle_streams: dict[str, list[StreamElement]]  # per stream IRI, what the oracle reads
    evaluations: tuple[Evaluation, ...]
    log: ResponseLog
    emission_times: np.ndarray
    reconstructed: tuple[tuple[int, int], ...] = ()
    reconstructed_shift: tuple[int, int] = (0, 0)
    reconstructed_label: str = ""
    diverging: tuple[tuple[int, int], ...] = ()
    first_divergence_ms: int | None = None
    notes: tuple[str, ...] = ()
    engine_parameters: Mapping[str, Any] = field(default_factory=dict)
    experiment_error: str | None = None
    evaluation_instants: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # of `evaluations`
    evaluation_windows: tuple[WindowInstance, ...] = ()  # the window each of `evaluations` reads
    windows: Mapping[str, np.ndarray] = field(default_factory=dict)  # oracle.json's per-window columns (ORACLE_COLUMNS)
    _static: Any = field(default=None, repr=False)
    _whole_answer: Any = field(default=None, repr=False)  # `_static` and this: filled under `_ORACLE_LOCK`

    @property
    def key(self) -> tuple[str, str]:
        return (str(self.bundle), self.run_id)

    def describe(self) -> str:
        """One line for the status bar: engine, verdict, quality, window and t0."""
        quality = ""
        if self.precision is not None and self.recall is not None:
            quality = f", precision {self.precision:.3f}, recall {self.recall:.3f}"
        left, right = self.spec.border.brackets()
        t0 = self.t0[0] if len(self.t0) == 1 else list(self.t0)
        return (f"{self.run_id}: {self.engine} on {self.query_id} — {self.verdict or self.status}{quality}; "
                f"{len(self.log.responses):,} responses; window ω={self.spec.size} ms β={self.spec.slide} ms, "
                f"t0={t0} ms, borders {left}o, c{right}, report {self.semantics.report}")


@dataclass(frozen=True)
class WindowBindings:
    """Expected vs actual bindings of one window, summed over its evaluations."""

    window: tuple[int, int]
    expected: Counter[Hashable]
    actual: Counter[Hashable]
    evaluation_times: tuple[int, ...]
    unpaired_times: tuple[int, ...] = ()  # responses at instants with no expected evaluation, put here
    method: str = "window"  # "window" (the oracle on a slice) or "whole stream"

    @property
    def missing(self) -> Counter[Hashable]:
        return self.expected - self.actual

    @property
    def extra(self) -> Counter[Hashable]:
        return self.actual - self.expected


# ---------------------------------------------------------------------- reading


def _require(mapping: Mapping[str, Any], key: str, file: Path, kind: type | tuple[type, ...] = object) -> Any:
    if not isinstance(mapping, Mapping):
        raise UserError("expected a JSON object", file=str(file))
    if key not in mapping or mapping[key] is None:
        raise UserError("missing field", file=str(file), field=key)
    value = mapping[key]
    if not isinstance(value, kind):
        raise UserError(f"unexpected value {value!r}", file=str(file), field=key)
    return value


def run_folder(bundle: Path, run_id: str) -> Path:
    """``runs/RUN_ID``; a clear message when it is missing, still being written or outside the bundle."""
    folder = checked_run_folder(bundle, run_id, file=bundle / MANIFEST, field="runs.run_id")
    if folder.is_dir():
        return folder
    if (bundle / RUNS_DIR / (run_id + PARTIAL)).is_dir():
        raise UserError("this run is still being written (or its writer was interrupted)",
                        file=str(bundle / RUNS_DIR / (run_id + PARTIAL)))
    raise UserError(f"no run {run_id!r} in this bundle", file=str(bundle / RUNS_DIR))


def read_bundle_stream(bundle: Path, entry: Mapping[str, Any], manifest_file: Path, cache: StreamCache | None,
                       progress: Progress, cancelled: Callable[[], bool]) -> BundleStream:
    """Read a manifest stream (or take it from ``cache``) into elements and lanes."""
    from rsp_workbench.streams.readers import read_stream

    path, fmt = stream_path(bundle, entry, manifest_file)
    cached = cache.get(path, fmt) if cache is not None else None
    if cached is not None:
        return cached
    total = entry.get("elements") if isinstance(entry.get("elements"), int) else None
    elements: list[StreamElement] = []
    for index, element in enumerate(read_stream(path, fmt, interval_ms=int(entry.get("interval_ms") or 1000))):
        elements.append(element)
        if index % 200_000 == 0:
            if cancelled():
                raise LoadCancelled()
            fraction = ORACLE_SHARE + (0.6 - ORACLE_SHARE) * index / total if total else ORACLE_SHARE
            progress(fraction, f"reading {path.name}: {index:,} elements")
    progress(0.6, f"grouping {len(elements):,} elements into lanes")
    stream = BundleStream(str(entry.get("id")), path, fmt, elements, StreamLanes.from_elements(elements))
    if cache is not None:
        cache.put(stream)
    return stream


def _semantics(oracle: Mapping[str, Any] | None, run_spec: Mapping[str, Any], folder: Path) -> EngineSemantics:
    """What the oracle assumed (``oracle.json`` semantics), else the engine's own (run-spec.json)."""
    from rsp_workbench.oracle.run import resolve_semantics

    if oracle is not None and isinstance(oracle.get("semantics"), Mapping):
        described, file = oracle["semantics"], folder / ORACLE_FILE
    else:
        described, file = _require(run_spec, "semantics", folder / RUN_SPEC, Mapping), folder / RUN_SPEC
    try:
        return resolve_semantics(None, dict(described))
    except UserError as error:
        raise error.located(file=str(file), field=f"semantics.{error.field}" if error.field else "semantics") from None


def _experiment_run(bundle: Path, manifest: Mapping[str, Any], run_id: str) -> tuple[Any, Any]:
    """(experiment, RunSpec) from the bundle's experiment copy, paths resolved from the original folder."""
    from rsp_workbench.experiment.runs import expand_runs

    experiment = read_experiment_copy(bundle, manifest)
    for spec in expand_runs(experiment):
        if spec.run_id == run_id:
            return experiment, spec
    raise UserError(f"the experiment copy has no run {run_id!r}", file=str(bundle / EXPERIMENT_COPY))


def emission_times(log: ResponseLog, trace_file: Path) -> np.ndarray:
    """Application time of every response; a response without one is placed at the stimulus
    the stand had sent last when it arrived (``trace.jsonl``)."""
    times = [r.application_time for r in log.responses if r.application_time is not None]
    missing = [r.system_time for r in log.responses if r.application_time is None and r.system_time is not None]
    if missing and trace_file.is_file():
        sent: list[tuple[float, int]] = []
        with open(trace_file, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    raise UserError(f"not JSON: {error.msg}", file=str(trace_file), line=number, column=error.colno) from None
                if isinstance(record, dict) and record.get("sent") is not None and record.get("application_time") is not None:
                    sent.append((float(record["sent"]), int(record["application_time"])))
        sent.sort()
        instants = [s for s, _ in sent]
        for system_time in missing:
            position = bisect.bisect_right(instants, system_time) - 1
            if position >= 0:
                times.append(sent[position][1])
    return np.sort(np.asarray(times, dtype=np.int64))


def shift_summary(pairs: Sequence[tuple[tuple[int, int], tuple[int, int]]]) -> tuple[tuple[int, int], str]:
    """The most common (start, end) shift of reconstructed vs expected borders, and a label with the range."""
    if not pairs:
        return (0, 0), ""
    shifts = [(rs - s, re - e) for (s, e), (rs, re) in pairs]
    common = Counter(shifts).most_common(1)[0][0]
    starts = sorted({s for s, _ in shifts})
    ends = sorted({e for _, e in shifts})

    def span(values: list[int]) -> str:
        return f"{values[0]:+d} ms" if len(values) == 1 else f"{values[0]:+d}…{values[-1]:+d} ms"

    return common, f"start {span(starts)}, end {span(ends)} ({len(pairs)} window(s))"


def timeline_run(
    bundle: Bundle,
    run_id: str,
    *,
    cache: StreamCache | None = None,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> BundleRun:
    """Read one run of an opened bundle for the timeline (runs off the GUI thread)."""
    from rsp_workbench.oracle.deltas import Timeline, evaluations_for
    from rsp_workbench.oracle.reference import window_specs
    from rsp_workbench.oracle.run import default_end
    from rsp_workbench.query.parser import parse_query
    from rsp_workbench.responses.readers import read_response_log

    report = progress or (lambda fraction, message: None)
    is_cancelled = cancelled or (lambda: False)
    root, manifest, manifest_file = bundle.folder, bundle.manifest, bundle.folder / MANIFEST
    if bundle.published:
        raise UserError("a published YABench folder keeps no stream or responses: nothing to draw on a window "
                        "timeline", file=str(root))
    folder = run_folder(root, run_id)
    spec_file = folder / RUN_SPEC
    run_spec = read_json(spec_file)
    run_json = read_json(folder / RUN_FILE) if (folder / RUN_FILE).is_file() else {}
    status = str(run_json.get("status", "not-run")) if isinstance(run_json, Mapping) else "unknown"
    oracle: Mapping[str, Any] | None = None
    oracle_windows: dict[str, np.ndarray] = {}
    notes: list[str] = []
    if (folder / ORACLE_FILE).is_file():
        def reading(fraction: float) -> None:
            if is_cancelled():
                raise LoadCancelled()
            report(ORACLE_SHARE * fraction, f"reading {ORACLE_FILE}")

        parquet = folder / WINDOWS_FILE
        found = read_oracle(folder / ORACLE_FILE, {} if parquet.is_file() else ORACLE_COLUMNS, progress=reading)
        oracle = found.fields
        oracle_windows = window_columns(parquet) if parquet.is_file() else found.columns
    elif status == "ok":
        raise UserError("missing: the run finished (run.json status ok) but has no oracle verdict",
                        file=str(folder / ORACLE_FILE))
    else:
        notes.append(f"no oracle verdict (run status {status}): expected windows from the engine's t0")
    if oracle is not None and oracle.get("verdict") == "error":
        notes.append(f"the oracle failed: {oracle.get('error')}")

    query_text = _require(run_spec, "query_text", spec_file, str)
    try:
        query = parse_query(query_text, syntax=str(run_spec.get("syntax") or "rspql"))
    except UserError as error:
        raise UserError(f"query: {error}", file=str(spec_file), field="query_text") from None
    if not query.windows:
        raise UserError("the run's query has no window over a stream: nothing to draw on a window timeline",
                        file=str(spec_file), field="query_text")
    semantics = _semantics(oracle, run_spec, folder)

    experiment_error = None
    engine_parameters: Mapping[str, Any] = {}
    try:
        _, experiment_spec = _experiment_run(root, manifest, run_id)
        engine_parameters = dict(experiment_spec.engine_parameters)
    except UserError as error:  # the timeline still works; static data and engine parameters are unknown
        experiment_error = str(error)
        notes.append(f"experiment copy unusable ({error}); static data and engine parameters ignored")
    report_window = int(engine_parameters.get("report_window", 0) or 0)
    if not 0 <= report_window < len(query.windows):
        report_window = 0

    # streams: one per query stream IRI (a ``streams:`` experiment), else the one stream for all
    named = run_spec.get("streams") if isinstance(run_spec.get("streams"), Mapping) else None
    keys = {iri: str(named.get(iri, run_spec.get("stream"))) for iri in query.streams} if named else \
        {iri: str(_require(run_spec, "stream", spec_file)) for iri in query.streams}
    read: dict[str, BundleStream] = {}
    for key in dict.fromkeys(keys.values()):
        read[key] = read_bundle_stream(root, bundle.stream_entry(key), manifest_file, cache,
                                       report, is_cancelled)
    streams = {iri: read[key].elements for iri, key in keys.items()}
    shown = read[keys[query.windows[report_window].stream]]
    if is_cancelled():
        raise LoadCancelled()

    engine_type = str(run_spec.get("engine_type") or "")
    oracle_streams, static = streams, None
    if engine_type in _rhodf_types():
        report(0.65, "ρDF closure of the stream (the oracle's inputs)")
        oracle_streams, static = _rhodf_inputs(root, run_id, experiment_error, engine_parameters, streams)
        notes.append("ρDF run: expected answers over the stream's ρDF closure, as the oracle judged it")

    if oracle is not None and oracle.get("quality_t0") is not None:
        raw_t0 = oracle["quality_t0"]
        t0 = tuple(int(v) for v in raw_t0) if isinstance(raw_t0, list) else tuple(int(raw_t0) for _ in query.windows)
    else:
        engine_t0 = engine_parameters.get("t0", semantics.t0)
        if isinstance(engine_t0, list):
            t0 = tuple(int(v) for v in engine_t0)
        else:
            t0 = tuple(int(engine_t0 or 0) for _ in query.windows)
    if len(t0) != len(query.windows):
        raise UserError(f"expected one t0 per window ({len(query.windows)})", file=str(folder / ORACLE_FILE),
                        field="quality_t0")
    spec = window_specs(query, semantics, t0)[report_window]
    end = int(oracle["end"]) if oracle is not None and isinstance(oracle.get("end"), int) else \
        default_end(query, oracle_streams)
    report(0.7, "expected evaluation instants")
    reporting = oracle_streams[query.windows[report_window].stream]
    # the oracle's own enumeration (on distinct timestamps when that is exact: fast for big streams)
    evaluations = evaluations_for(Timeline.of([e.t for e in reporting]), spec, semantics, end=end)
    if is_cancelled():
        raise LoadCancelled()
    report(0.85, "engine responses")
    log = read_response_log(folder / RESPONSES) if (folder / RESPONSES).is_file() else None
    if log is None:
        if status in ("ok", "failed", "timeout", "cancelled"):
            raise UserError("missing: the run has no response log", file=str(folder / RESPONSES))
        log = ResponseLog((), ())
    reconstructed, diverging = _measured_windows(oracle_windows)
    shift, label = shift_summary([(expected, found) for found, expected in reconstructed.items()])
    divergence = (oracle or {}).get("first_divergence")
    first = None
    if isinstance(divergence, Mapping):
        first = divergence.get("expected_time")
        if first is None:
            first = divergence.get("actual_time")
    if len(streams) > 1:
        notes.append(f"lanes: the report window's stream <{query.windows[report_window].stream}>")
    run = BundleRun(
        bundle=root, run_id=run_id, engine=str(run_spec.get("engine") or run_id), engine_type=engine_type,
        query_id=str(run_spec.get("query") or ""), status=status,
        verdict=oracle.get("verdict") if oracle is not None else status,
        precision=(oracle or {}).get("precision"), recall=(oracle or {}).get("recall"),
        query=query, semantics=semantics, report_window=report_window, t0=t0, spec=spec, end=end,
        stream=shown, oracle_streams=oracle_streams, evaluations=tuple(evaluations), log=log,
        emission_times=emission_times(log, folder / TRACE), reconstructed=tuple(reconstructed),
        reconstructed_shift=shift, reconstructed_label=label, diverging=tuple(diverging),
        first_divergence_ms=int(first) if isinstance(first, int) else None, notes=tuple(notes),
        engine_parameters=engine_parameters, experiment_error=experiment_error, _static=static,
        evaluation_instants=np.fromiter((e.time for e in evaluations), dtype=np.int64, count=len(evaluations)),
        evaluation_windows=tuple(e.window for e in evaluations), windows=oracle_windows,
    )
    report(1.0, "done")
    return run


def window_columns(path: Path) -> dict[str, np.ndarray]:
    """:data:`ORACLE_COLUMNS` from a run's ``windows.parquet``, as `read_oracle` gives them from
    ``oracle.json`` (int64 borders; float64, NaN where null)."""
    from rsp_workbench.results.windows_file import read_windows

    table = read_windows(path, list(ORACLE_COLUMNS))
    return {name: np.asarray(table.column(name).to_numpy(), dtype=np.int64 if kind == "int" else np.float64)
            for name, kind in ORACLE_COLUMNS.items()}


def _measured_windows(columns: Mapping[str, np.ndarray]) -> tuple[dict[tuple[int, int], tuple[int, int]],
                                                                   dict[tuple[int, int], None]]:
    """From ``oracle.json``'s window columns: gracious mode's reconstructed borders (each with
    the expected borders of its first window) and the windows measured as diverging, in order."""
    if not columns:
        return {}, {}
    start, end = columns["start"], columns["end"]
    found_start, found_end = columns["reconstructed_start"], columns["reconstructed_end"]
    has = ~np.isnan(found_start) & ~np.isnan(found_end)
    found_start, found_end = found_start[has].astype(np.int64), found_end[has].astype(np.int64)
    first = first_of_each_pair(found_start, found_end)
    reconstructed = dict(zip(zip(found_start[first].tolist(), found_end[first].tolist()),
                             zip(start[has][first].tolist(), end[has][first].tolist())))
    # precision or recall below 1 (null counts as 0), or gracious: right only with other borders
    bad = (np.nan_to_num(columns["precision"], nan=0.0) < 1.0) | (np.nan_to_num(columns["recall"], nan=0.0) < 1.0) \
        | ~np.isnan(columns["reconstructed_start"])
    bad_start, bad_end = start[bad], end[bad]
    first = first_of_each_pair(bad_start, bad_end)
    diverging = dict.fromkeys(zip(bad_start[first].tolist(), bad_end[first].tolist()))
    return reconstructed, diverging


def _rhodf_types() -> tuple[str, ...]:
    from rsp_workbench.oracle.judge import RHODF_ENGINE_TYPES

    return RHODF_ENGINE_TYPES


def _static_inputs(bundle: Path, run_id: str, experiment_error: str | None) -> dict[str, Any]:
    """The experiment's static data as ``load_static`` gives it (empty if the experiment copy is unusable)."""
    from rsp_workbench.experiment.static_data import load_static

    if experiment_error is not None:
        return {"default": [], "named": {}}
    experiment, _ = _experiment_run(bundle, read_json(bundle / MANIFEST), run_id)
    return load_static(experiment)


def _rhodf_inputs(bundle: Path, run_id: str, experiment_error: str | None, parameters: Mapping[str, Any],
                  streams: dict[str, list[StreamElement]]) -> tuple[dict[str, list[StreamElement]], Any]:
    """The oracle's inputs for a ρDF baseline run (as `rsp_workbench.oracle.judge.judge` prepares them)."""
    from rsp_workbench.oracle.judge import static_data
    from rsp_workbench.oracle.rhodf import rhodf_entailed

    expanded, static = rhodf_entailed(streams, _static_inputs(bundle, run_id, experiment_error), parameters.get("tbox"))
    return expanded, static_data(static)


def _static_data(run: BundleRun) -> Any:
    from rsp_workbench.oracle.judge import static_data

    if run._static is None:
        run._static = static_data(_static_inputs(run.bundle, run.run_id, run.experiment_error))
    return run._static


# ---------------------------------------------------------------------- one window


def _signature(evaluation: Evaluation) -> tuple[int, int, int, int, int]:
    return (evaluation.time, evaluation.sequence, evaluation.window.open, evaluation.window.close, evaluation.size)


def _same_window(evaluation: Evaluation, window: tuple[int, int]) -> bool:
    return (evaluation.window.open, evaluation.window.close) == window


def _answer_for(run: BundleRun, reference: Sequence[Evaluation], window: tuple[int, int]) -> tuple[Any, str]:
    """The oracle's answer on a slice of the stream that reproduces ``reference`` (the evaluations
    from just before the window's first to its last), else on the whole stream."""
    from rsp_workbench.oracle.run import compute_expected

    static = _static_data(run)
    last = reference[-1].time
    largest = max(w.size_ms for w in run.query.windows)
    wanted = [_signature(e) for e in reference]
    for widening in CONTEXT_WIDENING:
        start = min(reference[0].window.open, window[0]) - widening * largest
        sliced = {}
        for iri, elements in run.oracle_streams.items():
            times = run.stream.lanes.all_times if elements is run.stream.elements else \
                np.fromiter((e.t for e in elements), dtype=np.int64, count=len(elements))
            sliced[iri] = elements[int(np.searchsorted(times, start, "left")):int(np.searchsorted(times, last, "right"))]
        answer = compute_expected(run.query, sliced, run.semantics, [run.t0], static=static, end=last,
                                  report_window=run.report_window)[run.t0]
        first = (reference[0].time, reference[0].sequence)
        got = [_signature(e) for e in answer.evaluations if (e.time, e.sequence) >= first]
        if got == wanted:
            return answer, "window"
    if run._whole_answer is None:
        run._whole_answer = compute_expected(run.query, run.oracle_streams, run.semantics, [run.t0], static=static,
                                             end=run.end, report_window=run.report_window)[run.t0]
    return run._whole_answer, "whole stream"


def attributed_window(run: BundleRun, time: int) -> tuple[int, int] | None:
    """The window a response at an instant with no expected evaluation reports: the one closing
    then, else the active one (so e.g. a misaligned partial window's report lands in a window)."""
    closing = run.spec.closing_at(time)
    window = closing if closing is not None else run.spec.active(time, run.semantics.active_window)
    return None if window is None else (window.open, window.close)


_ORACLE_LOCK = threading.Lock()


def window_bindings(run: BundleRun, window: WindowInstance | tuple[int, int]) -> WindowBindings:
    """Expected vs actual bindings of one window (summed over its evaluations).

    One window at a time (this lock also guards the run's lazily read static data and whole-stream
    answer): each click starts a task, all evaluate one shared prepared rdflib query, which rdflib
    does not document as thread-safe, and concurrent clicks gave wrong counts."""
    with _ORACLE_LOCK:
        return _window_bindings(run, window)


def _window_bindings(run: BundleRun, window: WindowInstance | tuple[int, int]) -> WindowBindings:
    from rsp_workbench.oracle.run import responses_by_evaluation

    borders = (window.open, window.close) if isinstance(window, WindowInstance) else (int(window[0]), int(window[1]))
    evaluations = run.evaluations
    indices = [i for i, e in enumerate(evaluations) if _same_window(e, borders)]
    expected: Counter[Hashable] = Counter()
    actual: Counter[Hashable] = Counter()
    by_time = bool(run.log.responses) and all(r.application_time is not None for r in run.log.responses)
    method = "window"
    if indices:
        first_time, last_time = evaluations[indices[0]].time, evaluations[indices[-1]].time
        lo = indices[0]
        while lo > 0 and evaluations[lo - 1].time == first_time:
            lo -= 1
        hi = indices[-1]
        while hi + 1 < len(evaluations) and evaluations[hi + 1].time == last_time:
            hi += 1
        reference = evaluations[max(0, lo - 1):hi + 1]
        answer, method = _answer_for(run, reference, borders)
        emitted = {(e.time, e.sequence): e for e in answer.emissions}
        mine = [i for i, e in enumerate(answer.evaluations) if _same_window(e, borders)
                and first_time <= e.time <= last_time]
        for i in mine:
            emission = emitted.get((answer.evaluations[i].time, answer.evaluations[i].sequence))
            if emission is not None:
                expected.update(Counter(emission.bindings))
        if by_time:
            paired = responses_by_evaluation(answer, run.log)
            for i in mine:
                if paired[i] is not None:
                    actual.update(Counter(paired[i].bindings))
        else:  # no application times: the i-th response answers the i-th evaluation (YABench's pairing)
            for i in indices:
                if i < len(run.log.responses):
                    actual.update(Counter(run.log.responses[i].bindings))
    unpaired: list[int] = []
    if by_time:
        instants = {e.time for e in evaluations}
        for response in run.log.responses:
            time = int(response.application_time)  # type: ignore[arg-type]
            if time not in instants and attributed_window(run, time) == borders:
                actual.update(Counter(response.bindings))
                unpaired.append(time)
    times = tuple(dict.fromkeys(evaluations[i].time for i in indices))
    return WindowBindings(borders, expected, actual, times, tuple(unpaired), method)


__all__ = [
    "BundleRun", "BundleStream", "LoadCancelled", "StreamCache", "WindowBindings", "attributed_window",
    "emission_times", "shift_summary", "timeline_run", "window_bindings",
]
