"""The oracle's columnar path: streams as Arrow columns, BGPs as Arrow hash joins, no JVM.

For a big stream the per-element Python objects of the `fast` path (`annotated.Annotator`)
and the JVM start of the Spark job (`rsp_workbench.pipeline.oracle_job`) both cost more than
the work itself. Here:

* a stream is read once into `StreamColumns`: every element's time (the timeline), and
  the terms of only the elements some triple pattern of the query can match (its
  constant predicates), so memory is bounded by what the query reads. YABench text is
  split and checked by Arrow's C++ kernels (`read_yabench_columns`); a line that is not
  in the exact layout YABench writes goes through the Python reader's own patterns, so
  odd lines are accepted or reported (file:line) exactly as `read_yabench` does;
* `ArrowBGP` evaluates a BGP like `oracle_job.SparkBGP` — pattern constants and a
  FILTER's numeric bounds applied in the scan, joins on the shared variables with the
  band condition — as pyarrow hash joins on the terms themselves (exact, no hashes), and
  returns the same annotated `Relation` the other paths build.

Everything above the BGPs (FILTER/BIND/UNION, presence runs per t0) is shared with the
other paths, so the answers are the same by construction.
"""

from __future__ import annotations

import os
import re
from contextlib import nullcontext
from dataclasses import dataclass
from typing import IO, Any, Callable, Iterable, Iterator, Literal, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rsp_workbench.errors import UserError
from rsp_workbench.oracle.annotated import (
    BIG,
    AnnotationContext,
    Annotator,
    CodedRelation,
    NumericBound,
    Relation,
    connected_order,
    is_variable,
    term_key,
)
from rsp_workbench.oracle.coding import arrow_relation
from rsp_workbench.streams.model import StreamElement
from rsp_workbench.streams.terms import (IRI_SIMPLE, STREAM_LITERAL, STREAM_QUIRK_LITERAL, TermError, canonical_term,
                                         from_rdflib)

SLOTS = ("s", "p", "o")


@dataclass
class StreamColumns:
    """One stream, columnar: ``times`` of every element in stream order (int64), and
    ``table`` (``s``, ``p``, ``o`` canonical N-Triples terms, ``pos`` the element's
    position) holding only the elements the query's patterns can match."""

    times: np.ndarray
    table: pa.Table

    @property
    def last_time(self) -> int | None:
        return int(self.times[-1]) if len(self.times) else None


def _empty_table() -> pa.Table:
    return pa.table({"s": pa.array([], pa.string()), "p": pa.array([], pa.string()),
                     "o": pa.array([], pa.string()), "pos": pa.array([], pa.int64())})


def query_predicates(query: Any) -> frozenset[str] | None:
    """The constant predicates of every triple pattern of ``query``'s algebra; None when a
    pattern has a variable predicate (then every element is kept)."""
    from rsp_workbench.query.rdflib_sparql import CompValue

    found: set[str] = set()
    seen: set[int] = set()

    def walk(node: Any) -> bool:
        if id(node) in seen:
            return True
        seen.add(id(node))
        if isinstance(node, CompValue):
            if node.name == "BGP":
                for pattern in node.get("triples") or ():
                    if is_variable(pattern[1]):
                        return False
                    found.add(from_rdflib(pattern[1]))
            return all(walk(value) for value in node.values())
        if isinstance(node, (list, tuple)):
            return all(walk(item) for item in node)
        return True

    return frozenset(found) if walk(query.algebra.algebra) else None


# --- reading ----------------------------------------------------------------------------------


