"""Window timeline data, without Qt: stream lanes, per-view binning, windows in range.

Millions of elements stay fluid because nothing per element is drawn: all lanes share one
int64 array sorted by (lane, time), so a view's counts per lane and pixel bucket come from
a single ``np.searchsorted`` of integer bucket edges (O(lanes · buckets · log n), however
many elements are visible; integer keys matter, since a float key makes numpy convert the
whole array on every call). Individual elements are drawn only when few are in view.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence, cast

import numpy as np

from rsp_workbench.core.windows import WindowInstance, WindowSpec, content_range
from rsp_workbench.streams.model import StreamElement

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
    """Per lane the sorted int64 times, plus (optionally) the elements for the side panel.

    ``times[i]`` are views into one lane-major array; ``all_times`` is every element in time order.
    """

    names: list[str]
    times: list[np.ndarray]
    elements: Sequence[StreamElement] | None = None
    all_times: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    _index: tuple[np.ndarray, int, int] | None = field(default=None, init=False, repr=False, compare=False)

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
        lanes = np.asarray(lanes, dtype=np.int64)
        order = np.lexsort((times, lanes))  # lane-major, time within a lane
        grouped = times[order]
        bounds = np.searchsorted(lanes[order], np.arange(len(names) + 1))
        per_lane = [grouped[bounds[i]:bounds[i + 1]] for i in range(len(names))]
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

    def _keys(self) -> tuple[np.ndarray, int, int]:
        """(keys, base, stride): key = lane·stride + (t − base), sorted, so one search covers all lanes."""
        if self._index is None:
            base, last = self.span if self.count else (0, 0)
            stride = last - base + 2
            keys = np.concatenate(
                [np.asarray(t, dtype=np.int64) - base + lane * stride for lane, t in enumerate(self.times)]
                or [np.zeros(0, dtype=np.int64)])
            self._index = (keys, base, stride)
        return self._index

    def _positions(self, edges: np.ndarray) -> np.ndarray:
        """Per lane (rows), the number of the lane's elements before each integer edge (columns)."""
        keys, base, stride = self._keys()
        local = np.clip(np.asarray(edges, dtype=np.float64) - base, 0, stride - 1).astype(np.int64)
        queries = local[None, :] + (np.arange(len(self.times), dtype=np.int64) * stride)[:, None]
        starts = np.searchsorted(keys, np.arange(len(self.times), dtype=np.int64) * stride)
        return np.searchsorted(keys, queries.ravel()).reshape(queries.shape) - starts[:, None]

    def bin_counts(self, lo: float, hi: float, buckets: int) -> tuple[np.ndarray, np.ndarray]:
        """Bucket edges over [lo, hi] and each lane's element count per bucket [edge_i, edge_i+1) (lanes × buckets)."""
        buckets = max(1, int(buckets))
        edges = np.linspace(lo, hi, buckets + 1)
        if not self.times:
            return edges, np.zeros((0, buckets), dtype=np.int64)
        # t < e ⇔ t < ceil(e) for integer times: search integer keys only
        return edges, np.diff(self._positions(np.ceil(edges)), axis=1)

    def visible(self, lo: float, hi: float) -> list[tuple[int, int]]:
        """Per lane, positions [a, b) of the elements with lo ≤ t ≤ hi."""
        if not self.times:
            return []
        edges = np.array([np.ceil(lo), np.floor(hi) + 1])  # lo ≤ t ⇔ ceil(lo) ≤ t; t ≤ hi ⇔ t < floor(hi) + 1
        positions = self._positions(edges)
        return [(int(a), int(max(a, b))) for a, b in positions]

    def window_positions(self, window: WindowInstance) -> tuple[int, int]:
        """Positions [lo, hi) in the time-sorted element list inside the window (its border convention)."""
        # a sorted numpy array answers bisection like the sequence content_range is typed for
        return content_range(cast(Sequence[int], self.all_times), window.open, window.close, window.border)


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
