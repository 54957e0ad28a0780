"""Stream files read by Spark's executors, partitioned by file ranges: the oracle job's sources.

The driver lists ranges and learns a few numbers per range; it never reads the stream:

* YABench text and time-graph N-Quads are cut into byte ranges of `RANGE_BYTES`; a range
  holds the lines whose first byte lies in it. With ``on_disorder="error"`` (the default) one
  job parses every range on its own (`read_range`, with the Python readers' own code:
  `read_yabench_columns` on the range's bytes, `read_nquads_part`), its lines and positions
  numbered from its start; each range's positions are then offset by the elements before it
  where the frame is read (`_single_pass_parts`), and the first range in the file whose parse
  failed, or whose first element is older than the last one before it, is parsed again with its
  place known (`write_range`), which raises the Python reader's file:line error there. With
  ``warn`` a first job counts each range's lines and elements and reads the time of its first
  and last element line and the steps back inside it (`count_range`); the driver sums them into
  each range's first line number, first element position and the time before it, and the second
  job (`write_range`) parses every range knowing them.
  Each task writes its elements as a Parquet part file (PySpark hands Arrow batches to the
  JVM only through pandas, which the workbench does not need), with the query's predicates a
  row group per predicate (`_by_predicate`: a pattern's scan skips the others), and Spark reads
  the parts as one DataFrame, a partition per range; `release` removes them. A ``.gz`` file is first
  unpacked by one task into the scratch folder (`unpack`: gzip reads from its start only),
  then cut into ranges like any other; messages name the ``.gz`` file and its lines.
* The CSRBench oracle layout of N-Quads (a named graph per timestamp) in the same byte ranges,
  in the Python reader's two passes: `rsp_workbench.pipeline.graph_stream_sources`.
* A CSRBench directory: a task per ``data_NN.ttl`` file (`read_csrbench_file`), its elements
  counted first for their positions.
* Parquet: Spark's own reader; a job first checks the row groups as `read_parquet` does (no
  nulls, N-Triples term starts, time order by row).

The frame is ``(s, p, o, t, pos)``, ``pos`` the element's position in the time-ordered stream
(with ``on_disorder="warn"``: sorted by time, stable, as the Python readers' callers do; a
global sort, range-partitioned, then per-partition offsets: `ranked`).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from rsp_workbench.errors import UserError
from rsp_workbench.pipeline.stream_parts import (
    RANGED_PART_SCHEMA,
    frame_batch,
    line_count,
    parts_frame,
    range_lines,
    ranked,
    run_tasks,
    write_part,
)
from rsp_workbench.streams.model import StreamSource
from rsp_workbench.streams.reader_common import ReadReport, decoded

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

RANGE_BYTES = 32 << 20  # a task's share of a text stream (~160,000 YABench lines)
# a line that may hold no element starts after one of these (one regex scan: 5 substring searches took 12×)
_MAYBE_SKIP = re.compile(rb"\n[\n# \t\r]")
_SKIP_BYTES = re.compile(rb"[ \t]*(?:#.*)?\r?")


@dataclass(frozen=True)
class RangeCount:
    """What the first pass learns of a range of a text stream (lines 1-based within it)."""

    lines: int
    elements: int
    first_time: int | None  # of the first element line (None: no element, or not well-formed)
    first_time_line: int
    last_time: int | None  # of the last element line
    disorders: int = 0  # ``warn``: steps back inside the range
    first_disorder_line: int | None = None
    first_disorder: tuple[int, int] | None = None  # (t, previous t)
    digest: str = ""  # of its bytes: the stream's identity for the oracle's cache, read where they are read


@dataclass(frozen=True)
class RangeRead:
    """A range parsed on its own (``on_disorder="error"``, `read_range`: lines numbered from 1 and
    positions from 0 within it): its lines and elements, the times of its first and last element,
    its bytes' digest and the distinct times of its elements with their counts. ``failed``: its
    parse raised (a malformed line, time going back inside it); the driver then parses it again
    with its place in the file known (`write_range`), so that the message names the file's line."""

    lines: int
    elements: int
    first_time: int | None
    last_time: int | None
    digest: str
    times: list[int]
    counts: list[int]
    failed: bool = False


