"""What the Results browser shows, extracted from a result bundle (docs/result-bundle.md).

Pure functions from an opened bundle (:func:`rsp_workbench.results.reader.open_bundle`) to plain
dataclasses and numpy arrays (no Qt, no Spark), so the charts are thin and everything here is
testable in milliseconds. Reading is tolerant: a corrupt or partial bundle (bad JSON, missing
manifest, a run still being written) yields whatever could be read plus
:class:`~rsp_workbench.errors.UserError` problems naming the file and line, never an exception.

The views: per-window quality and YABench boxplots (YABench Sect. 5-6, ``ORACLE_*`` and
``BOXPLOTS_*``), resource samples (``P_*.csv``), the correctness matrix (CSRBench Table 2),
Heaven's latency × memory dashboard and dominance tables (Heaven Sect. 7, Table 2, Fig. 3)
and recall vs cache size (eviction strategies, Sect. 3).
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, replace
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

import numpy as np

from rsp_workbench.results.bundle import ORACLE_FILE, RUN_FILE, YABENCH_DIR, Bundle
from rsp_workbench.results.json_files import read_json
from rsp_workbench.files import PARTIAL
from rsp_workbench.errors import UserError
from rsp_workbench.results.oracle_file import read_oracle
from rsp_workbench.results.published import published_boxplots, read_published
from rsp_workbench.results.tables import KPI_COLUMNS, WINDOW_COLUMNS
from rsp_workbench.results.yabench_files import (
    ResourceSeries,
    WindowBoxplots,
    parse_boxplots,
    parse_oracle_borders,
    first_of_each_pair,
    parse_performance,
    window_positions,
)

VERDICT_SYMBOLS = {"correct": "✓", "incorrect": "✗"}
#: Heaven Table 2: "approach A dominates B when A/B is greater than 5 %" (lower is better).
DOMINANCE_MARGIN = 0.05
EVEN = "—"


# ---------------------------------------------------------------------- the bundle


def run_groups(bundle: Bundle) -> list[tuple[tuple[Any, Any, Any], str]]:
    """The (case, repetition, query) groups whose engines are overlaid, with a label each."""
    groups: dict[tuple[Any, Any, Any], str] = {}
    members: dict[tuple[Any, Any, Any], set[str]] = {}
    for row in bundle.rows:
        key = (row.get("case"), row.get("repetition"), row.get("query"))
        members.setdefault(key, set()).update(f"{k}={json.dumps(v, sort_keys=True)}"
                                              for k, v in (row.get("variables") or {}).items())
    # only the variables that tell groups apart (not those of one engine, e.g. a published WPOLICY)
    varying = [v for v in grid_axes(bundle.rows)
               if all(sum(m.startswith(f"{v}=") for m in vals) <= 1 for vals in members.values())]
    for row in bundle.rows:
        key = (row.get("case"), row.get("repetition"), row.get("query"))
        if key not in groups:
            variables = row.get("variables") or {}
            detail = ", ".join(f"{v}={variables.get(v)}" for v in varying if v in variables)
            parts = [f"case {key[0]}" if key[0] is not None else "", f"rep {key[1]}" if key[1] is not None else "",
                     str(key[2])]
            if bundle.published:  # the test folder: several engines may share a test name
                parts[0] = ""
            groups[key] = " · ".join(p for p in parts if p) + (f" ({detail})" if detail else "")
    return list(groups.items())


def rows_in_group(bundle: Bundle, group: tuple[Any, Any, Any]) -> list[Mapping[str, Any]]:
    return [r for r in bundle.rows if (r.get("case"), r.get("repetition"), r.get("query")) == group]


def engines_of(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Engine ids in order of first appearance (the colour order of every chart)."""
    seen: dict[str, None] = {}
    for row in rows:
        seen.setdefault(str(row.get("engine")), None)
    return list(seen)


# ---------------------------------------------------------------------- per-window quality


