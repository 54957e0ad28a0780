"""Evaluation instants: when a report policy makes a window report over a concrete stream.

SECRET Report + Tick (CSRBench Sect. 3) and RSP-QL Def. 23 (ET_P = instants where the
policy holds). Everything here works on the *timestamps* of a time-ordered stream only;
the content of an evaluation is a contiguous range of element positions [lo, hi), which
is what lets the oracle and the engines share this code without sharing data structures.

Definitions used (pinned by tests/test_semantics_*.py):

* Candidate instants depend on the triggering strategy in the policy:
  - window-close: every closing instant c of a window in range; the evaluation reads that
    window's full content (elements at c are included iff the border includes c);
  - window-close & next-element (data-driven engines, which learn that time passed only
    from the data: rsp-js, C-SPARQL in practice): the same windows and contents, each
    evaluated at the time of the first element *strictly after* its close c (an element
    at c may still belong to the window, border permitting). A window with no later
    element within ``end`` is never reported; several windows closed by one element are
    evaluated at its time in the order of their closes (``sequence`` 0, 1, …);
  - periodic(p) (without window-close): t0 + k·p; reads the active window at that instant;
  - content-change alone: every tick (tuple: each element; time: each distinct timestamp;
    batch: every ``batch_size`` elements) plus every instant where the set of windows
    containing t changes; reads the active window with the elements ticked in so far.
* At each candidate the policy is a conjunction: content-change holds iff the content
  (as a set of elements) differs from the content at the previous candidate; non-empty
  holds iff the content is not empty. An evaluation happens iff all strategies hold.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Iterator, Sequence

from rsp_workbench.core.semantics import ActiveWindowChoice, ReportPolicy, Strategy, Tick
from rsp_workbench.core.windows import WindowInstance, WindowSpec
from rsp_workbench.errors import UserError


@dataclass(frozen=True)
class Evaluation:
    """One evaluation instant: application time, the window read, its content [lo, hi)."""

    time: int
    window: WindowInstance
    lo: int
    hi: int
    sequence: int = 0  # order among evaluations at the same time (tuple/batch tick)

    @property
    def size(self) -> int:
        return self.hi - self.lo

    def content_key(self) -> tuple[int, int]:
        """Equal for equal contents (all empty contents compare equal)."""
        return (self.lo, self.hi) if self.hi > self.lo else (0, 0)


@dataclass(frozen=True)
class _Tick:
    time: int
    arrived: int  # number of elements ticked in (positions [0, arrived))


def ticks(times: Sequence[int], tick: Tick, batch_size: int = 1) -> Iterator[_Tick]:
    """The instants at which elements enter the windows, per SECRET's Tick."""
    n = len(times)
    if tick is Tick.TUPLE:
        for i, t in enumerate(times):
            yield _Tick(t, i + 1)
    elif tick is Tick.TIME:
        for i, t in enumerate(times):
            if i + 1 == n or times[i + 1] != t:
                yield _Tick(t, i + 1)
    else:
        for end in range(batch_size, n + batch_size, batch_size):
            end = min(end, n)
            yield _Tick(times[end - 1], end)
            if end == n:
                break


def content_at(
    times: Sequence[int],
    window: WindowSpec,
    t: int,
    choice: ActiveWindowChoice = ActiveWindowChoice.EARLIEST,
    arrived: int | None = None,
) -> tuple[WindowInstance | None, int, int]:
    """SECRET Content: the active window at t and its element positions [lo, hi).

    ``arrived`` limits the content to the first ``arrived`` elements (those ticked in);
    by default all elements with time ≤ t have arrived. Used for every window of a
    multi-window dataset at an evaluation instant (RSP-QL Def. 18).
    """
    active = window.active(t, choice)
    if active is None:
        return None, 0, 0
    if arrived is None:
        arrived = bisect.bisect_right(times, t)
    lo, hi = active.position_range(times)
    hi = min(hi, arrived)
    return active, lo, max(lo, hi)


def skips_empty_prefix(policy: ReportPolicy) -> bool:
    """True if no instant before the first element can be an evaluation: its content is
    empty, so non-empty fails and content change sees no change. Such instants are not
    enumerated, so a stream stamped far from t0 (epoch milliseconds) costs nothing extra."""
    strategies = policy.strategies
    return (Strategy.NON_EMPTY in strategies or Strategy.CONTENT_CHANGE in strategies
            or not ({Strategy.WINDOW_CLOSE, Strategy.PERIODIC} & set(strategies)))


MAX_CLOSING_WINDOWS = 50_000_000  # windows one evaluation range may enumerate (each is an evaluation)


