"""Stream readers: YABench text, CSRBench Turtle directories, timestamped N-Quads, Parquet.

Every reader is a generator of ``StreamElement`` (constant memory in the stream length,
except where noted for the CSRBench oracle N-Quads layout). Terms come out as *canonical*
N-Triples text (``rsp_workbench.streams.terms``), so the same RDF term read from different
formats compares equal. ``read_stream`` is the one entry point; ``detect_format`` guesses
the format from the path and the first line.

Time order: streams must be non-decreasing in ``t``. By default a step back raises a
``UserError`` naming file:line; with ``on_disorder="warn"`` the reader keeps the file
order, counts the steps back in a ``ReadReport`` and the caller prints ``report.summary()``
once (no Python warnings: the tests turn them into errors).
"""

from __future__ import annotations

import gzip
import io
import os
import re
from contextlib import nullcontext
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import IO, Any, Iterator, Literal as LiteralType, Sequence
from urllib.parse import unquote

from rsp_workbench.errors import UserError, cut_words
from rsp_workbench.streams.model import MAX_TIME_MS, MIN_TIME_MS, StreamElement
from rsp_workbench.streams.terms import (
    ABSOLUTE_IRI,
    BNODE,
    IRI_SIMPLE,
    OBJECT,
    STREAM_LITERAL,
    STREAM_QUIRK_LITERAL,
    SUBJECT,
    TermError,
    canonical_term,
    from_rdflib,
    relative_iri_at,
    shorten,
    split_literal,
)
from rsp_workbench.streams.turtle import plain_turtle_triples
from rsp_workbench.streams.writers import TIME_GRAPH_PREFIX

STREAM_READ_FORMATS = ("yabench", "csrbench-dir", "nquads", "parquet")
OnDisorder = LiteralType["error", "warn"]
CSRBENCH_FILE = re.compile(r"data_([0-9]+)\.ttl")


@dataclass
class ReadReport:
    """What a reader saw: element count, time disorders, skipped statements.

    Mutable on purpose: pass one to ``read_stream`` and read it after iterating.
    ``disorders`` counts the places where time goes backwards (an element earlier than
    the one before it).
    """

    source: str = ""
    format: str = ""
    elements: int = 0
    disorders: int = 0
    first_disorder_line: int | None = None
    first_disorder: tuple[int, int] | None = None  # (t, previous t)
    skipped: int = 0
    skipped_reason: str = ""

    def summary(self) -> str | None:
        """One line for the user about disorders and skipped statements, or None if clean."""
        parts = []
        if self.disorders:
            t, previous = self.first_disorder or (0, 0)
            where = f"{self.source}:{self.first_disorder_line}" if self.first_disorder_line else self.source
            times = "time goes backwards once" if self.disorders == 1 else f"time goes backwards {self.disorders} times"
            parts.append(f"{where}: {times} (first: {t} after {previous}); elements kept in file order")
        if self.skipped:
            parts.append(f"{self.source}: skipped {self.skipped} statements ({self.skipped_reason})")
        return "; ".join(parts) or None


def checked_time(t: int, file: str, line: int | None = None, field: str | None = None) -> int:
    """``t`` if it fits the int64 milliseconds of application time, else a `UserError` at file:line."""
    if MIN_TIME_MS <= t <= MAX_TIME_MS:
        return t
    raise UserError(f"time {t} ms is outside the int64 range of application time (|t| < 2^63 ms)",
                    file=file, line=line, field=field)


class _TimeOrder:
    """Checks non-decreasing time; raises or counts according to ``on_disorder``."""

    __slots__ = ("file", "warn", "report", "last")

    def __init__(self, file: str, on_disorder: str, report: ReadReport) -> None:
        if on_disorder not in ("error", "warn"):
            raise UserError(f"on_disorder must be 'error' or 'warn', not {on_disorder!r}", field="on_disorder")
        self.file = file
        self.warn = on_disorder == "warn"
        self.report = report
        self.last: int | None = None

    def step_back(self, t: int, line: int | None, where: str | None = None) -> None:
        """Called when ``t < self.last``: raise, or count and carry on (``line`` = row for Parquet)."""
        previous = self.last if self.last is not None else t
        if not self.warn:
            raise UserError(
                f"time goes backwards: {t} after {previous}",
                file=self.file,
                line=None if where else line,  # Parquet: rows are named in ``where``
                field=where,
            )
        report = self.report
        report.disorders += 1
        if report.first_disorder is None:
            report.first_disorder = (t, previous)
            report.first_disorder_line = line


