"""The window timeline without Qt: the work it does off the GUI thread, where its rows are, and its texts.

- Workers (plain functions a :class:`~rsp_workbench.gui.tasks.TaskRegistry` task runs): a
  stream file read into lanes, a bundle run read with the runs that share its stream
  (:func:`rsp_workbench.results.run_timeline.timeline_run`), one window's expected vs
  actual bindings.
- :class:`RowLayout`: the y of every row — lanes, the expected-evaluation and engine marker
  rows above them, the staggered window rows and each engine's reconstructed windows below.
- Texts: a binding (``?var=term``, IRIs by local name), the bindings table's rows (differences
  first) and the CSV of what is in view.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np

from rsp_workbench.core.semantics import BorderConvention, ReportPolicy
from rsp_workbench.core.windows import WindowInstance, WindowSpec
from rsp_workbench.errors import UserError
from rsp_workbench.gui.text import escape_html
from rsp_workbench.results.stream_lanes import StreamLanes, windows_in_range

WINDOW_ROW_HEIGHT = 0.35
CSV_WINDOW_LIMIT = 1_000_000  # windows of a stream without a run exported at most
MARKER_LIMIT = 5_000  # markers drawn per row at most (thinned beyond)
XSD = "^^<http://www.w3.org/2001/XMLSchema#"

# ---------------------------------------------------------------------- work off the GUI thread


def stream_reader(path: str, fmt: str | None) -> Callable[[Any], StreamLanes]:
    """Worker: read a stream file into lanes (runs off the GUI thread)."""
    from rsp_workbench.streams.readers import detect_format, read_stream

    def run(state: Any) -> StreamLanes:
        elements = []
        for index, element in enumerate(read_stream(path, fmt or detect_format(path))):
            elements.append(element)
            if index % 100_000 == 0:
                if state.cancelled:
                    raise UserError("cancelled")
                state.report_progress(0.0, f"{index:,} elements read")
        return StreamLanes.from_elements(elements)

    return run


@dataclass(frozen=True)
class LoadedRun:
    """A bundle run read by the loader thread, with what the view asked for."""

    generation: int
    overlay: bool
    run: Any  # run_timeline.BundleRun
    same_stream_runs: tuple[str, ...]  # other runs of the bundle on this stream (overlay candidates)


@dataclass(frozen=True)
class BindingsResult:
    run_key: tuple[str, str]
    bindings: Any  # run_timeline.WindowBindings


def bundle_run_reader(bundle: str, run_id: str, overlay: bool, generation: int, cache: Any) -> Callable[[Any], LoadedRun]:
    """Worker: read a bundle run (and which other runs share its stream)."""
    from rsp_workbench.results.reader import open_bundle
    from rsp_workbench.results.run_timeline import timeline_run

    def run(state: Any) -> LoadedRun:
        opened = open_bundle(bundle, partial=True)
        loaded = timeline_run(opened, run_id, cache=cache, progress=state.report_progress,
                              cancelled=lambda: state.cancelled)
        rows = opened.rows  # summary.json, or rebuilt from the run folders
        stream = next((r.get("stream") for r in rows if r.get("run_id") == run_id), None)
        others = tuple(str(r.get("run_id")) for r in rows
                       if r.get("stream") == stream and r.get("run_id") != run_id and r.get("status") == "ok")
        return LoadedRun(generation, overlay, loaded, others)

    return run


def bindings_computer(run: Any, window: WindowInstance) -> Callable[[Any], BindingsResult]:
    """Worker: one window's expected (the oracle on that window) and actual bindings."""
    from rsp_workbench.results.run_timeline import window_bindings

    def compute(state: Any) -> BindingsResult:
        return BindingsResult(run.key, window_bindings(run, window))

    return compute


def error_text(error: BaseException) -> str:
    """A user error's own line; anything else with its type."""
    if isinstance(error, UserError):
        return str(error)
    return f"{type(error).__name__}: {error}"