# --- on the executors -----------------------------------------------------------------------------


def byte_ranges(path: str, step: int | None = None) -> list[tuple[int, int]]:
    """``[start, end)`` byte ranges of ``step`` (default `RANGE_BYTES`) covering the file (a
    ``.gz`` file is unpacked first, `unpack`)."""
    step = step or RANGE_BYTES
    size = os.path.getsize(path)
    return [(start, min(start + step, size)) for start in range(0, size, step)]


def _lines(data: bytes) -> list[bytes]:
    pieces = data.split(b"\n")
    if data.endswith(b"\n"):
        pieces.pop()
    return pieces


def _range_digest(data: bytes) -> str:
    """A range's bytes' identity: SHA-256 (the CPUs' SHA instructions: twice blake2b's speed)."""
    return hashlib.sha256(data).hexdigest()[:32]


def _stream_digest(range_digests: Iterable[str]) -> str:
    """The stream's identity for the oracle's cache: a digest of its ranges' digests, in file order."""
    return _range_digest(b"".join(bytes.fromhex(digest) for digest in range_digests))


def _time_of(line: bytes, fmt: str) -> int | None:
    from rsp_workbench.streams.readers import element_time

    try:
        return element_time(line.decode("utf-8"), fmt)
    except UnicodeDecodeError:
        return None


def unpack(path: str, target: str) -> int:
    """Task: a ``.gz`` stream unpacked into ``target`` (one task: gzip is read from its start), so
    that its ranges are parsed in parallel like any text stream's; its size in bytes."""
    with gzip.open(path, "rb") as packed, open(target, "wb") as out:
        while True:
            try:
                block = packed.read(16 << 20)
            except (OSError, EOFError) as error:  # truncated or corrupt .gz: as the Python readers say it
                raise UserError(f"cannot read stream: {error}", file=path) from None
            if not block:
                return out.tell()
            try:
                out.write(block)
            except OSError as error:  # e.g. a full disk
                raise UserError(f"cannot unpack the stream into the scratch folder: {error}", file=target) from None


def count_range(path: str, fmt: str, on_disorder: str, bounds: tuple[int, int], data_path: str | None = None
                ) -> RangeCount:
    """Lines, elements and first/last element time of a range, from its bytes (no parsing); with
    ``warn`` also the steps back inside it (parsed: its lines' numbers are not known yet)."""
    data = range_lines(path, *bounds, data_path=data_path)
    digest = _range_digest(data)
    if not data:
        return RangeCount(0, 0, None, 0, None, digest=digest)
    lines = line_count(data)
    skips: set[int] = set()
    if data[:1] in (b"#", b" ", b"\t", b"\r", b"\n") or _MAYBE_SKIP.search(data):
        skips = {i for i, line in enumerate(_lines(data)) if _SKIP_BYTES.fullmatch(line)}
    first = last = None
    index = next((i for i in range(lines) if i not in skips), 0)
    if lines > len(skips):
        cut = data.find(b"\n")
        head = (data if cut < 0 else data[:cut]) if index == 0 else _lines(data)[index]
        first = _time_of(head, fmt)
        tail = _lines(data[-(1 << 20):]) if len(data) > 1 << 20 else _lines(data)
        last = next((_time_of(line, fmt) for line in reversed(tail) if not _SKIP_BYTES.fullmatch(line)), None)
    count = RangeCount(lines, lines - len(skips), first, index + 1, last, digest=digest)
    if on_disorder != "warn" or not count.elements:
        return count
    report = ReadReport()
    try:
        for _ in _parse(path, fmt, "warn", data, 1, 0, None, report):
            pass
    except UserError:
        return count  # the second pass names the line
    return replace(count, disorders=report.disorders, first_disorder_line=report.first_disorder_line,
                   first_disorder=report.first_disorder)