def open_text(path: str | os.PathLike[str]) -> IO[str]:
    """Open a text stream file (``.gz`` transparently), UTF-8, large buffer."""
    name = os.fspath(path)
    try:
        if name.endswith(".gz"):
            return io.TextIOWrapper(gzip.open(name, "rb"), encoding="utf-8")
        return open(name, encoding="utf-8", buffering=1 << 20)
    except OSError as error:
        raise UserError(f"cannot open stream: {error.strerror or error}", file=name) from None


def decode_error(name: str, line: int) -> UserError:
    """Decoding happens in blocks, so the exact line is unknown; say after which line it failed."""
    return UserError(f"not UTF-8 text (after line {max(line - 1, 0)})", file=name)


# --- diagnostics -------------------------------------------------------------------------

_WS = re.compile(r"[ \t]*")
_WS1 = re.compile(r"[ \t]+")


def diagnose_line(line: str, steps: list[tuple[str, re.Pattern[str], bool]], file: str, number: int) -> UserError:
    """Find where ``line`` stops following ``steps`` and say what was expected there.

    ``steps`` are ``(description, pattern, needs_space_before)``; the column is 1-based.
    """
    text = line.rstrip("\r\n")
    position = _WS.match(text).end()  # type: ignore[union-attr]  # `[ \t]*` matches everywhere (maybe empty)
    for description, pattern, needs_space in steps:
        if needs_space:
            space = _WS1.match(text, position)
            if space is None and position < len(text):
                return UserError(f"expected a space before {description}", file=file, line=number, column=position + 1)
            position = space.end() if space else position
        relative = relative_iri_at(text, position)  # a term that fails (maybe after a prefix) only for that
        if relative is not None:
            return UserError(f"relative IRI {relative!r}: a stream's IRIs are absolute (<http://…>, <urn:…>)",
                             file=file, line=number, column=position + 1)
        match = pattern.match(text, position)
        if match is None:
            return UserError(
                f"expected {description}, got {_snippet(text, position)}", file=file, line=number, column=position + 1
            )
        position = match.end()
    rest = _WS.match(text, position).end()  # type: ignore[union-attr]  # `[ \t]*` matches everywhere (maybe empty)
    if rest == len(text) or text[rest] == "#":
        return UserError("malformed statement", file=file, line=number)
    return UserError(
        f"expected the end of the line after ' .', got {_snippet(text, rest)}", file=file, line=number, column=rest + 1
    )


def _snippet(text: str, position: int) -> str:
    rest = text[position:]
    if not rest:
        return "the end of the line"
    token = rest.split(None, 1)[0] if rest.strip() else rest
    return repr(token if len(token) <= 40 else token[:39] + "…")


_SUBJECT_STEP = ("a subject (<iri> or _:label)", re.compile(SUBJECT), False)
_PREDICATE_STEP = ("a predicate (<iri>)", re.compile(ABSOLUTE_IRI), True)
_OBJECT_STEP = (
    'an object (<iri>, _:label, "literal" or a number like 76.0^^<datatype>)',
    re.compile(OBJECT),
    True,
)
_DOT_STEP = ("' .' at the end of the statement", re.compile(r"[ \t]*\."), False)
YABENCH_STEPS = [
    _SUBJECT_STEP,
    _PREDICATE_STEP,
    _OBJECT_STEP,
    ('the time in ms as "<digits>"', re.compile(r'"-?[0-9]+"'), True),
    _DOT_STEP,
]
_NQUADS_STEPS = [
    _SUBJECT_STEP,
    _PREDICATE_STEP,
    _OBJECT_STEP,
    ("a graph name (<iri> or _:label) or ' .'", re.compile(rf"[ \t]*(?:{ABSOLUTE_IRI}|{BNODE})?"), False),
    _DOT_STEP,
]


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
SKIP_LINE = re.compile(r"[ \t]*(?:#.*)?\r?\n?")
_BLOCK_CHARS = 1 << 20


