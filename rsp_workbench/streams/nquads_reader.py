"""The timestamped N-Quads stream readers: time in the graph name, or the CSRBench oracle layout.

Split from ``readers`` (which dispatches to ``read_nquads``): both layouts, reading a part of a
file as a Spark task does, and telling which layout a file has.
"""

from __future__ import annotations

import os
import re
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import IO, Container, Iterator, Mapping, Sequence
from urllib.parse import unquote

from rsp_workbench.errors import UserError
from rsp_workbench.streams.model import MAX_TIME_MS, MIN_TIME_MS, StreamElement
from rsp_workbench.streams.reader_common import (
    NQUADS_STEPS, SKIP_LINE, OnDisorder, ReadReport, TimeOrder, checked_time, decode_error, diagnose_line, line_blocks,
    open_text,
)
from rsp_workbench.streams.terms import (
    ABSOLUTE_IRI, BNODE, IRI_SIMPLE, OBJECT, STREAM_LITERAL, SUBJECT, TermError, canonical_term, shorten, split_literal,
)
from rsp_workbench.streams.writers import TIME_GRAPH_PREFIX

_NQUAD_BLOCK = re.compile(
    rf"^(?:({IRI_SIMPLE}) ({IRI_SIMPLE}) ({IRI_SIMPLE}|{STREAM_LITERAL}) ({IRI_SIMPLE}) \.\r?\n|([^\n]*\n?))",
    re.MULTILINE,
)
NQUAD_LINE = re.compile(
    rf"[ \t]*({SUBJECT})[ \t]+({ABSOLUTE_IRI})[ \t]+({OBJECT})(?:[ \t]*({ABSOLUTE_IRI}|{BNODE}))?[ \t]*\.[ \t]*(?:#.*)?\r?\n?"
)
_TIME_GRAPH = re.compile(rf"<{re.escape(TIME_GRAPH_PREFIX)}(-?[0-9]+)(?::g:([^>]*))?>")
_INTEGER_LEXICAL = re.compile(r"[+-]?[0-9]+")

QuadRow = tuple[int, str, str, str, "str | None"]


def _general_quad(line: str, name: str, number: int) -> tuple[str, str, str, str | None] | None:
    """Slow path for one N-Quads line: canonical ``(s, p, o, g)``, None to skip, or raise."""
    match = NQUAD_LINE.fullmatch(line)
    if match is None:
        if SKIP_LINE.fullmatch(line):
            return None
        raise diagnose_line(line, NQUADS_STEPS, name, number)
    s, p, o, g = match.groups()
    return canonical_term(s), canonical_term(p), canonical_term(o), canonical_term(g) if g is not None else None


def _quad_batches(name: str, text: IO[str] | None = None, first_line: int = 1) -> Iterator[list[QuadRow]]:
    """Batches of ``(line, s, p, o, graph-or-None)`` per block of lines, canonical terms; ``text``: a
    part of the file already read, whole lines from line ``first_line`` (None: the file ``name``)."""
    findall = _NQUAD_BLOCK.findall
    canonical = canonical_term
    number = first_line - 1
    try:
        with nullcontext(text) if text is not None else open_text(name) as handle:
            for block in line_blocks(handle):
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


def _iter_quads(name: str, text: IO[str] | None = None, first_line: int = 1) -> Iterator[QuadRow]:
    for batch in _quad_batches(name, text, first_line):
        yield from batch


def parse_time_graph(graph: str) -> tuple[int, str | None] | None:
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
    order = TimeOrder(name, on_disorder, report)
    found, first = _first_graph(name)
    if not found:  # no statements: the empty stream, as in every other stream format
        return iter(())
    if first is None or parse_time_graph(first) is None:
        return read_graph_timestamp_nquads(name, report=report)
    return _read_time_graph_nquads(name, order, report)