def _parse(path: str, fmt: str, on_disorder: str, data: bytes, first_line: int, first_pos: int,
           last_time: int | None, report: ReadReport | None = None, predicates: frozenset[str] | None = None,
           times: list[Any] | None = None) -> Iterator["pa.RecordBatch"]:
    """A range's elements as ``(s, p, o, t, pos)`` batches (``warn``: sorted by time inside the range);
    with ``predicates``, only the elements with one of them, at their positions among all; ``times``
    receives the times of all its elements (arrays), with or without ``predicates``."""
    import numpy as np

    from rsp_workbench.oracle.columnar import read_yabench_columns
    from rsp_workbench.streams.nquads_reader import read_nquads_part

    if fmt == "yabench":  # the bytes themselves: Arrow checks they are UTF-8
        columns = read_yabench_columns(path, predicates, on_disorder=on_disorder,  # type: ignore[arg-type]
                                       report=report, text=data, first_line=first_line, last_time=last_time)
        if times is not None:
            times.append(columns.times)
        table = columns.table.combine_chunks()
        pos = table["pos"].to_numpy()
        yield frame_batch(table["s"], table["p"], table["o"], columns.times[pos], pos + first_pos)
        return
    text = io.StringIO(decoded(data, path, first_line))
    elements: Iterable[Any] = read_nquads_part(path, text, first_line=first_line, last_time=last_time,
                                               on_disorder=on_disorder, report=report)  # type: ignore[arg-type]
    if on_disorder == "warn":
        elements = sorted(elements, key=lambda element: element.t)
    if times is not None:
        elements = list(elements)
        times.append(np.fromiter((element.t for element in elements), np.int64, len(elements)))
    yield from _element_batches(elements, first_pos, predicates=predicates)


def _element_batches(elements: Iterable[Any], first_pos: int, size: int = 1 << 16,
                     predicates: frozenset[str] | None = None) -> Iterator["pa.RecordBatch"]:
    """``(s, p, o, t)`` tuples (stream elements) as batches, positions from ``first_pos``; with
    ``predicates``, only the elements with one of them (positions still count every element)."""
    from itertools import islice

    iterator = iter(elements)
    position = first_pos
    while chunk := list(islice(iterator, size)):
        positions: Sequence[int] = range(position, position + len(chunk))
        position += len(chunk)
        if predicates is not None:
            kept = [i for i, element in enumerate(chunk) if element[1] in predicates]
            chunk, positions = [chunk[i] for i in kept], [positions[i] for i in kept]
        s, p, o, t = ([e[i] for e in chunk] for i in range(4))
        yield frame_batch(s, p, o, t, positions)


