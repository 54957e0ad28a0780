"""Readers for engine outputs (docs/design/FORMATS.md "Engine outputs in") and the workbench's response log.

* ``csrbench-json``: CSRBench answer JSON, one relation per evaluation.
* ``yabench-qr``: YABench ``QR_*`` files, blocks of TAB-separated bindings per emission.
* ``jsonl``: the workbench's own response log (written by ``write_response_log``).

Everything lands in one model (``rsp_workbench.responses.model``) with terms as canonical
N-Triples text, so answers from any source compare with the oracle's directly.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import orjson

from rsp_workbench.errors import UserError, quoted, unknown_key_message
from rsp_workbench.responses.model import (
    OPERATIONS,
    EngineResponse,
    ResponseLog,
    SolutionMapping,
    make_mapping,
    mapping_dict,
)
from rsp_workbench.streams.model import MAX_TIME_MS, MIN_TIME_MS
from rsp_workbench.streams.terms import (
    BARE_NUMBER,
    BNODE,
    IRI,
    LITERAL,
    QUIRK_LITERAL,
    XSD_BOOLEAN,
    XSD_DOUBLE,
    XSD_INTEGER,
    TermError,
    bnode_term,
    canonical_term,
    iri_term,
    literal_term,
    number_term,
)

RESPONSE_FORMATS = ("csrbench-json", "yabench-qr", "jsonl")
# The response log's record fields (``response_records``); anything else is an error naming file:line.
HEADER_FIELDS = ("record", "engine", "query", "run", "variables", "run_start", "source")
RECORD_FIELDS = ("engine", "query", "run", "response", "system_time", "application_time", "operation", "binding")
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"


def _open(path: str | os.PathLike[str]) -> Any:
    name = os.fspath(path)
    try:
        return open(name, encoding="utf-8")
    except OSError as error:
        raise UserError(f"cannot open engine output: {error.strerror or error}", file=name) from None


# --- CSRBench answer JSON ----------------------------------------------------------------


def json_term(value: Any, field: str) -> str | None:
    """N-Triples text for one SPARQL-JSON-style value; None means unbound.

    Objects: ``uri``, ``bnode``, ``literal`` (optional ``datatype`` / ``xml:lang``) and
    ``typed-literal``. Plain JSON values: integers → xsd:integer, other numbers →
    xsd:double (lexical form as Python's ``repr``; SPARQL compares doubles by value),
    booleans → xsd:boolean, strings → plain literals, null → unbound.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return literal_term("true" if value else "false", XSD_BOOLEAN)
    if isinstance(value, int):
        return literal_term(str(value), XSD_INTEGER)
    if isinstance(value, float):
        return literal_term(_double_lexical(value), XSD_DOUBLE)
    if isinstance(value, str):
        return literal_term(value)
    if not isinstance(value, dict):
        raise UserError(f"expected a term object or a plain value, got {type(value).__name__}", field=field)
    kind = value.get("type")
    if "value" not in value:
        raise UserError('expected a "value" in the term object', field=field)
    raw = value["value"]
    if kind in ("uri", "iri"):
        if not isinstance(raw, str):
            raise UserError("expected the IRI as a string", field=field)
        return iri_term(raw)
    if kind == "bnode":
        if not isinstance(raw, str) or not raw:
            raise UserError("expected the blank node label as a string", field=field)
        return _checked(bnode_term(raw), field)
    if kind in ("literal", "typed-literal"):
        if isinstance(raw, bool):
            lexical = "true" if raw else "false"
        elif isinstance(raw, int):
            lexical = str(raw)
        elif isinstance(raw, float):
            lexical = _double_lexical(raw)
        elif isinstance(raw, str):
            lexical = raw
        else:
            raise UserError(f"expected the literal value as a string or number, got {type(raw).__name__}", field=field)
        language = value.get("xml:lang", value.get("lang"))
        datatype = value.get("datatype")
        if kind == "typed-literal" and not datatype:
            raise UserError('a "typed-literal" needs a "datatype"', field=field)
        if language is not None and not isinstance(language, str):
            raise UserError("expected the language tag as a string", field=field)
        if datatype is not None and not isinstance(datatype, str):
            raise UserError("expected the datatype IRI as a string", field=field)
        if language:
            return _checked(literal_term(lexical, language=language), field)
        if datatype == RDF_LANG_STRING:
            raise UserError("rdf:langString literal without a language tag", field=field)
        if datatype is None and not isinstance(raw, str):
            datatype = XSD_BOOLEAN if isinstance(raw, bool) else XSD_INTEGER if isinstance(raw, int) else XSD_DOUBLE
        return literal_term(lexical, datatype)
    raise UserError(f"unknown term type {quoted(kind)}; expected uri, bnode, literal or typed-literal", field=field)


def _double_lexical(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "INF" if value > 0 else "-INF"
    return repr(value)


def _checked(term: str, field: str) -> str:
    try:
        return canonical_term(term)
    except TermError as error:
        raise UserError(str(error), field=field) from None


def _int_or_none(value: Any, field: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and not value.is_integer()):
        raise UserError(f"expected a time in ms (integer), got {quoted(value)}", field=field)
    if not MIN_TIME_MS <= value <= MAX_TIME_MS:
        raise UserError(f"time {quoted(value)} ms is outside the int64 range (|t| < 2^63 ms)", field=field)
    return int(value)


def _json_document(text: Any, name: str, line: int | None = None) -> Any:
    """``json.loads`` with every failure a `UserError` at file:line (nesting beyond Python's limit too)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(f"not JSON: {error.msg}", file=name, line=error.lineno if line is None else line,
                        column=error.colno) from None
    except RecursionError:
        raise UserError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep (Python's parser limit)",
                        file=name, line=line) from None


# JSON deeper than this is refused (the parser recurses); engine answers are 4 levels deep.
MAX_JSON_DEPTH = 900


def read_csrbench_json(path: str | os.PathLike[str], *, operation: str = "=") -> ResponseLog:
    """Read CSRBench answer JSON (docs/design/FORMATS.md "Engine outputs in" 1).

    ``{"relations": [{"head": {"vars": [...]}, "timestamp": ms, "results": {"bindings":
    [{"timestamp": ms, "binding": {var: term}}]}}]}``; a top-level list of relations and
    binding entries without the ``"binding"`` wrapper (plain SPARQL JSON) are accepted.
    The relation's ``timestamp`` is the application time (if absent: the bindings' common
    timestamp). Relations are whole answers, hence ``operation="="`` by default.
    """
    name = os.fspath(path)
    with _open(name) as handle:
        try:
            text = handle.read()
        except UnicodeDecodeError:
            raise UserError("not UTF-8 text", file=name) from None
    document = _json_document(text, name)
    if isinstance(document, dict):
        if "relations" not in document:
            raise UserError('expected a "relations" list at the top level', file=name, field="relations")
        relations = document["relations"]
    else:
        relations = document
    if not isinstance(relations, list):
        raise UserError("expected a list of relations", file=name, field="relations")
    variables: dict[str, None] = {}
    responses = []
    for index, relation in enumerate(relations):
        where = f"relations[{index}]"
        try:
            responses.append(_relation(relation, where, variables, operation))
        except UserError as error:
            raise error.located(file=name) from None
    return ResponseLog(tuple(variables), tuple(responses), source=name)


def _relation(relation: Any, where: str, variables: dict[str, None], operation: str) -> EngineResponse:
    if not isinstance(relation, dict):
        raise UserError("expected a relation object", field=where)
    head = relation.get("head", {})
    head_vars = head.get("vars", []) if isinstance(head, dict) else None
    if not isinstance(head_vars, list) or not all(isinstance(v, str) for v in head_vars):
        raise UserError('expected "head": {"vars": [names]}', field=f"{where}.head")
    for variable in head_vars:
        variables.setdefault(variable.lstrip("?$"), None)
    results = relation.get("results", {"bindings": []})
    entries = results.get("bindings") if isinstance(results, dict) else None
    if not isinstance(entries, list):
        raise UserError('expected "results": {"bindings": [...]}', field=f"{where}.results")
    timestamp = _int_or_none(relation.get("timestamp"), f"{where}.timestamp")
    entry_times: set[int | None] = set()
    bindings: list[SolutionMapping] = []
    for position, entry in enumerate(entries):
        field = f"{where}.results.bindings[{position}]"
        if not isinstance(entry, dict):
            raise UserError("expected a binding object", field=field)
        if "binding" in entry:
            values = entry["binding"]
            field += ".binding"
            entry_times.add(_int_or_none(entry.get("timestamp"), f"{field[: -len('.binding')]}.timestamp"))
        else:
            values = {key: value for key, value in entry.items() if key != "timestamp"}
            entry_times.add(_int_or_none(entry.get("timestamp"), f"{field}.timestamp"))
        if not isinstance(values, dict):
            raise UserError("expected {variable: term}", field=field)
        terms: dict[str, str | None] = {}
        for variable, value in values.items():
            terms[variable] = json_term(value, f"{field}.{variable}")
            variables.setdefault(variable.lstrip("?$"), None)
        bindings.append(make_mapping(terms))
    if timestamp is None:
        entry_times.discard(None)
        if len(entry_times) == 1:
            timestamp = entry_times.pop()
    return EngineResponse(timestamp, None, operation, tuple(bindings))


# --- YABench QR_ files ---------------------------------------------------------------------

_QR_TERM = re.compile(rf"{IRI}|{BNODE}|{LITERAL}|{QUIRK_LITERAL}|{BARE_NUMBER}")
_DIGITS = re.compile(r"[0-9]+")


def _qr_fields(line: str, file: str, number: int) -> list[str | None]:
    """Split a binding line into canonical terms (None for an empty field = unbound).

    A tokenizer, not ``split("\\t")``: N-Triples literals may contain raw TABs.
    """
    fields: list[str | None] = []
    position = 0
    end = len(line)
    while True:
        match = _QR_TERM.match(line, position)
        if match is None or match.end() == position:
            if position < end and line[position] != "\t":
                raise UserError(
                    f'expected an N-Triples term (<iri>, _:label, "literal", 76.0^^<datatype>) or a TAB,'
                    f" got {quoted(line[position:])}",
                    file=file,
                    line=number,
                    column=position + 1,
                )
            fields.append(None)
        else:
            text = match.group(0)
            try:
                fields.append(canonical_term(text) if text[0] in '<_"' or "^^" in text else number_term(text))
            except TermError as error:
                raise UserError(str(error), file=file, line=number, column=position + 1) from None
            position = match.end()
        if position >= end:
            return fields
        if line[position] != "\t":
            raise UserError(
                f"expected a TAB between terms, got {quoted(line[position:])}",
                file=file,
                line=number,
                column=position + 1,
            )
        position += 1
        if position == end:
            fields.append(None)
            return fields


def read_yabench_qr(path: str | os.PathLike[str], *, operation: str = "=") -> ResponseLog:
    """Read a YABench ``QR_*`` file (docs/design/FORMATS.md "Engine outputs in" 2).

    Line 1: run start (epoch ms); line 2: variables, TAB-separated; then blocks: an
    emission-time line (epoch ms) and one TAB-separated binding line per solution.
    A digits-only line is an emission time, except with a single variable when the
    number is below the run start: then it is a bare integer binding. Binding terms may
    use YABench's unquoted numbers (``76.0^^<…>``) or Turtle bare numbers.
    """
    name = os.fspath(path)
    run_start: int | None = None
    variables: tuple[str, ...] = ()
    responses: list[EngineResponse] = []
    current_time: int | None = None
    current: list[SolutionMapping] | None = None
    number = 0
    with _open(name) as handle:
        try:
            for number, raw in enumerate(handle, 1):
                line = raw.rstrip("\r\n").rstrip(" ")
                if number == 1:
                    if not _DIGITS.fullmatch(line.strip()):
                        raise UserError(
                            f"expected the run start in epoch ms on line 1, got {quoted(line)}", file=name, line=1
                        )
                    run_start = int(line.strip())
                    continue
                if number == 2:
                    names = [part.strip().lstrip("?$") for part in line.split("\t")]
                    if not line.strip() or not all(names):
                        raise UserError(
                            f"expected the variable names separated by TABs on line 2, got {quoted(line)}",
                            file=name,
                            line=2,
                        )
                    variables = tuple(names)
                    continue
                if not line.strip():
                    continue
                stripped = line.strip()
                if _DIGITS.fullmatch(stripped) and not (
                    len(variables) == 1 and run_start is not None and int(stripped) < run_start
                ):
                    if current is not None:
                        responses.append(EngineResponse(None, current_time, operation, tuple(current)))
                    current_time = int(stripped)
                    current = []
                    continue
                if current is None:
                    raise UserError(
                        "expected an emission time (epoch ms) before the first binding", file=name, line=number
                    )
                fields = _qr_fields(line, name, number)
                if len(fields) != len(variables):
                    raise UserError(
                        f"expected {len(variables)} TAB-separated terms ({', '.join(variables)}), got {len(fields)}",
                        file=name,
                        line=number,
                    )
                current.append(make_mapping(dict(zip(variables, fields))))
        except UnicodeDecodeError:
            raise UserError(f"not UTF-8 text (after line {number})", file=name) from None
    if number < 2:
        raise UserError("expected the run start on line 1 and the variable names on line 2", file=name, line=number + 1)
    if current is not None:
        responses.append(EngineResponse(None, current_time, operation, tuple(current)))
    return ResponseLog(variables, tuple(responses), source=name, run_start=run_start)


# --- the workbench's response log (JSON Lines) ---------------------------------------------


def response_records(log: ResponseLog) -> Iterator[dict[str, Any]]:
    """The JSON Lines records of ``log``: a header, then one record per binding.

    A response with no bindings (an empty-relation notification) is one record with
    ``"binding": null``; ``"response"`` numbers the responses so that records group back.
    """
    yield _header_record(log.engine, log.query, log.run, log.variables, log.run_start, log.source)
    for index, response in enumerate(log.responses):
        yield from _binding_records(index, response, log.engine, log.query, log.run)


def _header_record(engine: str | None, query: str | None, run: str | None, variables: Iterable[str],
                   run_start: int | None, source: str) -> dict[str, Any]:
    return {"record": "header", "engine": engine, "query": query, "run": run, "variables": list(variables),
            "run_start": run_start, "source": source}


def _binding_records(index: int, response: EngineResponse, engine: str | None, query: str | None,
                     run: str | None) -> Iterator[dict[str, Any]]:
    base = {
        "engine": engine,
        "query": query,
        "run": run,
        "response": index,
        "system_time": response.system_time,
        "application_time": response.application_time,
        "operation": response.operation,
    }
    if not response.bindings:
        yield {**base, "binding": None}
    for solution in response.bindings:
        yield {**base, "binding": mapping_dict(solution)}


def _record_line(record: Mapping[str, Any]) -> str:
    """One JSON line, compact, non-ASCII as is. The stand writes one per binding as answers
    arrive, so orjson writes it (the same text as ``json.dumps`` here, ~5× faster); the
    standard library what orjson does not encode (ints beyond 64 bits)."""
    try:
        return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE).decode("utf-8")
    except TypeError:
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def write_response_log(path: str | os.PathLike[str], log: ResponseLog) -> int:
    """Write ``log`` as JSON Lines, atomically (``PATH.partial`` renamed at the end); returns records written."""
    target = Path(path)
    partial = target.with_name(target.name + ".partial")
    target.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    try:
        with open(partial, "w", encoding="utf-8", newline="\n") as handle:
            for record in response_records(log):
                handle.write(_record_line(record))
                count += 1
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, target)
    return count


class ResponseLogWriter:
    """The response log written as the responses arrive (the stand's), so that a run's answers
    are never all held in memory; the same file as :func:`write_response_log` of the whole log.

    The header, which names every variable seen, is known only at the end: the bindings go to
    ``PATH.body.partial`` first, and :meth:`finish` writes header + body as ``PATH``
    atomically. Not thread-safe: one thread adds.
    """

    def __init__(self, path: str | os.PathLike[str], *, variables: Iterable[str] = (), engine: str | None = None,
                 query: str | None = None, run: str | None = None, source: str = "") -> None:
        self.target = Path(path)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.body_path = self.target.with_name(self.target.name + ".body.partial")
        self.body = open(self.body_path, "w", encoding="utf-8", newline="\n")
        self.variables: dict[str, None] = dict.fromkeys(variables)
        self.engine, self.query, self.run, self.source = engine, query, run, source
        self.responses = 0
        self.bindings = 0

    def add(self, response: EngineResponse) -> None:
        for mapping in response.bindings:
            for name, _ in mapping:
                if name not in self.variables:
                    self.variables[name] = None
        self.body.write("".join(_record_line(record) for record in _binding_records(
            self.responses, response, self.engine, self.query, self.run)))
        self.responses += 1
        self.bindings += len(response.bindings)

    def finish(self, run_start: int | None) -> None:
        """Write ``PATH`` (header, then the bindings) and remove the body file."""
        import shutil

        self.body.close()
        partial = self.target.with_name(self.target.name + ".partial")
        try:
            with open(partial, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(_record_line(_header_record(self.engine, self.query, self.run, self.variables,
                                                         run_start, self.source)))
                with open(self.body_path, encoding="utf-8", newline="\n") as body:
                    shutil.copyfileobj(body, handle, 1 << 20)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        finally:
            self.body_path.unlink(missing_ok=True)
        os.replace(partial, self.target)


def _numbered_lines(handle: Any, name: str) -> Iterator[tuple[int, str]]:
    number = 0
    try:
        for number, line in enumerate(handle, 1):
            yield number, line
    except UnicodeDecodeError:
        raise UserError(f"not UTF-8 text (after line {number})", file=name) from None


def read_response_log(path: str | os.PathLike[str]) -> ResponseLog:
    """Read the workbench's JSON Lines response log (docs/design/FORMATS.md "Engine outputs in" 3).

    The header record is optional (variables then come from the bindings, in order of
    first appearance). Records without ``"response"`` group by consecutive equal
    ``(system_time, application_time, operation)``.
    """
    name = os.fspath(path)
    header: dict[str, Any] = {}
    variables: dict[str, None] = {}
    responses: list[EngineResponse] = []
    key: object = None
    current: list[SolutionMapping] = []
    current_meta: tuple[int | None, int | None, str] | None = None
    ids: dict[str, str | None] = {"engine": None, "query": None, "run": None}
    with _open(name) as handle:
        for number, line in _numbered_lines(handle, name):
            if not line.strip():
                continue
            record = _json_document(line, name, number)
            if not isinstance(record, dict):
                raise UserError("expected a JSON object per line", file=name, line=number)
            fields = HEADER_FIELDS if record.get("record") == "header" else RECORD_FIELDS
            unknown = next((key for key in record if key not in fields), None)
            if unknown is not None:  # a misspelt field would otherwise read as an empty response
                raise UserError(unknown_key_message(unknown, fields), file=name, line=number, field=unknown)
            if record.get("record") == "header":
                header = record
                for variable in record.get("variables") or []:
                    if not isinstance(variable, str):
                        raise UserError("expected variable names as strings", file=name, line=number, field="variables")
                    variables.setdefault(variable.lstrip("?$"), None)
                continue
            try:
                system_time = _int_or_none(record.get("system_time"), "system_time")
                application_time = _int_or_none(record.get("application_time"), "application_time")
                operation = record.get("operation", "=")
                if operation not in OPERATIONS:
                    raise UserError(f"expected operation '+', '-' or '=', got {quoted(operation)}", field="operation")
                binding = record.get("binding")
                solution: SolutionMapping | None = None
                if binding is not None:
                    if not isinstance(binding, dict):
                        raise UserError("expected {variable: N-Triples term} or null", field="binding")
                    terms: dict[str, str | None] = {}
                    for variable, term in binding.items():
                        if term is not None and not isinstance(term, str):
                            raise UserError("expected N-Triples term text", field=f"binding.{variable}")
                        terms[variable] = _checked(term, f"binding.{variable}") if term is not None else None
                        variables.setdefault(variable.lstrip("?$"), None)
                    solution = make_mapping(terms)
            except UserError as error:
                raise error.located(file=name, line=number) from None
            if "binding" not in record:  # a record that is no binding would read as an empty response
                raise UserError('missing field "binding" ({variable: term}, or null for an empty response)',
                                file=name, line=number, field="binding")
            for field in ids:
                if ids[field] is None and isinstance(record.get(field), str):
                    ids[field] = record[field]
            meta = (system_time, application_time, operation)
            record_key = ("response", record["response"]) if "response" in record else ("meta", meta)
            if record_key != key:
                if current_meta is not None:
                    responses.append(EngineResponse(current_meta[1], current_meta[0], current_meta[2], tuple(current)))
                key, current_meta, current = record_key, meta, []
            if solution is not None:
                current.append(solution)
    if current_meta is not None:
        responses.append(EngineResponse(current_meta[1], current_meta[0], current_meta[2], tuple(current)))
    run_start = header.get("run_start")
    return ResponseLog(
        tuple(variables),
        tuple(responses),
        source=name,
        run_start=run_start if isinstance(run_start, int) else None,
        engine=header.get("engine") or ids["engine"],
        query=header.get("query") or ids["query"],
        run=header.get("run") or ids["run"],
    )


# --- entry points ------------------------------------------------------------------------


def read_responses(path: str | os.PathLike[str], fmt: str, *, operation: str | None = None) -> ResponseLog:
    """Read engine output in ``fmt`` (one of ``RESPONSE_FORMATS``).

    ``operation`` overrides the R2S operator for formats that do not record it (CSRBench
    JSON, QR_ files; default ``=``), e.g. ``"+"`` for an Istream engine such as CQELS.
    """
    if operation is not None and operation not in OPERATIONS:
        raise UserError(f"expected operation '+', '-' or '=', got {quoted(operation)}", field="operation")
    if fmt == "csrbench-json":
        return read_csrbench_json(path, operation=operation or "=")
    if fmt == "yabench-qr":
        return read_yabench_qr(path, operation=operation or "=")
    if fmt == "jsonl":
        return read_response_log(path)
    raise UserError(
        f"unknown engine output format {fmt!r}; expected one of {', '.join(RESPONSE_FORMATS)}",
        field="engine-output-format",
    )


def detect_response_format(path: str | os.PathLike[str]) -> str:
    """Guess the engine output format from the file name: ``QR_*`` → yabench-qr, ``.jsonl``, ``.json``."""
    file = Path(path)
    if file.name.startswith("QR_"):
        return "yabench-qr"
    suffix = file.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".json":
        return "csrbench-json"
    raise UserError(
        f"cannot tell the engine output format; pass one of {', '.join(RESPONSE_FORMATS)}",
        file=str(file),
        field="engine-output-format",
    )

