"""Stream writers: YABench stream text and the workbench interchange format.

The interchange format is *timestamped N-Quads*: one quad per element whose graph name
carries the application time, ``<urn:rspwb:t:{t}>`` (docs/design/FORMATS.md "N-Quads whose graph name
carries the time"). An element that has its own graph name ``g`` is written with graph
``<urn:rspwb:t:{t}:g:{g}>`` (``g`` percent-encoded), so no information is lost.

Writers write to ``PATH.partial`` and rename on ``close()`` so that an interrupted write
never leaves a file that looks complete.
"""

from __future__ import annotations

import os
import re
from typing import IO, TYPE_CHECKING, Iterable
from urllib.parse import quote

from rsp_workbench.errors import UserError
from rsp_workbench.streams.atomic import AtomicStreamWriter
from rsp_workbench.streams.model import XSD, StreamElement

if TYPE_CHECKING:
    from rsp_workbench.streams.parquet import ParquetStreamWriter

TIME_GRAPH_PREFIX = "urn:rspwb:t:"

# YABench writes numeric literals unquoted: ``76.0^^<...#float>`` (not valid N-Triples).
YABENCH_UNQUOTED_DATATYPES = frozenset(
    XSD + name for name in ("float", "double", "decimal", "integer", "int", "long")
)
_TYPED_LITERAL = re.compile(r'^"([^"\\]*)"\^\^<([^>]*)>$')
# Only lexical forms that read back as YABench numbers are written unquoted.
_UNQUOTABLE_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|NaN|[+-]?INF|[+-]?Infinity")

STREAM_FORMATS = ("yabench", "nquads")
#: Every format ``open_stream_writer`` accepts (Parquet lives in ``rsp_workbench.streams.parquet``).
WRITE_FORMATS = STREAM_FORMATS + ("parquet",)


def time_graph_iri(t: int, graph: str | None = None) -> str:
    """The graph IRI (without angle brackets) that carries time ``t`` in the interchange format."""
    if graph is None:
        return f"{TIME_GRAPH_PREFIX}{t}"
    return f"{TIME_GRAPH_PREFIX}{t}:g:{quote(graph, safe='')}"


def yabench_object(term: str) -> str:
    """Render an object term the way YABench's generator does (numeric literals unquoted)."""
    if term.startswith('"'):
        match = _TYPED_LITERAL.match(term)
        if match and match.group(2) in YABENCH_UNQUOTED_DATATYPES and _UNQUOTABLE_NUMBER.fullmatch(match.group(1)):
            return f"{match.group(1)}^^<{match.group(2)}>"
    return term


def format_yabench_line(element: StreamElement) -> str:
    """``<s> <p> <o> "<t>" .`` plus newline; the graph name is not representable and dropped."""
    return f'{element.subject} {element.predicate} {yabench_object(element.object)} "{element.t}" .\n'


def format_nquads_line(element: StreamElement) -> str:
    """One interchange-format quad plus newline."""
    graph = element.graph
    if graph is not None and graph.startswith("<") and graph.endswith(">"):
        graph = graph[1:-1]
    return f"{element.subject} {element.predicate} {element.object} <{time_graph_iri(element.t, graph)}> .\n"


_FORMATTERS = {"yabench": format_yabench_line, "nquads": format_nquads_line}


class StreamWriter(AtomicStreamWriter):
    """Writes elements in one text format (YABench text or timestamped N-Quads), atomically."""

    def __init__(self, path: str | os.PathLike[str], fmt: str) -> None:
        if fmt not in _FORMATTERS:
            raise UserError(f"unknown stream format {fmt!r}; expected one of {', '.join(STREAM_FORMATS)}", field="format")
        super().__init__(path)
        self.format = fmt
        self._format_line = _FORMATTERS[fmt]
        self._handle: IO[str] | None = open(self._partial, "w", encoding="utf-8", newline="\n", buffering=1 << 20)

    def _append(self, element: StreamElement) -> None:
        assert self._handle is not None, "writer is closed"
        self._handle.write(self._format_line(element))

    def write_text(self, text: str) -> None:
        """Append pre-formatted lines (used by generators that format in bulk)."""
        assert self._handle is not None, "writer is closed"
        self._handle.write(text)

    def _release(self, *, finish: bool) -> bool:
        if self._handle is None:
            return False
        self._handle.close()
        self._handle = None
        return True


def open_stream_writer(path: str | os.PathLike[str], fmt: str) -> "StreamWriter | ParquetStreamWriter":
    """A writer for any of ``WRITE_FORMATS`` (same contract: write, write_all, close, abort, context manager)."""
    if fmt == "parquet":
        from rsp_workbench.streams.parquet import ParquetStreamWriter

        return ParquetStreamWriter(path)
    if fmt not in _FORMATTERS:
        raise UserError(f"unknown stream format {fmt!r}; expected one of {', '.join(WRITE_FORMATS)}", field="format")
    return StreamWriter(path, fmt)


def write_stream(path: str | os.PathLike[str], elements: Iterable[StreamElement], fmt: str) -> int:
    """Write all elements to ``path`` in ``fmt`` (any of ``WRITE_FORMATS``); returns the number written."""
    with open_stream_writer(path, fmt) as writer:
        return writer.write_all(elements)