class _Builder:
    """Accumulates a stream's columns batch by batch (positions given by the caller)."""

    def __init__(self, predicates: frozenset[str] | None) -> None:
        self.predicates = predicates
        self._wanted = pa.array(sorted(predicates), pa.string()) if predicates is not None else None
        self.times: list[np.ndarray] = []
        self.tables: list[pa.Table] = []
        self.count = 0

    def add(self, times: np.ndarray, s: pa.Array, p: pa.Array, o: pa.Array, pos: np.ndarray) -> None:
        """``times`` of the batch's elements; ``s``/``p``/``o``/``pos`` of its (possibly pre-selected) rows."""
        self.times.append(np.asarray(times, dtype=np.int64))
        if self._wanted is not None and len(p):
            keep = pc.is_in(p, value_set=self._wanted)
            s, p, o = s.filter(keep), p.filter(keep), o.filter(keep)
            pos = np.asarray(pos)[np.asarray(keep.to_numpy(zero_copy_only=False), dtype=bool)]
        if len(p):
            self.tables.append(pa.table({"s": s, "p": p, "o": o, "pos": pa.array(pos, pa.int64())}))
        self.count += len(times)

    def finish(self) -> StreamColumns:
        times = np.concatenate(self.times) if self.times else np.empty(0, np.int64)
        table = pa.concat_tables(self.tables).combine_chunks() if self.tables else _empty_table()
        return StreamColumns(times, table)


def columns_from_elements(elements: Iterable[StreamElement], predicates: frozenset[str] | None,
                          batch: int = 1 << 16) -> StreamColumns:
    """`StreamColumns` of elements already read (any format; terms canonicalised here)."""
    builder = _Builder(predicates)
    position = 0
    wanted = predicates
    buffer: list[StreamElement] = []

    def flush() -> None:
        nonlocal position
        p = _canonical_terms(pa.array([e.predicate for e in buffer], pa.string()))
        rows = np.arange(len(buffer), dtype=np.int64)
        if wanted is not None:
            rows = rows[np.asarray(pc.is_in(p, value_set=builder._wanted).to_numpy(zero_copy_only=False), dtype=bool)]
            p = p.take(pa.array(rows))
        picked = [buffer[i] for i in rows.tolist()]
        builder.add(np.fromiter((e.t for e in buffer), np.int64, len(buffer)),
                    _canonical_terms(pa.array([e.subject for e in picked], pa.string())), p,
                    _canonical_terms(pa.array([e.object for e in picked], pa.string())), position + rows)
        position += len(buffer)
        buffer.clear()

    for element in elements:
        buffer.append(element)
        if len(buffer) >= batch:
            flush()
    if buffer:
        flush()
    return builder.finish()


def _re2(pattern: str) -> str:
    """A pattern of `rsp_workbench.streams.terms` for RE2 (Arrow): no possessive quantifiers
    (they only speed up Python's backtracking; RE2 never backtracks)."""
    return pattern.replace("*+", "*")


# The exact layout YABench writes (the Python reader's fast pattern, one line): other
# lines take the Python reader's general path.
_STRICT_LINE = (rf'^{IRI_SIMPLE} {IRI_SIMPLE} (?:{IRI_SIMPLE}|{_re2(STREAM_LITERAL)}|{_re2(STREAM_QUIRK_LITERAL)})'
                rf' "-?[0-9]+" \.$')
_BLOCK_CHARS = 16 << 20
# terms that `canonical_term` returns as written: simple IRIs and plain strings without escapes
_SIMPLE_TERM = rf'^(?:{IRI_SIMPLE}|"[^"\\\n\r]*")$'


def _text_blocks(handle: Any) -> Iterator[str]:
    """Text in blocks of whole lines (the last may lack its newline)."""
    from rsp_workbench.streams.reader_common import MAX_LINE_CHARS

    rest = ""
    while True:
        try:
            block = handle.read(_BLOCK_CHARS)
        except (EOFError, OSError) as error:
            raise UserError(f"cannot read stream: {error}", file=getattr(handle, "name", None)) from None
        if not block:
            if rest:
                yield rest + "\n"
            return
        cut = block.rfind("\n") + 1
        if cut == 0:
            rest += block
            if len(rest) > MAX_LINE_CHARS:
                raise UserError(f"a line longer than {MAX_LINE_CHARS >> 20} MiB characters: not a stream text file",
                                file=getattr(handle, "name", None))
            continue
        yield rest + block[:cut] if rest else block[:cut]
        rest = block[cut:]


