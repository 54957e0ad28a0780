"""The CSRBench stream directory reader: ``data_NN.ttl`` files, each parsed once and kept while small.

Split from ``readers`` (which dispatches to ``read_csrbench_dir``): the directory layout, the
Turtle parsing with located errors, and the cache of parsed files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator

from rsp_workbench.errors import UserError, cut_words
from rsp_workbench.streams.model import StreamElement
from rsp_workbench.streams.reader_common import ReadReport, checked_time
from rsp_workbench.streams.terms import from_rdflib
from rsp_workbench.streams.turtle import plain_turtle_triples

CSRBENCH_FILE = re.compile(r"data_([0-9]+)\.ttl")


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
