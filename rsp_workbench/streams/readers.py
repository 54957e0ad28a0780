"""Stream readers: YABench text, CSRBench Turtle directories, timestamped N-Quads, Parquet.

Every reader is a generator of ``StreamElement`` (constant memory in the stream length,
except where noted for the CSRBench oracle N-Quads layout). Terms come out as *canonical*
N-Triples text (``rsp_workbench.streams.terms``), so the same RDF term read from different
formats compares equal. ``read_stream`` is the one entry point; ``detect_format`` guesses
the format from the path and the first line.

Here: YABench text, Parquet and the entry points; the N-Quads and CSRBench readers are
``nquads_reader`` and ``csrbench_reader``, what all readers share is ``reader_common``.

Time order: streams must be non-decreasing in ``t``. By default a step back raises a
``UserError`` naming file:line; with ``on_disorder="warn"`` the reader keeps the file
order, counts the steps back in a ``ReadReport`` and the caller prints ``report.summary()``
once (no Python warnings: the tests turn them into errors).
"""

from __future__ import annotations

import os
import re
from itertools import repeat
from pathlib import Path
from typing import Any, Iterator, Sequence

from rsp_workbench.errors import UserError
from rsp_workbench.streams.csrbench_reader import read_csrbench_dir
from rsp_workbench.streams.model import MAX_TIME_MS, MIN_TIME_MS, StreamElement
from rsp_workbench.streams.nquads_reader import NQUAD_LINE, parse_time_graph, read_nquads
from rsp_workbench.streams.reader_common import (
    SKIP_LINE,
    YABENCH_STEPS,
    OnDisorder,
    ReadReport,
    TimeOrder,
    checked_time,
    decode_error,
    diagnose_line,
    line_blocks,
    open_text,
)
from rsp_workbench.streams.terms import (
    ABSOLUTE_IRI,
    IRI_SIMPLE,
    OBJECT,
    STREAM_LITERAL,
    STREAM_QUIRK_LITERAL,
    SUBJECT,
    TermError,
    canonical_term,
)

STREAM_READ_FORMATS = ("yabench", "csrbench-dir", "nquads", "parquet")


# --- YABench stream text -----------------------------------------------------------------

# Fast path: the exact layout YABench writes (single spaces, IRIs without escapes), applied
# with ``findall`` to blocks of lines; any other line lands in the last group and goes
# through the general pattern (any N-Triples spacing, blank nodes, escapes, comments).
_YABENCH_BLOCK = re.compile(
    rf'^(?:({IRI_SIMPLE}) ({IRI_SIMPLE}) ({IRI_SIMPLE}|{STREAM_LITERAL}|{STREAM_QUIRK_LITERAL}) "(-?[0-9]+)" \.\r?\n|([^\n]*\n?))',
    re.MULTILINE,
)
YABENCH_LINE = re.compile(
    rf'[ \t]*({SUBJECT})[ \t]+({ABSOLUTE_IRI})[ \t]+({OBJECT})[ \t]+"(-?[0-9]+)"[ \t]*\.[ \t]*(?:#.*)?\r?\n?'
)


def read_yabench(
    path: str | os.PathLike[str], *, on_disorder: OnDisorder = "error", report: ReadReport | None = None
) -> Iterator[StreamElement]:
    """Read YABench stream text: ``<s> <p> <o> "<t>" .`` per line (docs/design/FORMATS.md "Streams in" 1).

    Accepts YABench's unquoted numbers (``76.0^^<…#float>``, normalised to
    ``"76.0"^^<…#float>``), any N-Triples object, blank and ``#`` comment lines.
    """
    name = os.fspath(path)
    report = report if report is not None else ReadReport()
    report.source, report.format = name, "yabench"
    order = TimeOrder(name, on_disorder, report)
    findall = _YABENCH_BLOCK.findall
    general = YABENCH_LINE.fullmatch
    canonical = canonical_term
    element = StreamElement
    new = tuple.__new__  # StreamElement's generated __new__ is a Python function: skip it
    last_text = ""
    t = 0
    count = 0
    number = 0
    try:
        with open_text(name) as handle:
            for block in line_blocks(handle):
                for s, p, o, time_text, other in findall(block):
                    if not s:
                        if not other:
                            continue  # the empty match at the end of a block
                        number += 1
                        match = general(other)
                        if match is None:
                            if SKIP_LINE.fullmatch(other):
                                continue
                            raise diagnose_line(other, YABENCH_STEPS, name, number)
                        s, p, o, time_text = match.groups()
                        s = canonical(s)
                        p = canonical(p)
                        o = canonical(o)
                    else:
                        number += 1
                        first = o[0]
                        if first != "<" and (first != '"' or o[-1] != '"' or "\\" in o):
                            o = canonical(o)
                    if time_text != last_text:
                        t = int(time_text)
                        if not MIN_TIME_MS <= t <= MAX_TIME_MS:
                            checked_time(t, name, number)
                        last_text = time_text
                        if order.last is not None and t < order.last:
                            order.step_back(t, number)
                        order.last = t
                    count += 1
                    yield new(element, (s, p, o, t, None))
    except UnicodeDecodeError:
        raise decode_error(name, number + 1) from None
    except TermError as error:
        raise UserError(str(error), file=name, line=number) from None
    finally:
        report.elements += count


