"""Window timeline data, without Qt: stream lanes, per-view binning, windows in range.

Millions of elements stay fluid because nothing per element is drawn: each lane keeps its
sorted timestamps as an int64 array, and a view asks for counts per bucket with one
``np.searchsorted`` over the bucket edges (O(buckets · log n), independent of how many
elements are visible). Individual elements are drawn only when few are in view.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from workbench.core.windows import WindowInstance, WindowSpec
from workbench.streams.model import StreamElement

MAX_LANES = 24
_STATION = re.compile(r"_([A-Za-z]*\d+)(?:_\d+)?$")


def lane_key(subject: str) -> str:
    """The lane of an element: its station id (``…_A12_1000`` → ``A12``) or its subject's local name."""
    text = subject.strip("<>")
    local = re.split(r"[/#]", text)[-1] or text
    match = _STATION.search(local)
    return match.group(1) if match else local


def namespace_key(subject: str) -> str:
    text = subject.strip("<>")
    cut = max(text.rfind("/"), text.rfind("#"))
    return text[: cut + 1] if cut > 0 else text


@dataclass
class StreamLanes:
    """One sorted int64 time array per lane, plus (optionally) the elements for the side panel."""

    names: list[str]
    times: list[np.ndarray]
    elements: Sequence[StreamElement] | None = None
    all_times: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def count(self) -> int:
        return int(sum(len(t) for t in self.times))

    @property
    def span(self) -> tuple[int, int]:
        if not len(self.all_times):
            return (0, 1)
        return int(self.all_times[0]), int(self.all_times[-1])

    @classmethod
    def from_arrays(cls, times: np.ndarray, lanes: np.ndarray, names: Sequence[str],
                    elements: Sequence[StreamElement] | None = None) -> "StreamLanes":
        """Times (any order within a lane is sorted here) and a lane index per element."""
        times = np.asarray(times, dtype=np.int64)
        lanes = np.asarray(lanes)
        per_lane = [np.sort(times[lanes == i]) for i in range(len(names))]
        return cls(list(names), per_lane, elements, np.sort(times))

    @classmethod
    def from_elements(cls, elements: Sequence[StreamElement]) -> "StreamLanes":
        """Group by station id / subject; more than ``MAX_LANES`` groups fall back to namespaces."""
        cache: dict[str, str] = {}
        keys = []
        for element in elements:
            # ``…_A12_1000>``: the part before a trailing ``_<time>`` names the station; cache it
            head, _, tail = element.subject.rpartition("_")
            prefix = head if tail.rstrip(">").isdigit() else element.subject
            key = cache.get(prefix)
            if key is None:
                key = cache[prefix] = lane_key(element.subject)
            keys.append(key)
        distinct = list(dict.fromkeys(keys))
        if len(distinct) > MAX_LANES:
            keys = [namespace_key(e.subject) for e in elements]
            distinct = list(dict.fromkeys(keys))
            if len(distinct) > MAX_LANES:
                keys = ["stream"] * len(elements)
                distinct = ["stream"]
        index = {name: i for i, name in enumerate(distinct)}
        lanes = np.fromiter((index[k] for k in keys), dtype=np.int32, count=len(keys))
        times = np.fromiter((e.t for e in elements), dtype=np.int64, count=len(elements))
        return cls.from_arrays(times, lanes, distinct, elements)

    def bin_counts(self, lo: float, hi: float, buckets: int) -> tuple[np.ndarray, list[np.ndarray]]:
        """Bucket edges over [lo, hi] and each lane's element count per bucket."""
        buckets = max(1, int(buckets))
        edges = np.linspace(lo, hi, buckets + 1)
        counts = [np.diff(np.searchsorted(t, edges, side="left")) for t in self.times]
        return edges, counts

    def visible(self, lo: float, hi: float) -> list[tuple[int, int]]:
        """Per lane, positions [a, b) of the elements with lo ≤ t ≤ hi."""
        return [(int(np.searchsorted(t, lo, "left")), int(np.searchsorted(t, hi, "right"))) for t in self.times]

    def window_positions(self, window: WindowInstance) -> tuple[int, int]:
        """Positions [lo, hi) in the time-sorted element list inside the window (its border convention)."""
        from workbench.core.semantics import BorderConvention

        times = self.all_times
        left = "right" if window.border is BorderConvention.OPEN_CLOSED else "left"
        right = "left" if window.border is BorderConvention.CLOSED_OPEN else "right"
        lo = int(np.searchsorted(times, window.open, left))
        hi = int(np.searchsorted(times, window.close, right))
        return lo, max(lo, hi)


def windows_in_range(spec: WindowSpec, lo: float, hi: float, limit: int = 2000) -> list[WindowInstance]:
    """Windows that overlap [lo, hi], at most ``limit`` (None drawn when there are more)."""
    start = int(lo)
    end = int(hi) + spec.size
    estimated = (end - start) // spec.slide + 1
    if estimated > limit:
        return []
    return [w for w in spec.closing_within(start, end) if w.open <= hi and w.close >= lo]


def sorted_elements(elements: Iterable[StreamElement]) -> list[StreamElement]:
    items = list(elements)
    if any(items[i].t > items[i + 1].t for i in range(len(items) - 1)):
        items.sort(key=lambda e: e.t)
    return items