MAX_LINE_CHARS = 16 << 20  # one stream line (element) is never this long


def _line_blocks(handle: IO[str]) -> Iterator[str]:
    """Text in blocks of about 1 MiB that end at a line boundary (the last one may not)."""
    rest = ""
    while True:
        try:
            block = handle.read(_BLOCK_CHARS)
        except (EOFError, OSError) as error:  # truncated or corrupt .gz
            raise UserError(f"cannot read stream: {error}", file=getattr(handle, "name", None)) from None
        if not block:
            if rest:
                yield rest
            return
        cut = block.rfind("\n") + 1
        if cut == 0:
            rest += block
            if len(rest) > MAX_LINE_CHARS:  # e.g. /dev/zero or a binary file: stop before memory does
                raise UserError(f"a line longer than {MAX_LINE_CHARS >> 20} MiB characters: not a stream text file",
                                file=getattr(handle, "name", None))
            continue
        yield rest + block[:cut] if rest else block[:cut]
        rest = block[cut:]


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
    order = _TimeOrder(name, on_disorder, report)
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
            for block in _line_blocks(handle):
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


# --- timestamped N-Quads -----------------------------------------------------------------

_NQUAD_BLOCK = re.compile(
    rf"^(?:({IRI_SIMPLE}) ({IRI_SIMPLE}) ({IRI_SIMPLE}|{STREAM_LITERAL}) ({IRI_SIMPLE}) \.\r?\n|([^\n]*\n?))",
    re.MULTILINE,
)
_NQUAD_LINE = re.compile(
    rf"[ \t]*({SUBJECT})[ \t]+({ABSOLUTE_IRI})[ \t]+({OBJECT})(?:[ \t]*({ABSOLUTE_IRI}|{BNODE}))?[ \t]*\.[ \t]*(?:#.*)?\r?\n?"
)
_TIME_GRAPH = re.compile(rf"<{re.escape(TIME_GRAPH_PREFIX)}(-?[0-9]+)(?::g:([^>]*))?>")
_INTEGER_LEXICAL = re.compile(r"[+-]?[0-9]+")

QuadRow = tuple[int, str, str, str, "str | None"]


def _general_quad(line: str, name: str, number: int) -> tuple[str, str, str, str | None] | None:
    """Slow path for one N-Quads line: canonical ``(s, p, o, g)``, None to skip, or raise."""
    match = _NQUAD_LINE.fullmatch(line)
    if match is None:
        if SKIP_LINE.fullmatch(line):
            return None
        raise diagnose_line(line, _NQUADS_STEPS, name, number)
    s, p, o, g = match.groups()
    return canonical_term(s), canonical_term(p), canonical_term(o), canonical_term(g) if g is not None else None


def _quad_batches(name: str) -> Iterator[list[QuadRow]]:
    """Batches of ``(line, s, p, o, graph-or-None)`` per block of lines, canonical terms."""
    findall = _NQUAD_BLOCK.findall
    canonical = canonical_term
    number = 0
    try:
        with open_text(name) as handle:
            for block in _line_blocks(handle):
                batch: list[QuadRow] = []
                append = batch.append
                for s, p, o, g, other in findall(block):
                    number += 1
                    if not s:
                        if not other:
                            number -= 1
                            continue
                        parsed = _general_quad(other, name, number)
                        if parsed is None:
                            continue
                        s, p, o, g = parsed
                    else:
                        first = o[0]
                        if first != "<" and (first != '"' or o[-1] != '"' or "\\" in o):
                            o = canonical(o)
                    append((number, s, p, o, g))
                yield batch
    except UnicodeDecodeError:
        raise decode_error(name, number + 1) from None
    except TermError as error:
        raise UserError(str(error), file=name, line=number) from None


def _iter_quads(name: str) -> Iterator[QuadRow]:
    for batch in _quad_batches(name):
        yield from batch