# --- Parquet -----------------------------------------------------------------------------


def read_parquet(
    path: str | os.PathLike[str], *, on_disorder: OnDisorder = "error", report: ReadReport | None = None
) -> Iterator[StreamElement]:
    """Read the workbench's Parquet stream format in batches (``rsp_workbench.streams.parquet``).

    Checks structure (no nulls, terms start like N-Triples terms) in C per batch, not full
    term syntax: Parquet files are written by the workbench, and full validation would cost
    more than the read. Rows are numbered from 1 in messages.
    """
    from rsp_workbench.streams.parquet import iter_parquet_columns

    name = os.fspath(path)
    report = report if report is not None else ReadReport()
    report.source, report.format = name, "parquet"
    order = TimeOrder(name, on_disorder, report)
    element = StreamElement
    new = tuple.__new__
    first_row = 1
    for subjects, predicates, objects, graphs, times, backwards in iter_parquet_columns(name):
        if not times:
            continue
        if order.last is not None and times[0] < order.last:
            order.step_back(times[0], first_row, f"row {first_row}")
        for index in backwards:
            order.last = times[index - 1]
            order.step_back(times[index], first_row + index, f"row {first_row + index}")
        order.last = times[-1]
        # tuple.__new__ directly: StreamElement's generated __new__ is a Python function.
        yield from map(new, repeat(element), zip(subjects, predicates, objects, times, graphs))
        report.elements += len(times)
        first_row += len(times)


# --- entry points ------------------------------------------------------------------------


def read_stream(
    path: str | os.PathLike[str],
    fmt: str,
    *,
    interval_ms: int = 1000,
    on_disorder: OnDisorder = "error",
    report: ReadReport | None = None,
) -> Iterator[StreamElement]:
    """Read a stream in ``fmt`` (one of ``STREAM_READ_FORMATS``) as a generator of elements.

    ``interval_ms`` applies to ``csrbench-dir``; ``on_disorder`` to formats whose order
    comes from the file. Pass a ``ReadReport`` to learn counts and disorders afterwards.
    """
    if fmt == "yabench":
        return read_yabench(path, on_disorder=on_disorder, report=report)
    if fmt == "nquads":
        return read_nquads(path, on_disorder=on_disorder, report=report)
    if fmt == "parquet":
        return read_parquet(path, on_disorder=on_disorder, report=report)
    if fmt == "csrbench-dir":
        return read_csrbench_dir(path, interval_ms=interval_ms, report=report)
    raise UserError(
        f"unknown stream format {fmt!r}; expected one of {', '.join(STREAM_READ_FORMATS)}", field="stream-format"
    )


class StreamFile(Sequence[StreamElement]):
    """A stream file as a sequence of elements that is read only when someone needs them.

    Iterating goes through the file without keeping it (the stand feeds a run from it, the
    columnar oracle reads its columns from it); the length and the last time of a Parquet
    stream come from its ``t`` column; indexing reads the whole stream once and keeps it
    (the in-process oracle's paths over element objects). So a run whose answers are
    computed from columns or by the Spark job never holds the stream's elements in memory.
    """

    def __init__(self, path: str | os.PathLike[str], fmt: str, *, interval_ms: int = 1000) -> None:
        self.path, self.format, self.interval_ms = os.fspath(path), fmt, interval_ms
        self._elements: list[StreamElement] | None = None
        self._extent: tuple[int, int | None] | None = None  # (elements, last t)

    def read(self) -> Iterator[StreamElement]:
        """The elements in file order, read through (the kept list if it is already read)."""
        if self._elements is not None:
            return iter(self._elements)
        return read_stream(self.path, self.format, interval_ms=self.interval_ms)

    def elements(self) -> list[StreamElement]:
        """The whole stream, read once and kept."""
        if self._elements is None:
            self._elements = list(self.read())
        return self._elements

    def _parquet_extent(self) -> tuple[int, int | None] | None:
        if self._elements is not None or self.format != "parquet":
            return None
        if self._extent is None:
            from rsp_workbench.streams.parquet import parquet_stream_extent

            self._extent = parquet_stream_extent(self.path)
        return self._extent

    def last_time(self) -> int | None:
        """The application time of the last element (None: an empty stream)."""
        extent = self._parquet_extent()
        if extent is not None:
            return extent[1]
        elements = self.elements()
        return elements[-1].t if elements else None

    def __len__(self) -> int:
        extent = self._parquet_extent()
        return extent[0] if extent is not None else len(self.elements())

    def __getitem__(self, index: Any) -> Any:
        return self.elements()[index]

    def __iter__(self) -> Iterator[StreamElement]:
        return self.read()