def _byte_blocks(data: bytes, name: str, first_line: int) -> Iterator[pa.Array]:
    """``data`` (whole lines from line ``first_line``) in blocks of whole lines of about
    `_BLOCK_CHARS` bytes, each a one-string Arrow array over ``data`` itself: no decoding into
    a Python string and no copy (a Spark task's 32 MiB range: a third of its parsing time went
    to decoding, `io.StringIO` and reading it back). UTF-8 is checked by Arrow, block by block;
    a block that is not UTF-8 is decoded in Python to name the line (`decoded`)."""
    from rsp_workbench.streams.reader_common import decoded

    if data and not data.endswith(b"\n"):
        data += b"\n"
    buffer = pa.py_buffer(data)
    start = 0
    while start < len(data):
        end = len(data)
        if end - start > _BLOCK_CHARS:
            end = data.rfind(b"\n", start, start + _BLOCK_CHARS) + 1 or data.find(b"\n", start + _BLOCK_CHARS) + 1
        block = pa.LargeStringArray.from_buffers(1, pa.py_buffer(np.array([start, end], np.int64).tobytes()), buffer)
        try:
            block.validate(full=True)
        except pa.ArrowInvalid:
            decoded(data[start:end], name, first_line + data.count(b"\n", 0, start))  # raises, naming the line
            raise
        yield block
        start = end


