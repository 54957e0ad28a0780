"""The ``queries:`` section of an experiment and the checks of its queries once filled.

Split from ``loader``: each query's id, file or text and placeholders (every ``${NAME}`` must
be defined), the parse of every query text a variable combination fills, and the binding of
the windows to the streams ``streams:`` declares, with errors at the file line of the query line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

from rsp_workbench.errors import UserError
from rsp_workbench.experiment.field_checks import Checker
from rsp_workbench.experiment.model import QUERY_SYNTAXES, Experiment, QuerySpec, Scalar
from rsp_workbench.experiment.source import SourceMap, join_path
from rsp_workbench.query.template import find_placeholders


def _placeholder_line(c: Checker, path: str, template: str, offset: int, token: str) -> int | None:
    """The file line of the placeholder at ``offset`` of an inline query ``text`` (block scalars included)."""
    line = c.source.line(path)
    if line is None or c.source.text is None:
        return line
    wanted = template[:offset].count(token)
    for number, text in enumerate(c.source.text.splitlines()[line - 1 :], start=line):
        count = text.count(token)
        if wanted < count:
            return number
        wanted -= count
    return line


def query_specs(
    c: Checker, value: Any, variables: dict[str, Scalar], sweep: dict[str, Any], cases: tuple[dict[str, Scalar], ...]
) -> tuple[QuerySpec, ...]:
    always = set(variables) | set(sweep)
    if cases:
        always |= set.intersection(*(set(case) for case in cases))
    queries: list[QuerySpec] = []
    ids: dict[str, int] = {}
    for index, item in enumerate(c.sequence(value, "queries", nonempty=True)):
        item_path = f"queries[{index}]"
        c.mapping(item, item_path, ("id", "file", "text", "syntax"), ("id",), what="query field")
        query_id = c.identifier(item["id"], join_path(item_path, "id"))
        if query_id in ids:
            raise c.error(join_path(item_path, "id"), f"duplicate query id {query_id!r} (also queries[{ids[query_id]}])")
        ids[query_id] = index
        has_file, has_text = item.get("file") is not None, item.get("text") is not None
        if has_file == has_text:
            raise c.error(item_path if not has_file else join_path(item_path, "text"),
                          f"query {query_id} needs exactly one of 'file' and 'text'", key=has_file)
        file: Path | None = None
        if has_file:
            text_path = join_path(item_path, "file")
            file = c.existing(item["file"], text_path)
            try:
                template = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise c.error(text_path, f"cannot read query {item['file']}: {error}") from None
        else:
            text_path = join_path(item_path, "text")
            template = c.string(item["text"], text_path)
        if not template.strip():
            raise c.error(text_path, f"query {query_id} is empty")
        syntax = c.choice(item["syntax"], join_path(item_path, "syntax"), QUERY_SYNTAXES) if item.get("syntax") is not None else None
        names: dict[str, None] = {}
        try:
            placeholders: list[tuple[str | None, int, str]] = [(p.name, p.start, template[p.start : p.end]) for p in find_placeholders(template) if p.style != "escape"]
            malformed = None
        except UserError as error:  # the first malformed ``${``: report it where it stands
            offset = sum(len(row) + 1 for row in template.split("\n")[: (error.line or 1) - 1]) + (error.column or 1) - 1
            placeholders, malformed = [(None, offset, "${")], error.message
        for name, offset, token in placeholders:
            if file is not None:
                where = f" ({item['file']} line {template[:offset].count(chr(10)) + 1})"
                line = c.source.line(text_path)
            else:
                where = ""
                line = _placeholder_line(c, text_path, template, offset, token)
            if name is None:
                message = f"query {query_id}: {malformed}{where}"
            elif name not in always:
                lacking = next((i for i, case in enumerate(cases) if name not in case), None)
                if cases and any(name in case for case in cases):
                    message = f"query {query_id} uses {token}{where}, which cases[{lacking}] does not define (and variables does not set)"
                else:
                    message = f"query {query_id} uses {token}{where}, which is not defined in variables, sweep or cases"
            else:
                names.setdefault(name, None)
                continue
            located = c.error(text_path, message)
            raise UserError(located.message, file=located.file, line=line, field=located.field)
        queries.append(QuerySpec(id=query_id, template=template, file=file, syntax=syntax, variables=tuple(names)))
    return tuple(queries)


def parse_filled_query(experiment: Experiment, index: int, text: str, variables: Mapping[str, Scalar]) -> Any:
    """Parse query ``index`` as one variable combination fills it: a window size of ``-2s``, ``0s``
    or beyond the duration limit is an error at validation, at the file line of the query line.

    The error names the variables the query uses (their values are what broke it) and is
    located in the experiment file (FILE:LINE of the query's field); for a query file the
    position inside that file is in the message.
    """
    from rsp_workbench.query.parser import parse_query

    spec = experiment.queries[index]
    try:
        return parse_query(text, spec.syntax)
    except UserError as error:
        if spec.syntax is None and error.message.startswith("no stream window found"):
            return None  # a window-less text: its syntax (one-time SPARQL or not) is the engine's business
        used = [name for name in spec.variables if name in variables]
        context = f" (with {', '.join(f'{name}={variables[name]!r}' for name in used)})" if used else ""
        path = f"queries[{index}].{'file' if spec.file is not None else 'text'}"
        source = experiment.source or SourceMap()
        if spec.file is not None:  # the experiment names the file and fills it: report at its `file:` line
            at = f" line {error.line}" + (f":{error.column}" if error.column is not None else "") if error.line else ""
            where = f" ({spec.file.name}{at})"
            line = source.line(path)
        else:
            where = f" (query line {error.line})" if error.line is not None else ""
            line = _template_line(source, path, spec.template, error.line) if error.line else source.line(path)
        raise UserError(
            f"query {spec.id}{context}{where}: {error.message}",
            file=str(experiment.file) if experiment.file is not None else None,
            line=line,
            field=source.origin(path),
        ) from None


def check_stream_bindings(experiment: Experiment, parsed: Iterable[tuple[tuple[int, str], Any]]) -> None:
    """Every window of a ``streams:`` experiment must read a declared stream (checked per filled query text)."""
    for (index, _text), query in parsed:
        if query is None:
            continue
        error = undeclared_stream_error(experiment, index, query)
        if error is not None:
            raise error


def undeclared_stream_error(experiment: Experiment, index: int, query: Any) -> UserError | None:
    """The error for the first window of parsed query ``index`` over an IRI ``streams:`` does not declare.

    None for a single ``stream:`` (every window reads it, whatever IRI it names) or when all
    windows bind (RSP-QL Def. 14: each window reads the stream of its IRI). The line is the
    window's line in the file (or, for a query file, the ``file:`` line plus the line inside it).
    """
    if not experiment.named_streams:
        return None
    declared = [str(stream.iri) for stream in experiment.streams]
    window = next((w for w in query.windows if w.stream not in declared), None)
    if window is None:
        return None
    spec = experiment.queries[index]
    path = f"queries[{index}].{'file' if spec.file is not None else 'text'}"
    source = experiment.source or SourceMap()
    line = source.line(path)
    where = ""
    if spec.file is not None:
        where = f" ({spec.file.name} line {window.position[0]})"
    else:
        line = _template_line(source, path, spec.template, window.position[0])
    return UserError(
        f"query {spec.id} has a window over <{window.stream}>{where}, which 'streams' does not declare "
        f"(declared: {', '.join(f'<{iri}>' for iri in declared)}"
        + (f" with size {experiment.applied_size})" if experiment.applied_size else ")"),
        file=str(experiment.file) if experiment.file is not None else None, line=line, field=source.origin(path),
    )


def _template_line(source: SourceMap, path: str, template: str, template_line: int) -> int | None:
    """The file line of line ``template_line`` (1-based) of an inline query ``text`` (block scalars included)."""
    start = source.line(path)
    lines = template.splitlines()
    if start is None or source.text is None or not 0 < template_line <= len(lines):
        return start
    wanted_text = lines[template_line - 1].strip()
    if not wanted_text:
        return start
    wanted = sum(1 for text in lines[: template_line - 1] if wanted_text in text)
    for number, text in enumerate(source.text.splitlines()[start - 1 :], start=start):
        if wanted_text in text:
            if wanted == 0:
                return number
            wanted -= 1
    return start
