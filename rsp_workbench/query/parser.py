"""Parse RSP-QL, C-SPARQL, SPARQLstream and CQELS-QL text into a `ContinuousQuery`.

The streaming extensions are found with a SPARQL-aware tokenizer and rewritten into plain
SPARQL 1.1, which rdflib then parses; every error (ours or rdflib's) is reported at the
line and column of the *original* text (`rsp_workbench.query.lexer.RewrittenText`).

Accepted forms (keywords case-insensitive, IRIs as ``<…>`` or prefixed names):

- RSP-QL: ``REGISTER RSTREAM|ISTREAM|DSTREAM <out> AS`` (optional) ``SELECT …
  FROM NAMED WINDOW <w> ON <s> [RANGE PT10S STEP PT5S] … WHERE { WINDOW <w> { … } }``;
  also ``ON STREAM <s>`` and sizes without a unit in milliseconds (``[RANGE 10000 STEP
  5000]``), as RSP-JS writes them.
  Windows are named graphs (``WINDOW`` becomes ``GRAPH``); a ``WINDOW <w>`` that was never
  declared is an error.
- C-SPARQL: ``REGISTER QUERY|STREAM name [COMPUTED EVERY 5s] AS … FROM STREAM <s>
  [RANGE 10s STEP 10s | RANGE 10s TUMBLING]``; ``FROM NAMED STREAM`` (CSRBench listings) is
  read the same way. All windows are merged into the default graph.
- SPARQLstream: ``FROM NAMED STREAM <s> [NOW - 10 S SLIDE 10 S]`` without REGISTER,
  optionally ``SELECT ISTREAM …``; merged like C-SPARQL.
- CQELS-QL: ``… WHERE { STREAM <s> [RANGE 5s SLIDE 5s] { … } … }``; each STREAM clause is
  its own window, named ``urn:rspwb:window:<i>``, and becomes ``GRAPH <that name>``.

Window naming: RSP-QL windows keep their declared IRI; windows of the other syntaxes get
``urn:rspwb:window:0``, ``…:1``, … in text order (stable for a given text).

Defaults when the slide is left out: RSP-QL and SPARQLstream ``[RANGE ω]`` / ``[NOW - ω]``
are tumbling (β = ω); CQELS ``[RANGE ω]`` slides continuously, which we model as β = 1 ms
(CQELS re-evaluates on every content change over the last ω, RSP-QL "Explaining
heterogeneity"); C-SPARQL requires STEP or TUMBLING (as its grammar does).
``WindowDeclaration.slide_given`` is False in these cases.

Durations: ``10s``, ``10 s``, ``500ms``, ``1m``, ``2h``, ``1d`` (also ``MINUTES``,
``HOURS``, … as in SPARQLstream) and ISO 8601 ``PT10S``.

Rejected with a located error: count-based windows (``TRIPLES``, ``ELEMENTS``),
CQELS ``[NOW]`` and ``[ALL]``, SPARQLstream ``TO NOW - …``, ``SERVICE`` (federation: a
window snapshot must be evaluable locally), SPARQL Update, unfilled template variables.
Accepted as plain SPARQL 1.1: property paths, subqueries, VALUES, aggregates, GRAPH over
static named graphs.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import urljoin

from rsp_workbench.core.semantics import R2S
from rsp_workbench.errors import UserError, cut_words, quoted
from rsp_workbench.query.lexer import RewrittenText, Token, removal, tokenize
from rsp_workbench.query.model import (
    GENERATED_WINDOW_PREFIX,
    ContinuousQuery,
    DatasetMode,
    QueryForm,
    QuerySyntax,
    WindowDeclaration,
)
from rsp_workbench.query.template import line_column

#: rdflib's SPARQL grammar (pyparsing) is not thread-safe: two threads parsing at once fail
#: with spurious errors (the probe battery and the GUI's workers parse from threads).
_RDFLIB_PARSING = threading.Lock()

# Slide used for a CQELS window without SLIDE: continuous sliding at millisecond resolution.
CQELS_CONTINUOUS_SLIDE_MS = 1

_UNIT_MS: dict[str, int] = {}
for _names, _ms in (
    (("ms", "msec", "millis", "millisecond", "milliseconds"), 1),
    (("s", "sec", "secs", "second", "seconds"), 1000),
    (("m", "min", "mins", "minute", "minutes"), 60_000),
    (("h", "hr", "hour", "hours"), 3_600_000),
    (("d", "day", "days"), 86_400_000),
):
    for _name in _names:
        _UNIT_MS[_name] = _ms
_ISO_DURATION = re.compile(r"P(?:\d+(?:\.\d+)?[YMWD])*(?:T(?:\d+(?:\.\d+)?[HMS])+)?", re.IGNORECASE)
_HEX_PAIR = re.compile(r"%[0-9A-Fa-f]{2}%")
_QUERY_FORMS = ("SELECT", "CONSTRUCT", "ASK", "DESCRIBE")
_UPDATE_WORDS = ("INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH")
_WINDOW_KEYWORDS = ("STEP", "SLIDE", "TUMBLING", "TO", "RANGE", "NOW", "AS", "ON", "FROM", "WHERE")
_R2S_WORDS = {"RSTREAM": R2S.RSTREAM, "ISTREAM": R2S.ISTREAM, "DSTREAM": R2S.DSTREAM}

# Syntax families: constructs of different families cannot be mixed in one query.
_RSPQL, _MERGED, _CQELS = "rspql", "merged", "cqels"
_FAMILY_OF = {
    QuerySyntax.RSPQL: _RSPQL,
    QuerySyntax.CSPARQL: _MERGED,
    QuerySyntax.SPARQLSTREAM: _MERGED,
    QuerySyntax.CQELS: _CQELS,
    QuerySyntax.SPARQL: None,
}
_FAMILY_LABEL = {_RSPQL: "RSP-QL", _MERGED: "C-SPARQL/SPARQLstream", _CQELS: "CQELS-QL"}


def parse_query(
    text: str, syntax: str | QuerySyntax | None = None, source: str | None = None
) -> ContinuousQuery:
    """Parse a continuous query; ``syntax`` None auto-detects it.

    ``syntax`` is one of ``rspql``, ``csparql``, ``sparqlstream``, ``cqels`` or ``sparql``
    (a one-time SPARQL 1.1 query without windows). ``source`` names the file in errors.
    Raises `UserError` with file, line and column for every problem in the text.
    """
    requested = _requested_syntax(syntax)
    if len(text) > MAX_QUERY_CHARS:
        raise UserError(f"the query has {len(text):,} characters; the limit is {MAX_QUERY_CHARS:,} "
                        "(rdflib's SPARQL parser needs seconds per kilobyte)", file=source, line=1)
    tokens = tokenize(text, source)
    if len(tokens) > MAX_QUERY_TOKENS:
        line, column = line_column(text, tokens[MAX_QUERY_TOKENS].start)
        raise UserError(f"the query has {len(tokens):,} tokens; the limit is {MAX_QUERY_TOKENS:,} "
                        "(rdflib's SPARQL parser needs about a second per thousand)", file=source, line=line,
                        column=column)
    return _QueryScanner(text, tokens, source).parse(requested)


# Bounds on one query text (docs/experiment-format.md, "Bounds"): the benchmarks' largest
# query has 823 characters and ~150 tokens; rdflib's parser takes ~3 s for 2,000 tokens of
# an IN list, so a megabyte would take minutes and gigabytes.
MAX_QUERY_CHARS = 64 * 1024
MAX_QUERY_TOKENS = 5_000


def _requested_syntax(syntax: str | QuerySyntax | None) -> QuerySyntax | None:
    if syntax is None or isinstance(syntax, QuerySyntax):
        return syntax
    key = str(syntax).strip().lower().replace("-", "").replace("_", "")
    aliases = {"rspql": "rspql", "csparql": "csparql", "sparqlstream": "sparqlstream",
               "cqels": "cqels", "cqelsql": "cqels", "sparql": "sparql", "auto": ""}
    if key not in aliases:
        raise UserError(
            f"unknown query syntax {syntax!r}; expected rspql, csparql, sparqlstream, cqels or sparql",
            field="syntax",
        )
    return QuerySyntax(aliases[key]) if aliases[key] else None


@dataclass
class _WindowDraft:
    """A window as scanned, before the syntax (and so the default slide) is known."""

    name: str | None
    stream: str
    size_ms: int
    slide_ms: int | None
    token: Token  # where it is declared
    family: str


@dataclass(frozen=True)
class _Evidence:
    family: str
    token: Token
    what: str


class _QueryScanner:
    """One pass over the tokens; collects windows, graphs, edits and syntax evidence."""

    def __init__(self, text: str, tokens: list[Token], source: str | None) -> None:
        self.text = text
        self.tokens = tokens
        self.source = source
        self.prefixes: dict[str, str] = {}
        self.base: str | None = None
        self.edits: list[tuple[int, int, str]] = []
        self.evidence: list[_Evidence] = []
        self.windows: list[_WindowDraft] = []
        self.window_uses: list[tuple[Token, str | None]] = []  # (WINDOW token, IRI or None for ?var)
        self.cqels_edits: list[tuple[int, int, int]] = []  # (start, end, window index)
        self.default_graphs: list[str] = []
        self.named_graphs: list[str] = []
        self.name: str | None = None
        self.output_stream: str | None = None
        self.r2s: R2S | None = None
        self.computed_every_ms: int | None = None
        self.register_kind: str | None = None
        self.form_token: Token | None = None
        self.header: range = range(0)  # token indexes of REGISTER … AS

    # -- errors and small helpers ---------------------------------------------------

    def error(self, message: str, at: Token | int | None) -> UserError:
        offset = at.start if isinstance(at, Token) else (len(self.text.rstrip()) if at is None else at)
        line, column = line_column(self.text, offset)
        return UserError(message, file=self.source, line=line, column=column)

    def token(self, index: int) -> Token | None:
        return self.tokens[index] if 0 <= index < len(self.tokens) else None

    def describe_token(self, index: int) -> str:
        token = self.token(index)
        return quoted(token.text) if token else "the end of the query"

    def expect(self, index: int, accept: Callable[[Token], bool], wanted: str, after: Token) -> Token:
        token = self.token(index)
        if token is None or not accept(token):
            raise self.error(f"expected {wanted} after {after.text}, found {self.describe_token(index)}",
                             token if token is not None else None)
        return token

    def iri(self, token: Token) -> str:
        """The absolute IRI of an ``<…>`` or prefixed-name token."""
        if token.kind == "iri":
            value = token.text[1:-1]
            return urljoin(self.base, value) if self.base and ":" not in value else value
        if token.kind == "pname":
            prefix, _, local = token.text.partition(":")
            if prefix not in self.prefixes:
                raise self.error(
                    f"unknown prefix '{prefix}:'; declare it with PREFIX {prefix}: <…>", token
                )
            return self.prefixes[prefix] + re.sub(r"\\(.)", r"\1", local)
        raise self.error(f"expected an IRI, found {quoted(token.text)}", token)

    @staticmethod
    def is_term(token: Token) -> bool:
        return token.kind in ("iri", "pname")

    # -- the pass ----------------------------------------------------------------------

    def parse(self, requested: QuerySyntax | None) -> ContinuousQuery:
        self.check_templates()
        self.scan_prologue()
        self.scan_register()
        self.scan_form()
        for index, token in enumerate(self.tokens):
            if token.depth == 0 and token.is_word("FROM"):
                self.scan_from(index)
            elif token.depth > 0 and token.is_word("WINDOW"):
                self.scan_window_access(index)
            elif token.depth > 0 and token.is_word("STREAM"):
                self.scan_cqels_stream(index)
            elif token.is_word("SERVICE"):
                raise self.error(
                    "SERVICE (federated query) is not supported: a window snapshot must be "
                    "evaluable locally, over the window contents and the static graphs", token)
        syntax = self.decide_syntax(requested)
        windows = self.finish_windows(syntax)
        warnings = self.check_window_uses(syntax, windows)
        for start, end, index in self.cqels_edits:
            self.edits.append((start, end, f"GRAPH <{windows[index].name}>"))
        rewritten = RewrittenText(self.text, self.edits)
        prepared, form, variables = self.compile_sparql(rewritten)
        self.refuse_unsupported(prepared.algebra)
        query = ContinuousQuery(
            syntax=syntax,
            name=self.name,
            output_stream=self.output_stream,
            r2s=self.r2s,
            windows=tuple(windows),
            dataset_mode=DatasetMode.NAMED if _FAMILY_OF[syntax] in (_RSPQL, _CQELS) else DatasetMode.MERGED,
            default_graphs=tuple(dict.fromkeys(self.default_graphs)),
            named_graphs=tuple(dict.fromkeys(self.named_graphs)),
            form=form,
            variables=variables,
            sparql=rewritten.text,
            text=self.text,
            source=self.source,
            computed_every_ms=self.computed_every_ms,
            warnings=tuple(warnings),
        )
        query.__dict__["algebra"] = prepared  # fill the cached_property
        return query

    def check_templates(self) -> None:
        for token in self.tokens:
            placeholder = None
            if token.kind == "template" and not _HEX_PAIR.fullmatch(token.text):
                placeholder = token.text
            elif token.kind == "iri" and "${" in token.text:
                placeholder = token.text[token.text.index("${") :].split("}")[0] + "}"
            if placeholder is not None:
                name = placeholder.strip("${}%")
                raise self.error(
                    f"unfilled template variable {placeholder}; fill it first "
                    f"(e.g. --var {name}=VALUE or fill_template)", token)

    def scan_prologue(self) -> None:
        for index, token in enumerate(self.tokens):
            if token.depth != 0:
                continue
            if token.is_word("PREFIX"):
                name = self.expect(index + 1, lambda t: t.kind == "pname" and t.text.endswith(":"),
                                   "a prefix name like ex:", token)
                target = self.expect(index + 2, lambda t: t.kind == "iri", "an <IRI>", name)
                self.prefixes[name.text[:-1]] = self.iri(target)
            elif token.is_word("BASE"):
                target = self.expect(index + 1, lambda t: t.kind == "iri", "an <IRI>", token)
                self.base = target.text[1:-1]

    def scan_register(self) -> None:
        for index, token in enumerate(self.tokens):
            if token.is_word(*_QUERY_FORMS) and token.depth == 0:
                return
            if not token.is_word("REGISTER"):
                continue
            kind = self.expect(index + 1, lambda t: t.is_word("RSTREAM", "ISTREAM", "DSTREAM", "QUERY", "STREAM"),
                               "RSTREAM, ISTREAM or DSTREAM (RSP-QL) or QUERY/STREAM (C-SPARQL)", token)
            cursor = index + 2
            if kind.text.upper() in _R2S_WORDS:
                self.r2s = _R2S_WORDS[kind.text.upper()]
                out = self.expect(cursor, self.is_term, "the output stream IRI", kind)
                self.output_stream = self.iri(out)
                self.evidence.append(_Evidence(_RSPQL, token, f"REGISTER {kind.text.upper()}"))
                cursor += 1
            else:
                name = self.expect(cursor, lambda t: t.kind in ("word", "pname", "iri", "number"),
                                   "a query name", kind)
                self.name = name.text.strip("<>")
                self.register_kind = kind.text.upper()
                self.evidence.append(_Evidence(_MERGED, token, f"REGISTER {kind.text.upper()}"))
                cursor += 1
                computed = self.token(cursor)
                if computed is not None and computed.is_word("COMPUTED"):
                    every = self.expect(cursor + 1, lambda t: t.is_word("EVERY"), "EVERY", computed)
                    self.computed_every_ms, cursor = self.duration(cursor + 2, every, len(self.tokens), "COMPUTED EVERY")
            last = self.token(cursor - 1)
            assert last is not None
            as_token = self.expect(cursor, lambda t: t.is_word("AS"), "AS", last)
            self.header = range(index, cursor + 1)
            self.edits.append(removal(self.text, token.start, as_token.end))
            return

    def scan_form(self) -> None:
        for index, token in enumerate(self.tokens):
            if token.depth != 0 or token.kind != "word" or index in self.header:
                continue
            if token.is_word(*_UPDATE_WORDS):
                raise self.error(
                    f"SPARQL Update ({token.text.upper()}) is not a query; a continuous query is "
                    "SELECT, CONSTRUCT, ASK or DESCRIBE", token)
            if token.is_word(*_QUERY_FORMS):
                self.form_token = token
                modifier = self.token(index + 1)
                if token.is_word("SELECT") and modifier is not None and modifier.is_word(*_R2S_WORDS):
                    r2s = _R2S_WORDS[modifier.text.upper()]
                    if self.r2s is not None and self.r2s is not r2s:
                        raise self.error(
                            f"SELECT {modifier.text.upper()} contradicts REGISTER {self.r2s.value.upper()}", modifier)
                    self.r2s = r2s
                    self.edits.append(removal(self.text, modifier.start, modifier.end))
                return

    def scan_from(self, index: int) -> None:
        from_token = self.tokens[index]
        first = self.token(index + 1)
        if first is not None and first.is_word("NAMED"):
            second = self.token(index + 2)
            if second is not None and second.is_word("WINDOW"):
                end = self.scan_rspql_window(index + 3, from_token)
            elif second is not None and second.is_word("STREAM"):
                end = self.scan_stream_window(index + 3, from_token, "FROM NAMED STREAM")
            else:
                graph = self.expect(index + 2, self.is_term, "a graph IRI", first)
                self.named_graphs.append(self.iri(graph))
                end = graph.end
        elif first is not None and first.is_word("STREAM"):
            end = self.scan_stream_window(index + 2, from_token, "FROM STREAM")
        else:
            graph = self.expect(index + 1, self.is_term, "a graph IRI, NAMED or STREAM", from_token)
            self.default_graphs.append(self.iri(graph))
            end = graph.end
        self.edits.append(removal(self.text, from_token.start, end))

    def scan_rspql_window(self, index: int, from_token: Token) -> int:
        window_word = self.tokens[index - 1]
        name = self.expect(index, self.is_term, "the window IRI", window_word)
        on = self.expect(index + 1, lambda t: t.is_word("ON"), "ON <stream>", name)
        after_on = self.token(index + 2)
        if after_on is not None and after_on.is_word("STREAM") and (nxt := self.token(index + 3)) is not None \
                and self.is_term(nxt):
            index += 1  # `ON STREAM <s>`: the spelling of RSP-JS and of several RSP-QL papers
        stream = self.expect(index + 2, self.is_term, "the stream IRI", on)
        size, slide, close = self.window_spec(index + 3, stream, unitless_ms=True)
        window_iri = self.iri(name)
        for other in self.windows:
            if other.name == window_iri:
                raise self.error(f"window <{window_iri}> is declared twice", name)
        self.windows.append(_WindowDraft(window_iri, self.iri(stream), size, slide, from_token, _RSPQL))
        self.evidence.append(_Evidence(_RSPQL, from_token, "FROM NAMED WINDOW"))
        return close.end

    def scan_stream_window(self, index: int, from_token: Token, what: str) -> int:
        keyword = self.tokens[index - 1]
        stream = self.expect(index, self.is_term, "the stream IRI", keyword)
        size, slide, close = self.window_spec(index + 1, stream)
        self.windows.append(_WindowDraft(None, self.iri(stream), size, slide, from_token, _MERGED))
        self.evidence.append(_Evidence(_MERGED, from_token, what))
        return close.end

    def scan_window_access(self, index: int) -> None:
        token = self.tokens[index]
        target = self.expect(index + 1, lambda t: self.is_term(t) or t.kind == "var",
                             "a window IRI or variable", token)
        self.expect(index + 2, lambda t: t.text == "{", "'{'", target)
        self.window_uses.append((target, None if target.kind == "var" else self.iri(target)))
        self.evidence.append(_Evidence(_RSPQL, token, "WINDOW in WHERE"))
        self.edits.append((token.start, token.end, "GRAPH"))

    def scan_cqels_stream(self, index: int) -> None:
        token = self.tokens[index]
        stream = self.expect(index + 1, self.is_term, "the stream IRI", token)
        size, slide, close = self.window_spec(index + 2, stream)
        close_index = self.tokens.index(close)
        self.expect(close_index + 1, lambda t: t.text == "{", "'{' (the window's graph pattern)", close)
        self.windows.append(_WindowDraft(None, self.iri(stream), size, slide, token, _CQELS))
        self.evidence.append(_Evidence(_CQELS, token, "STREAM in WHERE"))
        self.cqels_edits.append((token.start, close.end, len(self.windows) - 1))

    # -- window specifications -----------------------------------------------------------

    def window_spec(self, index: int, after: Token, *, unitless_ms: bool = False) -> tuple[int, int | None, Token]:
        """Parse ``[ … ]`` at ``index``: (size ms, slide ms or None, the ``]`` token).

        ``unitless_ms``: a number without a unit is milliseconds (RSP-QL windows as RSP-JS
        writes them, ``[RANGE 10000 STEP 5000]``, in the unit of the stream's timestamps).
        """
        open_ = self.expect(index, lambda t: t.text == "[", "a window like [RANGE 10s STEP 5s]", after)
        close_index = index + 1
        while True:
            token = self.token(close_index)
            if token is None or token.text in ("{", "}", "["):
                raise self.error("window specification '[' is not closed with ']'", open_)
            if token.text == "]":
                break
            close_index += 1
        close = self.tokens[close_index]
        if close_index == index + 1:
            raise self.error("empty window specification []; expected e.g. [RANGE 10s STEP 10s]", open_)
        first = self.tokens[index + 1]
        if first.is_word("TRIPLES", "ELEMENTS", "ROWS") or (
            first.is_word("RANGE") and (nxt := self.token(index + 2)) is not None and nxt.is_word("TRIPLES")
        ):
            raise self.error(
                "count-based windows are not supported; the workbench models time-based windows "
                "(RANGE <duration> STEP <duration>)", first)
        if first.is_word("ALL"):
            raise self.error("[ALL] (unbounded window) is not supported; use [RANGE <duration> …]", first)
        if first.is_word("NOW"):
            if close_index == index + 2:
                raise self.error(
                    "CQELS [NOW] windows are not supported; the workbench models time-based "
                    "windows with a size, e.g. [RANGE 1s]", first)
            minus = self.expect(index + 2, lambda t: t.text == "-", "'-' (NOW - 10 S)", first)
            size, cursor = self.duration(index + 3, minus, close_index, "NOW -")
        elif first.is_word("RANGE"):
            size, cursor = self.duration(index + 2, first, close_index, "RANGE", unitless_ms)
        else:
            raise self.error(
                f"unknown window specification starting with {quoted(first.text)}; expected "
                "[RANGE 10s STEP 5s], [RANGE 10s TUMBLING], [RANGE PT10S STEP PT5S] or [NOW - 10 S SLIDE 5 S]",
                first)
        slide: int | None = None
        token = self.tokens[cursor]
        if token.is_word("TO"):
            raise self.error("SPARQLstream 'TO NOW - …' window offsets are not supported", token)
        if token.is_word("STEP", "SLIDE"):
            slide, cursor = self.duration(cursor + 1, token, close_index, token.text.upper(), unitless_ms)
        elif token.is_word("TUMBLING"):
            slide, cursor = size, cursor + 1
        if cursor != close_index:
            extra = self.tokens[cursor]
            raise self.error(f"unexpected {quoted(extra.text)} in window specification", extra)
        if size <= 0:
            raise self.error("window size must be greater than 0", first)
        if slide is not None and slide <= 0:
            raise self.error("window slide must be greater than 0 (a zero slide never advances)", token)
        return size, slide, close

    def duration(self, index: int, keyword: Token, limit: int, what: str, unitless_ms: bool = False) -> tuple[int, int]:
        """Parse ``10s``, ``10 s``, ``500 MS`` or ``PT10S`` at ``index``: (ms, next index).

        With ``unitless_ms`` a bare number (``10000``) is milliseconds.
        """
        from rsp_workbench.core.time import MAX_DURATION_MS, parse_duration

        token = self.token(index)
        if token is None or index >= limit:
            raise self.error(f"{what} needs a duration, e.g. {what} 10s", keyword)
        if token.kind == "word" and token.text[:1] in "Pp":
            # ISO 8601: PT10S is one token, PT0.5S three adjacent ones (PT0 .5 S)
            last, text = index, token.text
            while (last + 1 < limit and self.tokens[last + 1].start == self.tokens[last].end
                   and self.tokens[last + 1].kind in ("word", "number")):
                last += 1
                text += self.tokens[last].text
            if _ISO_DURATION.fullmatch(text) and text.upper() not in ("P", "PT"):
                try:
                    return parse_duration(text, field=what), last + 1
                except UserError as error:
                    raise self.error(error.message, token) from None
        if token.kind != "number":
            raise self.error(f"{what} needs a duration like 10s or PT10S, found {quoted(token.text)}", token)
        unit = self.token(index + 1)
        adjacent = unit is not None and unit.start == token.end
        if unit is None or index + 1 >= limit or unit.kind != "word" or (
            not adjacent and unit.text.upper() in _WINDOW_KEYWORDS
        ):
            if unitless_ms and re.fullmatch(r"\d+", token.text):
                return int(token.text), index + 1
            raise self.error(f"duration {token.text} has no time unit; write e.g. {token.text}s or {token.text}ms", token)
        unit_ms = _UNIT_MS.get(unit.text.lower())
        if unit_ms is None:
            raise self.error(
                f"unknown time unit {quoted(unit.text)}; expected ms, s, m, h or d (or PT10S)", unit)
        total = float(token.text) * unit_ms
        if not total <= MAX_DURATION_MS:
            raise self.error(f"duration {token.text}{unit.text} is longer than the limit of {MAX_DURATION_MS:.0e} ms "
                             "(about 31,700 years)", token)
        if abs(total - round(total)) > 1e-6:
            raise self.error(f"duration {token.text}{unit.text} is not a whole number of milliseconds", token)
        return int(round(total)), index + 2

    # -- decisions after the pass -------------------------------------------------------

    def decide_syntax(self, requested: QuerySyntax | None) -> QuerySyntax:
        families = list(dict.fromkeys(e.family for e in self.evidence))
        if requested is not None:
            wanted = _FAMILY_OF[requested]
            for evidence in self.evidence:
                if evidence.family != wanted:
                    raise self.error(
                        f"{evidence.what} is {_FAMILY_LABEL[evidence.family]} syntax, not {requested.label}",
                        evidence.token)
            if requested is not QuerySyntax.SPARQL and not self.windows:
                raise self.error(f"the {requested.label} query declares no window", self.form_token or 0)
            return requested
        if len(families) > 1:
            second = next(e for e in self.evidence if e.family == families[1])
            first = next(e for e in self.evidence if e.family == families[0])
            raise self.error(
                f"{second.what} is {_FAMILY_LABEL[second.family]} syntax but the query already uses "
                f"{_FAMILY_LABEL[first.family]} ({first.what}); use one syntax", second.token)
        if not families or not self.windows:
            raise self.error(
                "no stream window found; expected RSP-QL FROM NAMED WINDOW, C-SPARQL FROM STREAM, "
                "SPARQLstream FROM NAMED STREAM or CQELS STREAM <s> [RANGE …] "
                "(for a one-time SPARQL query pass syntax 'sparql')", self.form_token or 0)
        if families[0] == _RSPQL:
            return QuerySyntax.RSPQL
        if families[0] == _CQELS:
            return QuerySyntax.CQELS
        return QuerySyntax.CSPARQL if self.register_kind else QuerySyntax.SPARQLSTREAM

    def finish_windows(self, syntax: QuerySyntax) -> list[WindowDeclaration]:
        windows: list[WindowDeclaration] = []
        for index, draft in enumerate(self.windows):
            slide, given = draft.slide_ms, draft.slide_ms is not None
            if slide is None:
                if syntax is QuerySyntax.CSPARQL:
                    raise self.error("C-SPARQL windows need STEP <duration> or TUMBLING, e.g. "
                                     "[RANGE 10s STEP 10s]", draft.token)
                slide = CQELS_CONTINUOUS_SLIDE_MS if syntax is QuerySyntax.CQELS else draft.size_ms
            generated = draft.name is None
            windows.append(WindowDeclaration(
                name=f"{GENERATED_WINDOW_PREFIX}{index}" if generated else str(draft.name),
                stream=draft.stream,
                size_ms=draft.size_ms,
                slide_ms=slide,
                position=line_column(self.text, draft.token.start),
                generated_name=generated,
                slide_given=given,
            ))
        return windows

    def check_window_uses(self, syntax: QuerySyntax, windows: list[WindowDeclaration]) -> list[str]:
        if syntax is not QuerySyntax.RSPQL:
            return []
        declared = {window.name for window in windows}
        for token, iri in self.window_uses:
            if iri is not None and iri not in declared:
                raise self.error(
                    f"window <{iri}> is used in WHERE but never declared; declare it with "
                    f"FROM NAMED WINDOW <{iri}> ON <stream> [RANGE … STEP …]", token)
        if any(iri is None for _, iri in self.window_uses):
            return []
        used = {iri for _, iri in self.window_uses}
        return [f"window <{w.name}> is declared but never used in WHERE (its content cannot "
                "affect the answer)" for w in windows if w.name not in used]

    def _blamed_offset(self, exc: Exception) -> Any:
        """Where an rdflib error points: an unknown prefix at its first use, else the query form."""
        unknown = re.search(r"Unknown namespace prefix : (\S*)", str(exc))
        if unknown:
            use = re.search(rf"(?<![\w<\"'#:/.-]){re.escape(unknown.group(1))}:", self.text)
            if use:
                return use.start()
        return self.form_token

    def refuse_unsupported(self, algebra: Any) -> None:
        """Refuse what the oracle cannot evaluate (it would crash or answer wrongly), located in the text.

        Property paths (``:p+``, ``:p/:q``, ``^:p`` …): the oracle matches triple patterns with one
        predicate term. (SERVICE is refused earlier, with the keyword.)
        """
        from rdflib.paths import Path as PropertyPath

        from rsp_workbench.query.rdflib_sparql import CompValue

        stack = [algebra]
        while stack:
            node = stack.pop()
            if isinstance(node, CompValue):
                if node.name == "BGP":
                    for _, predicate, _ in node.get("triples") or ():
                        if isinstance(predicate, PropertyPath):
                            raise self.error(
                                f"the property path {predicate.n3()} is not supported: the oracle matches triple "
                                "patterns with a single predicate (write one pattern per step)",
                                self._path_token())
                stack.extend(node.values())
            elif isinstance(node, (list, tuple)):
                stack.extend(node)

    def _path_token(self) -> Token | None:
        """The first path operator in WHERE: ``+ * ? / |`` right after a predicate term, ``^`` or ``!`` before one."""
        terms = ("pname", "iri")
        where = next((i for i, token in enumerate(self.tokens) if token.text.upper() == "WHERE"), 0)
        for index in range(where, len(self.tokens)):
            token, before, after = self.tokens[index], self.token(index - 1), self.token(index + 1)
            if token.kind != "punct":
                continue
            if token.text in ("+", "*", "?", "/", "|") and before is not None and (
                    before.kind in terms or before.text == "a") and before.end == token.start:
                return token
            if token.text in ("^", "!") and after is not None and (after.kind in terms or after.text in ("a", "(")):
                return token
        return self.tokens[where] if self.tokens else None

    def compile_sparql(self, rewritten: RewrittenText) -> tuple[Any, QueryForm, tuple[str, ...]]:
        """rdflib parse + algebra of the rewritten text; errors located in the original."""
        from pyparsing import ParseBaseException
        from rsp_workbench.query.rdflib_sparql import translateQuery
        from rsp_workbench.query.rdflib_sparql import parseQuery

        try:
            with _RDFLIB_PARSING:
                tree = parseQuery(rewritten.text)
        except ParseBaseException as exc:
            offset = rewritten.original_offset(exc.loc)
            found = re.match(r"\S{1,30}", self.text[offset:])
            where = f"at or after {found.group(0)!r}" if found else "at the end of the query"
            raise self.error(f"SPARQL syntax error {where} (rdflib: {exc.msg})", offset) from None
        except RecursionError:
            raise self.error("the query is nested too deeply for rdflib's SPARQL parser (Python's recursion "
                             "limit); use fewer nested groups or patterns", self.form_token) from None
        except Exception as exc:  # rdflib raises plain exceptions for some bad terms
            raise self.error(f"SPARQL error: {cut_words(str(exc))}", self._blamed_offset(exc)) from None
        try:
            with _RDFLIB_PARSING:
                prepared = translateQuery(tree)
        except RecursionError:
            raise self.error("the query has too many patterns for rdflib's SPARQL algebra (Python's recursion "
                             "limit, reached near 300 triple patterns in one group)", self.form_token) from None
        except Exception as exc:  # rdflib's algebra checks raise plain Exception
            raise self.error(f"SPARQL error: {cut_words(str(exc))}", self._blamed_offset(exc)) from None
        form = {
            "SelectQuery": QueryForm.SELECT, "ConstructQuery": QueryForm.CONSTRUCT,
            "AskQuery": QueryForm.ASK, "DescribeQuery": QueryForm.DESCRIBE,
        }[prepared.algebra.name]
        variables: tuple[str, ...] = ()
        if form in (QueryForm.SELECT, QueryForm.DESCRIBE):
            names = [str(v) for v in (prepared.algebra["PV"] if "PV" in prepared.algebra else [])]
            select = tree[1]
            if form is QueryForm.SELECT and "projection" not in select:
                # SELECT *: rdflib gives a set; order by first appearance in the text.
                def first_use(name: str) -> int:
                    found = re.search(rf"[?$]{re.escape(name)}(?![\w])", rewritten.text)
                    return found.start() if found else len(rewritten.text)

                names.sort(key=lambda n: (first_use(n), n))
            variables = tuple(names)
        return prepared, form, variables
