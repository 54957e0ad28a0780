"""Per-window quality (YABench Sect. 3.4): precision, recall, delay, sizes; gracious mode.

For window-close and content-change engines, each expected window is paired with the
engine's relation for it, and measured on *multisets* of solution mappings:
precision = |expected ∩ actual| / |actual|, recall = |expected ∩ actual| / |expected|,
with the vacuous cases defined as 1.0 (an empty actual answer has precision 1, an empty
expected answer has recall 1). Delay = the engine's emission time (ms since the run
started) − the window's expected report time (its end in application time).

Gracious mode reconstructs the borders an engine really used: it shifts the window
start, then the end, over the stream's distinct timestamps (each independently, the
other held), keeping the borders that maximise precision + recall, and repeats until
nothing improves. The reconstructed borders are reported next to the expected ones.
"""

from __future__ import annotations

import bisect
import itertools
import math
import statistics
from array import array
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Iterator, Sequence

from rsp_workbench.oracle.compare import Tolerance, compare_bags

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


@dataclass(frozen=True)
class ExpectedWindow:
    start: int
    end: int
    expected: Counter[Hashable]
    triples: int  # stream elements in the window
    report_time: int  # when a correct engine reports it (application ms)


@dataclass(frozen=True, slots=True)  # slots: a content-change run measures one per stream element
class WindowQuality:
    start: int
    end: int
    precision: float
    recall: float
    actual_size: int
    expected_size: int
    window_triples: int
    delay: int | None
    reconstructed_start: int | None = None
    reconstructed_end: int | None = None

    def oracle_line(self) -> str:
        """One ``ORACLE_*`` line: precision,recall,actual_size,expected_size,window_triples,start,end,delay."""
        delay = "" if self.delay is None else str(self.delay)
        start = self.start if self.reconstructed_start is None else self.reconstructed_start
        end = self.end if self.reconstructed_end is None else self.reconstructed_end
        return (
            f"{self.precision},{self.recall},{self.actual_size},{self.expected_size},"
            f"{self.window_triples},{start},{end},{delay}"
        )


class QualityRows(Sequence[WindowQuality]):
    """Window qualities kept as typed columns, a `WindowQuality` made for each one read: a
    content-change run over a BIG stream measures 2.1 M windows (530 MB as objects, 170 MB here)."""

    _INTS = ("start", "end", "actual_size", "expected_size", "window_triples", "delay", "reconstructed_start",
             "reconstructed_end")
    _NONE = -(2**63)  # None in an integer column (no time or size reaches it)
    _OPTIONAL = ("delay", "reconstructed_start", "reconstructed_end")

    def __init__(self, rows: Iterable[WindowQuality]) -> None:
        self._ints: dict[str, array[int]] = {name: array("q") for name in self._INTS}
        self._floats: dict[str, array[float]] = {name: array("d") for name in ("precision", "recall")}
        for row in rows:
            for name, column in self._ints.items():
                value = getattr(row, name)
                column.append(self._NONE if value is None else value)
            for name, reals in self._floats.items():
                reals.append(getattr(row, name))

    def __len__(self) -> int:
        return len(self._floats["precision"])

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        ints: dict[str, Any] = {name: None if column[index] == self._NONE else column[index]
                                for name, column in self._ints.items()}
        return WindowQuality(**ints,
                             precision=self._floats["precision"][index], recall=self._floats["recall"][index])

    def __iter__(self) -> Iterator[WindowQuality]:
        for index in range(len(self)):
            yield self[index]

    def column_batches(self, size: int) -> Iterator[dict[str, "np.ndarray"]]:
        """The columns ``size`` windows at a time, as numpy arrays (for a columnar file written in row
        groups: nothing the size of the run is copied); a column that may lack a value (``delay``,
        ``reconstructed_*``) is a masked array, masked where the value is None."""
        import numpy as np

        for start in range(0, len(self), size):
            stop = min(start + size, len(self))
            batch: dict[str, np.ndarray] = {}
            for name, column in self._ints.items():
                values = np.frombuffer(column, dtype=np.int64)[start:stop].copy()  # no export kept on the array
                missing = values == self._NONE
                batch[name] = np.ma.MaskedArray(values, mask=missing) if name in self._OPTIONAL else values
            for name, reals in self._floats.items():
                batch[name] = np.frombuffer(reals, dtype=np.float64)[start:stop].copy()
            yield batch


def precision_recall(
    expected: Counter[Hashable], actual: Counter[Hashable], tolerance: Tolerance = Tolerance()
) -> tuple[float, float]:
    _, matched = compare_bags(expected, actual, tolerance)
    actual_size, expected_size = sum(actual.values()), sum(expected.values())
    precision = matched / actual_size if actual_size else 1.0
    recall = matched / expected_size if expected_size else 1.0
    return precision, recall


def window_quality(
    windows: Iterable[ExpectedWindow], actual: Iterable[tuple[int | None, Counter[Hashable]]], **options: Any,
) -> list[WindowQuality]:
    """:func:`iter_window_quality` as a list."""
    return list(iter_window_quality(windows, iter(actual), **options))


