"""What the Results tab decides without Qt: how two bundles compare, and whether a bundle can be re-run.

Two bundles are compared run by run (their summary rows) and, for a chosen pair of runs, window by
window (each run's judged windows, `Bundle.windows`). A cell differs when the two values differ *as
shown* (ratios to 3 decimals, other numbers to 4 significant digits): a difference the table would not
show is no difference to highlight. Runs are paired by run id when both bundles are of one kind (two
own bundles, or two published YABench folders); an own bundle and a published folder name their runs
differently, so they are paired by engine, YABench test and repetition (an experiment imported from a
YABench folder names each case's test in its ``TEST`` variable; YABench counts repetitions from 1, the
workbench from 0). Everything here is plain data over the one bundle model
(`rsp_workbench.results.reader.open_bundle`), tested without a display.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Hashable, Mapping, Sequence

import numpy as np

from rsp_workbench.errors import UserError
from rsp_workbench.gui.text import verdict_text
from rsp_workbench.results.bundle import EXPERIMENT_COPY, Bundle

if TYPE_CHECKING:
    import pyarrow as pa

    from rsp_workbench.experiment.model import Experiment

RATIO_KEYS = {"precision", "recall"}
#: The summary columns compared side by side: (header, summary-row key); the first five are the judgement
#: (a run "differs" by these), the others what the run cost, which varies between any two runs.
COMPARED_COLUMNS: tuple[tuple[str, str], ...] = (
    ("verdict", "verdict"), ("precision", "precision"), ("recall", "recall"), ("windows", "windows"),
    ("responses", "responses"), ("peak RSS MB", "peak_rss_mb"), ("latency ms", "latency_ms_mean"),
    ("wall s", "wall_s"),
)
JUDGED_KEYS = ("verdict", "precision", "recall", "windows", "responses")
BOTH, ONLY_A, ONLY_B = "both", "only A", "only B"
#: The per-window columns compared side by side (`Bundle.windows` column names).
WINDOW_METRICS = ("precision", "recall", "actual_size", "expected_size")


NO_VALUE = "–"


def cell_text(key: str, value: Any, row: Mapping[str, Any] | None = None) -> str:
    """A summary value as the Results tables show it (ratios to 3 decimals, other numbers to 4 digits;
    a recall-judged verdict with its recall, from ``row``)."""
    if key == "verdict" and value is not None:
        return verdict_text(value, (row or {}).get("recall"))
    if value is None:
        return NO_VALUE
    if isinstance(value, float):
        return f"{value:.3f}" if key in RATIO_KEYS else f"{value:.4g}"
    if key == "error":
        return str(value).splitlines()[0] if str(value) else ""
    return str(value)


# ---------------------------------------------------------------------- runs side by side


@dataclass(frozen=True)
class ComparedCell:
    """One summary value of both bundles (``–`` where a bundle has no such run or value)."""

    a: str
    b: str

    @property
    def differs(self) -> bool:
        """Both have a value and they differ: a value one bundle lacks (a published folder has no verdict)
        is shown, not counted as a difference."""
        return self.a != self.b and NO_VALUE not in (self.a, self.b)

    @property
    def text(self) -> str:
        return self.a if self.a == self.b else f"{self.a} → {self.b}"


@dataclass(frozen=True)
class ComparedRun:
    """A run of bundle A beside its counterpart in bundle B (either may be missing)."""

    engine: str
    name: str  # the test or query, case and repetition, as the user reads them
    run_a: str | None
    run_b: str | None
    cells: tuple[ComparedCell, ...]

    @property
    def side(self) -> str:
        return BOTH if self.run_a and self.run_b else ONLY_A if self.run_a else ONLY_B

    @property
    def differs(self) -> bool:
        """In one bundle only, or judged differently (verdict, precision, recall, windows, responses)."""
        return self.side != BOTH or any(cell.differs for cell, (_, key) in zip(self.cells, COMPARED_COLUMNS)
                                        if key in JUDGED_KEYS)


@dataclass(frozen=True)
class BundleComparison:
    """Bundle A's and bundle B's runs paired; ``paired_by`` says how."""

    a: Bundle
    b: Bundle
    runs: tuple[ComparedRun, ...]
    paired_by: str

    def count(self, side: str) -> int:
        return sum(run.side == side for run in self.runs)

    @property
    def differing(self) -> int:
        return sum(run.side == BOTH and run.differs for run in self.runs)

    def summary_text(self) -> str:
        both, only_a, only_b = self.count(BOTH), self.count(ONLY_A), self.count(ONLY_B)
        parts = [f"{both} run(s) in both ({self.differing} judged differently)"]
        if only_a:
            parts.append(f"{only_a} only in A")
        if only_b:
            parts.append(f"{only_b} only in B")
        return "; ".join(parts) + f" — paired by {self.paired_by}"


def _test_of(row: Mapping[str, Any], published: bool) -> str | None:
    if published:
        return str(row.get("query"))
    test = (row.get("variables") or {}).get("TEST")
    return None if test is None else str(test)


def _repetition(row: Mapping[str, Any], published: bool) -> int:
    """From 0, as the workbench counts (YABench's ORACLE_<test><n> count from 1; none: the only one)."""
    repetition = row.get("repetition")
    if not isinstance(repetition, int):
        return 0
    return repetition - 1 if published else repetition


def run_keys(a: Bundle, b: Bundle) -> tuple[Callable[[Mapping[str, Any], bool], Hashable], str]:
    """How the runs of ``a`` and ``b`` are paired: a key function (row, published) and its description."""
    if a.published == b.published:
        return (lambda row, published: str(row.get("run_id"))), "run id"
    own = b if a.published else a
    published = a if a.published else b
    own_tests = {_test_of(row, False) for row in own.rows} - {None}
    if not own_tests and len({_test_of(row, True) for row in published.rows}) == 1:
        # the own bundle names no YABench test and the published folder has one: pair by engine and repetition
        return ((lambda row, is_published: (str(row.get("engine")).lower(), _repetition(row, is_published))),
                "engine and repetition")
    return ((lambda row, is_published: (str(row.get("engine")).lower(), _test_of(row, is_published),
                                        _repetition(row, is_published))),
            "engine, YABench test and repetition")


def _run_name(row: Mapping[str, Any], published: bool) -> str:
    test = _test_of(row, published)
    parts = [f"case {row.get('case')}" if row.get("case") is not None else "",
             str(test if test is not None else row.get("query") or ""), f"rep {_repetition(row, published)}"]
    return " · ".join(p for p in parts if p)


def compare_bundles(a: Bundle, b: Bundle) -> BundleComparison:
    """Pair the runs of ``a`` and ``b`` and put their summary values side by side (A's order, then B's extras)."""
    key_of, paired_by = run_keys(a, b)
    rows_b: dict[Hashable, Mapping[str, Any]] = {}
    for row in b.rows:
        rows_b.setdefault(key_of(row, b.published), row)
    runs: list[ComparedRun] = []
    taken: set[Hashable] = set()
    for row_a in a.rows:
        key = key_of(row_a, a.published)
        row_b = rows_b.get(key) if key not in taken else None
        if row_b is not None:
            taken.add(key)
        runs.append(_compared(row_a, row_b, a, b))
    for key, row_b in rows_b.items():
        if key not in taken:
            runs.append(_compared(None, row_b, a, b))
    return BundleComparison(a, b, tuple(runs), paired_by)


def _compared(row_a: Mapping[str, Any] | None, row_b: Mapping[str, Any] | None, a: Bundle, b: Bundle) -> ComparedRun:
    cells = tuple(ComparedCell(cell_text(key, row_a.get(key), row_a) if row_a is not None else NO_VALUE,
                               cell_text(key, row_b.get(key), row_b) if row_b is not None else NO_VALUE)
                  for _, key in COMPARED_COLUMNS)
    shown, published = (row_a, a.published) if row_a is not None else (row_b, b.published)
    assert shown is not None
    return ComparedRun(str(shown.get("engine")), _run_name(shown, published),
                       str(row_a.get("run_id")) if row_a is not None else None,
                       str(row_b.get("run_id")) if row_b is not None else None, cells)


# ---------------------------------------------------------------------- windows side by side


@dataclass(frozen=True)
class WindowComparison:
    """The judged windows of run A and run B aligned by window (``start``, ``end`` and, for a window
    evaluated several times, which evaluation); NaN where a run has no such window."""

    start: np.ndarray  # ms
    end: np.ndarray
    in_a: np.ndarray  # bool
    in_b: np.ndarray
    a: Mapping[str, np.ndarray]  # WINDOW_METRICS → values (NaN: not in A)
    b: Mapping[str, np.ndarray]
    differs: Mapping[str, np.ndarray]  # metric → bool: the shown values differ

    def __len__(self) -> int:
        return len(self.start)

    @property
    def differing(self) -> np.ndarray:
        """Windows in one run only, or with a metric that differs."""
        mask = self.in_a != self.in_b
        for metric in WINDOW_METRICS:
            mask = mask | self.differs[metric]
        return mask

    def summary_text(self) -> str:
        both = int(np.count_nonzero(self.in_a & self.in_b))
        only_a = int(np.count_nonzero(self.in_a & ~self.in_b))
        only_b = int(np.count_nonzero(~self.in_a & self.in_b))
        differ = int(np.count_nonzero(self.differing & self.in_a & self.in_b))
        text = f"{len(self)} windows: {both} in both ({differ} differ)"
        return text + (f", {only_a} only in A" if only_a else "") + (f", {only_b} only in B" if only_b else "")

    def value_text(self, side: str, metric: str, index: int) -> str:
        value = float((self.a if side == "A" else self.b)[metric][index])
        if np.isnan(value):
            return "–"
        return f"{value:.3f}" if metric in RATIO_KEYS else f"{value:.0f}"


def _runs_of_equal(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort by ``keys`` (the first the primary one): (order, whether each sorted entry starts a new run
    of equal keys, the run each sorted entry is in). Plain integer sorts: a structured ``np.unique`` over
    millions of windows took minutes."""
    order = np.lexsort(keys[::-1])
    new = np.ones(len(order), dtype=bool)
    if len(order):
        new[1:] = np.any([key[order][1:] != key[order][:-1] for key in keys], axis=0)
    return order, new, np.cumsum(new) - 1


def _occurrence(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """For each window, how many earlier entries have the same borders (a content-change run
    evaluates one window several times)."""
    n = len(start)
    order, new_group, _ = _runs_of_equal(start, end)  # lexsort is stable: a window's evaluations keep their order
    group_start = np.maximum.accumulate(np.where(new_group, np.arange(n), 0))
    occurrence = np.empty(n, dtype=np.int64)
    occurrence[order] = np.arange(n) - group_start
    return occurrence


def _shown(metric: str, values: np.ndarray) -> np.ndarray:
    return np.round(values, 3) if metric in RATIO_KEYS else np.round(values)


def compare_windows(a: "pa.Table", b: "pa.Table") -> WindowComparison:
    """Align two runs' window tables (`Bundle.windows`) window by window, in time order."""
    columns = []
    for table in (a, b):
        start = table.column("start").to_numpy().astype(np.int64, copy=False) if table.num_rows else np.zeros(0, np.int64)
        end = table.column("end").to_numpy().astype(np.int64, copy=False) if table.num_rows else np.zeros(0, np.int64)
        columns.append((start, end, _occurrence(start, end)))
    start, end, occurrence = (np.concatenate([columns[0][i], columns[1][i]]) for i in range(3))
    order, new, run = _runs_of_equal(start, end, occurrence)
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[order] = run
    where_a, where_b = inverse[:len(a)], inverse[len(a):]
    size = int(np.count_nonzero(new))
    in_a, in_b = np.zeros(size, dtype=bool), np.zeros(size, dtype=bool)
    in_a[where_a], in_b[where_b] = True, True
    values: list[dict[str, np.ndarray]] = []
    for table, where in ((a, where_a), (b, where_b)):
        side: dict[str, np.ndarray] = {}
        for metric in WINDOW_METRICS:
            column = np.full(size, np.nan)
            if table.num_rows:
                column[where] = table.column(metric).to_numpy(zero_copy_only=False).astype(float, copy=False)
            side[metric] = column
        values.append(side)
    differs = {}
    for metric in WINDOW_METRICS:
        shown_a, shown_b = _shown(metric, values[0][metric]), _shown(metric, values[1][metric])
        same = (shown_a == shown_b) | (np.isnan(shown_a) & np.isnan(shown_b))
        differs[metric] = in_a & in_b & ~same
    return WindowComparison(start[order][new], end[order][new], in_a, in_b, values[0], values[1], differs)


def read_window_comparison(a: Bundle, run_a: str, b: Bundle, run_b: str, cancelled: Callable[[], bool] = lambda: False,
                           progress: Callable[[float, str], None] = lambda fraction, message: None,
                           ) -> WindowComparison | None:
    """Read both runs' windows and align them (a worker: a content-change run has millions of windows);
    None when cancelled between the reads."""
    progress(0.0, f"reading the windows of {run_a} (A)")
    table_a = a.windows(run_a)
    if cancelled():
        return None
    progress(0.45, f"reading the windows of {run_b} (B)")
    table_b = b.windows(run_b)
    if cancelled():
        return None
    progress(0.9, f"aligning {table_a.num_rows} and {table_b.num_rows} windows")
    return compare_windows(table_a, table_b)


def open_for_comparison(folder: Any, cancelled: Callable[[], bool] = lambda: False,
                        progress: Callable[[float, str], None] = lambda fraction, message: None) -> Bundle | None:
    """Bundle B, read tolerantly as the Results tab reads bundles (a worker: a published folder's
    ORACLE_ files are all read); None when cancelled."""
    from rsp_workbench.results.reader import open_bundle

    progress(0.0, f"reading {folder}")
    bundle = open_bundle(folder, partial=True)
    return None if cancelled() else bundle


# ---------------------------------------------------------------------- re-running a bundle


def experiment_to_rerun(bundle: Bundle) -> "Experiment":
    """The exact experiment ``bundle`` ran (its ``experiment.yaml``: seed, size applied, engines), checked
    to be runnable here; a `UserError` saying why not (a published folder, no copy, an engine type that
    is not installed, an external program that is not there)."""
    from rsp_workbench.experiment.runs import expand_runs
    from rsp_workbench.gui.designer.model import missing_program_error
    from rsp_workbench.pipeline.run_checks import engine_config
    from rsp_workbench.stand.host import engine_command

    if bundle.published:
        raise UserError("a published YABench folder holds no experiment to re-run; import it as an experiment "
                        "(File › Import YABench folder…) and run that", file=str(bundle.folder))
    experiment = bundle.experiment()
    copy = str(bundle.folder / EXPERIMENT_COPY)
    checked: set[str] = set()
    for spec in expand_runs(experiment):
        if spec.engine.id in checked:
            continue
        checked.add(spec.engine.id)
        try:
            engine_command(engine_config(spec))
        except UserError as error:
            raise UserError(f"cannot be re-run here: engine {spec.engine.id}: {error.message}", file=copy,
                            field=f"engines.{spec.engine.id}") from None
    missing = missing_program_error(experiment, copy)
    if missing is not None:
        raise UserError(f"cannot be re-run here: {missing.message}", file=copy, field=missing.field)
    return experiment


def rerun_source(bundle: Bundle) -> str:
    """How the Runs queue names where a re-run came from."""
    return f"re-run of {bundle.folder}"

