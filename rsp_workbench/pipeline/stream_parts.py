"""Part files and tasks the stream sources share (`rsp_workbench.pipeline.stream_sources`,
`rsp_workbench.pipeline.graph_stream_sources`): a range's bytes, its elements as a Parquet part
file, the part files as one frame, tasks on the executors, positions by a global sort."""

from __future__ import annotations

import os
from functools import partial
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from rsp_workbench.errors import UserError

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

FRAME_SCHEMA = "s string, p string, o string, t long, pos long"
GRAPH_PART_SCHEMA = FRAME_SCHEMA + ", graph_line long"  # CSRBench N-Quads parts: pos is the line until sorted
RANGED_PART_SCHEMA = FRAME_SCHEMA + ", range int"  # a range's own positions; the stream source adds the offsets


# --- on the executors -----------------------------------------------------------------------------


def range_lines(path: str, start: int, end: int, data_path: str | None = None) -> bytes:
    """The bytes of the lines whose first byte lies in ``[start, end)`` of ``data_path`` (default
    ``path``; ``path`` is the file messages name: the ``.gz`` the user gave for its unpacked copy)."""
    from rsp_workbench.streams.reader_common import MAX_LINE_CHARS

    try:
        with open(data_path or path, "rb") as handle:
            if start > 0:
                handle.seek(start - 1)
                if handle.read(1) != b"\n":
                    _rest_of_line(handle, path, MAX_LINE_CHARS)  # a line of the range before
            begin = handle.tell()
            if begin >= end:
                return b""
            data = handle.read(end - begin)
            if data and not data.endswith(b"\n"):
                data += _rest_of_line(handle, path, MAX_LINE_CHARS)
            return data
    except (OSError, EOFError) as error:
        raise UserError(f"cannot read stream: {error}", file=path) from None


def _rest_of_line(handle: Any, path: str, limit: int) -> bytes:
    rest: bytes = handle.readline(limit + 1)
    if len(rest) > limit:
        raise UserError(f"a line longer than {limit >> 20} MiB characters: not a stream text file", file=path)
    return rest


def line_count(data: bytes) -> int:
    """The lines of a range's bytes (whole lines; the file's last may lack its newline)."""
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def frame_batch(s: Any, p: Any, o: Any, t: Any, pos: Any, graph_line: Any = None) -> "pa.RecordBatch":
    """A batch of the frame's columns (and ``graph_line``, the CSRBench layout's sort key, if given)."""
    import pyarrow as pa

    def column(values: Any, kind: "pa.DataType") -> "pa.Array":
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        return values.cast(kind) if isinstance(values, pa.Array) else pa.array(values, kind)

    columns = [column(s, pa.string()), column(p, pa.string()), column(o, pa.string()), column(t, pa.int64()),
               column(pos, pa.int64())]
    names = ["s", "p", "o", "t", "pos"]
    if graph_line is not None:
        columns.append(column(graph_line, pa.int64()))
        names.append("graph_line")
    return pa.RecordBatch.from_arrays(columns, names=names)


def counted(function: Any, *args: Any) -> Any:
    """``function(*args)`` in a task, its `UserError` carried to the driver."""
    from rsp_workbench.pipeline.spark import raise_in_task

    try:
        return function(*args)
    except UserError as error:
        raise_in_task(error)


def write_part(scratch: str, index: int, batches: Iterable["pa.RecordBatch"], graph_line: bool = False,
                ranged: bool = False) -> int:
    """A task's elements as ``part-NNNNNN.parquet`` in ``scratch`` (written whole, then renamed); with
    ``graph_line``, the CSRBench layout's column of that name too (`GRAPH_PART_SCHEMA`); ``ranged``:
    positions are the range's own and a column ``range`` holds ``index`` (`RANGED_PART_SCHEMA`)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = os.path.join(scratch, f"part-{index:06d}.parquet")
    partial_target = os.path.join(scratch, f".part-{index:06d}.{os.getpid()}.partial")  # hidden: Spark skips it
    rows = 0
    schema = pa.schema([("s", pa.string()), ("p", pa.string()), ("o", pa.string()), ("t", pa.int64()),
                        ("pos", pa.int64())] + ([("graph_line", pa.int64())] if graph_line else [])
                       + ([("range", pa.int32())] if ranged else []))
    with pq.ParquetWriter(partial_target, schema) as writer:
        for batch in batches:
            if ranged:
                batch = batch.append_column("range", pa.array(np.full(batch.num_rows, index, np.int32)))
            writer.write_table(pa.Table.from_batches([batch]))  # a row group (or more) of its own
            rows += batch.num_rows
    os.replace(partial_target, target)
    return rows


# --- on the driver --------------------------------------------------------------------------------


def parts_frame(spark: "SparkSession", scratch: str, parts: int, schema: str = FRAME_SCHEMA) -> "DataFrame":
    """The part files in ``scratch`` as one frame (none written: an empty frame)."""
    return spark.read.schema(schema).parquet(scratch) if parts else spark.createDataFrame([], schema)


def ranked(frame: "DataFrame", keys: Sequence[str]) -> "DataFrame":
    """``(s, p, o, t, pos)`` with ``pos`` 0, 1, 2, … in the order of ``keys`` (``frame`` has rows).

    A global sort on ``keys`` — range-partitioned, so no partition holds the stream — then each
    row's rank within its partition plus the rows of the partitions before it (one small job counts
    them), as Spark's own ``zipWithIndex``; ``keys`` are unique, so the sort is the same each time
    the frame is computed."""
    from pyspark.sql import functions as F

    ordered = (frame.sort(*keys).withColumn("_part", F.spark_partition_id())
               .withColumn("_rank", F.monotonically_increasing_id()))  # (partition << 33) + row within it
    counts = dict(tuple(row) for row in ordered.groupBy("_part").count().collect())
    offsets, total = [], 0
    for part in sorted(counts):
        offsets.append((part, total))
        total += counts[part]
    offset = F.create_map(*[F.lit(value) for pair in offsets for value in pair])  # rows: never empty
    start = F.shiftleft(F.col("_part").cast("long"), 33)
    return ordered.select("s", "p", "o", "t", (offset[F.col("_part")] + F.col("_rank") - start).alias("pos"))


def run_tasks(spark: "SparkSession", items: Sequence[Any], function: Any, partitions: int | None = None) -> list[Any]:
    """``function(item)`` for every item on the executors, results in order."""
    count = max(1, min(len(items), partitions or len(items)))
    return spark.sparkContext.parallelize(list(items), count).map(partial(counted, function)).collect()