def _by_predicate(batches: Iterable["pa.RecordBatch"], query: frozenset[str] | None) -> Iterator["pa.RecordBatch"]:
    """With the ``query``'s predicates, the batches' rows grouped by predicate (in position order), a batch
    each: a row group of its own (`write_part`), whose statistics let a pattern's scan skip the
    others' instead of decoding their terms (joins 46 s -> 38 s at 10× YABench BIG)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if query is None:
        yield from batches
        return
    table = pa.Table.from_batches(list(batches)).combine_chunks()
    if not table.num_rows:
        return
    table = table.take(pc.sort_indices(table, [("p", "ascending"), ("pos", "ascending")]))
    predicates = table.column("p").chunk(0)
    changes = pc.not_equal(predicates.slice(1), predicates.slice(0, len(predicates) - 1))
    cuts = [0, *(np.flatnonzero(changes.to_numpy(zero_copy_only=False)) + 1).tolist(), len(predicates)]
    for begin, end in zip(cuts, cuts[1:]):
        yield from table.slice(begin, end - begin).to_batches()


def read_range(path: str, fmt: str, scratch: str, bounds: tuple[int, int, int], data_path: str | None = None,
               predicates: frozenset[str] | None = None) -> RangeRead:
    """Task: parse one range (index, start, end) on its own into its part file, positions its own
    (``on_disorder="error"``: the single pass over the file, `_single_pass_parts`)."""
    import numpy as np

    index, start, end = bounds
    data = range_lines(path, start, end, data_path=data_path)
    digest = _range_digest(data)
    lines = line_count(data)
    times: list[Any] = []
    try:
        batches = _parse(path, fmt, "error", data, 1, 0, None, predicates=predicates, times=times)
        write_part(scratch, index, _by_predicate(batches, predicates), ranged=True)
    except UserError:
        return RangeRead(lines, 0, None, None, digest, [], [], failed=True)
    every = np.concatenate(times) if times else np.empty(0, np.int64)  # in line order
    distinct, counts = np.unique(every, return_counts=True)
    first, last = (int(every[0]), int(every[-1])) if len(every) else (None, None)
    return RangeRead(lines, len(every), first, last, digest, distinct.tolist(), counts.tolist())


def write_range(path: str, fmt: str, on_disorder: str, scratch: str, plan: tuple[int, int, int, int, int, int | None],
                data_path: str | None = None, predicates: frozenset[str] | None = None
                ) -> tuple[list[int], list[int]]:
    """Task: parse one planned range (index, start, end, first line, first position, the time of the
    element before it or None) into its part file (with ``predicates``: only the elements the query
    can read); returns the distinct times of all its elements and how many each has, so that the
    driver knows the stream's timeline without another pass over it."""
    import numpy as np

    index, start, end, first_line, first_pos, last_time = plan
    data = range_lines(path, start, end, data_path=data_path)
    times: list[Any] = []
    batches = _parse(path, fmt, on_disorder, data, first_line, first_pos, last_time, predicates=predicates, times=times)
    write_part(scratch, index, _by_predicate(batches, predicates))
    distinct, counts = np.unique(np.concatenate(times) if times else np.empty(0, np.int64), return_counts=True)
    return distinct.tolist(), counts.tolist()


def csrbench_count(interval_ms: int, item: tuple[int, str]) -> int:
    """Task: the elements of one ``data_NN.ttl`` (parsed; kept parsed for the second pass)."""
    from rsp_workbench.streams.csrbench_reader import read_csrbench_file

    return len(read_csrbench_file(item[0], Path(item[1]), interval_ms)[1])


def write_csrbench_file(interval_ms: int, scratch: str, plan: tuple[int, int, str, int]) -> int:
    """Task: one ``data_NN.ttl`` (index, NN, path, first position) into its part file."""
    from rsp_workbench.streams.csrbench_reader import read_csrbench_file

    index, number, file, first_pos = plan
    t, triples = read_csrbench_file(number, Path(file), interval_ms)
    return write_part(scratch, index, _element_batches(((s, p, o, t) for s, p, o in triples), first_pos))


def check_row_groups(path: str, on_disorder: str,
                     groups: Iterable[int]) -> list[tuple[int, int, int, int, int, int, int, int]]:
    """Task: `read_parquet`'s checks on some row groups of a Parquet stream (rows named from 1);
    per row group its first row, last row, first and last time, the steps back inside it and the
    first of them (its row, its time, the time before it; zeros when there is none)."""
    import numpy as np
    import pyarrow.parquet as pq

    from rsp_workbench.streams.parquet import READ_ERRORS, arrow_message, check_batch

    found = []
    try:
        with pq.ParquetFile(path, page_checksum_verification=True) as parquet:
            metadata = parquet.metadata
            for group in groups:
                first = sum(metadata.row_group(g).num_rows for g in range(group))
                table = parquet.read_row_group(group, columns=["subject", "predicate", "object", "t"])
                if not table.num_rows:
                    continue
                row = first + 1
                for batch in table.to_batches():
                    check_batch(batch, row, path)
                    row += batch.num_rows
                times = table.column("t").to_numpy()
                back = np.flatnonzero(times[1:] < times[:-1])
                if on_disorder == "error" and len(back):
                    k = int(back[0]) + 1
                    raise UserError(f"time goes backwards: {int(times[k])} after {int(times[k - 1])}", file=path,
                                    field=f"row {first + k + 1}")
                step = (first + int(back[0]) + 2, int(times[back[0] + 1]), int(times[back[0]])) if len(back) else (0, 0, 0)
                found.append((first, first + len(times) - 1, int(times[0]), int(times[-1]), len(back), *step))
    except READ_ERRORS as error:
        raise UserError(f"cannot read Parquet data ({arrow_message(error)})", file=path) from None
    return found


