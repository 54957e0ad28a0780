"""YABench's result files, read (docs/design/FORMATS.md "Results out"): ``ORACLE_*``, ``BOXPLOTS_*``, ``P_*``.

The workbench writes these files into its own bundles (``yabench/``, ``runs/*/P_*.csv``)
and YABench's runner writes them into its test folders (:mod:`rsp_workbench.results.published`);
both are read here, so that published and own results go through one parser each. YABench's
published files put the engine name on the first line of ``BOXPLOTS_*`` and ``P_*``; the
workbench's ``P_*.csv`` starts with the CSV header: both are accepted.
"""

from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from rsp_workbench.errors import UserError

#: ``ORACLE_*`` columns, one line per window (docs/design/FORMATS.md).
ORACLE_COLUMNS = ("precision", "recall", "actual_size", "expected_size", "window_triples", "start", "end", "delay")
#: ``P_*`` columns the views use (the header also has ``mem_percent``).
P_COLUMNS = ("time", "rss_mem", "cpu_percent", "threads")
P_HEADER = "time,rss_mem,cpu_percent,mem_percent,threads"


@dataclass(frozen=True)
class OracleLines:
    """An ``ORACLE_*`` file as columns; ``delay`` is NaN where the file leaves it empty (the
    window was not reported)."""

    engine: str  # the first line when the file names the engine, else ""
    columns: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.columns["start"])

    def mean(self, column: str) -> float | None:
        """The mean over the windows (None for a file without windows)."""
        values = self.columns[column]
        return round(float(np.mean(values)), 6) if len(values) else None


def parse_oracle(text: str, *, file: str | None = None) -> OracleLines:
    """Parse ``precision,recall,actual,expected,triples,start,end,delay`` lines (an optional
    first line naming the engine is accepted)."""
    fast = _parse_oracle_columnar(text)
    if fast is not None:
        return fast
    values: dict[str, list[float]] = {c: [] for c in ORACLE_COLUMNS}
    engine = ""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        if number == 1 and len(fields) == 1 and not _is_number(fields[0]):
            engine = fields[0]
            continue
        if len(fields) not in (7, 8):
            raise UserError(f"expected 8 comma-separated fields ({','.join(ORACLE_COLUMNS)}), found {len(fields)}",
                            file=file, line=number)
        fields += [""] * (8 - len(fields))
        for column, field in zip(ORACLE_COLUMNS, fields):
            if column == "delay" and field == "":
                values[column].append(math.nan)
                continue
            try:
                values[column].append(float(field))
            except ValueError:
                raise UserError(f"not a number: {field!r}", file=file, line=number, field=column) from None
    return OracleLines(engine, {c: np.asarray(v, dtype=float) for c, v in values.items()})


