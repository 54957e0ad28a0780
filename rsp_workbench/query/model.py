"""One model for continuous queries written in RSP-QL, C-SPARQL, SPARQLstream or CQELS-QL.

A continuous query is RSP-QL's quadruple (SE, SDS, QF, ET) (RSP-QL Def. 24): the SPARQL
algebra expression, the dataset of static graphs and time-based windows over streams,
the query form, and the evaluation policy. The query languages fix only part of it
(RSP-QL "Explaining heterogeneity"): window size and slide, whether window contents
are *named* graphs (RSP-QL WINDOW, CQELS STREAM) or *merged* into the default graph
(C-SPARQL, SPARQLstream), and sometimes the R2S operator. t0, report policy and tick are
engine parameters (`rsp_workbench.core.semantics.EngineSemantics`), never in this model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, Any

from rsp_workbench.core.semantics import R2S
from rsp_workbench.core.time import format_duration

if TYPE_CHECKING:  # pragma: no cover
    from rsp_workbench.query.rdflib_sparql import Query


class QuerySyntax(Enum):
    """The language a continuous query was written in."""

    RSPQL = "rspql"
    CSPARQL = "csparql"
    SPARQLSTREAM = "sparqlstream"
    CQELS = "cqels"
    SPARQL = "sparql"  # a one-time SPARQL 1.1 query (no windows), e.g. YABench's oracle.query

    @property
    def label(self) -> str:
        return {
            QuerySyntax.RSPQL: "RSP-QL",
            QuerySyntax.CSPARQL: "C-SPARQL",
            QuerySyntax.SPARQLSTREAM: "SPARQLstream",
            QuerySyntax.CQELS: "CQELS-QL",
            QuerySyntax.SPARQL: "SPARQL 1.1",
        }[self]


class DatasetMode(Enum):
    """How window contents enter the RSP-QL dataset (RSP-QL Def. 17, Example 12).

    ``named``: each window is a named graph, addressed with ``GRAPH <window>`` in the
    rewritten SPARQL (RSP-QL WINDOW, CQELS STREAM). ``merged``: all window contents and the
    static FROM graphs form the default graph (C-SPARQL, SPARQLstream).
    """

    NAMED = "named"
    MERGED = "merged"


class QueryForm(Enum):
    """SPARQL query forms."""

    SELECT = "SELECT"
    CONSTRUCT = "CONSTRUCT"
    ASK = "ASK"
    DESCRIBE = "DESCRIBE"


GENERATED_WINDOW_PREFIX = "urn:rspwb:window:"


@dataclass(frozen=True)
class WindowDeclaration:
    """A time-based sliding window (size ω, slide β) over one stream (RSP-QL Def. 11).

    ``name`` is an IRI: the declared window name in RSP-QL, otherwise a generated
    ``urn:rspwb:window:<i>`` (i = 0, 1, … in text order). ``position`` is the (line, column)
    of the declaration in the original query text. ``slide_given`` is False when the query
    left the slide out and the parser chose it (see `rsp_workbench.query.parser`).
    """

    name: str
    stream: str
    size_ms: int
    slide_ms: int
    position: tuple[int, int]
    generated_name: bool = False
    slide_given: bool = True

    @property
    def kind(self) -> str:
        """``tumbling`` (β = ω), ``sliding`` (β < ω) or ``hopping`` (β > ω, gaps)."""
        if self.slide_ms == self.size_ms:
            return "tumbling"
        return "sliding" if self.slide_ms < self.size_ms else "hopping"

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "generated_name": self.generated_name,
            "stream": self.stream,
            "size_ms": self.size_ms,
            "slide_ms": self.slide_ms,
            "size": format_duration(self.size_ms),
            "slide": format_duration(self.slide_ms),
            "slide_given": self.slide_given,
            "kind": self.kind,
            "line": self.position[0],
            "column": self.position[1],
        }


@dataclass(frozen=True)
class ContinuousQuery:
    """A parsed continuous query; build it with `rsp_workbench.query.parser.parse_query`.

    ``sparql`` is plain SPARQL 1.1 for one evaluation over a window snapshot: stream and
    window clauses removed, ``WINDOW <w> {…}`` / ``STREAM <s> [..] {…}`` turned into
    ``GRAPH <w> {…}`` in named mode, and *no* FROM / FROM NAMED clauses (the dataset is
    described by ``windows``, ``default_graphs`` and ``named_graphs``; rdflib would try to
    download FROM graphs). ``r2s`` is None when the syntax does not say (engine default).
    ``variables`` are the projected variable names without ``?`` (SELECT; DESCRIBE's
    ``?x`` list; empty for CONSTRUCT and ASK).
    """

    syntax: QuerySyntax
    name: str | None
    output_stream: str | None
    r2s: R2S | None
    windows: tuple[WindowDeclaration, ...]
    dataset_mode: DatasetMode
    default_graphs: tuple[str, ...]
    named_graphs: tuple[str, ...]
    form: QueryForm
    variables: tuple[str, ...]
    sparql: str
    text: str
    source: str | None = None
    computed_every_ms: int | None = None  # C-SPARQL ``COMPUTED EVERY``: a periodic report hint
    warnings: tuple[str, ...] = field(default=())

    @cached_property
    def algebra(self) -> "Query":
        """The rdflib prepared query (``prepareQuery`` result) of ``sparql``, built once.

        ``.algebra`` of the result is the SPARQL algebra tree; the object can be passed to
        ``Graph.query`` / ``Dataset.query`` directly. `parse_query` fills this cache.
        """
        from rsp_workbench.query.rdflib_sparql import translateQuery
        from rsp_workbench.query.rdflib_sparql import parseQuery

        return translateQuery(parseQuery(self.sparql))

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its `algebra` (rdflib's algebra nodes do not unpickle; it is rebuilt
        from ``sparql`` when asked for): a query goes to the Spark path's executors."""
        return {key: value for key, value in self.__dict__.items() if key != "algebra"}

    def window(self, name: str) -> WindowDeclaration:
        """The window with this IRI (KeyError if none)."""
        for window in self.windows:
            if window.name == name:
                return window
        raise KeyError(name)

    @property
    def streams(self) -> tuple[str, ...]:
        """Distinct stream IRIs in declaration order."""
        return tuple(dict.fromkeys(window.stream for window in self.windows))

    def algebra_text(self) -> str:
        """The algebra as an indented, prefix-shortened operator tree (for teaching views)."""
        from rsp_workbench.query.algebra_text import render_algebra

        return render_algebra(self.algebra)

    def describe(self, *, include_algebra: bool = True) -> dict[str, Any]:
        """A JSON-friendly summary (what ``rspwb query explain --json`` prints)."""
        payload: dict[str, Any] = {
            "source": self.source,
            "syntax": self.syntax.value,
            "syntax_label": self.syntax.label,
            "name": self.name,
            "output_stream": self.output_stream,
            "r2s": self.r2s.value if self.r2s else None,
            "dataset_mode": self.dataset_mode.value,
            "windows": [window.describe() for window in self.windows],
            "default_graphs": list(self.default_graphs),
            "named_graphs": list(self.named_graphs),
            "form": self.form.value,
            "variables": list(self.variables),
            "computed_every_ms": self.computed_every_ms,
            "warnings": list(self.warnings),
            "sparql": self.sparql,
        }
        if include_algebra:
            payload["algebra"] = self.algebra_text()
        return payload