# --- on the driver --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SparkStream:
    """A stream as the oracle job reads it: the frame, the folder of part files the executors wrote
    (None: read from the stream file itself; `release` removes it), what its reading saw (``warn``:
    the steps back in time, for the caller to report once) and, when the parsing tasks counted them,
    the distinct times of all its elements with their counts (``(times, counts)``; None: count them
    in the frame, which then holds every element)."""

    frame: "DataFrame"
    report: ReadReport
    scratch: str | None = None
    time_counts: tuple[list[int], list[int]] | None = None
    digest: str | None = None  # of the stream's bytes, from the tasks that read them (None: not read in ranges)


def release(stream: SparkStream) -> None:
    """Forget the executors' part files of ``stream`` (its frame cannot be read after)."""
    import shutil

    if stream.scratch is not None:
        shutil.rmtree(stream.scratch, ignore_errors=True)


def scratch_folder() -> str:
    """A new folder for part files: under ``RSPWB_SPARK_SCRATCH`` if set (on a cluster, a folder
    every executor and the driver can read), else the temporary folder (local masters)."""
    import tempfile

    base = os.environ.get("RSPWB_SPARK_SCRATCH") or None
    return tempfile.mkdtemp(prefix="rspwb-stream-", dir=base)


def spark_stream(spark: "SparkSession", source: StreamSource, predicates: frozenset[str] | None = None
                 ) -> SparkStream:
    """``source`` as an ``(s, p, o, t, pos)`` frame read by the executors (module docstring).

    ``predicates`` (the constant predicates of a query's patterns, `query_predicates`): the frame
    may then hold only the elements with one of them — positions still count every element, and
    `SparkStream.time_counts` every element's time — as the columnar path keeps only those. Where
    positions are given after reading (a stream out of time order, the CSRBench layout, Parquet) the
    frame holds every element."""
    if source.on_disorder not in ("error", "warn"):
        raise UserError(f"on_disorder must be 'error' or 'warn', not {source.on_disorder!r}", field="on_disorder")
    report = ReadReport(source=source.path, format=source.format)
    # the executors of a cluster (local-cluster too) run in folders of their own: a relative path is the driver's
    source = replace(source, path=os.path.abspath(source.path))
    if source.format == "parquet":
        return SparkStream(_in_order(_parquet_frame(spark, source, report), report), report)
    if source.format not in ("csrbench-dir", "yabench", "nquads"):
        raise UserError(f"unknown stream format {source.format!r}", field="stream-format")
    scratch = scratch_folder()
    try:
        if source.format == "csrbench-dir":
            return SparkStream(parts_frame(spark, scratch, _csrbench_parts(spark, source, scratch)), report, scratch)
        return replace(_text_frame(spark, source, report, scratch, predicates), scratch=scratch)
    except BaseException:
        release(SparkStream(None, report, scratch))  # type: ignore[arg-type]  # only its folder matters
        raise


def _in_order(frame: "DataFrame", report: ReadReport) -> "DataFrame":
    """``pos`` in time order (stable: ties keep the file's order) when the reader saw steps back
    (``warn``): `ranked` on ``(t, pos)``."""
    return ranked(frame, ("t", "pos")) if report.disorders else frame


