"""What every stream reader shares: the ``ReadReport``, the time-order check, text in line blocks, line diagnostics.

Split from ``readers`` so that each format's reader (``readers`` for YABench text and Parquet,
``nquads_reader``, ``csrbench_reader``) and the columnar oracle's YABench reader use one copy
of the machinery that counts, locates and words a stream file's problems.
"""

from __future__ import annotations

import gzip
import io
import os
import re
from dataclasses import dataclass
from typing import IO, Iterator, Literal as LiteralType

from rsp_workbench.errors import UserError
from rsp_workbench.streams.model import MAX_TIME_MS, MIN_TIME_MS
from rsp_workbench.streams.terms import ABSOLUTE_IRI, BNODE, OBJECT, SUBJECT, relative_iri_at

OnDisorder = LiteralType["error", "warn"]


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


class TimeOrder:
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


def decoded(data: bytes, name: str, first_line: int) -> str:
    """``data`` (whole lines of ``name`` from line ``first_line``, e.g. a Spark task's range) as
    text; bytes that are not UTF-8 are named by the line they are on (`decode_error`)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise decode_error(name, first_line + data.count(b"\n", 0, error.start)) from None


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
_TRIPLE_STEPS = [_SUBJECT_STEP, _PREDICATE_STEP, _OBJECT_STEP]
YABENCH_STEPS = [*_TRIPLE_STEPS, ('the time in ms as "<digits>"', re.compile(r'"-?[0-9]+"'), True), _DOT_STEP]
NQUADS_STEPS = [
    *_TRIPLE_STEPS,
    ("a graph name (<iri> or _:label) or ' .'", re.compile(rf"[ \t]*(?:{ABSOLUTE_IRI}|{BNODE})?"), False),
    _DOT_STEP,
]


# --- text in line blocks -----------------------------------------------------------------

SKIP_LINE = re.compile(r"[ \t]*(?:#.*)?\r?\n?")
_BLOCK_CHARS = 1 << 20


MAX_LINE_CHARS = 16 << 20  # one stream line (element) is never this long


def line_blocks(handle: IO[str]) -> Iterator[str]:
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
