"""Write a parsed `ContinuousQuery` back as text in one query dialect.

An experiment's query is written once, in whatever syntax its author knows; an engine
declares the dialect it reads (``dialect:`` on the engine, ``rspwb query translate``), and
the stand sends it the query in that dialect. The writer works on the model's SPARQL 1.1
text (window clauses removed, window accesses as ``GRAPH <w>``) and puts each dialect's
stream clauses back:

- ``rspql``: ``REGISTER RSTREAM <out> AS`` (when the R2S is known), ``FROM NAMED WINDOW <w>
  ON <s> [RANGE PT10S STEP PT5S]``, ``WINDOW <w> { … }``.
- ``csparql``: ``REGISTER QUERY name [COMPUTED EVERY …] AS``, ``FROM STREAM <s> [RANGE 10s
  STEP 5s]``; window contents merged into the default graph.
- ``cqels``: ``STREAM <s> [RANGE 10s SLIDE 5s] { … }`` in place of each window access.
- ``rspjs``: what RSP-JS 1.3.5's line-based parser reads (``rsp-js/dist/rspql.js``):
  ``REGISTER RStream <out> AS`` alone on its line, one ``FROM NAMED WINDOW <w> ON STREAM <s>
  [RANGE n STEP n]`` per line with full IRIs and the sizes as plain numbers in the
  timestamps' unit (the stand sends milliseconds), every ``WINDOW <w> {`` at the start of
  a line (RSP-JS turns only those into ``GRAPH``), and no ``FROM <g>`` clauses (the static
  data reaches RSP-JS through the register message, in the default graph).

Moving between the *named* (RSP-QL, CQELS-QL) and the *merged* (C-SPARQL) dataset modes is
exact only for one window without static default graphs (C-SPARQL merges those into the
window's default graph); other queries are refused with a UserError that says why.
"""

from __future__ import annotations

import re

from rsp_workbench.core.semantics import R2S
from rsp_workbench.errors import UserError
from rsp_workbench.query.lexer import Token, tokenize
from rsp_workbench.query.model import ContinuousQuery, DatasetMode, QueryForm, WindowDeclaration

DIALECTS = ("rspql", "csparql", "cqels", "rspjs")
_NAMED_DIALECTS = ("rspql", "cqels", "rspjs")
_PARSE_SYNTAX = {"rspql": "rspql", "csparql": "csparql", "cqels": "cqels", "rspjs": "rspql"}


def parse_syntax_of(dialect: str) -> str:
    """The parser syntax that reads text written in ``dialect`` (rspjs text is RSP-QL)."""
    return _PARSE_SYNTAX[check_dialect(dialect)]


def check_dialect(dialect: str, field: str = "dialect") -> str:
    key = str(dialect).strip().lower().replace("-", "").replace("_", "")
    key = {"cqelsql": "cqels"}.get(key, key)
    if key not in DIALECTS:
        raise UserError(f"unknown query dialect {dialect!r}; expected one of {', '.join(DIALECTS)}", field=field)
    return key


def write_query(query: ContinuousQuery, dialect: str) -> str:
    """The query as text in ``dialect`` (rspql, csparql, cqels or rspjs); UserError if it cannot say it."""
    dialect = check_dialect(dialect)
    if not query.windows:
        raise UserError("a one-time SPARQL query has no windows to write in a stream dialect", file=query.source)
    return _Writer(query, dialect).write()


