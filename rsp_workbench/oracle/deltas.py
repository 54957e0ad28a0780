"""Expected answers as deltas: when each annotated mapping enters and leaves the relation.

Materialising every evaluation's relation and diffing consecutive ones costs
evaluations × relation size — with content change on every element (CQELS: tuple tick,
Istream) that is millions of evaluations × thousands of mappings. Here the evaluations
of one t0 are arrays (`EvaluationGrid`, position contents ``[lo, hi)``). Along them the
contents only move forward (``lo`` and ``hi`` never decrease), so an annotated row with
requirement ``[pmin, pmax]`` is present in one contiguous run of evaluations: it enters
when its last element has arrived (the first ``j`` with ``hi_j > pmax``) and leaves when
its first element leaves (after the last ``j`` with ``lo_j ≤ pmin``). The rows' runs,
merged per distinct mapping, are `PresenceRuns`: the whole answer of a t0 in
O(mappings × windows per mapping) — relation sizes, Istream/Dstream and Rstream all
follow from them, and `DeltaAnswer` gives any evaluation's relation or emission on demand.

Used by the Python fast path and the Spark job alike for single-window queries whose
pattern is monotone (no aggregates, OPTIONAL or MINUS above it); the others keep the
per-content path of `rsp_workbench.oracle.annotated`.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterator, Literal, Mapping, Sequence, cast

import numpy as np

from rsp_workbench.core.r2s import OPERATION_SYMBOL, Emission
from rsp_workbench.core.report import MAX_CLOSING_WINDOWS, Evaluation, evaluation_instants, skips_empty_prefix
from rsp_workbench.core.semantics import ActiveWindowChoice, BorderConvention, EngineSemantics, R2S, Strategy, Tick
from rsp_workbench.core.windows import WindowInstance, WindowSpec
from rsp_workbench.errors import UserError
from rsp_workbench.responses.model import SolutionMapping

INT64_MAX = (1 << 63) - 1
NOT_COMPUTED = object()  # a cache slot not filled yet (None is a computed value)


# --- evaluation instants on distinct timestamps ------------------------------------------------


def compressible(semantics: EngineSemantics) -> bool:
    """True if contents only ever start/end at timestamp boundaries (not tuple/batch ticks)."""
    return semantics.tick is Tick.TIME or Strategy.CONTENT_CHANGE not in semantics.report.strategies or any(
        s in semantics.report.strategies for s in (Strategy.WINDOW_CLOSE, Strategy.PERIODIC)
    )


@dataclass(frozen=True)
class Timeline:
    """A time-sorted stream's timestamps, also as distinct values with start positions."""

    times: Sequence[int]
    distinct: list[int]
    starts: list[int]  # starts[i] = position of the first element at distinct[i]; starts[-1] = n

    @classmethod
    def of(cls, times: Sequence[int]) -> "Timeline":
        array = np.asarray(times, dtype=np.int64)
        if len(array) and np.any(array[1:] < array[:-1]):
            raise ValueError("timestamps must be non-decreasing")
        distinct, first = np.unique(array, return_index=True)
        return cls(times, distinct.tolist(), first.tolist() + [len(array)])

    @classmethod
    def from_counts(cls, distinct: Sequence[int], counts: Sequence[int]) -> "Timeline":
        starts = np.concatenate([[0], np.cumsum(np.asarray(counts, dtype=np.int64))]).tolist()
        return cls(_LazyTimes(list(distinct), starts), list(distinct), starts)


class _LazyTimes(Sequence[int]):
    """The full time column rebuilt from distinct timestamps and counts, on demand."""

    def __init__(self, distinct: list[int], starts: list[int]) -> None:
        self.distinct, self.starts = distinct, starts

    def __len__(self) -> int:
        return self.starts[-1]

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        return self.distinct[bisect.bisect_right(self.starts, i) - 1]


def evaluations_for(
    timeline: Timeline, spec: WindowSpec, semantics: EngineSemantics, *, end: int | None
) -> list[Evaluation]:
    """`evaluation_instants` for one window, on distinct timestamps when that is exact."""
    last = end if end is not None else (timeline.distinct[-1] if timeline.distinct else spec.t0)

    def instants(times: Sequence[int]) -> list[Evaluation]:
        return evaluation_instants(times, spec, semantics.report, tick=semantics.tick, choice=semantics.active_window,
                                   batch_size=semantics.batch_size, start=spec.t0, end=last)

    if not compressible(semantics):
        return instants(list(timeline.times))
    starts = timeline.starts
    return [Evaluation(e.time, e.window, starts[e.lo], starts[e.hi], e.sequence) for e in instants(timeline.distinct)]



# --- evaluations of one t0 as arrays ------------------------------------------------------------


