"""Time-based sliding windows: specs, instances, scope (RSP-QL Def. 12-13, SECRET Scope).

A :class:`WindowSpec` is (size ω, slide β, t0) plus a border convention. Window k opens at
``t0 + kβ`` and closes at ``t0 + kβ + ω`` (k ≥ 0). With ``leading_partial`` the grid is
aligned on closing times instead, as YABench's window-close oracle does: window i (i ≥ 1)
spans ``[max(t0, t0 + iβ − ω), t0 + iβ]``, so with β < ω the first windows are shorter.
When β divides ω both grids close at the same instants and only the leading partial
windows differ.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Sequence

from rsp_workbench.core.semantics import ActiveWindowChoice, BorderConvention
from rsp_workbench.errors import UserError


@dataclass(frozen=True, order=True)
class WindowInstance:
    """One window: the interval between ``open`` and ``close`` read with ``border``."""

    open: int
    close: int
    index: int
    border: BorderConvention = BorderConvention.CLOSED_OPEN

    def contains(self, t: int) -> bool:
        return self.border.contains(self.open, self.close, t)

    def position_range(self, times: Sequence[int]) -> tuple[int, int]:
        """Positions [lo, hi) of the elements of a time-sorted stream that fall in this window."""
        return content_range(times, self.open, self.close, self.border)

    def __str__(self) -> str:
        left, right = self.border.brackets()
        return f"{left}{self.open}, {self.close}{right}"


def content_range(times: Sequence[int], open_: int, close: int, border: BorderConvention) -> tuple[int, int]:
    """Positions [lo, hi) of the elements of sorted ``times`` inside the interval.

    Streams are time-ordered, so a window's content is always a contiguous run.
    """
    if border is BorderConvention.OPEN_CLOSED:
        lo = bisect.bisect_right(times, open_)
    else:
        lo = bisect.bisect_left(times, open_)
    if border is BorderConvention.CLOSED_OPEN:
        hi = bisect.bisect_left(times, close)
    else:
        hi = bisect.bisect_right(times, close)
    return lo, max(lo, hi)


@dataclass(frozen=True)
class WindowSpec:
    """A time-based sliding window (RSP-QL Def. 13: width α = ``size``, slide β, t0), in ms."""

    size: int
    slide: int
    t0: int = 0
    border: BorderConvention = BorderConvention.CLOSED_OPEN
    leading_partial: bool = False

    def __post_init__(self) -> None:
        if self.size <= 0:
            raise UserError(f"window size must be positive, got {self.size}", field="size")
        if self.slide <= 0:
            raise UserError(f"window slide must be positive, got {self.slide}", field="slide")

    @property
    def kind(self) -> str:
        """``tumbling`` (β = ω), ``sliding`` (β < ω) or ``hopping`` (β > ω, gaps)."""
        if self.slide == self.size:
            return "tumbling"
        return "sliding" if self.slide < self.size else "hopping"

    def window(self, index: int) -> WindowInstance:
        """Window number ``index`` (0-based for the full grid, 1-based with leading partials)."""
        if self.leading_partial:
            close = self.t0 + index * self.slide
            return WindowInstance(max(self.t0, close - self.size), close, index, self.border)
        open_ = self.t0 + index * self.slide
        return WindowInstance(open_, open_ + self.size, index, self.border)

    @property
    def first_index(self) -> int:
        return 1 if self.leading_partial else 0

    def _close_offset(self) -> int:
        """close(index) = t0 + index·β + offset."""
        return 0 if self.leading_partial else self.size

    def closing_within(self, start: int, end: int) -> list[WindowInstance]:
        """All windows whose closing instant lies in [start, end], in time order."""
        offset = self._close_offset()
        first = max(self.first_index, _ceil_div(start - self.t0 - offset, self.slide))
        last = (end - self.t0 - offset) // self.slide
        return [self.window(i) for i in range(first, last + 1)]

    def earliest_open_from(self, t: int) -> int:
        """The opening of the earliest window that closes at or after ``t``: no window an
        evaluation at an instant ≥ ``t`` reads opens before it (what an engine must keep)."""
        k = max(self.first_index, _ceil_div(t - self.t0 - self._close_offset(), self.slide))
        return self.window(k).open

    def closing_at(self, t: int) -> WindowInstance | None:
        """The window that closes exactly at ``t`` (at most one: all have the same slide)."""
        offset = self._close_offset()
        k, rem = divmod(t - self.t0 - offset, self.slide)
        if rem != 0 or k < self.first_index:
            return None
        return self.window(k)

    def containing(self, t: int) -> list[WindowInstance]:
        """All windows whose interval contains ``t``, earliest opening first."""
        offset = self._close_offset()
        # close = t0 + kβ + offset >= t  and  open <= t  (refined by the border test below)
        first = max(self.first_index, _ceil_div(t - self.t0 - offset, self.slide))
        result = []
        k = first
        while True:
            window = self.window(k)
            if window.open > t:
                break
            if window.contains(t):
                result.append(window)
            k += 1
        return result

    def active(self, t: int, choice: ActiveWindowChoice = ActiveWindowChoice.EARLIEST) -> WindowInstance | None:
        """SECRET Scope at instant t: the window an evaluation at t reads.

        ``earliest``: the window containing t with the earliest opening time (SECRET's
        active window). ``latest``: RSP-QL's present window, the most recently opened
        window that has not closed (o ≤ t), read as the sub-window up to t; with an
        open left border it is empty at t = o. None when there is no such window
        (before t0, or in a gap of a hopping window).
        """
        if choice is ActiveWindowChoice.EARLIEST:
            windows = self.containing(t)
            return windows[0] if windows else None
        offset = self._close_offset()
        k = (t - self.t0 - offset + self.size) // self.slide if self.leading_partial else (t - self.t0) // self.slide
        while k >= self.first_index:
            window = self.window(k)
            if window.open <= t:
                still_open = t < window.close if self.border is BorderConvention.CLOSED_OPEN else t <= window.close
                return window if still_open else None
            k -= 1
        return None

    def boundaries_between(self, start: int, end: int) -> list[int]:
        """Instants in [start, end] at which the set of windows containing t changes.

        Time is discrete (ms): an excluded opening border ``(o`` takes effect at o + 1,
        an included closing border ``c]`` is left at c + 1.
        """
        include_open = self.border is not BorderConvention.OPEN_CLOSED
        include_close = self.border is not BorderConvention.CLOSED_OPEN
        offset = self._close_offset()
        instants: set[int] = set()
        k = max(self.first_index, _ceil_div(start - self.t0 - offset - 1, self.slide))
        while True:
            window = self.window(k)
            enter = window.open if include_open else window.open + 1
            leave = window.close + 1 if include_close else window.close
            if enter > end:
                break
            for instant in (enter, leave):
                if start <= instant <= end:
                    instants.add(instant)
            k += 1
        return sorted(instants)


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)