def read_yabench_columns(path: str, predicates: frozenset[str] | None, *, on_disorder: Literal["error", "warn"] = "error",
                         report: Any = None, text: IO[str] | bytes | None = None, first_line: int = 1,
                         last_time: int | None = None) -> StreamColumns:
    """YABench stream text as `StreamColumns` (the same elements `read_yabench` yields).

    Lines in YABench's exact layout are checked and split by Arrow kernels; the others
    (comments, blank lines, other spacing, blank nodes, escapes) by `read_yabench`'s
    general pattern, which also names a malformed line's file, line and column. Time
    going backwards is an error at its line, or with ``on_disorder="warn"`` counted in
    ``report`` and the elements sorted by time (stable), as the oracle's CLI does.

    ``text``: a part of the file already read (whole lines, from line ``first_line``,
    after an element at ``last_time``), as a Spark task reads its range of the file (its
    bytes: `_byte_blocks`); positions then count from the part's first element.
    """
    from rsp_workbench.streams.reader_common import (
        SKIP_LINE,
        YABENCH_STEPS,
        ReadReport,
        decode_error,
        diagnose_line,
        open_text,
        checked_time,
    )
    from rsp_workbench.streams.readers import YABENCH_LINE

    name = os.fspath(path)
    report = report if report is not None else ReadReport()
    report.source, report.format = name, "yabench"
    if on_disorder not in ("error", "warn"):
        raise UserError(f"on_disorder must be 'error' or 'warn', not {on_disorder!r}", field="on_disorder")
    builder = _Builder(predicates)
    relevant = None if predicates is None else pa.array(sorted(predicates), pa.string())
    line_base = first_line - 1  # lines before the block
    skipped: list[int] = []  # line numbers without an element (comments, blank lines)
    last = last_time  # time of the last element so far
    try:
        with nullcontext(text) if text is not None else open_text(name) as handle:
            blocks = (_byte_blocks(handle, name, first_line) if isinstance(handle, bytes)
                      else (pa.array([block], pa.large_string()) for block in _text_blocks(handle)))
            for block in blocks:
                lines = pc.split_pattern(block, "\n").flatten()
                lines = lines.slice(0, len(lines) - 1).cast(pa.string())  # the text ends with "\n"
                strict = pc.match_substring_regex(lines, _STRICT_LINE)
                if pc.all(strict).as_py():
                    odd: list[int] = []
                else:
                    odd = np.flatnonzero(~np.asarray(strict.to_numpy(zero_copy_only=False), dtype=bool)).tolist()
                good = lines.filter(strict) if odd else lines
                # a strict line is ``s p rest`` and its rest ``o "time" .``: every line splits into three
                # parts and every rest into two, so each column is a `take` of the flattened parts
                # (`list_element` copied the terms one by one: 0.2 s of a Spark task's 32 MiB range)
                parts = pc.split_pattern(good, " ", max_splits=2).flatten()
                thirds = np.arange(0, len(parts), 3)
                object_tail = pc.split_pattern(pc.take(parts, thirds + 2), ' "', max_splits=1, reverse=True).flatten()
                tail = pc.take(object_tail, np.arange(1, len(object_tail), 2))
                try:
                    strict_times = pc.cast(pc.utf8_slice_codeunits(tail, 0, -3), pa.int64()).to_numpy()
                except pa.ArrowInvalid:  # beyond int64: the Python check names the line
                    strict_times = None
                index = np.arange(len(lines), dtype=np.int64)
                strict_lines = np.delete(index, odd) if odd else index
                if strict_times is None:
                    for i, time_text in zip(strict_lines.tolist(), tail.to_pylist()):
                        checked_time(int(time_text[:-3]), name, line_base + i + 1)
                # the odd lines, in order, through the Python reader's general pattern
                extra: list[tuple[int, str, str, str, int]] = []
                dropped: list[int] = []
                for i in odd:
                    line = lines[i].as_py()
                    number = line_base + i + 1
                    match = YABENCH_LINE.fullmatch(line)
                    if match is None:
                        if SKIP_LINE.fullmatch(line):
                            dropped.append(i)
                            continue
                        _raise_disorder_before(name, number, on_disorder, last, strict_lines, strict_times, extra,
                                               line_base, skipped + [line_base + d + 1 for d in dropped])
                        raise diagnose_line(line, YABENCH_STEPS, name, number)
                    s, p, o, time_text = match.groups()
                    try:
                        s, p, o = canonical_term(s), canonical_term(p), canonical_term(o)
                    except TermError as error:
                        raise UserError(str(error), file=name, line=number) from None
                    extra.append((i, s, p, o, checked_time(int(time_text), name, number)))
                skipped += [line_base + d + 1 for d in dropped]
                # times of the block's elements in line order
                element_lines = np.delete(index, dropped) if dropped else index
                times = np.empty(len(element_lines), dtype=np.int64)
                at = np.searchsorted(element_lines, strict_lines)
                times[at] = strict_times
                if extra:
                    times[np.searchsorted(element_lines, [e[0] for e in extra])] = [e[4] for e in extra]
                first_pos = builder.count
                # terms of the strict lines the query can read
                p = pc.take(parts, thirds + 1)
                wanted = (np.arange(len(p)) if relevant is None
                          else np.flatnonzero(pc.is_in(p, value_set=relevant).to_numpy(zero_copy_only=False)))
                row_pos = at[wanted]
                s = pc.take(parts, thirds[wanted])
                p = pc.take(p, wanted)
                o = _canonical_terms(pc.take(object_tail, 2 * wanted))
                if extra:
                    s = pa.concat_arrays([s, pa.array([e[1] for e in extra], pa.string())])
                    p = pa.concat_arrays([p, pa.array([e[2] for e in extra], pa.string())])
                    o = pa.concat_arrays([o, pa.array([e[3] for e in extra], pa.string())])
                    row_pos = np.concatenate([row_pos, np.searchsorted(element_lines, [e[0] for e in extra])])
                builder.add(times, s, p, o, first_pos + row_pos)
                if on_disorder == "error" and len(times):
                    _raise_disorder_before(name, None, on_disorder, last, None, None, None, line_base,
                                           skipped, times=times, first_pos=first_pos, lines_before=first_line - 1)
                if len(times):
                    last = int(times[-1])
                line_base += len(lines)
    except UnicodeDecodeError:
        raise decode_error(name, line_base + 1) from None
    columns = builder.finish()
    report.elements += len(columns.times)
    if on_disorder == "warn":
        columns = _sorted_by_time(columns, report, skipped, first_line - 1)
    if columns.table.num_rows and np.any(np.diff(columns.table["pos"].to_numpy()) < 0):  # odd lines came last
        columns.table = columns.table.sort_by("pos")
    return columns


