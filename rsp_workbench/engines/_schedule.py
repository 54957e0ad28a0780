"""Incremental evaluation instants: `rsp_workbench.core.report.evaluation_instants` one stimulus at a time.

The oracle computes ET_P (RSP-QL Def. 23) over a whole stream; an engine sees the stream
stimulus by stimulus and must decide *now*. :class:`ReportScheduler` produces exactly the
evaluations of ``evaluation_instants(times, spec, policy, tick=…, choice=…, batch_size=…,
start=t0)`` — same candidates, same conjunction of strategies, same content ranges — using
the same window primitives (``WindowSpec.closing_within``/``active``/``boundaries_between``,
``content_range``). Positions are absolute (element ``i`` of the stream is position ``i``)
while only a suffix of the timestamps is kept (:class:`StreamBuffer`).
``tests/engines/test_engine_secret.py`` checks the equivalence with hypothesis.

Ordering at one instant t (all elements at t arrive in one stimulus):
instants strictly before t are evaluated first (time-driven, nothing new has ticked in),
then the elements at t tick in (content-change candidates per tick), then window-close
and periodic candidates at t (their content includes the elements at t when the border
includes the closing instant).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Generic, Sequence, TypeVar

from rsp_workbench.core.report import Evaluation
from rsp_workbench.core.semantics import ActiveWindowChoice, BorderConvention, ReportPolicy, Strategy, Tick
from rsp_workbench.core.windows import WindowInstance, WindowSpec, content_range

E = TypeVar("E")


@dataclass
class StreamBuffer(Generic[E]):
    """The retained suffix of one stream: timestamps and elements with absolute positions."""

    times: list[int] = field(default_factory=list)
    elements: list[E] = field(default_factory=list)
    offset: int = 0  # absolute position of times[0]

    @property
    def size(self) -> int:
        """Number of elements received so far (absolute end position)."""
        return self.offset + len(self.times)

    def append(self, t: int, element: E) -> None:
        self.times.append(t)
        self.elements.append(element)

    def window_range(self, open_: int, close: int, border: BorderConvention) -> tuple[int, int]:
        """Absolute positions [lo, hi) of the elements inside the interval."""
        lo, hi = content_range(self.times, open_, close, border)
        return lo + self.offset, hi + self.offset

    def upto(self, t: int) -> int:
        """Absolute end position of the elements with time ≤ t."""
        return bisect.bisect_right(self.times, t) + self.offset

    def first_at_or_after(self, t: int) -> int:
        return bisect.bisect_left(self.times, t) + self.offset

    def element(self, position: int) -> E:
        return self.elements[position - self.offset]

    def trim_before(self, t: int) -> None:
        """Forget elements with time < t (amortised: only when a quarter of the buffer can go,
        so it holds at most 4/3 of what is still needed)."""
        cut = bisect.bisect_left(self.times, t)
        if cut and cut * 4 >= len(self.times):
            del self.times[:cut]
            del self.elements[:cut]
            self.offset += cut


class ReportScheduler:
    """ET_P of one window over a stream fed incrementally (mirrors ``evaluation_instants``).

    ``misaligned_first_window`` (fault, C-SPARQL / CSRBench Q5): with a window-close policy
    on a sliding window, also report the partial windows ``[t0, t0 + iβ)`` that close
    before the first full window, i.e. before the engine "becomes stable".
    """

    def __init__(
        self,
        buffer: StreamBuffer,  # type: ignore[type-arg]
        spec: WindowSpec,
        policy: ReportPolicy,
        *,
        tick: Tick = Tick.TUPLE,
        choice: ActiveWindowChoice = ActiveWindowChoice.EARLIEST,
        batch_size: int = 1,
        misaligned_first_window: bool = False,
    ) -> None:
        self.buffer = buffer
        self.spec = spec
        self.policy = policy
        self.tick = tick
        self.choice = choice
        self.batch_size = batch_size
        self.start = spec.t0
        self.now = spec.t0 - 1  # every instant ≤ now has been considered
        self.ticked = 0  # absolute count of elements ticked in
        self.previous_key: tuple[int, int] = (0, 0)
        self.last_candidate_time: int | None = None
        self.sequence = 0
        strategies = policy.strategies
        # looked up once: an Enum's hash is a Python call, and _judge runs per candidate
        self.on_change = Strategy.CONTENT_CHANGE in strategies
        self.on_non_empty = Strategy.NON_EMPTY in strategies
        self.window_close = Strategy.WINDOW_CLOSE in strategies
        # window-close & next-element: a closed window waits for the next element (data-driven)
        self.next_element = self.window_close and Strategy.NEXT_ELEMENT in strategies
        self.closes_done = spec.t0 - 1  # next-element: every close ≤ this has been considered
        self.periodic = Strategy.PERIODIC in strategies and not self.window_close
        self.content_change = not self.window_close and not self.periodic
        self.leading: WindowSpec | None = None
        if misaligned_first_window and self.window_close and spec.slide < spec.size and not spec.leading_partial:
            self.leading = WindowSpec(spec.size, spec.slide, spec.t0, spec.border, leading_partial=True)

    # --- feeding ---------------------------------------------------------------------

    def before(self, t: int) -> list[Evaluation]:
        """Evaluations at instants in (now, t): time passes without new elements."""
        if t - 1 <= self.now or self.next_element:  # next-element: only an element reports
            return []
        return self._time_driven(self.now + 1, t - 1)

    def at(self, t: int, arrived_before: int) -> list[Evaluation]:
        """Evaluations at t once the elements at t (positions ≥ ``arrived_before``) are in the buffer."""
        evaluations: list[Evaluation] = []
        if t <= self.now:  # a late stimulus at an instant already evaluated: elements tick in silently
            self.ticked = self._ticks(arrived_before, self.buffer.size, t, collect=None)
            return evaluations
        if self.content_change:
            ticked_now: list[int] = []
            self.ticked = self._ticks(arrived_before, self.buffer.size, t, collect=ticked_now)
            if t >= self.start:
                if ticked_now:
                    self._content_candidates(t, ticked_now, evaluations)
                elif t in self.spec.boundaries_between(t, t):
                    self._candidate(t, self.ticked, evaluations)
        elif self.next_element:
            self.ticked = self._ticks(arrived_before, self.buffer.size, t, collect=None)
            evaluations.extend(self._closed_by_arrival(t))
        else:
            self.ticked = self._ticks(arrived_before, self.buffer.size, t, collect=None)
            evaluations.extend(self._time_driven(t, t))
        self.now = t
        return evaluations

    def advance(self, t: int) -> list[Evaluation]:
        """Time reaches t with no further elements at or before t."""
        if t <= self.now:
            return []
        evaluations = [] if self.next_element else self._time_driven(self.now + 1, t)
        self.now = t
        return evaluations

    def flush_partial_batch(self) -> list[Evaluation]:
        """At the end of input, the last incomplete batch ticks in (batch tick only)."""
        evaluations: list[Evaluation] = []
        if self.content_change and self.tick is Tick.BATCH and self.ticked < self.buffer.size:
            self.ticked = self.buffer.size
            t = self.buffer.times[-1]
            if t >= self.start:
                self._candidate(t, self.ticked, evaluations)
        return evaluations

    # --- internals -------------------------------------------------------------------

    def _ticks(self, lo: int, hi: int, t: int, collect: list[int] | None) -> int:
        """Tick the new elements [lo, hi) (all at time t); return the new ticked count."""
        if hi <= lo:
            return self.ticked
        if self.tick is Tick.TUPLE:
            if collect is not None:
                collect.extend(range(lo + 1, hi + 1))
            return hi
        if self.tick is Tick.TIME:
            if collect is not None:
                collect.append(hi)
            return hi
        size = self.batch_size
        ticked = self.ticked
        end = (ticked // size + 1) * size
        while end <= hi:
            if collect is not None:
                collect.append(end)
            ticked = end
            end += size
        return ticked

    def _time_driven(self, a: int, b: int) -> list[Evaluation]:
        """Candidates in [a, b] that need no new element (window close, periodic, boundaries)."""
        a = max(a, self.start)
        evaluations: list[Evaluation] = []
        if b < a:
            return evaluations
        if self.window_close:
            for window in self._closing(a, b):
                lo, hi = self.buffer.window_range(window.open, window.close, window.border)
                self._judge(window.close, window, lo, (hi,), evaluations)
        elif self.periodic:
            period = self.policy.period_ms or 1
            t0 = self.spec.t0
            k = max(0, -((t0 - a) // period))
            while t0 + k * period <= b:
                instant = t0 + k * period
                self._content_candidate(instant, self.buffer.upto(instant), evaluations)
                k += 1
        else:
            for instant in self.spec.boundaries_between(a, b):
                self._candidate(instant, self.ticked, evaluations)
        return evaluations

    def _closing(self, a: int, b: int) -> list[WindowInstance]:
        """The windows a window-close policy reports that close in [a, b], in close order."""
        windows = self.spec.closing_within(a, b)
        if self.leading is not None:
            first_full_close = self.spec.t0 + self.spec.size
            extra = [w for w in self.leading.closing_within(a, b) if w.close < first_full_close]
            windows = sorted(extra + windows, key=lambda w: w.close)
        period = self.policy.period_ms
        return [w for w in windows if period is None or not (w.close - self.spec.t0) % period]

    def _closed_by_arrival(self, t: int) -> list[Evaluation]:
        """Next-element: the windows that closed strictly before ``t``, evaluated now, at ``t``."""
        evaluations: list[Evaluation] = []
        a = max(self.closes_done + 1, self.start)
        if t - 1 >= a:
            for window in self._closing(a, t - 1):
                lo, hi = self.buffer.window_range(window.open, window.close, window.border)
                self._judge(t, window, lo, (hi,), evaluations)
        self.closes_done = max(self.closes_done, t - 1)
        return evaluations

    def _candidate(self, time: int, arrived: int, out: list[Evaluation]) -> None:
        self._content_candidate(time, arrived, out)

    def _content_candidate(self, time: int, arrived: int, out: list[Evaluation]) -> None:
        active = self.spec.active(time, self.choice)
        if active is None:
            self._next_sequence(time)
            self.previous_key = (0, 0)
            return
        lo, hi = self.buffer.window_range(active.open, active.close, active.border)
        hi = max(lo, min(hi, arrived))
        self._judge(time, active, lo, (hi,), out)

    def _content_candidates(self, time: int, arrivals: list[int], out: list[Evaluation]) -> None:
        """``_content_candidate`` for each arrival at one instant: the active window and its
        range are the same for all of them, so they are computed once (a tuple tick at BIG
        load brings ~70 arrivals per instant)."""
        active = self.spec.active(time, self.choice)
        if active is None:
            for _ in arrivals:
                self._next_sequence(time)
                self.previous_key = (0, 0)
            return
        lo, hi = self.buffer.window_range(active.open, active.close, active.border)
        self._judge(time, active, lo, [max(lo, min(hi, arrived)) for arrived in arrivals], out)

    def _next_sequence(self, time: int) -> int:
        self.sequence = self.sequence + 1 if time == self.last_candidate_time else 0
        self.last_candidate_time = time
        return self.sequence

    def _judge(self, time: int, window: WindowInstance, lo: int, his: Sequence[int], out: list[Evaluation]) -> None:
        """The conjunction of strategies (as in ``evaluation_instants``) at candidates at one
        instant, in order, reading [lo, hi) for each hi of ``his`` (one loop for a tuple tick's
        ~70 arrivals per instant at YABench BIG, not one call each)."""
        on_change, on_non_empty = self.on_change, self.on_non_empty
        previous = self.previous_key
        for hi in his:
            sequence = self._next_sequence(time)
            key = (lo, hi) if hi > lo else (0, 0)
            if not (on_change and key == previous) and not (on_non_empty and hi <= lo):
                out.append(Evaluation(time, window, lo, hi, sequence))
            previous = key
        self.previous_key = previous

    def upcoming(self) -> WindowInstance | None:
        """The window the next window-close evaluation reads, once time passes its close (None:
        the policy is not window-close, or its next evaluation waits for an element — next-element
        — or no window closes within a window's length and a slide). An engine may fill its store
        with that window's elements as they arrive, so the evaluation finds the content in place."""
        if not self.window_close or self.next_element:
            return None
        a = max(self.now + 1, self.start)
        windows = self._closing(a, a + self.spec.size + self.spec.slide)
        return windows[0] if windows else None

    def horizon(self) -> int:
        """The earliest application time a future evaluation may still read: the opening of
        the earliest window that closes at or after the first instant not yet evaluated."""
        considered = min(self.now, self.closes_done + 1) if self.next_element else self.now
        horizon = self.spec.earliest_open_from(considered)
        if self.leading is not None:
            horizon = min(horizon, self.leading.earliest_open_from(considered))
        return horizon


def content_positions(
    buffer: StreamBuffer,  # type: ignore[type-arg]
    spec: WindowSpec,
    time: int,
    choice: ActiveWindowChoice,
) -> tuple[WindowInstance | None, int, int]:
    """``rsp_workbench.core.report.content_at`` on a buffer: the active window at ``time`` and [lo, hi)."""
    active = spec.active(time, choice)
    if active is None:
        return None, 0, 0
    lo, hi = buffer.window_range(active.open, active.close, active.border)
    hi = min(hi, buffer.upto(time))
    return active, lo, max(lo, hi)


def positions_of(times: Sequence[int]) -> StreamBuffer:  # type: ignore[type-arg]
    """A buffer holding only timestamps (elements = positions), for tests."""
    buffer: StreamBuffer[int] = StreamBuffer()
    for i, t in enumerate(times):
        buffer.append(t, i)
    return buffer