def iso_duration(ms: int) -> str:
    """``PT10S``, ``PT0.5S``, ``PT1M30S`` (xsd:duration, as RSP-QL writes window sizes)."""
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds = f"{rest // 1000}" if rest % 1000 == 0 else f"{rest / 1000:.3f}".rstrip("0")
    text = "PT" + (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    return text + (f"{seconds}S" if rest or text == "PT" else "")


def unit_duration(ms: int) -> str:
    """``10s`` for whole seconds, else ``500ms`` (C-SPARQL and CQELS-QL spell units)."""
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


class _Writer:
    def __init__(self, query: ContinuousQuery, dialect: str) -> None:
        self.query = query
        self.dialect = dialect
        self.text = query.sparql
        self.tokens = tokenize(self.text, query.source)
        self.prefixes = _prefixes(self.tokens)
        self.edits: list[tuple[int, int, str]] = []

    def fail(self, message: str) -> UserError:
        target = {"rspql": "RSP-QL", "csparql": "C-SPARQL", "cqels": "CQELS-QL", "rspjs": "RSP-JS"}[self.dialect]
        return UserError(f"cannot write this query in {target}: {message}", file=self.query.source)

    def write(self) -> str:
        form = self._form_index()
        body_open = self._body_open(form)
        named_target = self.dialect in _NAMED_DIALECTS
        if self.query.dataset_mode is DatasetMode.MERGED and named_target:
            self._wrap_merged_body(body_open)
        elif self.query.dataset_mode is DatasetMode.NAMED:
            self._rewrite_window_accesses(named_target)
        self.edits.append((self.tokens[form].start, self.tokens[form].start, self._header()))
        where = self._dataset_anchor(form, body_open)
        clauses = self._dataset_clauses()
        if clauses:
            self.edits.append((where, where, ("" if self._line_starts(where) else "\n") + clauses + "\n"))
        return _apply(self.text, self.edits).strip("\n") + "\n"

    # -- places in the SPARQL text ------------------------------------------------------------

    def _form_index(self) -> int:
        for index, token in enumerate(self.tokens):
            if token.depth == 0 and token.is_word(*(form.value for form in QueryForm)):
                return index
        raise self.fail("no SELECT, CONSTRUCT, ASK or DESCRIBE found")

    def _body_open(self, form: int) -> int:
        """Index of the ``{`` that opens the WHERE clause."""
        tokens = self.tokens
        start = form + 1
        if tokens[form].is_word("CONSTRUCT") and start < len(tokens) and tokens[start].text == "{":
            start = _matching(tokens, start) + 1  # skip the template
        for index in range(start, len(tokens)):
            if tokens[index].depth == 0 and tokens[index].text == "{":
                return index
        raise self.fail("no WHERE clause found")

    def _dataset_anchor(self, form: int, body_open: int) -> int:
        """Offset where FROM clauses go: before the WHERE keyword (or its ``{``)."""
        before = self.tokens[body_open - 1] if body_open > form + 1 else None
        if before is not None and before.is_word("WHERE"):
            return before.start
        return self.tokens[body_open].start

    # -- dataset modes ---------------------------------------------------------------------------

    def _single_window(self, why: str) -> WindowDeclaration:
        if len(self.query.windows) != 1:
            raise self.fail(f"{why} (this query reads {len(self.query.windows)} windows)")
        if self.query.default_graphs:
            raise self.fail("C-SPARQL merges the static FROM graphs into the window's default graph; "
                            "RSP-QL and CQELS-QL keep them apart")
        return self.query.windows[0]

    def _wrap_merged_body(self, body_open: int) -> None:
        window = self._single_window("C-SPARQL merges all windows into one default graph")
        close = _matching(self.tokens, body_open)
        opening = self.tokens[body_open]
        self.edits.append((opening.end, opening.end, " " + self._access(window, None, False) + " {"))
        self.edits.append((self.tokens[close].start, self.tokens[close].start, "} "))

    def _rewrite_window_accesses(self, named_target: bool) -> None:
        windows = {window.name: window for window in self.query.windows}
        accesses = [
            (index, windows[iri]) for index, token in enumerate(self.tokens[:-2])
            if token.is_word("GRAPH") and (iri := _iri(self.tokens[index + 1], self.prefixes)) in windows
            and self.tokens[index + 2].text == "{"
        ]
        if named_target:
            for index, window in accesses:
                token, name = self.tokens[index], self.tokens[index + 1]
                self.edits.append((token.start, name.end, self._access(window, name.text, self._line_starts(token.start))))
            return
        self._single_window("C-SPARQL merges all windows into one default graph")
        for index, _ in accesses:
            opening = index + 2
            close = _matching(self.tokens, opening)
            outer = opening - 3
            if (outer >= 0 and self.tokens[outer].text == "{" and close + 1 < len(self.tokens)
                    and _matching(self.tokens, outer) == close + 1):
                # `{ GRAPH <w> { P } }` → `{ P }`
                self.edits.append((self.tokens[index].start, self.tokens[opening].end, ""))
                self.edits.append((self.tokens[close].start, self.tokens[close].end, ""))
            else:
                self.edits.append((self.tokens[index].start, self.tokens[index + 1].end, ""))

    def _line_starts(self, offset: int) -> bool:
        return not self.text[self.text.rfind("\n", 0, offset) + 1 : offset].strip()

    def _access(self, window: WindowDeclaration, written: str | None, at_line_start: bool) -> str:
        """How the dialect reads one window inside WHERE (RSP-JS: ``WINDOW`` must start a line)."""
        if self.dialect == "cqels":
            return f"STREAM <{window.stream}> {self._spec(window)}"
        name = f"<{window.name}>" if self.dialect == "rspjs" or written is None else written
        return ("\n" if self.dialect == "rspjs" and not at_line_start else "") + f"WINDOW {name}"

    # -- clauses ---------------------------------------------------------------------------------

    def _spec(self, window: WindowDeclaration) -> str:
        size, slide = window.size_ms, window.slide_ms
        if self.dialect == "rspql":
            return f"[RANGE {iso_duration(size)} STEP {iso_duration(slide)}]"
        if self.dialect == "rspjs":
            return f"[RANGE {size} STEP {slide}]"
        if self.dialect == "cqels":
            if not window.slide_given:
                return f"[RANGE {unit_duration(size)}]"
            return f"[RANGE {unit_duration(size)} SLIDE {unit_duration(slide)}]"
        return f"[RANGE {unit_duration(size)} STEP {unit_duration(slide)}]"

    def _header(self) -> str:
        query = self.query
        if self.dialect == "csparql":
            name = query.name if query.name and re.fullmatch(r"[A-Za-z_][\w.-]*", query.name) else "q"
            every = f" COMPUTED EVERY {unit_duration(query.computed_every_ms)}" if query.computed_every_ms else ""
            return f"REGISTER QUERY {name}{every} AS\n"
        if self.dialect in ("rspql", "rspjs") and query.r2s is not None:
            out = query.output_stream or f"urn:rspwb:output:{query.name or 'q'}"
            operator = query.r2s.value.upper()
            if self.dialect == "rspjs":
                operator = {R2S.RSTREAM: "RStream", R2S.ISTREAM: "IStream", R2S.DSTREAM: "DStream"}[query.r2s]
            return f"REGISTER {operator} <{out}> AS\n"
        return ""

    def _dataset_clauses(self) -> str:
        """FROM clauses of the static graphs and the windows, one per line."""
        query = self.query
        lines: list[str] = []
        if self.dialect != "rspjs":
            lines += [f"FROM <{graph}>" for graph in query.default_graphs]
            lines += [f"FROM NAMED <{graph}>" for graph in query.named_graphs]
        if self.dialect == "csparql":
            lines += [f"FROM STREAM <{w.stream}> {self._spec(w)}" for w in query.windows]
        elif self.dialect == "rspql":
            lines += [f"FROM NAMED WINDOW <{w.name}> ON <{w.stream}> {self._spec(w)}" for w in query.windows]
        elif self.dialect == "rspjs":
            lines += [f"FROM NAMED WINDOW <{w.name}> ON STREAM <{w.stream}> {self._spec(w)}" for w in query.windows]
        return "\n".join(lines)


def _prefixes(tokens: list[Token]) -> dict[str, str]:
    prefixes: dict[str, str] = {}
    for index, token in enumerate(tokens[:-2]):
        if token.depth == 0 and token.is_word("PREFIX") and tokens[index + 2].kind == "iri":
            prefixes[tokens[index + 1].text[:-1]] = tokens[index + 2].text[1:-1]
    return prefixes


def _iri(token: Token, prefixes: dict[str, str]) -> str | None:
    if token.kind == "iri":
        return token.text[1:-1]
    if token.kind == "pname":
        prefix, _, local = token.text.partition(":")
        if prefix in prefixes:
            return prefixes[prefix] + re.sub(r"\\(.)", r"\1", local)
    return None


def _matching(tokens: list[Token], opening: int) -> int:
    """Index of the ``}`` that closes the ``{`` at ``opening``."""
    depth = tokens[opening].depth
    for index in range(opening + 1, len(tokens)):
        if tokens[index].text == "}" and tokens[index].depth == depth:
            return index
    raise UserError("unbalanced braces in the query")


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    pieces: list[str] = []
    position = 0
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1])):
        pieces.append(text[position:start])
        pieces.append(replacement)
        position = max(position, end)
    pieces.append(text[position:])
    return "".join(pieces)