def _line_of(position: int, skipped: Sequence[int], lines_before: int = 0) -> int:
    """The line number of the element at ``position`` (0-based, counted from line
    ``lines_before + 1``) given the lines without one."""
    line = lines_before + position + 1
    for number in skipped:  # sorted
        if number <= line:
            line += 1
        else:
            break
    return line


def _raise_disorder_before(name: str, number: int | None, on_disorder: Literal["error", "warn"], last: int | None,
                           strict_lines: Any, strict_times: Any, extra: Any, line_base: int,
                           skipped: Sequence[int], *, times: np.ndarray | None = None, first_pos: int = 0,
                           lines_before: int = 0) -> None:
    """Raise the first "time goes backwards" of the block (before line ``number``, if given),
    as the streaming reader would have raised it first."""
    if on_disorder != "error":
        return
    if times is None:  # the elements of the block before line `number`, in line order
        before = [(line_base + int(i) + 1, int(t)) for i, t in zip(strict_lines, strict_times)
                  if number is None or line_base + int(i) + 1 < number] if strict_times is not None else []
        before += [(line_base + e[0] + 1, e[4]) for e in extra]
        before.sort()
        previous = last
        for line, t in before:
            if previous is not None and t < previous:
                raise UserError(f"time goes backwards: {t} after {previous}", file=name, line=line)
            previous = t
        return
    full = np.concatenate([[last], times]) if last is not None else times
    back = np.flatnonzero(full[1:] < full[:-1])
    if len(back):
        k = int(back[0]) + 1  # index in `full`
        position = first_pos + k - (1 if last is not None else 0)
        raise UserError(f"time goes backwards: {int(full[k])} after {int(full[k - 1])}", file=name,
                        line=_line_of(position, skipped, lines_before))


