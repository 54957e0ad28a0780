"""A query as the designer's query editor edits it: checked by the parser as it is typed, translated
into another engine's dialect, written back to its file. No Qt.

Every CSRBench and YABench query is a file (``queries[i].file``), so window sizes and FILTERs
live there; the editor keeps the typed text until Save writes it. A template's ``${NAME}``
are filled with the experiment's first values (``variables``, then the first swept value and the
first case) before parsing, as a run would fill them; the parser's line numbers are then the
editor's lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from rsp_workbench.errors import UserError


@dataclass(frozen=True)
class QueryCheck:
    """The parser's verdict on the editor's text: what it read, or where it breaks."""

    ok: bool
    message: str
    line: int | None = None


@dataclass(frozen=True)
class Translation:
    """A query written in another dialect, the syntax that reads it back and what was filled in."""

    text: str
    syntax: str
    note: str


def first_values(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The values a run's first variable combination gives each ``${NAME}``: variables, overridden
    by the first case, then by the first value of each swept variable."""
    values: dict[str, Any] = {}
    variables, cases, sweep = raw.get("variables"), raw.get("cases"), raw.get("sweep")
    if isinstance(variables, dict):
        values.update(variables)
    if isinstance(cases, list) and cases and isinstance(cases[0], dict):
        values.update(cases[0])
    if isinstance(sweep, dict):
        values.update({name: swept[0] for name, swept in sweep.items() if isinstance(swept, list) and swept})
    return values


def filled_query(text: str, variables: Mapping[str, Any], source: str) -> str:
    from rsp_workbench.query.template import fill_template, template_variables

    if template_variables(text, source=source) or "$${" in text:
        return fill_template(text, {k: v for k, v in variables.items() if v is not None}, source=source)
    return text


def check_query_text(text: str, syntax: str | None, variables: Mapping[str, Any], source: str) -> QueryCheck:
    """Parse the (filled) text; ✔ with the dialect and windows read, or the parser's line and message."""
    from rsp_workbench.query.parser import parse_query

    try:
        query = parse_query(filled_query(text, variables, source), syntax, source=source)
    except UserError as error:
        where = f"line {error.line}" + (f":{error.column}" if error.column else "") + ": " if error.line else ""
        return QueryCheck(False, f"{where}{error.message}", error.line)
    described = query.describe()
    windows = ", ".join(f"{w['stream']} [{w['size']}" + (f" / {w['slide']}" if w["slide_given"] else "") + "]"
                        for w in described["windows"]) or "no window (one-time SPARQL)"
    return QueryCheck(True, f"✔ parses as {described['syntax_label']}: {windows}")


def translate_query_text(text: str, syntax: str | None, dialect: str, variables: Mapping[str, Any],
                         source: str) -> Translation:
    """The query in ``dialect`` (rspql, csparql, cqels, rspjs) with the syntax that parses it; a
    template's ``${NAME}`` are filled first (the writer works on a parsed query) and said so."""
    from rsp_workbench.query.parser import parse_query
    from rsp_workbench.query.template import template_variables
    from rsp_workbench.query.writer import parse_syntax_of, write_query

    names = sorted(template_variables(text, source=source))
    written = write_query(parse_query(filled_query(text, variables, source), syntax, source=source), dialect)
    filled = ", ".join(f"{name} = {variables.get(name)}" for name in names)
    note = f"translated to {dialect}" + (f"; the placeholders were filled with their values ({filled})" if names else "")
    return Translation(written, parse_syntax_of(dialect), note)


def query_file_path(file: str, base_dir: Path | None) -> Path:
    """A query file as the experiment names it: relative to the experiment's folder."""
    path = Path(file).expanduser()
    return path if path.is_absolute() else Path(base_dir or Path.cwd()) / path


def relative_file(path: Path, base_dir: Path | None) -> str:
    """How the experiment names ``path``: relative to its folder when inside it, else absolute."""
    if base_dir is not None and path.resolve().is_relative_to(base_dir.resolve()):
        return path.resolve().relative_to(base_dir.resolve()).as_posix()
    return str(path)