def _parse_oracle_columnar(text: str) -> OracleLines | None:
    """An ``ORACLE_*`` file of plain ``a,b,…,delay`` lines through Arrow's CSV reader (a
    content-change run has a line per stream element: millions); None for anything else
    (spaces, 7 fields, a bad number), which :func:`parse_oracle` then reads line by line and
    locates."""
    import pyarrow as pa
    from pyarrow import csv as arrow_csv

    head, _, rest = text.partition("\n")
    engine = ""
    if head.strip() and "," not in head and not _is_number(head.strip()):
        engine, text = head.strip(), rest
    if not text.strip():
        return None
    try:
        table = arrow_csv.read_csv(
            pa.py_buffer(text.encode("utf-8")),
            read_options=arrow_csv.ReadOptions(column_names=list(ORACLE_COLUMNS), use_threads=False),
            convert_options=arrow_csv.ConvertOptions(column_types={c: pa.float64() for c in ORACLE_COLUMNS},
                                                     null_values=[""], strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):
        return None
    if any(table.column(c).null_count for c in ORACLE_COLUMNS if c != "delay"):
        return None  # an empty field that must hold a number: the line-by-line parser names it
    columns = {c: table.column(c).to_numpy(zero_copy_only=False).astype(float, copy=False) for c in ORACLE_COLUMNS}
    return OracleLines(engine, columns)


def parse_oracle_borders(text: str, *, file: str | None = None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The window borders (start, end in ms) of an ``ORACLE_*`` file."""
    lines = parse_oracle(text, file=file)
    return _shared_ints(lines.columns["start"]), _shared_ints(lines.columns["end"])


def _shared_ints(values: np.ndarray) -> tuple[int, ...]:
    """``tuple(int(v) for v in values)`` with one int object per distinct value (a content-change
    run's millions of lines share a few window borders)."""
    distinct, inverse = np.unique(values.astype(np.int64), return_inverse=True)
    return tuple(np.asarray(distinct.tolist(), dtype=object)[inverse])


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def window_positions(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Where per-window values are drawn on the time axis (ms): at the window's end; the
    evaluations of one window by a content-change engine (consecutive lines with the same
    borders) spread evenly across it, the last at its end, so that they do not pile up.

    Vectorised: a content-change run has one line per stream element (millions)."""
    start = np.asarray(start)
    end = np.asarray(end)
    count = len(end)
    if not count:
        return np.asarray(end, dtype=float).copy()
    heads = np.flatnonzero(np.r_[True, (start[1:] != start[:-1]) | (end[1:] != end[:-1])])
    sizes = np.diff(np.r_[heads, count])
    group = np.repeat(np.arange(len(heads)), sizes)
    rank = np.arange(1, count + 1) - heads[group]
    width = (end[heads] - start[heads]).astype(float)[group]
    x = start[heads][group] + width * rank / sizes[group]
    single = sizes[group] == 1
    x[single] = np.asarray(end, dtype=float)[single]
    return np.asarray(x, dtype=float)


def first_of_each_pair(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The indices where each distinct (first, second) pair occurs first, in order (e.g. the
    distinct window borders of a run's millions of evaluations)."""
    first, second = np.asarray(first), np.asarray(second)
    if not len(first):
        return np.zeros(0, dtype=np.int64)
    heads = np.flatnonzero(np.r_[True, (first[1:] != first[:-1]) | (second[1:] != second[:-1])])
    _, where = np.unique(np.stack([first[heads], second[heads]], axis=1), axis=0, return_index=True)
    return heads[np.sort(where)]


@dataclass(frozen=True)
class WindowBoxplots:
    """YABench ``BOXPLOTS_*``: per window, precision/recall/delay over the repetitions.

    ``case`` and ``query`` say which run group the boxplots belong to (the case index and
    query id of a workbench bundle; None and the test name for a published YABench test).
    """

    group: str  # where it came from: the yabench/ sub-folder (``case0-q1``) or the test folder
    engine: str
    precision: tuple[tuple[float, ...], ...]
    recall: tuple[tuple[float, ...], ...]
    delay: tuple[tuple[float, ...], ...]
    start: tuple[int, ...] = ()  # the window borders (ms) of each line, from an ORACLE_ file, if present
    end: tuple[int, ...] = ()
    case: object = None
    query: object = None

    def positions(self) -> np.ndarray | None:
        """Time-axis positions (ms) as ``window_positions``, or None when the borders are unknown."""
        if len(self.start) != len(self.precision) or not self.start:
            return None
        return window_positions(np.asarray(self.start), np.asarray(self.end))

    @property
    def repetitions(self) -> int:
        return max(map(len, self.precision), default=0)  # map: millions of windows, asked on the GUI thread

    def metric(self, name: str) -> tuple[tuple[float, ...], ...]:
        return {"precision": self.precision, "recall": self.recall, "delay": self.delay}[name]


def parse_boxplots(text: str, *, group: str = "", file: str | None = None) -> WindowBoxplots:
    """Parse a ``BOXPLOTS_*`` file (docs/design/FORMATS.md: the engine name, then ``precisions;recalls;delays``)."""
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise UserError("empty BOXPLOTS file (the first line must name the engine)", file=file, line=1)
    metrics: tuple[list[tuple[float, ...]], ...] = ([], [], [])
    parsed: dict[str, tuple[float, ...]] = {}  # one tuple per distinct text: most windows repeat (1.0 of every run)
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        parts = line.split(";")
        if len(parts) != 3:
            raise UserError(f"expected precisions;recalls;delays, found {len(parts)} field(s)", file=file, line=number)
        for name, part, values in zip(("precisions", "recalls", "delays"), parts, metrics):
            numbers = parsed.get(part)
            if numbers is None:
                try:
                    numbers = parsed[part] = tuple(float(v) for v in part.split(",") if v.strip())
                except ValueError:
                    raise UserError(f"not a number in {part!r}", file=file, line=number, field=name) from None
            values.append(numbers)
    precision, recall, delay = (tuple(m) for m in metrics)
    return WindowBoxplots(group, lines[0].strip(), precision, recall, delay)


@dataclass(frozen=True)
class ResourceSeries:
    """One run's ``P_*`` samples: time (s since engine start), RSS (MiB), CPU (% of one core), threads."""

    run_id: str
    engine: str
    time_s: np.ndarray
    rss_mb: np.ndarray
    cpu_percent: np.ndarray
    threads: np.ndarray

    @property
    def peak_rss_mb(self) -> float | None:
        return round(float(self.rss_mb.max()), 3) if len(self.rss_mb) else None


def parse_performance(text: str, *, run_id: str = "", engine: str = "", file: str | None = None) -> ResourceSeries:
    """Parse performance samples (header ``time,rss_mem,cpu_percent,mem_percent,threads``; a first
    line naming the engine, as YABench's published ``P_*`` files have, is accepted and names it)."""
    lines = text.splitlines(keepends=True)
    offset = 0
    if lines and "," not in lines[0] and lines[0].strip():
        engine = engine or lines[0].strip()
        offset = 1
    reader = csv.reader(io.StringIO("".join(lines[offset:])))
    header = next(reader, None)
    if header is None:
        raise UserError("empty performance file (expected a header line)", file=file, line=1 + offset)
    header = [h.strip() for h in header]
    missing = [c for c in P_COLUMNS if c not in header]
    if missing:
        raise UserError(f"header lacks {', '.join(missing)} (expected {P_HEADER})", file=file, line=1 + offset)
    index = {c: header.index(c) for c in P_COLUMNS}
    values: dict[str, list[float]] = {c: [] for c in P_COLUMNS}
    for number, record in enumerate(reader, start=2 + offset):
        if not record:
            continue
        for column, position in index.items():
            try:
                values[column].append(float(record[position]))
            except (ValueError, IndexError):
                raise UserError(f"not a number: {record[position] if position < len(record) else '(missing)'!r}",
                                file=file, line=number, field=column) from None
    return ResourceSeries(run_id, engine, *(np.asarray(values[c], dtype=float) for c in P_COLUMNS))


def first_line(path: str | os.PathLike[str]) -> str:
    """The first line of a file (the engine name of a published ``BOXPLOTS_``/``P_`` file); "" if unreadable."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.readline().strip()
    except (OSError, UnicodeDecodeError):
        return ""


__all__: Sequence[str] = (
    "ORACLE_COLUMNS", "OracleLines", "P_COLUMNS", "ResourceSeries", "WindowBoxplots", "first_line", "parse_boxplots",
    "parse_oracle", "parse_oracle_borders", "parse_performance", "window_positions",
)