def instants_of(files: Sequence[StreamFile]) -> int:
    """How many distinct application times the streams have together (= stimuli the stand sends
    for them, merged): from the ``t`` columns of Parquet files, else from one pass over each."""
    distinct = list({id(file): file for file in files}.values())
    if all(file._parquet_extent() is not None for file in distinct):
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        columns = [pq.read_table(file.path, columns=["t"]).column("t") for file in distinct]
        chunks = [chunk.cast(pa.int64()) for column in columns for chunk in column.chunks]
        return int(pc.count_distinct(pa.chunked_array(chunks, pa.int64())).as_py())
    times: set[int] = set()
    for file in distinct:
        for element in file.read():
            times.add(element.t)
    return len(times)


def last_time(elements: Sequence[StreamElement]) -> int | None:
    """The time of a stream's last element, without reading a `StreamFile` whole."""
    if isinstance(elements, StreamFile):
        return elements.last_time()
    return elements[-1].t if elements else None


_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".nq": "nquads", ".nquads": "nquads"}


def detect_format(path: str | os.PathLike[str]) -> str:
    """Guess the stream format: a directory is ``csrbench-dir``; files by suffix, else by content."""
    file = Path(path)
    if file.is_dir():
        return "csrbench-dir"
    suffix = file.suffix.lower()
    if suffix == ".gz":
        suffix = Path(file.stem).suffix.lower()
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    try:
        with open(file, "rb") as raw:
            if raw.read(4) == b"PAR1":
                return "parquet"
        with open_text(file) as handle:  # the first 64 KiB only (a file of one endless line: /dev/zero)
            head = handle.read(1 << 16)
            lines = head.splitlines(keepends=True)
            if len(head) == 1 << 16:
                lines = lines[:-1]  # may be cut
            for index, line in enumerate(lines):
                if index > 1000:
                    break
                if SKIP_LINE.fullmatch(line):
                    continue
                if YABENCH_LINE.fullmatch(line):
                    return "yabench"
                if NQUAD_LINE.fullmatch(line):
                    return "nquads"
                break
    except UnicodeDecodeError:
        pass
    except OSError as error:
        raise UserError(f"cannot open stream: {error.strerror or error}", file=str(file)) from None
    raise UserError(
        f"cannot tell the stream format; pass one of {', '.join(STREAM_READ_FORMATS)}", file=str(file), field="stream-format"
    )


def element_time(line: str, fmt: str) -> int | None:
    """The time of one line of a ``yabench`` or ``time-graph`` N-Quads stream, or None when it is
    not a well-formed element line (a blank or comment line; a malformed one, which the reader reports)."""
    if fmt == "yabench":
        match = YABENCH_LINE.fullmatch(line)
        return int(match.group(4)) if match else None
    match = NQUAD_LINE.fullmatch(line)
    stamp = parse_time_graph(match.group(4)) if match and match.group(4) else None
    return stamp[0] if stamp else None


def last_element_time(path: str | os.PathLike[str], fmt: str) -> int | None:
    """The time of the last element line of a ``yabench`` or ``time-graph`` N-Quads file, read from its end
    (in a stream in time order, its last time); None when it cannot tell (compressed, no such line
    within 1 MiB of the end, a malformed last line)."""
    name = os.fspath(path)
    if name.endswith(".gz") or fmt not in ("yabench", "nquads"):
        return None
    with open(name, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - (1 << 20)))
        tail = handle.read()
    lines = tail.split(b"\n")
    if size > len(tail):
        lines = lines[1:]  # may be cut
    for raw in reversed(lines):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if SKIP_LINE.fullmatch(line):
            continue
        return element_time(line, fmt)
    return None
