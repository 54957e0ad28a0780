"""The CSRBench oracle layout of N-Quads (a named graph per timestamp, ``<g> :hasTimestamp "t"``
anywhere), read by Spark's executors in `rsp_workbench.pipeline.stream_sources`' byte ranges.

The Python reader's two passes: after the ranges' lines are counted (`count_lines`), pass 1
(`graph_range`, `graph_timestamp_part`) gives per range each graph's first and last line and
its stamps; the driver merges them in file order with the reader's checks and messages
(`graph_times`; the first malformed line in the file wins, the tasks return their errors) and
reads again, knowing every graph, the ranges whose stamps name graphs of other ranges only.
Pass 2 (`write_graph_range`) writes each range's elements with their line and their graph's
first line; ``pos`` follows a global sort on (time, graph's first line, line), the reader's
order (`ranked`). The driver holds the graphs, never the elements.
"""

from __future__ import annotations

import io
from functools import partial
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from rsp_workbench.errors import UserError
from rsp_workbench.pipeline import stream_parts
from rsp_workbench.streams.reader_common import ReadReport, decoded

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from rsp_workbench.streams.nquads_reader import GraphPart


# --- on the executors -----------------------------------------------------------------------------


def count_lines(path: str, bounds: tuple[int, int], data_path: str | None = None) -> int:
    """Task: the lines of a range (bytes only)."""
    return stream_parts.line_count(stream_parts.range_lines(path, *bounds, data_path=data_path))


def graph_range(path: str, graphs: Any, plan: tuple[int, int, int, int], data_path: str | None = None
                ) -> "GraphPart | UserError":
    """Task: pass 1 of the CSRBench N-Quads layout over one planned range (index, start, end, first line):
    per graph its lines and stamps (`graph_timestamp_part`; ``graphs``: None, or a broadcast of every
    graph of the file to keep the stamps about). Its `UserError` is returned, not raised, so that the
    driver reports the first one in the file, as the Python reader does."""
    from rsp_workbench.streams.nquads_reader import graph_timestamp_part

    _index, start, end, first_line = plan
    try:
        text = io.StringIO(decoded(stream_parts.range_lines(path, start, end, data_path=data_path), path, first_line))
        return graph_timestamp_part(path, text, first_line, None if graphs is None else graphs.value)
    except UserError as error:
        return error


def write_graph_range(path: str, scratch: str, table: Any, plan: tuple[int, int, int, int],
                      data_path: str | None = None) -> tuple[int, int]:
    """Task: pass 2 of the CSRBench N-Quads layout over one planned range into its part file: the
    elements with ``pos`` their line and ``graph_line`` their graph's first line (``table``: a broadcast
    of graph → (time, first line) and the set of every graph); its rows and skipped statements."""
    from rsp_workbench.streams.nquads_reader import graph_timestamp_rows

    index, start, end, first_line = plan
    times, graphs = table.value
    report = ReadReport()
    text = io.StringIO(decoded(stream_parts.range_lines(path, start, end, data_path=data_path), path, first_line))
    rows = graph_timestamp_rows(path, text, first_line, times, graphs, report)
    return stream_parts.write_part(scratch, index, _graph_batches(rows), graph_line=True), report.skipped


def _graph_batches(rows: Iterable[tuple[str, str, str, int, int, int]], size: int = 1 << 16
                   ) -> Iterator["pa.RecordBatch"]:
    from itertools import islice

    iterator = iter(rows)
    while chunk := list(islice(iterator, size)):
        s, p, o, t, graph_line, line = ([row[i] for row in chunk] for i in range(6))
        yield stream_parts.frame_batch(s, p, o, t, line, graph_line)


# --- on the driver --------------------------------------------------------------------------------


def graph_timestamp_frame(spark: "SparkSession", path: str, ranges: list[tuple[int, int]], report: ReadReport,
                          scratch: str, data_path: str | None) -> "DataFrame":
    """The CSRBench N-Quads layout in byte ranges, as `read_graph_timestamp_nquads` reads the file whole.

    The ranges' lines are counted (their first line numbers); pass 1 (`graph_range`) gives per range
    each graph's lines and stamps, merged by `graph_times` with the Python reader's checks (the first
    malformed line in the file wins); the ranges whose stamps name graphs of other ranges only are
    read again for them, knowing every graph. Pass 2 (`write_graph_range`) writes each range's
    elements; positions follow `ranked` on (time, graph's first line, line). The driver holds the
    graphs, never the elements."""
    from rsp_workbench.streams.nquads_reader import graph_times

    counts: list[int] = stream_parts.run_tasks(spark, ranges, partial(count_lines, path, data_path=data_path))
    plans, lines = [], 0
    for index, ((start, end), count) in enumerate(zip(ranges, counts)):
        plans.append((index, start, end, lines + 1))
        lines += count
    parts = stream_parts.run_tasks(spark, plans, partial(graph_range, path, None, data_path=data_path))
    errors = [part for part in parts if isinstance(part, UserError)]
    if errors:
        raise errors[0]
    foreign = [plan for plan, part in zip(plans, parts) if part.foreign]
    broadcasts: list[Any] = []
    try:
        if foreign:
            every_graph = spark.sparkContext.broadcast({graph for part in parts for graph in part.spans} - {None})
            broadcasts.append(every_graph)
            again_read = partial(graph_range, path, every_graph, data_path=data_path)
            again = dict(zip((plan[0] for plan in foreign), stream_parts.run_tasks(spark, foreign, again_read)))
            parts = [again.get(index, part) for index, part in enumerate(parts)]
        found = graph_times(path, parts)
        del parts
        table = spark.sparkContext.broadcast(({graph: (t, found.spans[graph][0]) for graph, t in found.times.items()},
                                              set(found.spans) - {None}))
        broadcasts.append(table)
        del found
        written = stream_parts.run_tasks(spark, plans,
                                         partial(write_graph_range, path, scratch, table, data_path=data_path))
    finally:
        for broadcast in broadcasts:
            broadcast.destroy()
    rows = sum(count for count, _ in written)
    skipped = sum(count for _, count in written)
    report.elements += rows
    report.skipped += skipped
    if skipped:
        from rsp_workbench.streams.nquads_reader import SKIPPED_REASON

        report.skipped_reason = SKIPPED_REASON
    if not rows:
        return stream_parts.parts_frame(spark, scratch, 0)
    frame = stream_parts.parts_frame(spark, scratch, len(plans), stream_parts.GRAPH_PART_SCHEMA)
    return stream_parts.ranked(frame, ("t", "graph_line", "pos"))