@dataclass(frozen=True)
class WindowSeries:
    """One run's per-window quality (``oracle.json`` ``windows``; YABench's ORACLE_ lines)."""

    run_id: str
    engine: str
    start: np.ndarray  # application ms
    end: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    actual_size: np.ndarray
    expected_size: np.ndarray
    window_triples: np.ndarray
    delay: np.ndarray  # ms, NaN where the engine did not report the window

    def __len__(self) -> int:
        return len(self.start)

    def positions(self) -> np.ndarray:
        """Where each window's values are drawn (ms; computed once: the charts ask on every redraw)."""
        cached = self.__dict__.get("_positions")
        if cached is None:
            cached = window_positions(self.start, self.end)
            object.__setattr__(self, "_positions", cached)
        return cached

    def windows(self) -> list[tuple[int, int]]:
        """The distinct window intervals in order (for the window bands)."""
        first = first_of_each_pair(self.start, self.end)
        return list(zip(self.start[first].astype(np.int64).tolist(), self.end[first].astype(np.int64).tolist()))


def read_window_series(bundle: Bundle, row: Mapping[str, Any]) -> WindowSeries | None:
    """The per-window quality of one run (`Bundle.windows`), or None when its oracle measured no windows."""
    table = bundle.windows(str(row.get("run_id")))
    if not table.num_rows:
        return None
    series = WindowSeries(str(row.get("run_id")), str(row.get("engine")),
                          *(table.column(k).to_numpy().astype(float, copy=False) for k in WINDOW_COLUMNS))
    series.positions()  # here, off the GUI thread
    return series


def read_boxplots(bundle: Bundle, problems: list[UserError] | None = None) -> list[WindowBoxplots]:
    """Every ``yabench/*/BOXPLOTS_*`` of the bundle (unreadable files go to ``problems``), or a
    published folder's ``results/oracle/BOXPLOTS_*``; each knows its run group's case and query."""
    if bundle.published:
        found: list[UserError] = []
        published = published_boxplots(read_published(bundle.folder), found)
        if found and problems is None:
            raise found[0]
        (problems if problems is not None else []).extend(found)
        return published
    groups = {f"case{r.get('case')}-{r.get('query')}": (r.get("case"), r.get("query")) for r in bundle.rows}
    result = []
    for path in sorted((bundle.folder / YABENCH_DIR).glob("*/BOXPLOTS_*")):
        if path.name.endswith(PARTIAL):
            continue
        try:
            boxplots = parse_boxplots(path.read_text(encoding="utf-8"), group=path.parent.name, file=str(path))
            first = path.parent / f"ORACLE_{path.name.removeprefix('BOXPLOTS_')}_1"
            if first.is_file():
                start, end = parse_oracle_borders(first.read_text(encoding="utf-8"), file=str(first))
                boxplots = replace(boxplots, start=start, end=end)
            case, query = groups.get(path.parent.name, (None, None))
            result.append(replace(boxplots, case=case, query=query))
        except UserError as error:
            if problems is None:
                raise
            problems.append(error)
    return result


@dataclass(frozen=True)
class BoxStats:
    """Five-number summary of one box (quartiles as :class:`rsp_workbench.oracle.quality.Spread`)."""

    minimum: float
    q1: float
    median: float
    q3: float
    maximum: float
    mean: float
    count: int


def box_stats(values: Sequence[float]) -> BoxStats | None:
    from rsp_workbench.oracle.quality import Spread

    if not values:
        return None
    spread = Spread.of(values)
    return BoxStats(spread.minimum, spread.q1, spread.median, spread.q3, spread.maximum, spread.mean, len(values))


# ---------------------------------------------------------------------- resources


def read_resources(bundle: Bundle, row: Mapping[str, Any]) -> ResourceSeries | None:
    """The performance samples of one run (`Bundle.kpis`; None when the run wrote none)."""
    table = bundle.kpis(str(row.get("run_id")))
    if not table.num_rows:
        return None
    return ResourceSeries(str(row.get("run_id")), str(row.get("engine")),
                          *(table.column(k).to_numpy() for k in KPI_COLUMNS))


def read_runs(bundle: Bundle, rows: Iterable[Mapping[str, Any]],
              reader: Callable[[Bundle, Mapping[str, Any]], Any]) -> tuple[list[Any], list[UserError]]:
    """Apply a per-run reader (:func:`read_window_series`, :func:`read_resources`) to ``rows``:
    the results that exist, and the located problems of the files that could not be read."""
    found, problems = [], []
    for row in rows:
        try:
            value = reader(bundle, row)
        except UserError as error:
            problems.append(error)
            continue
        if value is not None:
            found.append(value)
    return found, problems


# ---------------------------------------------------------------------- overlay across bundles