def synthetic_lanes(elements: int, stations: int = 10, interval_ms: int = 1000, seed: int = 0) -> StreamLanes:
    """A stream like SG1's shape without terms (benchmarks, screenshots): ``stations`` lanes,
    one element every ``interval_ms`` per station with random phases."""
    rng = np.random.default_rng(seed)
    per_station = max(1, elements // stations)
    phases = rng.integers(0, interval_ms, stations)
    times = (np.arange(per_station)[None, :] * interval_ms + phases[:, None]).ravel()
    lanes = np.repeat(np.arange(stations), per_station)
    return StreamLanes.from_arrays(times, lanes, [f"A{i}" for i in range(stations)])


def expected_evaluations(lanes: StreamLanes, spec: WindowSpec | None,
                         policy: ReportPolicy) -> tuple[list[int], list[WindowInstance]]:
    """Evaluation instants of ``policy`` over the stream and the window each reads (none without a
    spec or elements); window-close and periodic are cheap, content-change walks every element."""
    from rsp_workbench.core.report import evaluation_instants

    if spec is None or not lanes.count:
        return [], []
    times = lanes.all_times.tolist()
    evaluations = evaluation_instants(times, spec, policy, start=spec.t0, end=times[-1])
    return [e.time for e in evaluations], [e.window for e in evaluations]


# ---------------------------------------------------------------------- rows


@dataclass(frozen=True)
class RowLayout:
    """Where each row of the plot is (y grows downwards): lanes 0…n-1, marker rows above, windows below."""

    lanes: int
    spec: WindowSpec | None
    engines: tuple[str, ...] = ()  # engines with emission markers, in the order they were added
    reconstructed: tuple[str, ...] = ()  # engines with reconstructed borders, in order

    def window_rows(self) -> int:
        if self.spec is None:
            return 0
        # one more row than windows overlap, so that windows sharing a row never touch
        return min(8, -(-self.spec.size // self.spec.slide) + 1)

    def window_row_y(self, index: int) -> float:
        return self.lanes + 0.3 + (index % max(1, self.window_rows())) * WINDOW_ROW_HEIGHT

    def marker_rows(self) -> list[tuple[float, str]]:
        """Rows above the lanes: expected evaluation instants, then one per engine."""
        rows = [(-0.8, "expected ET")]
        for offset, engine in enumerate(self.engines):
            rows.append((-1.3 - 0.5 * offset, engine))
        return rows

    def reconstructed_row_y(self, engine: str, index: int) -> float:
        """Rows below the expected windows: each engine's reconstructed windows, staggered the same way."""
        rows = max(1, self.window_rows())
        band = self.reconstructed.index(engine)
        return self.window_row_y(0) + (rows + 1.4 + band * (rows + 1.4)) * WINDOW_ROW_HEIGHT + (index % rows) * WINDOW_ROW_HEIGHT

    def row_ticks(self) -> list[tuple[float, str]]:
        ticks = self.marker_rows()
        if self.spec is not None:
            ticks.append((self.window_row_y(0), f"windows {self.spec.border.value}"))
            for engine in self.reconstructed:
                ticks.append((self.reconstructed_row_y(engine, 0), f"{engine} reconstructed"))
        return ticks

    def extent(self) -> tuple[float, float]:
        """(top, bottom) of everything drawn."""
        bottom = self.lanes + 0.4 + self.window_rows() * WINDOW_ROW_HEIGHT
        if self.reconstructed and self.spec is not None:
            bottom = self.reconstructed_row_y(self.reconstructed[-1], self.window_rows() - 1) + 0.5
        top = min(row for row, _ in self.marker_rows()) - 0.4
        return top, bottom


def element_points(lanes: StreamLanes, slices: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(x in s, lane) of each element in view: ``slices`` are each lane's positions in view."""
    xs = np.concatenate([t[a:b] for t, (a, b) in zip(lanes.times, slices)] or [np.zeros(0)]) / 1000
    ys = np.concatenate([np.full(b - a, i, dtype=float) for i, (a, b) in enumerate(slices)] or [np.zeros(0)])
    return xs, ys


def density_ticks(edges: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A vertical tick per non-empty bucket of each lane, its height ∝ count (peak mode: never dropped),
    as ``connect='pairs'`` segments: x in s, y around the lane."""
    peak = int(counts.max()) if counts.size else 1
    centres = (edges[:-1] + edges[1:]) / 2000
    lane, bucket = np.nonzero(counts)
    heights = 0.12 + 0.33 * counts[lane, bucket] / max(1, peak)
    xs = np.repeat(centres[bucket], 2)
    ys = np.empty(len(lane) * 2)
    ys[0::2] = lane + heights
    ys[1::2] = lane - heights
    return xs, ys


def segments(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """x of ``connect='pairs'`` segments start→end, exactly: zoomed into a border, a bar must end where
    its window does (an inset left a gap where no window seemed to cover the elements)."""
    xs = np.empty(len(starts) * 2)
    xs[0::2], xs[1::2] = starts, ends
    return xs


def markers_in_view(times: np.ndarray, lo: float, hi: float, limit: int = MARKER_LIMIT) -> np.ndarray:
    """The sorted ``times`` (ms) within [lo, hi], thinned to about ``limit``."""
    a = np.searchsorted(times, int(np.ceil(lo)), "left")
    b = np.searchsorted(times, int(np.floor(hi)), "right")
    step = max(1, (b - a) // limit)
    return times[a:b:step]


@dataclass(frozen=True)
class WindowMarks:
    """(x in s, y) of the expected windows' bars, their borders across the lanes, and their ends."""

    bars: tuple[np.ndarray, np.ndarray]
    borders: tuple[np.ndarray, np.ndarray]
    inclusive_ends: tuple[np.ndarray, np.ndarray]  # filled: the border belongs to the window
    exclusive_ends: tuple[np.ndarray, np.ndarray]  # hollow


def window_marks(windows: Sequence[WindowInstance], rows: RowLayout) -> WindowMarks:
    """The marks of ``windows`` (at least one; all share one border convention) on their staggered rows."""
    opens = np.array([w.open for w in windows], dtype=float) / 1000
    closes = np.array([w.close for w in windows], dtype=float) / 1000
    ys = np.array([rows.window_row_y(w.index) for w in windows])
    borders = np.unique(np.concatenate([opens, closes]))
    open_inclusive = windows[0].border is not BorderConvention.OPEN_CLOSED
    close_inclusive = windows[0].border is not BorderConvention.CLOSED_OPEN
    inc_x = np.concatenate([opens if open_inclusive else [], closes if close_inclusive else []])
    inc_y = np.concatenate([ys if open_inclusive else [], ys if close_inclusive else []])
    exc_x = np.concatenate([opens if not open_inclusive else [], closes if not close_inclusive else []])
    exc_y = np.concatenate([ys if not open_inclusive else [], ys if not close_inclusive else []])
    return WindowMarks((segments(opens, closes), np.repeat(ys, 2)),
                       (np.repeat(borders, 2), np.tile([-0.5, rows.lanes - 0.5], len(borders))),
                       (inc_x, inc_y), (exc_x, exc_y))


# ---------------------------------------------------------------------- texts


def mapping_text(mapping: Hashable, compact: bool = False) -> str:
    """``?var=term, …`` sorted by variable; ``compact``: IRIs by local name, XSD datatypes as ``xsd:``."""
    try:
        items = sorted(dict(mapping).items())  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return str(mapping)
    return ", ".join(f"?{k}={compact_term(v) if compact else v}" for k, v in items)


def compact_term(term: str) -> str:
    """An IRI by its local name, an XSD datatype as ``xsd:``; other terms as they are."""
    if term.startswith("<") and term.endswith(">"):
        local = term[1:-1]
        cut = max(local.rfind("/"), local.rfind("#"))
        return local[cut + 1:] if cut >= 0 and cut + 1 < len(local) else term
    return term.replace(XSD, "^^xsd:").removesuffix(">") if XSD in term else term


def spec_summary(lanes: StreamLanes, spec: WindowSpec, evaluations: int) -> str:
    """The stream and the window spec shown, and how many evaluations the report policy expects."""
    left, right = spec.border.brackets()
    return (f"{lanes.count:,} elements in {len(lanes.names)} lane(s); {spec.kind} window "
            f"ω={spec.size} ms β={spec.slide} ms t0={spec.t0} ms, borders {left}o, c{right}; "
            f"{evaluations:,} expected evaluations")


def runs_status(runs: Sequence[Any]) -> str:
    """The shown run (a ``BundleRun``), its overlays and the shown run's notes, as rich text."""
    lines = [escape_html(runs[0].describe())]
    for run in runs[1:]:
        lines.append("overlay " + escape_html(run.describe()))
    for note in runs[0].notes:
        lines.append(f"<i>{escape_html(note)}</i>")
    return "<br>".join(lines)


def bindings_note(engine: str, found: Any) -> str:
    """How one window's bindings (a ``WindowBindings``) were found: counts, evaluation instants, the oracle's path."""
    missing, extra = sum(found.missing.values()), sum(found.extra.values())
    times = ", ".join(str(t) for t in found.evaluation_times[:6]) + (" …" if len(found.evaluation_times) > 6 else "")
    note = (f"{escape_html(engine)}: {sum(found.expected.values())} expected, {sum(found.actual.values())} actual "
            f"(<span style='background:#ffcdd2'>{missing} missing</span>, "
            f"<span style='background:#ffe0b2'>{extra} extra</span>); "
            f"evaluated at {times or 'no expected instant'}; oracle on the {found.method}")
    if found.unpaired_times:
        note += f"; responses at {', '.join(str(t) for t in found.unpaired_times[:6])} with no expected evaluation"
    return note


def binding_status_rows(expected: Counter[Hashable], actual: Counter[Hashable]) -> list[tuple[str, Hashable]]:
    """(ok | missing | extra, binding) per expected and actual binding (bags: once per copy), differences first."""
    rows: list[tuple[str, Hashable]] = []
    for mapping in sorted(set(expected) | set(actual), key=str):
        both = min(expected[mapping], actual[mapping])
        rows += [("ok", mapping)] * both
        rows += [("missing", mapping)] * (expected[mapping] - both)
        rows += [("extra", mapping)] * (actual[mapping] - both)
    rows.sort(key=lambda row: {"missing": 0, "extra": 1, "ok": 2}[row[0]])
    return rows


WINDOW_CSV_HEADER = ("run_id", "engine", "window", "start_ms", "end_ms", "elements", "expected", "actual",
                     "missing", "extra", "verdict", "precision", "recall", "reconstructed_start_ms",
                     "reconstructed_end_ms")
CSV_CHUNK = 65_536  # windows turned into rows at a time (a content-change run has millions)


def window_verdicts(columns: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per judged window (``oracle.json``'s columns): missing and extra bindings and a verdict.

    The oracle stores precision = matched / actual and recall = matched / expected per window, so
    matched = recall × expected; missing = expected − matched, extra = actual − matched. The verdict
    is ``ok``, ``diverging`` (something missing or extra; unknown quality counts as diverging, as on
    the plot) or ``ok on reconstructed borders`` (gracious mode matched it on other borders)."""
    expected = np.nan_to_num(columns["expected_size"], nan=0.0)
    actual = np.nan_to_num(columns["actual_size"], nan=0.0)
    recall = np.nan_to_num(columns["recall"], nan=0.0)
    matched = np.where(expected > 0, np.rint(recall * expected), 0.0)
    missing = (expected - matched).astype(np.int64)
    extra = np.maximum(actual - matched, 0).astype(np.int64)
    diverging = (np.nan_to_num(columns["precision"], nan=0.0) < 1.0) | (recall < 1.0)
    shifted = ~np.isnan(columns["reconstructed_start"])
    verdict = np.where(diverging, "diverging", np.where(shifted, "ok on reconstructed borders", "ok"))
    return missing, extra, verdict


def _number(value: float) -> Any:
    """A CSV cell: integers as integers, NaN (unknown) as empty."""
    if value != value:
        return ""
    return int(value) if float(value).is_integer() else round(float(value), 6)


def run_window_rows(run: Any) -> Any:
    """One CSV row (``WINDOW_CSV_HEADER``) per window the oracle judged in ``run`` (a ``BundleRun``),
    whatever the zoom: the same file for the same run."""
    columns = run.windows
    if not columns or not len(columns.get("start", ())):
        return
    missing, extra, verdict = window_verdicts(columns)
    for first in range(0, len(columns["start"]), CSV_CHUNK):
        part = slice(first, first + CSV_CHUNK)
        values = [np.asarray(columns[k][part]).tolist() for k in ("start", "end", "window_triples", "expected_size",
                                                                  "actual_size", "precision", "recall",
                                                                  "reconstructed_start", "reconstructed_end")]
        for offset, (start, end, triples, expected, actual, precision, recall, r_start, r_end) in enumerate(zip(*values)):
            index = first + offset
            yield (run.run_id, run.engine, index + 1, int(start), int(end), _number(triples), _number(expected),
                   _number(actual), int(missing[index]), int(extra[index]), str(verdict[index]), _number(precision),
                   _number(recall), _number(r_start), _number(r_end))


def write_window_csv(path: str | Path, runs: Sequence[Any]) -> Path:
    """The shown run and its overlays, one row per judged window with expected, actual, missing and
    extra bindings and the window's verdict (the per-pixel buckets it held before changed with the zoom)."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(WINDOW_CSV_HEADER)
        for run in runs:
            writer.writerows(run_window_rows(run))
    return Path(path)


def write_shown_csv(path: str | Path, shown: Mapping[str, Any], lane_names: Sequence[str],
                    diverging: Sequence[tuple[int, int]],
                    reconstructed: Mapping[str, tuple[list[tuple[int, int]], tuple[int, int]]],
                    lanes: StreamLanes | None = None, spec: WindowSpec | None = None) -> Path:
    """A stream without a run: per window of ``spec`` in view, its elements (per lane); or the
    elements one instant a row when few are shown; then windows and markers."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["kind", "lane", "start_ms", "end_ms", "count"])
        if shown.get("mode") == "density" and lanes is not None and spec is not None:
            # whole windows, not per-pixel buckets: the same rows at any zoom that shows them
            edges, _ = shown["bins"]
            windows = windows_in_range(spec, float(edges[0]), float(edges[-1]), limit=CSV_WINDOW_LIMIT)
            for window in windows:
                # t ≥ open (> open for an open start) and t < close (≤ close for a closed end), as integer edges
                low = window.open + (0 if window.border.contains(window.open, window.close, window.open) else 1)
                high = window.close + (1 if window.border.contains(window.open, window.close, window.close) else 0)
                counts = np.diff(lanes._positions(np.array([low, high], dtype=np.float64)), axis=1)
                for lane, count in zip(lane_names, counts[:, 0]):
                    if count:
                        writer.writerow(["elements", lane, window.open, window.close, int(count)])
        elif shown.get("mode") == "points":  # one row per lane and instant: a graph's triples are counted
            xs, ys = shown["points"]
            at = Counter(zip(np.round(np.asarray(xs) * 1000).astype(np.int64).tolist(), np.asarray(ys).astype(int).tolist()))
            for (t, lane), count in sorted(at.items(), key=lambda item: (item[0][1], item[0][0])):
                writer.writerow(["element", lane_names[lane], t, t, count])
        for window in shown.get("windows", []):
            left, right = window.border.brackets()
            writer.writerow([f"window {left}{right}", window.index, window.open, window.close, ""])
        for o, c in diverging:
            writer.writerow(["diverging window", "", o, c, ""])
        for t in shown.get("evaluations", []):
            writer.writerow(["expected evaluation", "", int(t), int(t), ""])
        for engine, times in shown.get("engines", {}).items():
            for t in times:
                writer.writerow(["emission", engine, int(t), int(t), ""])
        for engine, (borders, shift) in reconstructed.items():
            for o, c in borders:
                writer.writerow([f"reconstructed (start {shift[0]:+d}, end {shift[1]:+d})", engine, o, c, ""])
    return Path(path)
