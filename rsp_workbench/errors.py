"""User-facing errors: one clear message naming file, line/column or field."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import Iterable


@dataclass
class UserError(Exception):
    """A problem with the user's input (file, query, option), not a bug.

    The CLI prints `str(error)` on stderr and exits with code 2, without a traceback.
    Format: ``FILE:LINE:COLUMN: field: message`` with absent parts left out.
    """

    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    field: str | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def located(
        self,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
    ) -> "UserError":
        """Return a copy with missing location parts filled in (existing ones win)."""
        return UserError(
            self.message,
            file=self.file or file,
            line=self.line if self.line is not None else line,
            column=self.column if self.column is not None else column,
            field=self.field or field,
        )

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
        elif self.line is not None:
            where = f"line {self.line}" + (f", column {self.column}" if self.column is not None else "")
        field = self.field if self.field is None or self.field.isprintable() else repr(self.field)
        if field is not None and len(field) > TOKEN_CHARS:  # a field path holds keys from the input: cut short
            field = ".".join(part if len(part) <= TOKEN_CHARS else part[: TOKEN_CHARS - 1] + "…"
                             for part in field.split("."))
            field = field if len(field) <= FIELD_CHARS else field[: FIELD_CHARS - 1] + "…"
        parts = [p for p in (where, field) if p]  # a field name from the input may hold a line break
        return ": ".join(parts + [self.message])


#: An error quotes at most this many characters of the input at fault (README, "Security"): a value
#: read from a file that is not what it should be may be someone's password file.
TOKEN_CHARS = 40
FIELD_CHARS = 100  # a field path (``engines[0].parameters.command``) is cut here: its keys come from the input


def quoted(value: object, limit: int = TOKEN_CHARS) -> str:
    """The offending value as an error quotes it (``repr``): whole if it is one short line, else its
    first word cut to ``limit`` characters, "…" marking what was left out — never the rest of a line
    or of a file."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit and text.isprintable():
        return repr(value) if isinstance(value, str) else text
    words = text.split(None, 1)
    token = words[0] if words else text
    if len(token) > limit:
        token = token[: limit - 1] + "…"
    elif len(words) > 1 or token != text.strip():
        token += "…"
    return repr(token) if isinstance(value, str) else token


def cut_words(text: str, limit: int = TOKEN_CHARS, words: int = 12) -> str:
    """A third-party reason (rdflib's, PyYAML's) on one line, its words cut to ``limit`` characters and
    at most ``words`` of them, so that the input text such a message may quote stays out."""
    parts = [part if len(part) <= limit else part[: limit - 1] + "…" for part in text.split()]
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def unknown_key_message(key: str, allowed: Iterable[str], what: str = "field") -> str:
    """``unknown field 'semantic'; did you mean 'semantics'? (expected one of …)``."""
    allowed = list(allowed)
    if not allowed:
        return f"unknown {what} {quoted(key)} (none are accepted here)"
    close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown {what} {quoted(key)}{hint} (expected one of {', '.join(allowed)})"


def file_error(error: OSError, path: str | os.PathLike[str], doing: str = "cannot write") -> Exception:
    """The error to raise for ``error`` met while working on ``path``: a `UserError` naming the file.

    pyarrow, compressors and a full disk raise OSErrors that name no file; the user needs
    to know which file (and the CLI prints an error's file first).
    """
    reason = error.strerror or " ".join(str(error).split()) or type(error).__name__
    return UserError(f"{doing}: {reason}", file=str(error.filename or path))