@dataclass(frozen=True)
class OverlayMetric:
    """A quantity that any run of any bundle (own or published) can be drawn as, over one axis."""

    key: str
    label: str
    axis: str  # the x axis: "window" (application time of the window end, s) or "time" (s since engine start)
    unit: str


OVERLAY_METRICS: tuple[OverlayMetric, ...] = (
    OverlayMetric("precision", "precision per window", "window", ""),
    OverlayMetric("recall", "recall per window", "window", ""),
    OverlayMetric("delay", "delay per window", "window", "ms"),
    OverlayMetric("actual_size", "result size per window", "window", "bindings"),
    OverlayMetric("rss_mb", "memory (RSS)", "time", "MB"),
    OverlayMetric("cpu_percent", "CPU (% of one core)", "time", "%"),
    OverlayMetric("threads", "threads", "time", ""),
)


def overlay_metric(key: str) -> OverlayMetric:
    return next(m for m in OVERLAY_METRICS if m.key == key)


def overlay_series(bundle: Bundle, row: Mapping[str, Any], key: str) -> tuple[np.ndarray, np.ndarray] | None:
    """One run's ``key`` as (x in s, y): per window at the window's position (quality), or over
    the time since engine start (resources); None when the run has no such data."""
    metric = overlay_metric(key)
    if metric.axis == "window":
        series = read_window_series(bundle, row)
        if series is None:
            return None
        return series.positions() / 1000.0, np.asarray(getattr(series, key), dtype=float)
    samples = read_resources(bundle, row)
    if samples is None or not len(samples.time_s):
        return None
    return samples.time_s, np.asarray(getattr(samples, key), dtype=float)


# ---------------------------------------------------------------------- correctness matrix


@dataclass(frozen=True)
class MatrixCell:
    """One engine × query: the verdicts of its runs (cases × repetitions) and the first divergence."""

    engine: str
    query: str
    run_ids: tuple[str, ...]
    verdicts: tuple[str, ...]
    divergence_run: str | None = None
    divergence_t_ms: int | None = None
    divergence: str | None = None

    @property
    def state(self) -> str:
        """correct | incorrect (some run) | the non-verdict status (failed, timeout, …) | mixed."""
        kinds = set(self.verdicts)
        if kinds == {"correct"}:
            return "correct"
        if "incorrect" in kinds:
            return "incorrect"
        others = kinds - {"correct"}
        return others.pop() if len(others) == 1 else "mixed"

    @property
    def text(self) -> str:
        """``✓``/``✗``/``failed`` for one run; ``3/3 ✓``, ``1/3 ✓ 2 ✗``, ``2/3 ✓ 1 timeout`` for several."""
        total = len(self.verdicts)
        if total == 1:
            return VERDICT_SYMBOLS.get(self.verdicts[0], self.verdicts[0])
        correct = self.verdicts.count("correct")
        parts = []
        if correct or "incorrect" in self.verdicts:
            parts.append(f"{correct}/{total} ✓")
        counts: dict[str, int] = {}
        for verdict in self.verdicts:
            if verdict != "correct":
                counts[verdict] = counts.get(verdict, 0) + 1
        for verdict, count in counts.items():
            symbol = VERDICT_SYMBOLS.get(verdict, verdict)
            parts.append(f"{count}/{total} {symbol}" if not parts and count == total else f"{count} {symbol}")
        return " ".join(parts)


@dataclass(frozen=True)
class CorrectnessMatrix:
    engines: tuple[str, ...]
    queries: tuple[str, ...]
    cells: Mapping[tuple[str, str], MatrixCell]

    def cell(self, engine: str, query: str) -> MatrixCell | None:
        return self.cells.get((engine, query))


def divergence_summary(divergence: Mapping[str, Any] | None, *, limit: int = 3) -> str:
    """One paragraph on where an engine first departs from the oracle (as ``rspwb check`` prints it)."""
    if not divergence:
        return "no divergence recorded"
    lines = [f"closest t0 {divergence.get('t0')}: evaluation #{divergence.get('index')} "
             f"(expected at {divergence.get('expected_time')} ms, engine at {divergence.get('actual_time')} ms): "
             f"{divergence.get('reason')}; {divergence.get('matched_before', 0)} matched before"]
    for label in ("missing", "extra"):
        items = divergence.get(label) or []
        for item in items[:limit]:
            binding = ", ".join(f"?{k}={v}" for k, v in sorted((item.get("binding") or {}).items()))
            count = item.get("count", 1)
            lines.append(f"{label}: {binding}" + (f" ×{count}" if count != 1 else ""))
        if len(items) > limit:
            lines.append(f"… {len(items) - limit} more {label}")
    return "\n".join(lines)