def evaluation_instants(
    times: Sequence[int],
    window: WindowSpec,
    policy: ReportPolicy,
    *,
    tick: Tick = Tick.TUPLE,
    choice: ActiveWindowChoice = ActiveWindowChoice.EARLIEST,
    batch_size: int = 1,
    start: int | None = None,
    end: int | None = None,
) -> list[Evaluation]:
    """ET_P over a concrete stream (RSP-QL Def. 23), given its sorted timestamps.

    ``start`` defaults to t0, ``end`` to the last timestamp (or t0 for an empty stream):
    only instants in [start, end] are considered, so a window that closes after the
    stream ends reports only if ``end`` reaches its closing time.
    """
    if any(times[i] > times[i + 1] for i in range(len(times) - 1)):
        raise ValueError("timestamps must be non-decreasing")
    start = window.t0 if start is None else start
    end = (times[-1] if times else window.t0) if end is None else end
    if times and skips_empty_prefix(policy):
        start = max(start, times[0])
    strategies = policy.strategies
    candidates: list[tuple[int, WindowInstance | None, int, int, int]] = []
    if Strategy.WINDOW_CLOSE in strategies:
        windows = (end - start) // window.slide
        if windows > MAX_CLOSING_WINDOWS:
            raise UserError(f"about {windows:,} windows close between {start} and {end}, each an evaluation (the "
                            "stream's times are far from t0): give a t0 near the stream's first element, or --end",
                            field="--t0")
        next_element = Strategy.NEXT_ELEMENT in strategies
        previous_time, sequence = None, 0
        for closing in window.closing_within(start, end):
            if Strategy.PERIODIC in strategies and (closing.close - window.t0) % (policy.period_ms or 1):
                continue
            lo, hi = closing.position_range(times)
            time = closing.close
            if next_element:
                after = bisect.bisect_right(times, closing.close)
                if after == len(times) or times[after] > end:
                    break  # no element after this close (nor after the later ones) within end
                time = times[after]
            sequence = sequence + 1 if time == previous_time else 0
            previous_time = time
            candidates.append((time, closing, lo, hi, sequence))
    elif Strategy.PERIODIC in strategies:
        period = policy.period_ms or 1
        instants = (end - start) // period
        if instants > MAX_CLOSING_WINDOWS:
            raise UserError(f"about {instants:,} periodic evaluations between {start} and {end}, one every {period} ms "
                            "(the stream's times are far apart or far from t0): give a longer period, a t0 near the "
                            "stream's first element, or --end", field="--t0")
        k = max(0, -((window.t0 - start) // period))
        while window.t0 + k * period <= end:
            instant = window.t0 + k * period
            active, lo, hi = content_at(times, window, instant, choice)
            candidates.append((instant, active, lo, hi, 0))
            k += 1
    else:
        candidates = _content_change_candidates(times, window, tick, choice, batch_size, start, end)
    evaluations: list[Evaluation] = []
    previous_key: tuple[int, int] | None = (0, 0)
    for time, active, lo, hi, sequence in candidates:
        if active is None:
            previous_key = (0, 0)
            continue
        key = (lo, hi) if hi > lo else (0, 0)
        holds = True
        if Strategy.CONTENT_CHANGE in strategies and key == previous_key:
            holds = False
        if Strategy.NON_EMPTY in strategies and hi <= lo:
            holds = False
        previous_key = key
        if holds:
            evaluations.append(Evaluation(time, active, lo, hi, sequence))
    return evaluations


def _content_change_candidates(
    times: Sequence[int],
    window: WindowSpec,
    tick: Tick,
    choice: ActiveWindowChoice,
    batch_size: int,
    start: int,
    end: int,
) -> list[tuple[int, WindowInstance | None, int, int, int]]:
    """Ticks plus instants where windows open/close, merged in time order.

    A boundary instant that coincides with a tick is covered by the tick (the window has
    already moved when the first element at that instant is processed). Not by the last,
    incomplete batch of a batch tick: it ticks in only when the input ends, after the
    boundaries at its instant (what a streaming engine can do, rsp_workbench/engines/_schedule.py).
    """
    all_ticks = list(ticks(times, tick, batch_size))
    all_tick_times = [tk.time for tk in all_ticks]
    tick_list = [tk for tk in all_ticks if start <= tk.time <= end]
    flush = tick is Tick.BATCH and len(times) % batch_size != 0
    tick_times = {tk.time for tk in tick_list if not (flush and tk.arrived == len(times))}
    merged: list[tuple[int, int, int]] = [
        (tk.time, 2 if flush and tk.arrived == len(times) else 0, tk.arrived) for tk in tick_list
    ]
    for instant in window.boundaries_between(start, end):
        if instant not in tick_times:
            # the content holds what the last tick before this instant brought in
            last = bisect.bisect_left(all_tick_times, instant) - 1
            merged.append((instant, 1, all_ticks[last].arrived if last >= 0 else 0))
    merged.sort()
    candidates = []
    sequence, last_time = 0, None
    for time, _, arrived in merged:
        sequence = sequence + 1 if time == last_time else 0
        last_time = time
        active, lo, hi = content_at(times, window, time, choice, arrived)
        candidates.append((time, active, lo, hi, sequence))
    return candidates