def _time_graph(graph: str) -> tuple[int, str | None] | None:
    """``(t, own graph or None)`` from ``<urn:rspwb:t:{t}[:g:{enc}]>``, or None for other graphs."""
    match = _TIME_GRAPH.fullmatch(graph)
    if match is None:
        return None
    own = match.group(2)
    if own is None:
        return int(match.group(1)), None
    own = unquote(own)
    return int(match.group(1)), own if own.startswith("_:") else f"<{own}>"


def _first_graph(name: str) -> tuple[bool, str | None]:
    """``(found, graph name of the first statement)``, to choose the layout; ``(False, None)`` if none."""
    for _number, _s, _p, _o, graph in _iter_quads(name):
        return True, graph
    return False, None


def read_nquads(
    path: str | os.PathLike[str], *, on_disorder: OnDisorder = "error", report: ReadReport | None = None
) -> Iterator[StreamElement]:
    """Read timestamped N-Quads in either layout (docs/design/FORMATS.md "Streams in" 3).

    * Time in the graph name, ``<urn:rspwb:t:{t}>`` / ``<urn:rspwb:t:{t}:g:{graph}>``
      (the workbench interchange format, ``writers.format_nquads_line``): one pass,
      constant memory, file order with the disorder check.
    * CSRBench oracle layout, chosen when the first statement's graph is not a time
      graph: see ``read_graph_timestamp_nquads``.

    Not a generator itself: it peeks at the first statement to choose the layout and
    returns the layout's generator (one delegation level less on the hot path).
    """
    name = os.fspath(path)
    report = report if report is not None else ReadReport()
    report.source, report.format = name, "nquads"
    order = _TimeOrder(name, on_disorder, report)
    found, first = _first_graph(name)
    if not found:  # no statements: the empty stream, as in every other stream format
        return iter(())
    if first is None or _time_graph(first) is None:
        return read_graph_timestamp_nquads(name, report=report)
    return _read_time_graph_nquads(name, order, report)


def _read_time_graph_nquads(name: str, order: _TimeOrder, report: ReadReport, text: IO[str] | None = None,
                            first_line: int = 1) -> Iterator[StreamElement]:
    """The one-pass reader for the ``<urn:rspwb:t:{t}>`` layout (hot loop kept inline for speed);
    ``text``: a part of the file already read, whole lines from line ``first_line``."""
    findall = _NQUAD_BLOCK.findall
    canonical = canonical_term
    element = StreamElement
    new = tuple.__new__
    last_graph: str | None = ""
    t = 0
    own: str | None = None
    number = first_line - 1
    try:
        with nullcontext(text) if text is not None else open_text(name) as handle:
            for block in _line_blocks(handle):
                elements: list[StreamElement] = []
                append = elements.append
                for s, p, o, g, other in findall(block):
                    number += 1
                    if not s:
                        if not other:
                            number -= 1
                            continue
                        parsed = _general_quad(other, name, number)
                        if parsed is None:
                            continue
                        s, p, o, g = parsed
                    else:
                        first = o[0]
                        if first != "<" and (first != '"' or o[-1] != '"' or "\\" in o):
                            o = canonical(o)
                    if g != last_graph:
                        time_graph = _time_graph(g) if g is not None else None
                        if time_graph is None:
                            raise UserError(
                                f"expected the graph name <{TIME_GRAPH_PREFIX}{{t}}> that carries the time,"
                                f" got {shorten(g, 40) if g else 'no graph'}",
                                file=name,
                                line=number,
                            )
                        t, own = time_graph
                        if not MIN_TIME_MS <= t <= MAX_TIME_MS:
                            checked_time(t, name, number)
                        last_graph = g
                        if order.last is not None and t < order.last:
                            order.step_back(t, number)
                        order.last = t
                    append(new(element, (s, p, o, t, own)))
                yield from elements
                report.elements += len(elements)
    except UnicodeDecodeError:
        raise decode_error(name, number + 1) from None
    except TermError as error:
        raise UserError(str(error), file=name, line=number) from None


def nquads_layout(path: str | os.PathLike[str]) -> str:
    """Which N-Quads layout `read_nquads` reads from ``path``: ``time-graph`` (time in the graph
    name: readable in parts, line by line), ``graph-timestamp`` (CSRBench oracle layout: the file as a
    whole) or ``empty`` (no statement)."""
    found, first = _first_graph(os.fspath(path))
    if not found:
        return "empty"
    return "graph-timestamp" if first is None or _time_graph(first) is None else "time-graph"