def correctness_matrix(bundle: Bundle, problems: list[UserError] | None = None) -> CorrectnessMatrix:
    """Engines × queries (CSRBench Table 2), aggregated over cases and repetitions."""
    engines = engines_of(bundle.rows)
    queries = list(dict.fromkeys(str(r.get("query")) for r in bundle.rows))
    grouped: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in bundle.rows:
        grouped.setdefault((str(row.get("engine")), str(row.get("query"))), []).append(row)
    cells = {}
    for key, rows in grouped.items():
        verdicts = tuple(str(r.get("verdict") or r.get("status") or "not-run") for r in rows)
        run_ids = tuple(str(r.get("run_id")) for r in rows)
        first_bad = next((r for r in rows if r.get("verdict") == "incorrect"), None)
        detail: dict[str, Any] = {}
        if first_bad is not None:
            path = bundle.run_folder(str(first_bad.get("run_id"))) / ORACLE_FILE
            try:
                divergence = read_oracle(path).get("first_divergence") if path.is_file() else None
            except UserError as error:
                if problems is not None:
                    problems.append(error)
                divergence = None
            t_ms = None
            if divergence:
                t_ms = divergence.get("expected_time")
                if t_ms is None:
                    t_ms = divergence.get("actual_time")
            detail = {"divergence_run": str(first_bad.get("run_id")), "divergence_t_ms": t_ms,
                      "divergence": f"{first_bad.get('run_id')}\n{divergence_summary(divergence)}"}
        else:
            erroneous = next((r for r in rows if r.get("verdict") != "correct" and r.get("error")), None)
            if erroneous is not None:
                detail = {"divergence": f"{erroneous.get('run_id')}: {str(erroneous.get('error')).splitlines()[0]}"}
        cells[key] = MatrixCell(key[0], key[1], run_ids, verdicts, **detail)
    return CorrectnessMatrix(tuple(engines), tuple(queries), cells)


# ---------------------------------------------------------------------- grids of cases


def value_order(value: Any) -> tuple[int, float, str]:
    """Sort key for variable values: numbers, then durations (``100ms`` < ``1s``), then text."""
    from rsp_workbench.core.time import parse_duration

    if isinstance(value, bool):
        return (2, 0.0, str(value))
    if isinstance(value, (int, float)):
        return (0, float(value), "")
    try:
        return (0, float(parse_duration(str(value))), str(value))
    except UserError:
        return (1, 0.0, str(value))