@dataclass
class EvaluationArrays:
    """The evaluations of one t0 as arrays; ``lo``/``hi`` index the tick timeline given to
    `evaluation_arrays` (distinct timestamps, or every element for the tuple tick)."""

    time: np.ndarray
    open: np.ndarray
    close: np.ndarray
    index: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    sequence: np.ndarray | None = None  # order among evaluations at one instant (tuple tick)


def vectorisable(query: Any, semantics: EngineSemantics) -> bool:
    """True if `evaluation_arrays` on distinct timestamps reproduces `evaluation_instants`."""
    return not_vectorisable(query, semantics) is None


def not_vectorisable(query: Any, semantics: EngineSemantics) -> str | None:
    """Why `evaluation_arrays` on *distinct timestamps* cannot compute these evaluations."""
    if len(query.windows) != 1:
        return "the query has several windows"
    problem = _grid_problem(semantics)
    if problem is None and Strategy.WINDOW_CLOSE not in semantics.report.strategies and semantics.tick is not Tick.TIME:
        return f"content change with the {semantics.tick.value} tick"
    return problem


def _grid_problem(semantics: EngineSemantics) -> str | None:
    """Why `evaluation_arrays` cannot compute these evaluations on any tick timeline."""
    strategies = semantics.report.strategies
    if Strategy.PERIODIC in strategies:
        return "the report policy is periodic"
    if Strategy.NEXT_ELEMENT in strategies:
        return "windows are reported at the next element after their close"
    others = set(strategies) - {Strategy.CONTENT_CHANGE, Strategy.WINDOW_CLOSE, Strategy.NON_EMPTY}
    if others:  # a strategy the arrays do not model: the scalar definition decides
        return f"the report policy has {sorted(s.value for s in others)[0]}"
    if Strategy.WINDOW_CLOSE in strategies:
        return None
    if semantics.tick is Tick.BATCH:
        return "content change with the batch tick"
    if semantics.active_window is not ActiveWindowChoice.EARLIEST:
        return f"content change with the {semantics.active_window.value} active window"
    return None