def _read_time_graph_nquads(name: str, order: TimeOrder, report: ReadReport, text: IO[str] | None = None,
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
            for block in line_blocks(handle):
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
                        time_graph = parse_time_graph(g) if g is not None else None
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
    name: readable in parts, line by line), ``graph-timestamp`` (CSRBench oracle layout: two passes,
    each readable in parts, with the graphs' times merged in between) or ``empty`` (no statement)."""
    found, first = _first_graph(os.fspath(path))
    if not found:
        return "empty"
    return "graph-timestamp" if first is None or parse_time_graph(first) is None else "time-graph"


def read_nquads_part(path: str | os.PathLike[str], text: IO[str], *, first_line: int, last_time: int | None,
                     on_disorder: OnDisorder = "error", report: ReadReport | None = None) -> Iterator[StreamElement]:
    """The elements of a part of a ``time-graph`` N-Quads file: whole lines from line ``first_line``, after an
    element at ``last_time`` (None: the first part), as a Spark task reads its range of the file."""
    name = os.fspath(path)
    report = report if report is not None else ReadReport()
    report.source, report.format = name, "nquads"
    order = TimeOrder(name, on_disorder, report)
    order.last = last_time
    return _read_time_graph_nquads(name, order, report, text, first_line)


SKIPPED_REASON = "default graph or metadata graph, no timestamp"


def _is_timestamp_predicate(predicate: str) -> bool:
    return predicate.endswith("hasTimestamp>")


def _timestamp_value(term: str, file: str, line: int) -> int:
    if term.startswith('"'):
        lexical, _datatype, _language = split_literal(term)
        if _INTEGER_LEXICAL.fullmatch(lexical.strip()):
            return checked_time(int(lexical), file, line)
    raise UserError(f"expected an integer time in ms as hasTimestamp value, got {shorten(term, 40)}", file=file, line=line)


@dataclass
class Stamp:
    """The hasTimestamp statements about one subject in a part of a file: the first one's line and
    time, the first later one with another time ``(line, t)``, and the graphs holding them other
    than the subject itself (None: the default graph)."""

    line: int
    t: int
    conflict: tuple[int, int] | None = None
    holders: set[str | None] = field(default_factory=set)


@dataclass
class GraphPart:
    """Pass 1 of the CSRBench layout over a part of a file (`graph_timestamp_part`), lines numbered
    in the file: each graph's ``[first line, last line]`` in the order the graphs appear, the
    `Stamp` of each subject that names a graph, and whether some hasTimestamp subject names no
    graph of the part (it may name a graph of another part)."""

    spans: dict[str | None, list[int]]
    stamps: dict[str, Stamp]
    foreign: bool = False


def graph_timestamp_part(name: str, text: IO[str] | None = None, first_line: int = 1,
                         graphs: Container[str] | None = None) -> GraphPart:
    """Pass 1 of `read_graph_timestamp_nquads` over the file ``name``, or a part of it (``text``: whole
    lines from line ``first_line``, as a Spark task reads its range). A malformed line or a hasTimestamp
    value that is no integer raises at its line, the first one in the part. Stamps are kept for the
    subjects in ``graphs`` (default: the graphs of the part), so that what comes back is per graph,
    never per statement."""
    spans: dict[str | None, list[int]] = {}
    stamps: dict[str, Stamp] = {}
    for number, s, p, o, g in _iter_quads(name, text, first_line):
        span = spans.get(g)
        if span is None:
            spans[g] = [number, number]
        else:
            span[1] = number
        if _is_timestamp_predicate(p):
            t = _timestamp_value(o, name, number)
            stamp = stamps.get(s)
            if stamp is None:
                stamp = stamps[s] = Stamp(number, t)
            elif t != stamp.t and stamp.conflict is None:
                stamp.conflict = (number, t)
            if g != s:
                stamp.holders.add(g)
    kept: Container[str | None] = spans if graphs is None else graphs
    foreign = graphs is None and any(subject not in spans for subject in stamps)
    return GraphPart(spans, {subject: stamp for subject, stamp in stamps.items() if subject in kept}, foreign)


@dataclass(frozen=True)
class GraphTimes:
    """Pass 1 of the CSRBench layout, the whole file: every graph's ``[first line, last line]`` (in the
    order the graphs appear; None: the default graph) and each timestamped graph's time."""

    spans: dict[str | None, list[int]]
    times: dict[str, int]


def graph_times(name: str, parts: Sequence[GraphPart]) -> GraphTimes:
    """The parts of pass 1 (in file order) merged, with `read_graph_timestamp_nquads`' checks and
    messages: a graph with two timestamps (at the first stamp that differs, in file order), no
    timestamped graph, a graph without timestamp that holds no metadata (at its first line)."""
    spans: dict[str | None, list[int]] = {}
    for part in parts:
        for graph, (first, last) in part.spans.items():
            span = spans.get(graph)
            if span is None:
                spans[graph] = [first, last]
            else:
                span[1] = last
    times: dict[str, int] = {}
    metadata_graphs: set[str | None] = {None}
    conflict: tuple[int, str, int, int] | None = None  # (line, graph, first time, other time)
    for part in parts:
        for subject, stamp in part.stamps.items():
            if subject not in spans:
                continue  # a data statement that happens to use a hasTimestamp predicate
            metadata_graphs |= stamp.holders
            previous = times.setdefault(subject, stamp.t)
            other = (stamp.line, stamp.t) if stamp.t != previous else stamp.conflict
            if other is not None and (conflict is None or other[0] < conflict[0]):
                conflict = (other[0], subject, previous, other[1])
    if conflict is not None:
        line, subject, previous, t = conflict
        raise UserError(f"graph {shorten(subject, 40)} has two timestamps: {previous} and {t}", file=name, line=line)
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
                line=span[0],
            )
    return GraphTimes(spans, times)