def read_nquads_part(path: str | os.PathLike[str], text: IO[str], *, first_line: int, last_time: int | None,
                     on_disorder: OnDisorder = "error", report: ReadReport | None = None) -> Iterator[StreamElement]:
    """The elements of a part of a ``time-graph`` N-Quads file: whole lines from line ``first_line``, after an
    element at ``last_time`` (None: the first part), as a Spark task reads its range of the file."""
    name = os.fspath(path)
    report = report if report is not None else ReadReport()
    report.source, report.format = name, "nquads"
    order = _TimeOrder(name, on_disorder, report)
    order.last = last_time
    return _read_time_graph_nquads(name, order, report, text, first_line)


def element_time(line: str, fmt: str) -> int | None:
    """The time of one line of a ``yabench`` or ``time-graph`` N-Quads stream, or None when it is
    not a well-formed element line (a blank or comment line; a malformed one, which the reader reports)."""
    if fmt == "yabench":
        match = YABENCH_LINE.fullmatch(line)
        return int(match.group(4)) if match else None
    match = _NQUAD_LINE.fullmatch(line)
    stamp = _time_graph(match.group(4)) if match and match.group(4) else None
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


@dataclass
class _GraphSpan:
    first_line: int
    last_line: int


def _is_timestamp_predicate(predicate: str) -> bool:
    return predicate.endswith("hasTimestamp>")


def _timestamp_value(term: str, file: str, line: int) -> int:
    if term.startswith('"'):
        lexical, _datatype, _language = split_literal(term)
        if _INTEGER_LEXICAL.fullmatch(lexical.strip()):
            return checked_time(int(lexical), file, line)
    raise UserError(f"expected an integer time in ms as hasTimestamp value, got {shorten(term, 40)}", file=file, line=line)


def read_graph_timestamp_nquads(
    path: str | os.PathLike[str], *, report: ReadReport | None = None
) -> Iterator[StreamElement]:
    """Read the CSRBench oracle layout: one named graph per timestamp plus ``<g> :hasTimestamp "t"``.

    A *metadata* statement has a predicate IRI ending in ``hasTimestamp`` and a subject
    that names a graph of the file; it may sit anywhere (default graph, a metadata graph,
    or the graph it describes). Elements come out
    sorted by time (ties: the graph that starts first in the file), with ``graph=None``
    (the graph only carries the time). Statements in the default graph or in graphs that
    only hold metadata are skipped and counted in the report.

    Two passes. Pass 1 validates and collects, per graph, its time and first/last line.
    Pass 2 buffers each graph's elements until the graph is complete and all earlier
    graphs were emitted. Memory: the graph→time map, plus one graph's elements when the
    file lists graphs contiguously in time order (CSRBench does); in the worst case
    (interleaved or out-of-order graphs) the buffered elements of the pending graphs.
    """
    name = os.fspath(path)
    report = report if report is not None else ReadReport()
    report.source, report.format = name, "nquads"
    spans: dict[str | None, _GraphSpan] = {}
    stamps: list[tuple[str, int, str | None, int]] = []  # (subject, line, graph, t)
    for number, s, p, o, g in _iter_quads(name):
        span = spans.get(g)
        if span is None:
            spans[g] = _GraphSpan(number, number)
        else:
            span.last_line = number
        if _is_timestamp_predicate(p):
            stamps.append((s, number, g, _timestamp_value(o, name, number)))
    times: dict[str, int] = {}
    metadata_lines: set[int] = set()
    metadata_graphs: set[str | None] = {None}
    for subject, number, graph, t in stamps:
        if subject not in spans:
            continue  # a data statement that happens to use a hasTimestamp predicate
        metadata_lines.add(number)
        if graph != subject:
            metadata_graphs.add(graph)
        previous = times.setdefault(subject, t)
        if previous != t:
            raise UserError(f"graph {shorten(subject, 40)} has two timestamps: {previous} and {t}", file=name, line=number)
    del stamps
    if not times:
        raise UserError(
            'no timestamped graphs; expected <urn:rspwb:t:{t}> graph names or <g> <…#hasTimestamp> "t" statements',
            file=name,
        )
    for graph, span in spans.items():
        if graph not in times and graph not in metadata_graphs:
            raise UserError(
                f'graph {shorten(str(graph), 40)} has no timestamp; expected a statement {shorten(str(graph), 40)} <…#hasTimestamp> "t"',
                file=name,
                line=span.first_line,
            )
    pending = sorted(times, key=lambda graph: (times[graph], spans[graph].first_line))
    last_lines = {graph: spans[graph].last_line for graph in times}
    del spans
    buffers: dict[str, list[StreamElement]] = {}
    complete: set[str] = set()
    next_index = 0
    count = 0
    skipped = 0
    try:
        for number, s, p, o, g in _iter_quads(name):
            if g is not None and g in times and number not in metadata_lines:
                buffers.setdefault(g, []).append(StreamElement(s, p, o, times[g]))
            else:
                skipped += number not in metadata_lines
            if g is not None and last_lines.get(g) == number:
                complete.add(g)
                while next_index < len(pending) and pending[next_index] in complete:
                    ready = pending[next_index]
                    complete.discard(ready)
                    next_index += 1
                    for element in buffers.pop(ready, ()):
                        count += 1
                        yield element
    finally:
        report.elements += count
        report.skipped += skipped
        if skipped:
            report.skipped_reason = "default graph or metadata graph, no timestamp"