def evaluation_arrays(ticks: np.ndarray, spec: WindowSpec, semantics: EngineSemantics, end: int, *,
                      tick_ranks: np.ndarray | None = None) -> EvaluationArrays:
    """`rsp_workbench.core.report.evaluation_instants` in numpy on a sorted tick timeline.

    ``ticks``: the distinct timestamps (time tick, or any tick with window-close), or
    every element's timestamp (tuple tick with content change); ``tick_ranks``, if given,
    is `_rank_among_equal(ticks)` computed once for many t0. Window-close (with
    content-change / non-empty conjuncts), or content change with the time or tuple tick
    and the earliest active window. Pinned against the scalar definition by
    tests/oracle/test_oracle_fast.py and tests/oracle/test_oracle_deltas.py.
    """
    ticks = np.asarray(ticks, dtype=np.int64)
    start, beta, omega, t0 = spec.t0, spec.slide, spec.size, spec.t0
    end = min(int(end), INT64_MAX - 2 * (omega + beta))  # windows closing past int64 are never reached
    if len(ticks) and skips_empty_prefix(semantics.report):
        start = max(start, int(ticks[0]))  # nothing before the first element can be evaluated
    border = spec.border
    offset = 0 if spec.leading_partial else omega
    first_index = 1 if spec.leading_partial else 0
    strategies = semantics.report.strategies
    left_side: Literal["left", "right"] = "right" if border is BorderConvention.OPEN_CLOSED else "left"
    right_side: Literal["left", "right"] = "left" if border is BorderConvention.CLOSED_OPEN else "right"

    def opens(k: np.ndarray) -> np.ndarray:
        opened: np.ndarray = np.maximum(t0, t0 + k * beta - omega) if spec.leading_partial else t0 + k * beta
        return opened

    if Strategy.WINDOW_CLOSE in strategies:
        first = max(first_index, -((-(start - t0 - offset)) // beta))
        last = (end - t0 - offset) // beta
        if last - first + 1 > MAX_CLOSING_WINDOWS:
            raise UserError(f"about {last - first + 1:,} windows close between {start} and {end}, each an evaluation "
                            "(the stream's times are far from t0): give a t0 near the stream's first element, or --end",
                            field="--t0")
        k = np.arange(first, last + 1, dtype=np.int64)
        close = t0 + k * beta + offset
        open_ = opens(k)
        times = close
        lo = np.searchsorted(ticks, open_, side=left_side)
        hi = np.maximum(lo, np.searchsorted(ticks, close, side=right_side))
        active = np.ones(len(k), dtype=bool)
        sequence = np.zeros(len(k), dtype=np.int64)
    else:
        tick_lo, tick_hi = np.searchsorted(ticks, start, "left"), np.searchsorted(ticks, end, "right")
        tick_times = ticks[tick_lo:tick_hi]
        tick_arrived = np.arange(tick_lo + 1, tick_hi + 1, dtype=np.int64)
        include_open = border is not BorderConvention.OPEN_CLOSED
        include_close = border is not BorderConvention.CLOSED_OPEN
        kb = max(first_index, -((-(start - t0 - offset - 1)) // beta))
        kmax = max(kb, (end - t0 + omega) // beta + 2)
        if len(tick_times):  # boundaries after the last element + ω change nothing
            kmax = min(kmax, (int(tick_times[-1]) - t0 + omega) // beta + 2)
        if kmax - kb + 1 > MAX_CLOSING_WINDOWS:  # each window boundary is a candidate instant: refuse before allocating
            raise UserError(f"about {kmax - kb + 1:,} window boundaries lie between {start} and {end}, each an instant "
                            "the content can change at (the stream's times are far apart for the slide): give a larger "
                            "slide, a t0 near the stream's elements, or --end", field="--t0")
        k = np.arange(kb, kmax + 1, dtype=np.int64)
        enter = opens(k) + (0 if include_open else 1)
        leave = t0 + k * beta + offset + (1 if include_close else 0)
        k_ok = enter <= end
        instants = np.unique(np.concatenate([enter[k_ok], leave[k_ok]]))
        instants = instants[(instants >= start) & (instants <= end)]
        at = np.minimum(np.searchsorted(tick_times, instants), max(len(tick_times) - 1, 0))
        if len(tick_times):
            instants = instants[tick_times[at] != instants]
        # a boundary instant is no tick's time: it has rank 0 and leaves the ticks' ranks as they are
        ranks = tick_ranks[tick_lo:tick_hi] if tick_ranks is not None else _rank_among_equal(tick_times)
        if len(instants):  # both sorted and disjoint: insert the boundary instants among the ticks (a merge)
            where = np.searchsorted(tick_times, instants)
            times = _inserted(tick_times, where, instants)
            arrived = _inserted(tick_arrived, where, np.searchsorted(ticks, instants, "left"))
            sequence = _inserted(ranks, where, np.zeros(len(instants), dtype=np.int64))
        else:  # every boundary is a tick (e.g. a tick every ms): nothing to merge
            times, arrived, sequence = tick_times, tick_arrived, ranks
        # earliest window containing t: smallest k >= first_index whose close is not before t.
        # It never decreases along times, so each window is one segment of them, found by a
        # binary search per window; columns are the windows' values repeated (no pass per
        # evaluation to divide and gather: a tuple tick has one evaluation per element)
        closed_open = border is BorderConvention.CLOSED_OPEN

        def earliest(t: int) -> int:
            k_t = (t - t0 - offset) // beta + 1 if closed_open else -((-(t - t0 - offset)) // beta)
            return max(k_t, first_index)

        n = len(times)
        k_first = earliest(int(times[0])) if n else first_index
        windows = np.arange(k_first, (earliest(int(times[-1])) if n else k_first) + 1, dtype=np.int64)
        # window j > k_first starts at the first time whose earliest window is j or later
        cuts = np.searchsorted(times, t0 + offset + (windows[1:] - 1) * beta, side="left" if closed_open else "right")
        counts = np.diff(np.concatenate([[0], cuts, [n]]))
        window_open, window_close = opens(windows), t0 + windows * beta + offset
        open_ = np.repeat(window_open, counts)
        close = np.repeat(window_close, counts)
        k = np.repeat(windows, counts)
        active = open_ < times if border is BorderConvention.OPEN_CLOSED else open_ <= times
        lo = np.repeat(np.searchsorted(ticks, window_open, side=left_side), counts)
        hi = np.repeat(np.searchsorted(ticks, window_close, side=right_side), counts)
        np.minimum(hi, arrived, out=hi)
        np.maximum(hi, lo, out=hi)
    empty = hi <= lo
    if empty.any():
        key_lo, key_hi = np.where(empty, 0, lo), np.where(empty, 0, hi)
    else:
        key_lo, key_hi = lo, hi
    holds = active.copy()
    if Strategy.CONTENT_CHANGE in strategies and len(holds):
        # the key changed from the previous instant's, taken as (0, 0) before the first
        # instant and after an inactive one
        changed = np.empty(len(holds), dtype=bool)
        np.not_equal(key_lo[1:], key_lo[:-1], out=changed[1:])
        changed[1:] |= key_hi[1:] != key_hi[:-1]
        after_inactive = np.flatnonzero(~active[:-1]) + 1
        if len(after_inactive):
            changed[after_inactive] = (key_lo[after_inactive] != 0) | (key_hi[after_inactive] != 0)
        changed[0] = key_lo[0] != 0 or key_hi[0] != 0
        holds &= changed
    if Strategy.NON_EMPTY in strategies:
        holds &= ~empty
    if holds.all():  # every instant is an evaluation (the tuple tick's usual case): no copies
        return EvaluationArrays(times, open_, close, k, lo, hi, sequence)
    columns = (times, open_, close, k, lo, hi, sequence)
    held = np.flatnonzero(holds)  # once, not a mask scan per column
    breaks = np.flatnonzero(np.diff(held) != 1) + 1
    if len(breaks) < 8:  # a few stretches (all but the odd instant whose content did not change): slices
        stretches = [(int(part[0]), int(part[-1]) + 1) for part in np.split(held, breaks) if len(part)]
        if len(stretches) <= 1:  # views, no copies
            a, b = stretches[0] if stretches else (0, 0)
            return EvaluationArrays(*(c[a:b] for c in columns))
        return EvaluationArrays(*(np.concatenate([c[a:b] for a, b in stretches]) for c in columns))
    return EvaluationArrays(*(c.take(held) for c in columns))


def _inserted(array: np.ndarray, where: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``np.insert(array, where, values)`` for sorted ``where``; a few values (the boundary
    instants between ticks) by copying the slices between them, without np.insert's overhead."""
    if len(values) > 32:
        return np.insert(array, where, values)
    out = np.empty(len(array) + len(values), dtype=array.dtype)
    previous = 0
    for i, (at, value) in enumerate(zip(where.tolist(), values.tolist())):
        out[previous + i:at + i] = array[previous:at]
        out[at + i] = value
        previous = at
    out[previous + len(values):] = array[previous:]
    return out


def _rank_among_equal(times: np.ndarray) -> np.ndarray:
    """Per entry of a sorted array, how many equal entries precede it (the order of the
    evaluations at one instant) — linear, where a binary search per entry was most of a
    tuple-tick grid's cost."""
    n = len(times)
    positions = np.arange(n, dtype=np.int64)
    if n == 0:
        return positions
    first = positions.copy()
    first[1:][times[1:] == times[:-1]] = 0  # an entry equal to the previous one starts no run
    return positions - np.maximum.accumulate(first)


@dataclass
class EvaluationGrid:
    """The evaluations of one t0 (one window) as arrays; contents ``[lo, hi)`` are element positions."""

    time: np.ndarray
    sequence: np.ndarray
    open: np.ndarray
    close: np.ndarray
    index: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    border: BorderConvention

    def __len__(self) -> int:
        return len(self.time)

    def evaluation(self, j: int) -> Evaluation:
        window = WindowInstance(int(self.open[j]), int(self.close[j]), int(self.index[j]), self.border)
        return Evaluation(int(self.time[j]), window, int(self.lo[j]), int(self.hi[j]), int(self.sequence[j]))

    def evaluations(self) -> "LazySequence":
        return LazySequence(len(self), self.evaluation)

    def monotone(self) -> bool:
        """True if contents only move forward (each row is then present in one run)."""
        return bool(np.all(np.diff(self.lo) >= 0) and np.all(np.diff(self.hi) >= 0))

    @classmethod
    def of(cls, evaluations: Sequence[Evaluation], border: BorderConvention) -> "EvaluationGrid":
        def column(get: Callable[[Evaluation], int]) -> np.ndarray:
            return np.fromiter((get(e) for e in evaluations), dtype=np.int64, count=len(evaluations))

        return cls(column(lambda e: e.time), column(lambda e: e.sequence), column(lambda e: e.window.open),
                   column(lambda e: e.window.close), column(lambda e: e.window.index), column(lambda e: e.lo),
                   column(lambda e: e.hi), border)


def evaluation_grid(timeline: Any, spec: WindowSpec, semantics: EngineSemantics, end: int | None) -> EvaluationGrid:
    """The evaluations of one window for one t0 (`rsp_workbench.oracle.annotated.evaluations_for`),
    vectorised when `evaluation_arrays` covers the semantics."""
    last = end if end is not None else (timeline.distinct[-1] if timeline.distinct else spec.t0)
    if _grid_problem(semantics) is not None or not timeline.distinct:
        return EvaluationGrid.of(evaluations_for(timeline, spec, semantics, end=end), spec.border)
    distinct, starts = _timeline_arrays(timeline)
    if compressible(semantics):
        a = evaluation_arrays(distinct, spec, semantics, int(last), tick_ranks=distinct_ranks(timeline, distinct))
        lo, hi = starts[a.lo], starts[a.hi]
    else:  # tuple tick with content change: every element is a tick
        ticks = _element_times(timeline)
        a = evaluation_arrays(ticks, spec, semantics, int(last), tick_ranks=_element_ranks(timeline, ticks))
        lo, hi = a.lo, a.hi
    sequence = a.sequence if a.sequence is not None else np.zeros(len(a.time), np.int64)
    return EvaluationGrid(a.time, sequence, a.open, a.close, a.index, lo, hi, spec.border)


def _timeline_arrays(timeline: Any) -> tuple[np.ndarray, np.ndarray]:
    """A timeline's distinct timestamps and start positions as int64 arrays, made once per
    `Timeline`: every t0's grid reads them (converting the lists per t0 was a third of a
    time-tick grid's cost)."""
    return (_cached(timeline, "_distinct", lambda: np.array(timeline.distinct, dtype=np.int64)),
            _cached(timeline, "_starts", lambda: np.array(timeline.starts, dtype=np.int64)))


def _cached(timeline: Any, key: str, make: Callable[[], np.ndarray]) -> np.ndarray:
    """``make()`` made once per `Timeline` (read-only: every t0's grid shares it); made
    afresh for any other timeline object."""
    if not isinstance(timeline, Timeline):
        return make()
    cached = timeline.__dict__.get(key)
    if cached is None:
        cached = make()
        cached.flags.writeable = False
        object.__setattr__(timeline, key, cached)  # a cache beside the frozen fields
    return cached


def distinct_ranks(timeline: Any, distinct: np.ndarray) -> np.ndarray:
    """`_rank_among_equal` of distinct timestamps: zeros."""
    return _cached(timeline, "distinct_ranks", lambda: np.zeros(len(distinct), dtype=np.int64))


def _element_times(timeline: Any) -> np.ndarray:
    """Every element's timestamp (the tuple tick's timeline), rebuilt from the distinct
    timestamps and their counts."""
    def make() -> np.ndarray:
        distinct, starts = _timeline_arrays(timeline)
        return np.repeat(distinct, np.diff(starts))

    return _cached(timeline, "_element_times", make)


def _element_ranks(timeline: Any, times: np.ndarray) -> np.ndarray:
    """`_rank_among_equal` of a timeline's element times."""
    return _cached(timeline, "_element_ranks", lambda: _rank_among_equal(times))


# --- presence runs -------------------------------------------------------------------------------------


@dataclass
class PresenceRuns:
    """Per distinct mapping, the runs of evaluations in which it is present.

    Run ``r``: mapping ``mapping[r]`` is in the relation of evaluations
    ``first[r] ..= last[r]`` with multiplicity ``count[r]``; consecutive runs of one
    mapping have different counts. Sorted by mapping, then first.
    """

    grid: EvaluationGrid
    mapping: np.ndarray
    first: np.ndarray
    last: np.ndarray
    count: np.ndarray

    def relation_sizes(self) -> np.ndarray:
        n = len(self.grid)
        diff = np.bincount(self.first, weights=self.count, minlength=n + 1) - np.bincount(
            self.last + 1, weights=self.count, minlength=n + 1)
        return np.cumsum(diff[:n]).round().astype(np.int64)

    def changes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(evaluation, mapping, delta)`` of every count change, sorted by evaluation."""
        n = len(self.grid)
        ev = np.concatenate([self.first, self.last + 1])
        mp = np.concatenate([self.mapping, self.mapping])
        d = np.concatenate([self.count, -self.count])
        width = int(mp.max()) + 1 if len(mp) else 1
        unique, inverse = np.unique(ev * width + mp, return_inverse=True)
        net = np.bincount(inverse, weights=d, minlength=len(unique)).round().astype(np.int64)
        evs, mps = unique // width, unique % width
        keep = (net != 0) & (evs < n)
        return evs[keep], mps[keep], net[keep]


def presence_runs(table: Any, grid: EvaluationGrid) -> PresenceRuns:
    """The runs of every distinct mapping of a one-window `RowTable` over ``grid``.

    Requires a monotone grid. Static-only rows (no requirement on the stream) are in every
    evaluation. When every mapping has one row with one requirement (the usual BGP over a
    stream), each mapping's run is that requirement's interval: two binary searches per
    row (`SingleRequirements`); otherwise a row's intervals are merged and counted per
    mapping (`merged_presence_runs`).
    """
    single = SingleRequirements.of(table)
    if single is not None:
        return single.runs(grid)
    return merged_presence_runs(table, grid)


@dataclass
class SingleRequirements:
    """A `RowTable` whose every mapping has exactly one row with one requirement, sorted by
    mapping once: a t0's presence runs are then ``[enter, exit]`` per row, count 1."""

    mapping: np.ndarray
    pmin: np.ndarray
    pmax: np.ndarray

    @classmethod
    def of(cls, table: Any) -> "SingleRequirements | None":
        """The table's single requirements (computed once per table), or None."""
        cached = getattr(table, "_single_requirements", NOT_COMPUTED)
        if cached is not NOT_COMPUTED:  # set below, by this method only
            return cast("SingleRequirements | None", cached)
        mapping = table.mapping_of[table.row_of]
        single = None
        if len(np.unique(table.row_of)) == len(table.row_of) and len(np.unique(mapping)) == len(mapping):
            order = np.argsort(mapping, kind="stable")
            single = cls(mapping[order], table.pmin[0][order], table.pmax[0][order])
        table._single_requirements = single
        return single

    def runs(self, grid: EvaluationGrid) -> PresenceRuns:
        enter = np.searchsorted(grid.hi, self.pmax, "right")  # first j with hi_j > pmax
        exit_ = np.searchsorted(grid.lo, self.pmin, "right") - 1  # last j with lo_j <= pmin
        ok = enter <= exit_
        return PresenceRuns(grid, self.mapping[ok], enter[ok], exit_[ok], np.ones(int(ok.sum()), np.int64))


def merged_presence_runs(table: Any, grid: EvaluationGrid) -> PresenceRuns:
    """`presence_runs` for any table: each row's intervals merged, runs of equal counts per mapping."""
    n = len(grid)
    pmin, pmax = table.pmin[0], table.pmax[0]
    enter = np.searchsorted(grid.hi, pmax, "right")  # first j with hi_j > pmax
    exit_ = np.searchsorted(grid.lo, pmin, "right") - 1  # last j with lo_j <= pmin
    ok = enter <= exit_
    rows, enter, exit_ = table.row_of[ok], enter[ok], exit_[ok]
    # a row is present where any of its requirements holds: merge its intervals
    order = np.lexsort((enter, rows))
    rows, enter, exit_ = rows[order], enter[order], exit_[order]
    stride = n + 2
    shifted_exit = np.maximum.accumulate(exit_ + rows * stride) if len(rows) else exit_
    previous = np.concatenate([[-stride - 2], shifted_exit[:-1]])
    starts = np.flatnonzero(enter + rows * stride > previous + 1)
    seg_row = rows[starts]
    seg_first = enter[starts]
    ends = np.concatenate([starts[1:], [len(rows)]])[:len(starts)] - 1
    seg_last = shifted_exit[ends] - seg_row * stride
    # per mapping: +1 where a row's segment starts, -1 after it ends; runs of equal counts
    mapping = table.mapping_of[seg_row]
    ev = np.concatenate([seg_first, seg_last + 1])
    mp = np.concatenate([mapping, mapping])
    d = np.concatenate([np.ones(len(seg_row), np.int64), -np.ones(len(seg_row), np.int64)])
    keys = mp * (n + 2) + ev
    unique, inverse = np.unique(keys, return_inverse=True)
    net = np.bincount(inverse, weights=d, minlength=len(unique)).round().astype(np.int64)
    nz = net != 0
    unique, net = unique[nz], net[nz]
    ev_m, ev_j = unique // (n + 2), unique % (n + 2)
    count = np.cumsum(net)  # each mapping's net sum is 0, so the running sum restarts per mapping
    same_next = np.concatenate([ev_m[1:] == ev_m[:-1], [False]])
    run = (count > 0) & same_next
    next_j = np.concatenate([ev_j[1:], [0]])
    return PresenceRuns(grid, ev_m[run], ev_j[run], next_j[run] - 1, count[run])


# --- the answer of one t0, lazily ------------------------------------------------------------------


class LazySequence(Sequence[Any]):
    """A read-only sequence whose items are computed on access (compares equal to any
    sequence with the same items)."""

    def __init__(self, length: int, item: Callable[[int], Any], iterate: Callable[[], Iterator[Any]] | None = None) -> None:
        self._length, self._item, self._iterate = length, item, iterate

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        return self._item(index)

    def __iter__(self) -> Iterator[Any]:
        if self._iterate is not None:
            return self._iterate()
        return (self._item(i) for i in range(self._length))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so unhashable like them (Sequence declares a hash)

    def __repr__(self) -> str:
        return f"LazySequence(len={self._length})"


class DeltaAnswer:
    """The oracle's answer for one t0, held as presence runs (what `ExpectedAnswer` holds,
    computed on demand: ``evaluations``, ``relations`` and ``emissions`` are sequences)."""

    def __init__(self, t0: tuple[int, ...], grid: EvaluationGrid, runs: Callable[[], PresenceRuns],
                 solution: Callable[[int], SolutionMapping], r2s: R2S, empty_notification: bool, rows: Any = None) -> None:
        self.t0 = t0
        self.grid = grid
        self.rows = rows  # the annotated rows whose `presence_runs` over ``grid`` the runs are, if so
        self._make_runs: Callable[[], PresenceRuns] | None = runs
        self._runs: PresenceRuns | None = None
        self.solution = solution
        self.r2s, self.empty_notification = r2s, empty_notification
        self._by_first: np.ndarray | None = None
        self._emissions: tuple[Emission[Hashable], ...] | None = None
        self._sizes: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def runs(self) -> PresenceRuns:
        """The presence runs (computed on first use: the grid alone answers `evaluation_times`)."""
        if self._runs is None:
            assert self._make_runs is not None
            self._runs, self._make_runs = self._make_runs(), None
        return self._runs

    def evaluation_times(self) -> np.ndarray:
        return self.grid.time

    @property
    def evaluations(self) -> LazySequence:
        return self.grid.evaluations()

    @property
    def relations(self) -> LazySequence:
        return LazySequence(len(self.grid), self.relation, self._sweep)

    def relation(self, j: int) -> Counter[Hashable]:
        runs = self.runs
        present = np.flatnonzero((runs.first <= j) & (runs.last >= j))
        return Counter({self.solution(int(runs.mapping[r])): int(runs.count[r]) for r in present})

    def _sweep(self) -> Iterator[Counter[Hashable]]:
        """Every evaluation's relation in order, from the change events (no rescans)."""
        evs, mps, deltas = self.runs.changes()
        current: Counter[Hashable] = Counter()
        at = 0
        for j in range(len(self.grid)):
            while at < len(evs) and evs[at] == j:
                mapping = self.solution(int(mps[at]))
                current[mapping] += int(deltas[at])
                if current[mapping] <= 0:
                    del current[mapping]
                at += 1
            yield Counter(current)

    def sizes(self) -> tuple[np.ndarray, np.ndarray]:
        """Per evaluation: the relation's size and the number of bindings R2S emits."""
        if self._sizes is None:
            relation = self.runs.relation_sizes()
            if self.r2s is R2S.RSTREAM:
                emitted = relation
            else:
                evs, _, deltas = self.runs.changes()
                sign = 1 if self.r2s is R2S.ISTREAM else -1
                part = np.maximum(sign * deltas, 0)
                emitted = np.bincount(evs, weights=part, minlength=len(self.grid)).round().astype(np.int64)[:len(self.grid)]
            self._sizes = (relation, emitted)
        return self._sizes

    def emitted(self) -> np.ndarray:
        """Per evaluation: whether R2S emits (a non-empty output, or empty notification)."""
        _, emitted = self.sizes()
        return np.ones(len(self.grid), bool) if self.empty_notification else emitted > 0

    @property
    def emissions(self) -> tuple[Emission[Hashable], ...]:
        if self._emissions is None:
            self._emissions = tuple(self.iter_emissions())
        return self._emissions

    def iter_emissions(self) -> Iterator[Emission[Hashable]]:
        """What R2S streams out, in order (`rsp_workbench.core.r2s.apply_r2s` from the changes)."""
        symbol = OPERATION_SYMBOL[self.r2s]
        grid = self.grid
        emitted = self.emitted()
        if self.r2s is R2S.RSTREAM:
            for j, relation in enumerate(self._sweep()):
                if emitted[j]:
                    yield Emission(int(grid.time[j]), int(grid.sequence[j]), symbol, relation)
            return
        evs, mps, deltas = self.runs.changes()
        sign = 1 if self.r2s is R2S.ISTREAM else -1
        keep = sign * deltas > 0
        evs, mps, counts = evs[keep], mps[keep], sign * deltas[keep]
        bounds = np.searchsorted(evs, np.arange(len(grid) + 1))
        for j in np.flatnonzero(emitted).tolist():
            a, b = bounds[j], bounds[j + 1]
            bag: Counter[Hashable] = Counter({self.solution(int(m)): int(c) for m, c in zip(mps[a:b], counts[a:b])})
            yield Emission(int(grid.time[j]), int(grid.sequence[j]), symbol, bag)

    def summary_rows(self) -> "SummaryRows":
        """`rsp_workbench.oracle.run.windows_summary` rows, from the arrays."""
        return SummaryRows(self._summary_chunks, len(self.grid))

    def _summary_chunks(self) -> Iterator[tuple[list[Any], ...]]:
        relation, emitted_size = self.sizes()
        emitted = self.emitted()
        expected = np.where(emitted, emitted_size, 0)
        g = self.grid
        step = 1 << 16  # Python objects for one chunk of rows at a time
        for a in range(0, len(g), step):
            b = a + step
            yield (g.open[a:b].tolist(), g.close[a:b].tolist(), g.time[a:b].tolist(),
                   (g.hi[a:b] - g.lo[a:b]).tolist(), expected[a:b].tolist(), relation[a:b].tolist(),
                   emitted[a:b].tolist())


SUMMARY_KEYS = ("start", "end", "time", "triples", "expected", "relation_size", "emitted")


class SummaryRows(Iterator[dict[str, Any]]):
    """One t0's window rows (`SUMMARY_KEYS`) as dicts, or as ``chunks()`` of columns (lists in
    key order) for a writer that formats many rows at once (``rspwb oracle --json``: a
    tuple tick gives one row per element)."""

    def __init__(self, chunks: Callable[[], Iterator[tuple[list[Any], ...]]], length: int | None = None) -> None:
        self._chunks = chunks
        self._rows: Iterator[dict[str, Any]] | None = None
        self.length = length  # the number of rows, when known without making them

    def chunks(self) -> Iterator[tuple[list[Any], ...]]:
        return self._chunks()

    def __next__(self) -> dict[str, Any]:
        if self._rows is None:
            self._rows = (dict(zip(SUMMARY_KEYS, row)) for chunk in self._chunks() for row in zip(*chunk))
        return next(self._rows)


@dataclass(frozen=True)
class GridRecipe:
    """What each t0's evaluation grid follows from when its answer is the oracle's shared rows over
    that grid (`DeltaOracle`): the distinct timestamps, the semantics and each t0's window — small
    and picklable, so that the grids of ``--out`` can be made and written by Spark's executors
    (`rsp_workbench.oracle.output`) without the rows or the stream."""

    timeline: Any
    semantics: EngineSemantics
    end: int | None
    specs: Mapping[tuple[int, ...], WindowSpec]

    def grid(self, t0: tuple[int, ...]) -> EvaluationGrid:
        """The grid `DeltaOracle.answer` gives ``t0``'s answer (it is that answer's only when monotone)."""
        return evaluation_grid(self.timeline, self.specs[t0], self.semantics, self.end)


class DeltaOracle:
    """Answers per t0 for a single-window monotone plan from its annotated `RowTable`."""

    def __init__(self, query: Any, semantics: EngineSemantics, table: Any, timeline: Any, end: int | None) -> None:
        self.query, self.semantics, self.table, self.timeline, self.end = query, semantics, table, timeline, end
        self.r2s = query.r2s or semantics.r2s
        self._solutions: dict[int, SolutionMapping] = {}

    @staticmethod
    def applies(plan: Any, query: Any) -> bool:
        return plan.upper is None and len(query.windows) == 1

    def solution(self, m: int) -> SolutionMapping:
        solution: SolutionMapping = self.table.solution(m, self._solutions)
        return solution

    def recipe(self, vectors: Sequence[tuple[int, ...]]) -> GridRecipe:
        """The grids of ``vectors`` as data (`GridRecipe`)."""
        from rsp_workbench.oracle.reference import window_specs

        return GridRecipe(self.timeline, self.semantics, self.end,
                          {tuple(v): window_specs(self.query, self.semantics, tuple(v))[0] for v in vectors})

    def answer(self, t0: Sequence[int]) -> "DeltaAnswer | None":
        """The answer for ``t0``; None if the contents do not move monotonically."""
        grid = self.recipe([tuple(t0)]).grid(tuple(t0))
        if not grid.monotone():
            return None
        return DeltaAnswer(tuple(t0), grid, lambda: presence_runs(self.table, grid), self.solution, self.r2s,
                           self.semantics.empty_notification, rows=self.table)


class LazyAnswers(Mapping[tuple[int, ...], Any]):
    """t0 vector → answer, each computed when asked for and not kept (only the last one is,
    for a caller that asks twice): memory holds one t0's answer at a time."""

    def __init__(self, vectors: Sequence[tuple[int, ...]], compute: Callable[[tuple[int, ...]], Any],
                 times: Callable[[tuple[int, ...]], Any] | None = None) -> None:
        self.vectors = [tuple(v) for v in vectors]
        self._known = set(self.vectors)
        self._compute = compute
        self._times = times
        self._last: tuple[tuple[int, ...], Any] | None = None

    def evaluation_times(self, t0: tuple[int, ...]) -> Any:
        """The evaluation instants of ``t0`` (without computing its relations when possible)."""
        if self._times is not None:
            return self._times(tuple(t0))
        answer = self[t0]
        return answer.evaluation_times() if hasattr(answer, "evaluation_times") else [e.time for e in answer.evaluations]

    def __getitem__(self, t0: tuple[int, ...]) -> Any:
        t0 = tuple(t0)
        if t0 not in self._known:
            raise KeyError(t0)
        if self._last is None or self._last[0] != t0:
            self._last = None  # let the previous answer go before computing the next
            self._last = (t0, self._compute(t0))
        return self._last[1]

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        return iter(self.vectors)

    def __len__(self) -> int:
        return len(self.vectors)