def case_variables(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The variables whose values differ across the runs (what tells a sweep's cases apart), in
    declaration order; relabellings included, unlike :func:`grid_axes` (the exports list them all)."""
    names: dict[str, set[str]] = {}
    for row in rows:
        for name, value in (row.get("variables") or {}).items():
            names.setdefault(str(name), set()).add(json.dumps(value, sort_keys=True))
    return [name for name, values in names.items()
            if len(values) > 1 or any(name not in (row.get("variables") or {}) for row in rows)]


def grid_axes(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The variables that vary across the runs, in declaration order, each independent of the
    earlier ones (a variable that is a one-to-one relabelling of an earlier one, e.g. Heaven's
    ``UNIS`` of ``STIM``, is left out): Heaven's grid is ``[STIM, WINDOW]``."""
    names: dict[str, None] = {}
    for row in rows:
        for name in (row.get("variables") or {}):
            names.setdefault(str(name), None)

    def column(name: str) -> list[str]:
        return [json.dumps((r.get("variables") or {}).get(name), sort_keys=True) for r in rows]

    axes: list[str] = []
    for name in names:
        values = column(name)
        if len(set(values)) < 2:
            continue
        if any(_one_to_one(column(axis), values) for axis in axes):
            continue
        axes.append(name)
    return axes


def _one_to_one(a: Sequence[Hashable], b: Sequence[Hashable]) -> bool:
    forward: dict[Hashable, Hashable] = {}
    backward: dict[Hashable, Hashable] = {}
    for x, y in zip(a, b):
        if forward.setdefault(x, y) != y or backward.setdefault(y, x) != x:
            return False
    return True


# ---------------------------------------------------------------------- Heaven dashboard


@dataclass(frozen=True)
class ApproachPoint:
    """One engine in one grid cell (Heaven Fig. 3): mean latency and mean peak RSS over its
    repetitions, with their min–max over the repetitions as the spread."""

    engine: str
    cell: tuple[tuple[str, Any], ...]  # (variable, value) of the grid axes
    latency_ms: float
    latency_min: float
    latency_max: float
    memory_mb: float
    memory_min: float
    memory_max: float
    runs: int

    def cell_label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.cell) or "all runs"


def heaven_points(bundle: Bundle, axes: Sequence[str] | None = None) -> list[ApproachPoint]:
    """Latency × memory per engine and grid cell, from the runs that finished (summary rows:
    ``latency_ms_mean`` = the stand's mean per-stimulus latency, ``peak_rss_mb``)."""
    axes = list(grid_axes(bundle.rows) if axes is None else axes)
    grouped: dict[tuple[str, tuple[tuple[str, Any], ...]], list[Mapping[str, Any]]] = {}
    for row in bundle.rows:
        if row.get("status") != "ok" or row.get("latency_ms_mean") is None or row.get("peak_rss_mb") is None:
            continue
        variables = row.get("variables") or {}
        cell = tuple((axis, variables.get(axis)) for axis in axes)
        grouped.setdefault((str(row.get("engine")), cell), []).append(row)
    points = []
    for (engine, cell), rows in grouped.items():
        latency = [float(r["latency_ms_mean"]) for r in rows]
        memory = [float(r["peak_rss_mb"]) for r in rows]
        points.append(ApproachPoint(engine, cell, statistics.fmean(latency), min(latency), max(latency),
                                    statistics.fmean(memory), min(memory), max(memory), len(rows)))
    points.sort(key=lambda p: ([value_order(v) for _, v in p.cell], p.engine))
    return points


def dominant(values: Mapping[str, float], margin: float = DOMINANCE_MARGIN) -> str | None:
    """The approach that dominates the others (lower is better) by more than ``margin``, else None.

    Heaven Table 2: A dominates B when B / A − 1 > 5 %; with more than two approaches the best
    must dominate every other one.
    """
    finite = {k: v for k, v in values.items() if v is not None and math.isfinite(v)}
    if len(finite) < 2:
        return None
    best = min(finite, key=finite.__getitem__)
    if all(finite[other] > finite[best] * (1.0 + margin) for other in finite if other != best):
        return best
    return None


@dataclass(frozen=True)
class DominanceGrid:
    """Heaven Table 2 for one KPI: rows × columns of grid values, each cell the dominating approach."""

    kpi: str
    row_variable: str
    column_variable: str
    rows: tuple[Any, ...]
    columns: tuple[Any, ...]
    cells: Mapping[tuple[Any, Any], str]  # the dominating engine, EVEN, or absent (not run)

    def cell(self, row: Any, column: Any) -> str:
        return self.cells.get((row, column), "")


def dominance_grid(points: Sequence[ApproachPoint], kpi: str, row_variable: str, column_variable: str,
                   margin: float = DOMINANCE_MARGIN) -> DominanceGrid:
    """``kpi`` is ``latency`` or ``memory`` (the means of :class:`ApproachPoint`)."""
    attribute = {"latency": "latency_ms", "memory": "memory_mb"}[kpi]
    values: dict[tuple[Any, Any], dict[str, float]] = {}
    for point in points:
        cell = dict(point.cell)
        key = (cell.get(row_variable), cell.get(column_variable))
        values.setdefault(key, {})[point.engine] = getattr(point, attribute)
    rows = tuple(sorted({k[0] for k in values}, key=value_order))
    columns = tuple(sorted({k[1] for k in values}, key=value_order))
    cells = {key: (dominant(by_engine, margin) or EVEN) for key, by_engine in values.items() if len(by_engine) >= 2}
    return DominanceGrid(kpi, row_variable, column_variable, rows, columns, cells)


# ---------------------------------------------------------------------- eviction


@dataclass(frozen=True)
class RecallCurve:
    """Recall vs binding-cache size for one eviction strategy (and data shape)."""

    strategy: str
    shape: str
    cache_size: np.ndarray
    recall: np.ndarray

    @property
    def label(self) -> str:
        return f"{self.strategy} ({self.shape})" if self.shape else self.strategy


def eviction_curves(bundle: Bundle, problems: list[UserError] | None = None) -> list[RecallCurve]:
    """One curve per strategy × data shape from the runs with a ``cache_size`` engine parameter
    (``run.json`` ``engine.parameters``); the shape is the varying case variables other than the
    cache size (e.g. ``PROFILE=bursty``); repetitions are averaged."""
    found: list[tuple[Mapping[str, Any], str, float]] = []
    for row in bundle.rows:
        if row.get("recall") is None:
            continue
        path = bundle.run_folder(str(row.get("run_id"))) / RUN_FILE
        try:
            run = read_json(path) if path.is_file() else {}
        except UserError as error:
            if problems is not None:
                problems.append(error)
            continue
        parameters = (run.get("engine") or {}).get("parameters") or {}
        if parameters.get("cache_size") is None:
            continue
        try:
            cache = float(parameters["cache_size"])
        except (TypeError, ValueError):
            if problems is not None:
                problems.append(UserError(f"cache_size is not a number: {parameters['cache_size']!r}",
                                          file=str(path), field="engine.parameters.cache_size"))
            continue
        found.append((row, str(parameters.get("strategy") or row.get("engine")), cache))
    if not found:
        return []
    rows = [r for r, _, _ in found]
    caches = [c for _, _, c in found]
    shape_axes = [a for a in grid_axes(rows)
                  if not _one_to_one([json.dumps((r.get("variables") or {}).get(a)) for r in rows], caches)]
    collected: dict[tuple[str, str], dict[float, list[float]]] = {}
    for row, strategy, cache in found:
        variables = row.get("variables") or {}
        shape = ", ".join(str(variables.get(a)) for a in shape_axes)
        collected.setdefault((strategy, shape), {}).setdefault(cache, []).append(float(row["recall"]))
    curves = []
    for (strategy, shape), by_cache in collected.items():
        sizes = sorted(by_cache)
        curves.append(RecallCurve(strategy, shape, np.asarray(sizes, dtype=float),
                                  np.asarray([statistics.fmean(by_cache[s]) for s in sizes], dtype=float)))
    return curves


# ---------------------------------------------------------------------- everything at once


@dataclass(frozen=True)
class BundleData:
    """What the Results browser needs up front (per-run series are read when a run group is shown)."""

    bundle: Bundle
    matrix: CorrectnessMatrix
    boxplots: tuple[WindowBoxplots, ...]
    heaven_axes: tuple[str, ...]
    heaven: tuple[ApproachPoint, ...]
    eviction: tuple[RecallCurve, ...]
    problems: tuple[UserError, ...]


def bundle_data(bundle: Bundle, cancelled: Callable[[], bool] = lambda: False,
                progress: Callable[[float, str], None] = lambda fraction, message: None) -> BundleData:
    """What the browser shows of an opened bundle (off the GUI thread for big bundles); bad content never
    raises: problems are collected with their file and line. Raises UserError if ``cancelled()``."""

    def step(fraction: float, message: str) -> None:
        if cancelled():
            raise UserError("cancelled", file=str(bundle.folder))
        progress(fraction, message)

    problems = list(bundle.problems)
    step(0.2, "correctness matrix")
    matrix = correctness_matrix(bundle, problems)
    step(0.5, "boxplots")
    boxplots = [b for b in read_boxplots(bundle, problems) if b.repetitions]
    step(0.7, "latency and memory")
    axes = tuple(grid_axes([r for r in bundle.rows if r.get("status") == "ok"]))
    heaven = heaven_points(bundle, axes)
    step(0.8, "eviction")
    eviction = eviction_curves(bundle, problems)
    return BundleData(bundle, matrix, tuple(boxplots), axes, tuple(heaven), tuple(eviction), tuple(problems))


__all__ = [
    "ApproachPoint", "BoxStats", "BundleData", "CorrectnessMatrix", "DominanceGrid", "MatrixCell",
    "RecallCurve", "ResourceSeries", "WindowBoxplots", "WindowSeries", "box_stats", "correctness_matrix",
    "divergence_summary", "dominance_grid", "dominant", "engines_of", "eviction_curves", "grid_axes",
    "heaven_points", "OVERLAY_METRICS", "overlay_metric", "overlay_series", "parse_boxplots", "parse_oracle_borders", "parse_performance", "read_boxplots", "bundle_data",
    "read_resources", "read_runs", "read_window_series", "rows_in_group", "run_groups", "value_order",
    "window_positions",
]