# --- CSRBench stream directory -----------------------------------------------------------


def csrbench_files(directory: str | os.PathLike[str]) -> list[tuple[int, Path]]:
    """``(NN, path)`` for every ``data_NN.ttl`` in ``directory``, sorted numerically."""
    root = Path(directory)
    if not root.is_dir():
        raise UserError("expected a directory of data_NN.ttl files", file=str(root))
    found = []
    for entry in os.scandir(root):
        match = CSRBENCH_FILE.fullmatch(entry.name)
        if match and entry.is_file():
            found.append((int(match.group(1)), entry.name))
        elif entry.name.startswith("data_") and entry.name.endswith(".ttl"):
            # a file meant as part of the stream that would be skipped without a word (data_1.5.ttl, data_-3.ttl)
            what = "a folder" if match else f"not data_NN.ttl with NN a whole number ({entry.name})"
            raise UserError(f"{what}: the stream's files are data_0.ttl, data_1.ttl, …; rename or move it",
                            file=str(root / entry.name))
    if not found:
        raise UserError("no data_NN.ttl files in this directory (CSRBench stream layout)", file=str(root))
    return [(number, root / file_name) for number, file_name in sorted(found)]


def _parse_turtle(path: Path) -> object:
    """Parse one Turtle file with rdflib; syntax errors become ``UserError`` with line/column."""
    from rdflib import Graph
    from rdflib.plugins.parsers.notation3 import BadSyntax

    graph = Graph()
    try:
        graph.parse(path, format="turtle")
    except BadSyntax as error:
        text: bytes | str = getattr(error, "_str", b"")
        offset: int = getattr(error, "_i", 0)
        line = getattr(error, "lines", None)
        column = None
        if isinstance(text, (bytes, str)) and line is not None:
            newline = b"\n" if isinstance(text, bytes) else "\n"
            column = offset - (text.rfind(newline, 0, offset) + 1) + 1  # type: ignore[arg-type]  # newline has text's type (bytes or str)
        why = getattr(error, "_why", None) or type(error).__name__  # the reason apart from the text it quotes
        raise UserError(
            f"Turtle syntax error: {cut_words(why.splitlines()[0] if why.strip() else why)}", file=str(path), line=line + 1 if line is not None else None, column=column
        ) from None
    except UnicodeDecodeError:
        raise UserError("not UTF-8 text", file=str(path)) from None
    except Exception as error:  # rdflib raises assorted exception types for bad input
        # rdflib's message may quote the file's text (which may be anyone's): its type only
        raise UserError(f"cannot parse Turtle ({type(error).__name__})", file=str(path)) from None
    return graph


