"""The workbench's columnar stream format (docs/design/FORMATS.md "Streams in" 4): Parquet via pyarrow.

Columns: ``subject``, ``predicate``, ``object`` (N-Triples term text, not null), ``graph``
(N-Triples term text or null) and ``t`` (int64 application time in ms), rows in
non-decreasing ``t``. pyarrow is imported here only, so importing the stream package stays
cheap; the readers module imports this module lazily.
"""

from __future__ import annotations

import os
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rsp_workbench.errors import UserError
from rsp_workbench.streams.model import StreamElement
from rsp_workbench.streams.atomic import AtomicStreamWriter
from rsp_workbench.streams.terms import shorten

COLUMNS = ("subject", "predicate", "object", "graph", "t")
SCHEMA = pa.schema(
    [
        pa.field("subject", pa.string(), nullable=False),
        pa.field("predicate", pa.string(), nullable=False),
        pa.field("object", pa.string(), nullable=False),
        pa.field("graph", pa.string(), nullable=True),
        pa.field("t", pa.int64(), nullable=False),
    ],
    metadata={b"rspwb:format": b"stream/1", b"rspwb:time_unit": b"ms"},
)
DEFAULT_ROW_GROUP = 1 << 17


class ParquetStreamWriter(AtomicStreamWriter):
    """Writes elements to a Parquet file, atomically (``PATH.partial``, renamed on close).

    Buffers ``row_group_size`` rows at a time (bounded memory). Same contract as
    ``StreamWriter``: context manager, non-decreasing time, ``count``, ``abort()``.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, row_group_size: int = DEFAULT_ROW_GROUP, compression: str = "zstd"
    ) -> None:
        super().__init__(path)
        self.format = "parquet"
        self._writer: pq.ParquetWriter | None = pq.ParquetWriter(
            self._partial, SCHEMA, compression=compression, write_page_checksum=True  # readers detect bit flips
        )
        self._row_group_size = row_group_size
        self._columns: tuple[list[str], list[str], list[str], list[str | None], list[int]] = ([], [], [], [], [])

    def _append(self, element: StreamElement) -> None:
        subjects, predicates, objects, graphs, times = self._columns
        subjects.append(element.subject)
        predicates.append(element.predicate)
        objects.append(element.object)
        graphs.append(element.graph)
        times.append(element.t)
        if len(times) >= self._row_group_size:
            self._flush()

    def _flush(self) -> None:
        if not self._columns[4]:
            return
        assert self._writer is not None, "writer is closed"
        arrays = [pa.array(column, type=field.type) for column, field in zip(self._columns, SCHEMA)]
        self._writer.write_table(pa.Table.from_arrays(arrays, schema=SCHEMA))
        self._columns = ([], [], [], [], [])

    def _release(self, *, finish: bool) -> bool:
        if self._writer is None:
            return False
        if finish:
            self._flush()
        self._writer.close()
        self._writer = None
        return True


#: What reading a damaged file can raise: Arrow's errors, I/O errors, and text that is not
#: UTF-8 (a flipped bit in a string page or in the footer's column names).
READ_ERRORS = (pa.ArrowException, OSError, UnicodeDecodeError)


def check_parquet_stream(path: str | os.PathLike[str]) -> pa.Schema:
    """The file's schema, checked to be a stream's (columns and types), from the footer only.

    Every way a file can fail to be one (empty, truncated, bit-flipped footer, another
    table's schema) is a `UserError` naming the file (and the column), never an Arrow error.
    """
    name = str(path)
    try:
        metadata = pq.read_metadata(path)
        schema = metadata.schema.to_arrow_schema()
        names = set(schema.names)
    except READ_ERRORS as error:
        raise UserError(f"not a readable Parquet file ({arrow_message(error)})", file=name) from None
    for column in ("subject", "predicate", "object", "t"):
        if column not in names:
            raise UserError(
                f"missing column {column!r}; expected columns subject, predicate, object, [graph,] t",
                file=name,
                field=column,
            )
    for column in ("subject", "predicate", "object", "graph"):
        if column in names:
            kind = schema.field(column).type
            if pa.types.is_dictionary(kind):
                kind = kind.value_type
            if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
                raise UserError(
                    f"column {column!r} has type {kind}; expected string (N-Triples text)", file=name, field=column
                )
    if not pa.types.is_integer(schema.field("t").type) or schema.field("t").type == pa.uint64():
        raise UserError(
            f"column 't' has type {schema.field('t').type}; expected int64 milliseconds", file=name, field="t"
        )
    return schema


def parquet_stream_extent(path: str | os.PathLike[str]) -> tuple[int, int | None]:
    """``(rows, last t)`` of a checked Parquet stream file: the row count from the footer, only ``t`` read."""
    check_parquet_stream(path)
    try:
        with pq.ParquetFile(path) as parquet:  # the last row group that has rows: memory bounded by a row group
            rows = parquet.metadata.num_rows
            groups = [i for i in range(parquet.metadata.num_row_groups) if parquet.metadata.row_group(i).num_rows]
            times = parquet.read_row_group(groups[-1], columns=["t"]).column("t") if groups else None
    except READ_ERRORS as error:
        raise UserError(f"cannot read Parquet data ({arrow_message(error)})", file=str(path), field="t") from None
    if times is None or not len(times) or not times[len(times) - 1].is_valid:
        return rows, None
    return rows, int(times[len(times) - 1].as_py())


def arrow_message(error: BaseException) -> str:
    """Arrow's message on one line, without the file name it sometimes repeats."""
    return " ".join(str(error).split())


#: One batch of a Parquet stream as Python lists: subjects, predicates, objects, graphs (None
#: without a graph column), times, and the in-batch indices where time goes backwards.
ParquetBatch = tuple[list[Any], list[Any], list[Any], list[Any], list[int], list[int]]


def iter_parquet_columns(path: str | os.PathLike[str], *, batch_size: int = 1 << 16) -> Iterator[ParquetBatch]:
    """Yield batches ``(subjects, predicates, objects, graphs, times, backwards)`` as Python lists.

    ``graphs`` is all None when the file has no graph column; ``backwards`` lists the
    in-batch indices ``i`` with ``t[i] < t[i-1]``. Checks the schema first and, per batch
    in C (pyarrow.compute), that there are no nulls and that terms start like N-Triples
    terms, so that the Python loop in the reader does nothing but build elements.
    """
    name = str(path)
    schema = check_parquet_stream(path)
    names = set(schema.names)
    has_graph = "graph" in names
    wanted = ["subject", "predicate", "object", "t"] + (["graph"] if has_graph else [])
    strings = [column for column in wanted if column != "t"]
    try:  # dictionary decoding: each distinct term becomes one Python string per batch
        parquet = pq.ParquetFile(path, read_dictionary=strings, page_checksum_verification=True)
    except READ_ERRORS as error:
        raise UserError(f"not a readable Parquet file ({arrow_message(error)})", file=name) from None
    with parquet:
        first_row = 1
        try:
            for batch in parquet.iter_batches(batch_size=batch_size, columns=wanted):
                batch.validate(full=True)  # corrupt pages can decode to dictionary indices out of range
                check_batch(batch, first_row, name)
                times = batch.column(3)
                backwards: list[int] = []
                if len(times) > 1:
                    steps = pc.less(times.slice(1), times.slice(0, len(times) - 1))
                    if pc.any(steps).as_py():
                        backwards = [index + 1 for index, back in enumerate(steps.to_pylist()) if back]
                graphs = _strings(batch.column(4)) if has_graph else [None] * len(times)
                yield (
                    _strings(batch.column(0)),
                    _strings(batch.column(1)),
                    _strings(batch.column(2)),
                    graphs,
                    times.to_pylist(),
                    backwards,
                )
                first_row += len(times)
        except READ_ERRORS as error:  # a corrupt page, a ZSTD frame that does not decode
            raise UserError(f"cannot read Parquet data near row {first_row} ({arrow_message(error)})",
                            file=name) from None


def _strings(values: pa.Array) -> list[Any]:
    """Python strings of a (dictionary) column; each distinct value is decoded once per batch."""
    if not pa.types.is_dictionary(values.type):
        plain: list[Any] = values.to_pylist()
        return plain
    dictionary = values.dictionary.to_pylist()
    if values.null_count:
        dictionary.append(None)
        indices = pc.fill_null(values.indices, len(dictionary) - 1)
    else:
        indices = values.indices
    return list(map(dictionary.__getitem__, indices.to_pylist()))


_IRI_START = r"<[A-Za-z][A-Za-z0-9+.\-]*:"  # an absolute IRI (a scheme), as in the text formats
_TERM_START = {"subject": f"^(?:{_IRI_START}|_)", "predicate": f"^{_IRI_START}", "object": f'^(?:{_IRI_START}|[_"])',
               "graph": f"^(?:{_IRI_START}|_)"}


def check_batch(batch: pa.RecordBatch, first_row: int, file: str) -> None:
    """No nulls (except graph), terms start with ``<scheme:``, ``_`` or ``"``; the error names the first bad row.

    Dictionary columns are checked on their dictionary (distinct values) first, rows only
    to locate a problem.
    """
    for index, column in enumerate(batch.schema.names):
        values = batch.column(index)
        if column != "graph" and values.null_count:
            row = first_row + pc.index(pc.is_null(values), True).as_py()
            raise UserError(f"{column} is null", file=file, field=f"row {row}")
        pattern = _TERM_START.get(column)
        if pattern is None:
            continue
        distinct = values.dictionary if pa.types.is_dictionary(values.type) else values
        if pc.all(pc.match_substring_regex(distinct, pattern)).as_py() is not False:
            continue
        plain = values.cast(values.type.value_type) if pa.types.is_dictionary(values.type) else values
        ok = pc.fill_null(pc.match_substring_regex(plain, pattern), True)
        offset = pc.index(ok, False).as_py()
        if offset >= 0:
            value = str(plain[offset].as_py())
            what = "a relative IRI" if value.startswith("<") else "expected an N-Triples term"
            raise UserError(f"{what} in {column}, got {shorten(value, 40)!r}", file=file, field=f"row {first_row + offset}")
