"""A small SPARQL-aware tokenizer and an offset-mapped text rewriter.

The continuous-query parser only needs to find the streaming extensions (REGISTER,
FROM STREAM, WINDOW, STREAM …) *outside* strings, IRIs and comments, and to rewrite
them into SPARQL 1.1 while every position in the rewritten text still maps back to the
user's original line and column (rdflib reports syntax errors on the rewritten text).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from rsp_workbench.errors import UserError
from rsp_workbench.query.template import line_column


@dataclass(frozen=True)
class Token:
    """A lexical token with its character span in the original text and its `{}` depth."""

    kind: str  # iri, pname, var, string, number, word, template, punct
    text: str
    start: int
    end: int
    depth: int

    def is_word(self, *words: str) -> bool:
        """Case-insensitive keyword test (SPARQL keywords are case-insensitive)."""
        return self.kind == "word" and self.text.upper() in words


_PN_CHARS = r"[A-Za-z0-9_\u00B7-\uFFFF\-]"
_LEXEMES: list[tuple[str, str]] = [
    ("space", r"\s+"),
    ("comment", r"\#[^\n]*"),
    ("string", r'"""(?:[^"\\]|\\.|"(?!""))*"""'),
    ("string", r"'''(?:[^'\\]|\\.|'(?!''))*'''"),
    ("string", r'"(?:[^"\\\n]|\\.)*"'),
    ("string", r"'(?:[^'\\\n]|\\.)*'"),
    ("template", r"\$\{[^}\s]*\}?"),
    ("iri", r"<[^<>\"{}|^`\\\x00-\x20]*>"),
    ("var", r"[?$][A-Za-z0-9_\u00B7-\uFFFF]+"),
    ("number", r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?"),
    ("pname", rf"(?:[A-Za-z_]{_PN_CHARS}*(?:\.{_PN_CHARS}+)*)?:(?:(?:{_PN_CHARS}|[:%\\.])*(?:{_PN_CHARS}|[:%]))?"),
    ("word", r"[A-Za-z_][A-Za-z0-9_]*"),
    ("template", r"%[A-Za-z_][A-Za-z0-9_]*%"),
    ("punct", r"\^\^|\|\||&&|!=|<=|>=|."),
]
_MASTER = re.compile("|".join(f"(?P<{kind}{i}>{pattern})" for i, (kind, pattern) in enumerate(_LEXEMES)), re.DOTALL)
_KIND_OF_GROUP = {f"{kind}{i}": kind for i, (kind, _) in enumerate(_LEXEMES)}


def tokenize(text: str, source: str | None = None) -> list[Token]:
    """Tokens outside comments/whitespace; an unterminated string is a located UserError."""
    tokens: list[Token] = []
    depth = 0
    position = 0
    while position < len(text):
        match = _MASTER.match(text, position)
        assert match is not None and match.lastgroup is not None  # the last pattern takes any char
        kind = _KIND_OF_GROUP[match.lastgroup]
        lexeme = match.group(0)
        if kind == "punct" and lexeme in ('"', "'"):
            line, column = line_column(text, position)
            raise UserError("unterminated string literal", file=source, line=line, column=column)
        if kind not in ("space", "comment"):
            if lexeme == "}":
                depth = max(0, depth - 1)
            tokens.append(Token(kind, lexeme, match.start(), match.end(), depth))
            if lexeme == "{":
                depth += 1
        position = match.end()
    return tokens


@dataclass(frozen=True)
class _Segment:
    out_start: int
    orig_start: int
    length: int
    copied: bool  # False: inserted text, all of it maps to orig_start


class RewrittenText:
    """Text produced by applying non-overlapping edits, with an output→original offset map."""

    def __init__(self, original: str, edits: list[tuple[int, int, str]]) -> None:
        self.original = original
        pieces: list[str] = []
        self._segments: list[_Segment] = []
        out = 0
        position = 0
        for start, end, replacement in sorted(edits):
            if start < position:
                raise ValueError("overlapping edits")
            if start > position:
                self._segments.append(_Segment(out, position, start - position, True))
                pieces.append(original[position:start])
                out += start - position
            if replacement:
                copied = len(replacement) == end - start
                self._segments.append(_Segment(out, start, len(replacement), copied))
                pieces.append(replacement)
                out += len(replacement)
            position = end
        if position < len(original):
            self._segments.append(_Segment(out, position, len(original) - position, True))
            pieces.append(original[position:])
            out += len(original) - position
        self.text = "".join(pieces)
        self._starts = [segment.out_start for segment in self._segments]

    def original_offset(self, offset: int) -> int:
        """Where a character of the rewritten text came from in the original text."""
        if not self._segments or offset >= len(self.text):
            return len(self.original.rstrip())
        index = max(0, bisect.bisect_right(self._starts, offset) - 1)
        segment = self._segments[index]
        if not segment.copied:
            return segment.orig_start
        return segment.orig_start + min(offset - segment.out_start, segment.length - 1)

    def original_position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) in the original text of an offset in the rewritten text."""
        return line_column(self.original, self.original_offset(offset))


def removal(text: str, start: int, end: int) -> tuple[int, int, str]:
    """An edit that deletes ``text[start:end]`` tidily.

    A clause alone on its line(s) takes the whole line with it; otherwise the following
    horizontal blanks go too, and a single space is kept if the neighbours would touch.
    """
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if not text[line_start:start].strip() and not text[end:line_end].strip():
        return (line_start, min(line_end + 1, len(text)), "")
    stop = end
    while stop < len(text) and text[stop] in " \t":
        stop += 1
    before = text[start - 1] if start > 0 else " "
    after = text[stop] if stop < len(text) else " "
    keep_space = not before.isspace() and not after.isspace()
    return (start, stop, " " if keep_space else "")