def _text_frame(spark: "SparkSession", source: StreamSource, report: ReadReport, scratch: str,
                predicates: frozenset[str] | None = None) -> SparkStream:
    """A YABench or N-Quads file read in byte ranges (a ``.gz`` file unpacked first), with its
    elements' times and counts and its digest when the tasks that read it gave them (`spark_stream`)."""
    from rsp_workbench.streams.nquads_reader import nquads_layout

    path = source.path
    layout = nquads_layout(path) if source.format == "nquads" else None
    if layout == "empty":
        return SparkStream(parts_frame(spark, scratch, 0), report, time_counts=([], []))
    data_path = None
    if path.endswith(".gz"):  # hidden from Spark's read of the part files, removed once they are written
        data_path = os.path.join(scratch, ".unpacked-stream")
        run_tasks(spark, [data_path], partial(unpack, path))
    ranges = byte_ranges(data_path or path)
    if not ranges:
        read = SparkStream(parts_frame(spark, scratch, 0), report, time_counts=([], []))
    elif layout == "graph-timestamp":
        from rsp_workbench.pipeline.graph_stream_sources import graph_timestamp_frame

        read = SparkStream(graph_timestamp_frame(spark, path, ranges, report, scratch, data_path), report)
    else:
        read = _range_parts(spark, source, ranges, report, scratch, data_path, predicates)
    if data_path is not None:
        os.remove(data_path)
    return read


def _range_parts(spark: "SparkSession", source: StreamSource, ranges: list[tuple[int, int]], report: ReadReport,
                 scratch: str, data_path: str | None, predicates: frozenset[str] | None = None) -> SparkStream:
    """YABench text or time-graph N-Quads: the ranges counted, then parsed into part files (only the
    elements with ``predicates``, unless the stream is out of time order: `_in_order` then ranks
    every element), read as one frame, with the elements' distinct times and counts and the
    digest of the ranges' digests."""
    path = source.path
    if source.on_disorder == "error":
        return _single_pass_parts(spark, source, ranges, report, scratch, data_path, predicates)
    counts: list[RangeCount] = run_tasks(spark, ranges, partial(count_range, path, source.format, source.on_disorder,
                                                                data_path=data_path))
    plans = []
    lines = elements = 0
    last: int | None = None
    for index, ((start, end), count) in enumerate(zip(ranges, counts)):
        if count.first_time is not None and last is not None and count.first_time < last:
            _step_back(report, lines + count.first_time_line, count.first_time, last)
        if count.disorders:
            _step_back(report, lines + (count.first_disorder_line or 1), *(count.first_disorder or (0, 0)),
                       count.disorders)
        plans.append((index, start, end, lines + 1, elements, last if source.on_disorder == "error" else None))
        lines += count.lines
        elements += count.elements
        if count.elements:
            last = count.last_time
    keep = None if report.disorders else predicates
    counted_times = run_tasks(spark, plans, partial(write_range, path, source.format, source.on_disorder, scratch,
                                                    data_path=data_path, predicates=keep))
    digest = _stream_digest(count.digest for count in counts)
    return SparkStream(_in_order(parts_frame(spark, scratch, len(plans)), report), report,
                       time_counts=_merged_counts(counted_times), digest=digest)


def _single_pass_parts(spark: "SparkSession", source: StreamSource, ranges: list[tuple[int, int]], report: ReadReport,
                       scratch: str, data_path: str | None, predicates: frozenset[str] | None) -> SparkStream:
    """`_range_parts` in one pass over the file (``on_disorder="error"``): every range is parsed on
    its own (`read_range`); its positions then follow those of the ranges before it (an offset per
    range, added where the frame is read). The first range in the file that failed, or whose first
    element is older than the last element before it, is parsed again with its place known
    (`write_range`, as the two passes parse every range), which raises the error the Python reader
    raises there."""
    from pyspark.sql import functions as F

    path = source.path
    plans = [(index, start, end) for index, (start, end) in enumerate(ranges)]
    reads: list[RangeRead] = run_tasks(spark, plans, partial(read_range, path, source.format, scratch,
                                                             data_path=data_path, predicates=predicates))
    offsets: list[int] = []
    lines = elements = 0
    last: int | None = None
    for (index, start, end), read in zip(plans, reads):
        if read.failed or (read.first_time is not None and last is not None and read.first_time < last):
            run_tasks(spark, [(index, start, end, lines + 1, elements, last)],
                      partial(write_range, path, source.format, "error", scratch, data_path=data_path,
                              predicates=predicates))
            raise AssertionError(f"range {index} of {path} failed on its own but not in its place")
        offsets.append(elements)
        lines += read.lines
        elements += read.elements
        if read.elements:
            last = read.last_time
    digest = _stream_digest(read.digest for read in reads)
    time_counts = _merged_counts([(read.times, read.counts) for read in reads])
    if not elements:
        return SparkStream(parts_frame(spark, scratch, 0), report, time_counts=time_counts, digest=digest)
    offset = F.expr(f"array({', '.join(f'{value}L' for value in offsets)})")  # one literal, whatever the ranges
    frame = parts_frame(spark, scratch, len(plans), RANGED_PART_SCHEMA).select(
        "s", "p", "o", "t", (F.col("pos") + F.element_at(offset, F.col("range") + 1)).alias("pos"))
    return SparkStream(frame, report, time_counts=time_counts, digest=digest)