def iter_window_quality(
    windows: Iterable[ExpectedWindow],
    actual: Iterator[tuple[int | None, Counter[Hashable]]],
    *,
    tolerance: Tolerance = Tolerance(),
    gracious: bool = False,
    expected_for: Callable[[int, int], Counter[Hashable]] | None = None,
    timestamps: Sequence[int] = (),
    max_shift: int | None = None,
    due_at: Callable[[int], float] | None = None,
) -> Iterator[WindowQuality]:
    """Measure each expected window against the engine's relation paired with it, one window
    at a time (a content-change run has one window per stream element).

    ``actual`` gives the engine's relations in emission order as (emission ms since the
    run start or None, bag); the i-th relation is paired with the i-th window. Gracious
    mode needs ``expected_for(start, end)`` (the expected bag for other borders) and the
    stream's sorted distinct ``timestamps``; shifts are bounded by ``max_shift`` (default:
    one window length). ``due_at(report_time)`` maps a window's report time (application
    ms) to when the report became due in the same clock as the emission times (ms since the
    run start); default: the identity (real time, scale 1, the stream starting with the run).
    """
    nothing: tuple[None, Counter[Hashable]] = (None, Counter())
    for window in windows:
        emitted, bag = next(actual, nothing)
        precision, recall = precision_recall(window.expected, bag, tolerance)
        due = window.report_time if due_at is None else due_at(window.report_time)
        # emission times are whole ms (the response log's resolution) while the due time is
        # sub-ms: on the same ms grid (floor), an answer within the due millisecond is 0, not −1
        delay = None if emitted is None else int(math.floor(emitted) - math.floor(due))
        start, end = window.start, window.end
        expected_size = sum(window.expected.values())
        reconstructed: tuple[int | None, int | None] = (None, None)
        if gracious and expected_for is not None and (precision < 1.0 or recall < 1.0):
            start, end, precision, recall, expected_size = _reconstruct(
                window, bag, expected_for, timestamps, max_shift, tolerance
            )
            reconstructed = (start, end)
        yield WindowQuality(
            window.start, window.end, precision, recall, sum(bag.values()), expected_size,
            window.triples, delay, *reconstructed,
        )


def _reconstruct(
    window: ExpectedWindow,
    actual: Counter[Hashable],
    expected_for: Callable[[int, int], Counter[Hashable]],
    timestamps: Sequence[int],
    max_shift: int | None,
    tolerance: Tolerance,
) -> tuple[int, int, float, float, int]:
    shift = max_shift if max_shift is not None else max(1, window.end - window.start)

    def score(start: int, end: int) -> tuple[float, float, float, int]:
        expected = expected_for(start, end)
        precision, recall = precision_recall(expected, actual, tolerance)
        return precision + recall, precision, recall, sum(expected.values())

    def candidates(center: int) -> list[int]:
        lo = bisect.bisect_left(timestamps, center - shift)
        hi = bisect.bisect_right(timestamps, center + shift)
        return sorted(set(timestamps[lo:hi]) | {center}, key=lambda t: (abs(t - center), t))

    start, end = window.start, window.end
    best = score(start, end)
    for _ in range(3):
        improved = False
        for moving_start in (True, False):
            for candidate in candidates(window.start if moving_start else window.end):
                s, e = (candidate, end) if moving_start else (start, candidate)
                if s > e:
                    continue
                trial = score(s, e)
                if trial[0] > best[0] + 1e-12:
                    best, start, end, improved = trial, s, e, True
        if not improved or best[0] >= 2.0:
            break
    return start, end, best[1], best[2], best[3]


@dataclass(frozen=True)
class Spread:
    mean: float
    stdev: float
    minimum: float
    q1: float
    median: float
    q3: float
    maximum: float

    @classmethod
    def of(cls, values: Iterable[float]) -> "Spread":
        data = sorted(values)
        if not data:
            nan = float("nan")
            return cls(nan, nan, nan, nan, nan, nan, nan)
        if len(data) == 1:
            v = data[0]
            return cls(v, 0.0, v, v, v, v, v)
        q1, median, q3 = statistics.quantiles(data, n=4, method="inclusive")
        return cls(statistics.fmean(data), statistics.stdev(data), data[0], q1, median, q3, data[-1])


def aggregate_runs(runs: Sequence[Sequence[WindowQuality]]) -> list[dict[str, Spread]]:
    """Per window across repeated runs: spread of precision, recall and delay (boxplot data)."""
    count = max((len(run) for run in runs), default=0)
    summary = []
    for index in range(count):
        rows = [run[index] for run in runs if index < len(run)]
        summary.append({
            "precision": Spread.of(r.precision for r in rows),
            "recall": Spread.of(r.recall for r in rows),
            "delay": Spread.of(r.delay for r in rows if r.delay is not None),
        })
    return summary


def boxplots_text(engine: str, runs: Sequence[Sequence[WindowQuality]]) -> str:
    """``BOXPLOTS_*``: the engine name, then per window ``precisions;recalls;delays`` over runs."""
    return "".join(boxplots_lines(engine, [[w.oracle_line() for w in run] for run in runs]))


def boxplots_lines(engine: str, runs: Sequence[Iterable[str]]) -> Iterator[str]:
    """``BOXPLOTS_*`` line by line from each run's ``ORACLE_*`` lines, read in step (one window of
    every run held at a time, so the runs' files can be as long as the stream)."""
    yield engine + "\n"
    for lines in itertools.zip_longest(*runs):
        rows = [line.rstrip("\n").split(",") for line in lines if line is not None]
        precisions = ",".join(row[0] for row in rows)
        recalls = ",".join(row[1] for row in rows)
        delays = ",".join(row[7] for row in rows if row[7])
        yield f"{precisions};{recalls};{delays}\n"
