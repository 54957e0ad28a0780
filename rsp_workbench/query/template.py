"""Templates: ``${NAME}`` placeholders (YABench) and ``%NAME%`` (CSRBench) — the one filler.

YABench fills its ``engine.query`` / ``oracle.query`` templates from the test
configuration, CSRBench parametrises its queries with ``%WSIZE%``-style markers
(docs/design/FORMATS.md "Experiment files"). This module is the only scanner and filler: query files
given to the CLI (``--var``), query texts and files of experiments, and the typed YAML
values of experiments (generator parameters, flow settings, engine parameters) all follow
the same rule (docs/experiment-format.md, "Templates"):

- ``${NAME}``: NAME is ``[A-Za-z_][A-Za-z0-9_.-]*``; any other ``${`` is malformed.
- ``$${`` is an escape that writes a literal ``${`` (``$${NAME}`` gives ``${NAME}``).
- ``%NAME%``: NAME is ``[A-Za-z_][A-Za-z0-9_]*``; two hexadecimal digits (``%C3%``) are
  left alone because they are IRI percent-encoding, not a placeholder.
- A placeholder without a value is a `MissingTemplateVariable` naming the variable and its
  line:column; values nobody asks for are ignored (an experiment shares variables between
  templates). A text that is exactly one placeholder can take the value's own type
  (`fill_typed`), so ``stations: ${STATIONS}`` stays an integer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from rsp_workbench.errors import UserError

TemplateValue = str | int | float

_TOKEN = re.compile(r"\$\$\{|\$\{|%(?P<pct>[A-Za-z_][A-Za-z0-9_]*)%")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_HEX_PAIR = re.compile(r"[0-9A-Fa-f]{2}")


@dataclass
class MissingTemplateVariable(UserError, KeyError):
    """A placeholder whose variable has no value (also a ``KeyError`` of the name)."""

    name: str = ""


@dataclass(frozen=True)
class Placeholder:
    """One occurrence of a template variable (or of an escape) in a text."""

    name: str
    start: int
    end: int
    style: str  # "dollar", "percent" or "escape" (``$${``, which yields ``${``; name "" unless ``$${NAME}``)


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def find_placeholders(text: str, source: str | None = None) -> list[Placeholder]:
    """All placeholders and escapes in text order; malformed ``${…}`` is a UserError."""
    found: list[Placeholder] = []
    position = 0
    while True:
        match = _TOKEN.search(text, position)
        if match is None:
            return found
        if match.group("pct") is not None:
            name = match.group("pct")
            if _HEX_PAIR.fullmatch(name):
                # ``%C3%A9``: percent-encoding; rescan from the second '%'.
                position = match.end() - 1
                continue
            found.append(Placeholder(name, match.start(), match.end(), "percent"))
            position = match.end()
            continue
        escape = match.group(0) == "$${"
        close = text.find("}", match.end())
        name = text[match.end() : close] if close >= 0 else ""
        if escape:
            if close >= 0 and _NAME.fullmatch(name):
                found.append(Placeholder(name, match.start(), close + 1, "escape"))
                position = close + 1
            else:
                found.append(Placeholder("", match.start(), match.end(), "escape"))
                position = match.end()
            continue
        if close < 0 or not _NAME.fullmatch(name):
            line, column = line_column(text, match.start())
            shown = text[match.start() : close + 1] if close >= 0 else text[match.start() : match.start() + 12]
            raise UserError(
                f"malformed placeholder {shown!r}; write ${{NAME}} (NAME made of letters, digits, "
                "'_', '.' or '-') or escape a literal '${' as '$${'",
                file=source, line=line, column=column,
            )
        found.append(Placeholder(name, match.start(), close + 1, "dollar"))
        position = close + 1


def template_variables(text: str, source: str | None = None) -> set[str]:
    """Names of the variables a template needs (escaped ``$${X}`` does not count)."""
    return {p.name for p in find_placeholders(text, source) if p.style != "escape"}


def format_template_value(value: TemplateValue) -> str:
    """Text put in place of a placeholder: bools as SPARQL ``true``/``false``, numbers as written."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def fill_template(
    text: str, variables: Mapping[str, TemplateValue], source: str | None = None
) -> str:
    """Replace every ``${NAME}`` / ``%NAME%`` by its value and ``$${NAME}`` by ``${NAME}``.

    A missing variable raises a `UserError` at the placeholder's line and column (the first
    one in the text), so a typo in an experiment file points at the query line to fix.
    """
    pieces: list[str] = []
    position = 0
    for placeholder in find_placeholders(text, source):
        pieces.append(text[position : placeholder.start])
        if placeholder.style == "escape":
            pieces.append(text[placeholder.start + 1 : placeholder.end])
        elif placeholder.name in variables:
            pieces.append(format_template_value(variables[placeholder.name]))
        else:
            raise _missing(text, placeholder, variables, source)
        position = placeholder.end
    pieces.append(text[position:])
    return "".join(pieces)


def fill_typed(text: str, variables: Mapping[str, TemplateValue], source: str | None = None) -> TemplateValue:
    """Like `fill_template`, but a text that is exactly one placeholder gives the value itself
    (its YAML type: ``${STATIONS}`` → ``50``, not ``"50"``)."""
    placeholders = find_placeholders(text, source)
    if len(placeholders) == 1 and placeholders[0].style != "escape" and (placeholders[0].start, placeholders[0].end) == (0, len(text)):
        placeholder = placeholders[0]
        if placeholder.name not in variables:
            raise _missing(text, placeholder, variables, source)
        return variables[placeholder.name]
    return fill_template(text, variables, source)


def _missing(
    text: str, placeholder: Placeholder, variables: Mapping[str, TemplateValue], source: str | None
) -> MissingTemplateVariable:
    line, column = line_column(text, placeholder.start)
    shown = text[placeholder.start : placeholder.end]
    known = ", ".join(sorted(variables)) or "none given"
    return MissingTemplateVariable(
        f"template variable {placeholder.name} ({shown}) has no value; "
        f"give it, e.g. --var {placeholder.name}=VALUE (known variables: {known})",
        file=source, line=line, column=column, name=placeholder.name,
    )