def _sorted_by_time(columns: StreamColumns, report: Any, skipped: Sequence[int], lines_before: int = 0) -> StreamColumns:
    """``--on-disorder warn``: count the disorders in ``report`` and sort stably by time."""
    times = columns.times
    back = np.flatnonzero(times[1:] < times[:-1])
    if not len(back):
        return columns
    report.disorders += len(back)
    first = int(back[0]) + 1
    report.first_disorder = (int(times[first]), int(times[first - 1]))
    report.first_disorder_line = _line_of(first, skipped, lines_before)
    order = np.argsort(times, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    table = columns.table
    table = table.set_column(table.schema.get_field_index("pos"), "pos",
                             pa.array(rank[table["pos"].to_numpy()], pa.int64())).sort_by("pos")
    return StreamColumns(times[order], table)


def _canonical_terms(values: pa.Array, where: Callable[[int], dict[str, Any]] | None = None) -> pa.Array:
    """Terms as the readers canonicalise them: simple IRIs and plain simple strings as written
    (what `canonical_term` returns for them), the others (``76.0^^<…#float>``, language tags,
    escapes) through `canonical_term` once per distinct value. ``where(i)``: the place of row
    ``i`` for a term that is not one (a `UserError`'s file and field); None when every value passed a check."""
    plain = pc.match_substring_regex(values, _SIMPLE_TERM)
    if pc.all(plain).as_py() is not False:
        return values
    other = pc.unique(values.filter(pc.invert(plain)))
    canonical = []
    for value in other.to_pylist():
        try:
            canonical.append(canonical_term(value))
        except TermError as error:
            if where is None:
                raise
            row = pc.index(values, value).as_py()
            raise UserError(str(error), **where(row)) from None
    mapped = pc.take(pa.array(canonical, pa.string()), pc.index_in(values, value_set=other))
    return pc.if_else(plain, values, mapped)


def read_parquet_columns(path: str, predicates: frozenset[str] | None, *, on_disorder: Literal["error", "warn"] = "error",
                         report: Any = None) -> StreamColumns:
    """A workbench Parquet stream as `StreamColumns` (the elements `read_parquet` yields, with
    the same checks per batch; terms canonicalised per distinct value, as the Python path
    does per element). Time going backwards: an error naming the row, or with
    ``on_disorder="warn"`` counted and sorted as `read_yabench_columns` does."""
    import pyarrow.parquet as pq

    from rsp_workbench.streams.parquet import READ_ERRORS, arrow_message, check_batch, check_parquet_stream
    from rsp_workbench.streams.reader_common import ReadReport

    name = os.fspath(path)
    report = report if report is not None else ReadReport()
    report.source, report.format = name, "parquet"
    check_parquet_stream(path)
    builder = _Builder(predicates)
    last = None
    try:
        parquet = pq.ParquetFile(path, page_checksum_verification=True)
    except READ_ERRORS as error:
        raise UserError(f"not a readable Parquet file ({arrow_message(error)})", file=name) from None
    with parquet:
        first_row = 1
        try:
            for batch in parquet.iter_batches(batch_size=1 << 17, columns=["subject", "predicate", "object", "t"]):
                batch.validate(full=True)
                check_batch(batch, first_row, name)
                times = batch.column(3).to_numpy()
                if on_disorder == "error" and len(times):
                    full = np.concatenate([[last], times]) if last is not None else times
                    back = np.flatnonzero(full[1:] < full[:-1])
                    if len(back):
                        k = int(back[0]) + 1
                        row = first_row + k - (1 if last is not None else 0)
                        raise UserError(f"time goes backwards: {int(full[k])} after {int(full[k - 1])}", file=name,
                                        field=f"row {row}")

                def where(i: int, base: int = first_row) -> dict[str, Any]:
                    return {"file": name, "field": f"row {base + i}"}

                p = _canonical_terms(batch.column(1), where)
                positions = np.arange(len(times), dtype=np.int64)
                s, o = batch.column(0), batch.column(2)
                if predicates is not None:
                    keep = pc.is_in(p, value_set=builder._wanted)
                    positions = positions[np.asarray(keep.to_numpy(zero_copy_only=False), dtype=bool)]
                    s, p, o = s.filter(keep), p.filter(keep), o.filter(keep)
                s = _canonical_terms(s, lambda i: where(int(positions[i])))
                o = _canonical_terms(o, lambda i: where(int(positions[i])))
                builder.add(times, s, p, o, builder.count + positions)
                if len(times):
                    last = int(times[-1])
                first_row += len(times)
        except READ_ERRORS as error:
            raise UserError(f"cannot read Parquet data near row {first_row} ({arrow_message(error)})",
                            file=name) from None
    columns = builder.finish()
    report.elements += len(columns.times)
    return _sorted_by_time(columns, report, []) if on_disorder == "warn" else columns


def read_columns(path: str, fmt: str, predicates: frozenset[str] | None, *, interval_ms: int = 1000,
                 on_disorder: Literal["error", "warn"] = "error", report: Any = None) -> StreamColumns:
    """A stream file as `StreamColumns` (YABench text and Parquet by Arrow kernels; the other
    formats through their Python reader, keeping only the rows the query can match)."""
    if fmt == "yabench":
        return read_yabench_columns(path, predicates, on_disorder=on_disorder, report=report)
    if fmt == "parquet":
        return read_parquet_columns(path, predicates, on_disorder=on_disorder, report=report)
    from rsp_workbench.streams.readers import read_stream

    elements: Iterable[StreamElement] = read_stream(path, fmt, interval_ms=interval_ms, on_disorder=on_disorder,
                                                    report=report)
    if on_disorder == "warn":
        elements = sorted(elements, key=lambda element: element.t)
    return columns_from_elements(elements, predicates)


# --- BGPs as Arrow joins -------------------------------------------------------------------------


_NUMERIC_TERM = re.compile(
    r'"([+-]?[0-9]+)"\^\^<http://www\.w3\.org/2001/XMLSchema#(?:integer|int|long|short|byte|nonNegativeInteger|'
    r'positiveInteger|nonPositiveInteger|negativeInteger|unsignedLong|unsignedInt|unsignedShort|unsignedByte)>'
    r'|"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"\^\^<http://www\.w3\.org/2001/XMLSchema#decimal>'
    r'|"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"\^\^<http://www\.w3\.org/2001/XMLSchema#'
    r'(?:float|double)>'
)


def certainly_fails(term: str, bound: NumericBound) -> bool:
    """``term`` is a well-formed numeric literal that fails ``bound`` (by a relative margin
    of 1e-6, as `oracle_job.certainly_fails`: never drops a row the exact FILTER keeps)."""
    match = _NUMERIC_TERM.fullmatch(term)
    if match is None:
        return False
    try:
        value = float(next(g for g in match.groups() if g is not None))
    except (ValueError, OverflowError):
        return False
    return bool(fails_bound(value, bound))


def fails_bound(value: Any, bound: NumericBound, absolute: Callable[[Any], Any] = abs) -> Any:
    """``value`` (a float, or a Spark column with ``absolute=F.abs``) fails ``bound`` by more
    than a relative margin of 1e-6 (float32 rounding, decimal vs double)."""
    c = bound.value
    margin = 1e-6 * max(1.0, abs(c))
    return {">": lambda: value <= c - margin, ">=": lambda: value < c - margin, "<": lambda: value >= c + margin,
            "<=": lambda: value > c + margin, "=": lambda: absolute(value - c) > margin}[bound.op]()


def bgp_order(context: AnnotationContext, patterns: Sequence[tuple[Any, Any, Any]]
              ) -> tuple[list[tuple[Any, Any, Any]], list[str], Relation | None]:
    """The join order of a BGP's patterns, its variables, and its relation if it has no pattern."""
    ordered = connected_order(patterns)
    variables = list(dict.fromkeys(term_key(t) for pattern in patterns for t in pattern if is_variable(t)))
    trivial = None if ordered else Relation((), [((), (context.true_requirement(),))])
    return ordered, variables, trivial


class ArrowBGP:
    """Evaluates BGP leaves over `StreamColumns` with Arrow hash joins (as `SparkBGP` does
    on DataFrames): annotated `Relation` rows with per-window requirements ``[pmin, pmax]``."""

    def __init__(self, context: AnnotationContext, tables: Sequence[pa.Table]) -> None:
        self.context = context
        self.tables = list(tables)
        self.times = [np.asarray(w.times, dtype=np.int64) for w in context.windows]

    def __call__(self, patterns: Sequence[tuple[Any, Any, Any]], graph: str | None,
                 bounds: Sequence[NumericBound] = ()) -> Relation | CodedRelation:
        width = self.context.width
        ordered, variables, trivial = bgp_order(self.context, patterns)
        if trivial is not None:
            return trivial
        annotator = Annotator(self.context)
        joined: pa.Table | None = None
        bound: list[str] = []
        for pattern in ordered:
            names = list(dict.fromkeys(term_key(t) for t in pattern if is_variable(t)))
            frame = self._pattern_table(pattern, graph, bounds, annotator)
            if joined is None:
                joined = frame
            else:
                on = [f"v:{n}" for n in names if n in bound]
                joined = self._join(joined, frame, on)
                columns = {c: joined[c] for c in joined.column_names if not c.endswith("_r")}
                keep = None
                for w in range(width):
                    for c, merge in (("pmin", pc.min_element_wise), ("pmax", pc.max_element_wise),
                                     ("tmin", pc.min_element_wise), ("tmax", pc.max_element_wise)):
                        columns[f"{c}{w}"] = merge(joined[f"{c}{w}"], joined[f"{c}{w}_r"])
                    band = pc.less_equal(pc.subtract(columns[f"tmax{w}"], columns[f"tmin{w}"]),
                                         self.context.windows[w].size)
                    keep = band if keep is None else pc.and_(keep, band)
                joined = pa.table(columns).filter(keep)
            bound += [n for n in names if n not in bound]
            if joined.num_rows == 0:
                return Relation(tuple(variables), [])
        assert joined is not None
        return arrow_relation(variables, joined.column, [f"v:{v}" for v in variables],
                              [f"{c}{w}" for w in range(width) for c in ("pmin", "pmax")])

    @staticmethod
    def _join(left: pa.Table, right: pa.Table, on: list[str]) -> pa.Table:
        if on:
            return left.join(right, keys=on, join_type="inner", right_suffix="_r", use_threads=False)
        n, m = left.num_rows, right.num_rows  # no shared variable: every pair (the band prunes it)
        li = pa.array(np.repeat(np.arange(n), m))
        ri = pa.array(np.tile(np.arange(m), n))
        columns = {c: left[c].take(li) for c in left.column_names}
        for c in right.column_names:
            columns[c + "_r" if c in columns else c] = right[c].take(ri)
        return pa.table(columns)

    def _pattern_table(self, pattern: tuple[Any, Any, Any], graph: str | None, bounds: Sequence[NumericBound],
                       annotator: Annotator) -> pa.Table:
        """One pattern's matches: a column per variable (``v:NAME``), requirement and time columns."""
        width = self.context.width
        names = [term_key(t) if is_variable(t) else None for t in pattern]
        unique = list(dict.fromkeys(n for n in names if n is not None))
        first = {n: names.index(n) for n in unique}
        own_bounds = [(i, b) for i, n in enumerate(names) for b in bounds if n == b.variable]
        statics, windows = annotator.sources(graph)
        parts: list[pa.Table] = []

        def requirement(w: int | None, pos: np.ndarray) -> dict[str, Any]:
            out: dict[str, Any] = {}
            n = len(pos)
            for v in range(width):
                if v == w:
                    t = self.times[v][pos]
                    out.update({f"pmin{v}": pos, f"pmax{v}": pos, f"tmin{v}": t, f"tmax{v}": t})
                else:
                    out.update({f"pmin{v}": np.full(n, BIG, np.int64), f"pmax{v}": np.full(n, -1, np.int64),
                                f"tmin{v}": np.full(n, BIG, np.int64), f"tmax{v}": np.full(n, -BIG, np.int64)})
            return out

        matched = [triple for triples in statics for triple in triples if pattern_matches(pattern, names, triple)]
        if matched:
            columns: dict[str, Any] = {f"v:{n}": pa.array([t[first[n]] for t in matched], pa.string()) for n in unique}
            columns.update(requirement(None, np.zeros(len(matched), np.int64)))
            parts.append(pa.table(columns))
        for w in windows:
            table = self.tables[w]
            mask = None
            seen: dict[str, int] = {}
            for i, (term, name) in enumerate(zip(pattern, names)):
                if name is None:
                    condition = pc.equal(table[SLOTS[i]], from_rdflib(term))
                elif name in seen:
                    condition = pc.equal(table[SLOTS[i]], table[SLOTS[seen[name]]])
                else:
                    seen[name] = i
                    continue
                mask = condition if mask is None else pc.and_(mask, condition)
            if mask is not None:
                table = table.filter(mask)
            for i, b in own_bounds:
                column = table[SLOTS[i]]
                distinct = pc.unique(column).to_pylist()
                failing = [term for term in distinct if certainly_fails(term, b)]
                if failing:
                    table = table.filter(pc.invert(pc.is_in(column, value_set=pa.array(failing, pa.string()))))
            pos = table["pos"].to_numpy()
            columns = {f"v:{n}": table[SLOTS[first[n]]] for n in unique}
            columns.update(requirement(w, pos))
            parts.append(pa.table(columns))
        if not parts:
            columns = {f"v:{n}": pa.array([], pa.string()) for n in unique}
            columns.update(requirement(None, np.zeros(0, np.int64)))
            return pa.table(columns)
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


def pattern_matches(pattern: tuple[Any, Any, Any], names: list[str | None], triple: tuple[str, str, str]) -> bool:
    """A static triple matches a pattern (``names``: its variables' keys, None for a constant)."""
    seen: dict[str, str] = {}
    for term, name, value in zip(pattern, names, triple):
        if name is None:
            if from_rdflib(term) != value:
                return False
        elif seen.setdefault(name, value) != value:
            return False
    return True


def tables_for(query: Any, columns: Mapping[str, StreamColumns]) -> list[pa.Table]:
    """Per window of ``query``, the table of its stream."""
    return [columns[w.stream].table for w in query.windows]