def graph_timestamp_rows(name: str, text: IO[str], first_line: int, times: Mapping[str, tuple[int, int]],
                         graphs: Container[str], report: ReadReport) -> Iterator[tuple[str, str, str, int, int, int]]:
    """Pass 2 of `read_graph_timestamp_nquads` over a part of a file (whole lines from ``first_line``), with
    ``times`` (graph → its time and first line) and ``graphs`` (every graph of the file): the part's
    elements as ``(s, p, o, t, graph's first line, line)`` — the reader's order is that of the last
    three —; the statements it skips counted in ``report``."""
    skipped = 0
    try:
        for number, s, p, o, g in _iter_quads(name, text, first_line):
            if p.endswith("hasTimestamp>") and s in graphs:  # metadata: no element, not skipped
                continue
            timed = times.get(g) if g is not None else None
            if timed is None:
                skipped += 1
            else:
                yield s, p, o, timed[0], timed[1], number
    finally:
        report.skipped += skipped
        if skipped:
            report.skipped_reason = SKIPPED_REASON


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

    Two passes. Pass 1 validates and collects, per graph, its time and first/last line
    (`graph_timestamp_part`, `graph_times`: the Spark job runs them per byte range).
    Pass 2 buffers each graph's elements until the graph is complete and all earlier
    graphs were emitted. Memory: the graph→time map, plus one graph's elements when the
    file lists graphs contiguously in time order (CSRBench does); in the worst case
    (interleaved or out-of-order graphs) the buffered elements of the pending graphs.
    """
    name = os.fspath(path)
    report = report if report is not None else ReadReport()
    report.source, report.format = name, "nquads"
    found = graph_times(name, [graph_timestamp_part(name)])
    spans, times = found.spans, found.times
    pending = sorted(times, key=lambda graph: (times[graph], spans[graph][0]))
    last_lines = {graph: spans[graph][1] for graph in times}
    buffers: dict[str, list[StreamElement]] = {}
    complete: set[str] = set()
    next_index = 0
    count = 0
    skipped = 0
    try:
        for number, s, p, o, g in _iter_quads(name):
            metadata = p.endswith("hasTimestamp>") and s in spans  # _is_timestamp_predicate inline
            if g is not None and g in times and not metadata:
                buffers.setdefault(g, []).append(StreamElement(s, p, o, times[g]))
            else:
                skipped += not metadata
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
            report.skipped_reason = SKIPPED_REASON