def read_csrbench_dir(
    path: str | os.PathLike[str], *, interval_ms: int = 1000, report: ReadReport | None = None
) -> Iterator[StreamElement]:
    """Read a CSRBench stream directory: every triple of ``data_NN.ttl`` has time ``NN × interval_ms``.

    Files are parsed one at a time (and kept while small: `_csrbench_file_triples`). Within a file, elements are sorted
    by N-Triples text; blank nodes are relabelled ``_:data_NN_b{k}`` (rdflib's labels
    are random) so output is deterministic and labels of different files never clash.
    """
    name = os.fspath(path)
    report = report if report is not None else ReadReport()
    report.source, report.format = name, "csrbench-dir"
    if interval_ms <= 0:
        raise UserError(f"the interval must be positive, got {interval_ms} ms", field="interval")
    count = 0
    try:
        for number, file in csrbench_files(name):
            t, triples = read_csrbench_file(number, file, interval_ms)
            for s, p, o in triples:
                count += 1
                yield StreamElement(s, p, o, t)
    finally:
        report.elements += count


def read_csrbench_file(number: int, file: Path, interval_ms: int) -> tuple[int, tuple[tuple[str, str, str], ...]]:
    """One ``data_NN.ttl`` of a CSRBench stream directory: its time (``NN × interval_ms``) and its triples,
    in the order `read_csrbench_dir` yields them."""
    triples = _csrbench_file_triples(file)
    return checked_time(number * interval_ms, str(file), field="data_NN × interval"), triples


#: Parsed ``data_NN.ttl`` files kept by identity (path, size, mtime, inode): judging several
#: answers over one CSRBench stream parses it once (rdflib's Turtle parser is most of a check's
#: time). Bounded by the triples held (a few tens of MB).
_PARSED_TTL: dict[tuple[str, int, int, int], tuple[tuple[str, str, str], ...]] = {}
PARSED_TTL_MAX_TRIPLES = 200_000


def _csrbench_file_triples(file: Path) -> tuple[tuple[str, str, str], ...]:
    """One ``data_NN.ttl``'s triples as N-Triples text, sorted; blank nodes relabelled
    ``_:data_NN_b{k}`` (rdflib's labels are random), parsed once per file version."""
    from rdflib import BNode

    info = file.stat()
    key = (str(file), info.st_size, info.st_mtime_ns, info.st_ino)
    cached = _PARSED_TTL.get(key)
    if cached is not None:
        return cached
    try:
        plain = plain_turtle_triples(file.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        plain = None  # rdflib names the fault
    if plain is not None:
        return _keep_parsed(key, tuple(plain))
    graph = _parse_turtle(file)
    prefix = f"_:{file.stem}_b"
    labels: dict[object, str] = {}

    def text(node: object) -> str:
        if isinstance(node, BNode):
            label = labels.get(node)
            if label is None:
                label = labels[node] = f"{prefix}{len(labels)}"
            return label
        return from_rdflib(node)

    return _keep_parsed(key, tuple(sorted((text(s), text(p), text(o)) for s, p, o in graph)))  # type: ignore[attr-defined]  # rdflib types Graph iteration loosely


def _keep_parsed(key: tuple[str, int, int, int], triples: tuple[tuple[str, str, str], ...]) -> tuple[tuple[str, str, str], ...]:
    """Remember a parsed file's triples while the cache holds few enough (`PARSED_TTL_MAX_TRIPLES`)."""
    held = sum(len(t) for t in _PARSED_TTL.values())
    if held + len(triples) > PARSED_TTL_MAX_TRIPLES:
        _PARSED_TTL.clear()
    if len(triples) <= PARSED_TTL_MAX_TRIPLES:
        _PARSED_TTL[key] = triples
    return triples


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
    order = _TimeOrder(name, on_disorder, report)
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
                if _NQUAD_LINE.fullmatch(line):
                    return "nquads"
                break
    except UnicodeDecodeError:
        pass
    except OSError as error:
        raise UserError(f"cannot open stream: {error.strerror or error}", file=str(file)) from None
    raise UserError(
        f"cannot tell the stream format; pass one of {', '.join(STREAM_READ_FORMATS)}", file=str(file), field="stream-format"
    )