def _merged_counts(per_range: Sequence[tuple[list[int], list[int]]]) -> tuple[list[int], list[int]]:
    """The ranges' ``(distinct times, counts)`` as the stream's (a time may end one range and begin the next)."""
    import numpy as np

    times = np.concatenate([np.asarray(t, np.int64) for t, _ in per_range] or [np.empty(0, np.int64)])
    counts = np.concatenate([np.asarray(c, np.int64) for _, c in per_range] or [np.empty(0, np.int64)])
    distinct, inverse = np.unique(times, return_inverse=True)
    return distinct.tolist(), np.bincount(inverse, weights=counts, minlength=len(distinct)).astype(np.int64).tolist()


def _step_back(report: ReadReport, line: int, t: int, previous: int, count: int = 1) -> None:
    report.disorders += count
    if report.first_disorder_line is None or line < report.first_disorder_line:
        report.first_disorder_line, report.first_disorder = line, (t, previous)


def _csrbench_parts(spark: "SparkSession", source: StreamSource, scratch: str) -> int:
    from rsp_workbench.streams.csrbench_reader import csrbench_files

    if source.interval_ms <= 0:
        raise UserError(f"the interval must be positive, got {source.interval_ms} ms", field="interval")
    files = [(number, str(path)) for number, path in csrbench_files(source.path)]
    partitions = min(len(files), 4 * spark.sparkContext.defaultParallelism)
    counts = run_tasks(spark, files, partial(csrbench_count, source.interval_ms), partitions)
    plans, first = [], 0
    for index, ((number, path), count) in enumerate(zip(files, counts)):
        plans.append((index, number, path, first))
        first += count
    run_tasks(spark, plans, partial(write_csrbench_file, source.interval_ms, scratch), partitions)
    return len(plans)


def _parquet_frame(spark: "SparkSession", source: StreamSource, report: ReadReport) -> "DataFrame":
    """A workbench Parquet stream read by Spark itself, checked first by the executors (row groups)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    from rsp_workbench.streams.parquet import check_parquet_stream

    path = source.path
    check_parquet_stream(path)
    groups = pq.ParquetFile(path).metadata.num_row_groups
    if groups:
        chunks = [list(range(groups))[i::spark.sparkContext.defaultParallelism] for i in
                  range(min(groups, spark.sparkContext.defaultParallelism))]
        stats = sorted(row for rows in run_tasks(spark, chunks, partial(check_row_groups, path, source.on_disorder))
                       for row in rows)
        for before, after in zip(stats, stats[1:]):
            if after[2] < before[3]:
                if source.on_disorder == "error":
                    raise UserError(f"time goes backwards: {after[2]} after {before[3]}", file=path,
                                    field=f"row {after[0] + 1}")
                _step_back(report, after[0] + 1, after[2], before[3])
        for row in stats:  # warn: the steps back inside each row group, counted by its task
            if row[4]:
                _step_back(report, row[5], row[6], row[7], row[4])
    reader = spark.read
    try:  # the footer's schema: Spark need not infer it (~1 s on a cold JVM)
        reader = reader.schema(from_arrow_schema(pq.read_schema(path)))
    except (pa.ArrowException, OSError, TypeError):
        reader = spark.read
    return reader.parquet(path).select(
        F.col("subject").alias("s"), F.col("predicate").alias("p"), F.col("object").alias("o"),
        F.col("t"), F.col("_metadata.row_index").alias("pos"))
