"""The continuous query as a Structured Streaming plan, decided without Spark (so that
``rspwb validate`` refuses a query outside the fragment in milliseconds).

The fragment: one time-based window over one stream; a basic graph pattern over that window's
content (each triple pattern a filter on the stream's rows, the patterns joined on their shared
variables *and on the window*: Spark assigns windows, each pattern's rows carry theirs); FILTERs of
comparisons, arithmetic and ``&&``/``||``/``!`` (Spark's ``where``); a projection, or ``GROUP BY``
with ``COUNT`` (Spark's ``groupBy(window, …)``). Whatever Spark's planner then refuses (a join or an
aggregation the output mode does not allow) is Spark's to say: `rsp_workbench.engines.sparkstream.job`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Mapping

from rsp_workbench.core.time import parse_duration
from rsp_workbench.engines._compiled_query import Pattern, Unsupported, Var, compile_select
from rsp_workbench.errors import UserError
from rsp_workbench.query.model import ContinuousQuery, QueryForm

#: Structured Streaming's output modes (the engine parameter ``output``).
OUTPUT_MODES = ("append", "update", "complete")
#: How stimuli become micro-batches (the engine parameter ``trigger``): ``stimulus`` — the query runs
#: with Spark's default trigger and the adapter waits with ``processAllAvailable`` after each stimulus
#: (one micro-batch per stimulus, plus the no-data batch Spark runs when the watermark moved);
#: ``available-now`` — a ``Trigger.AvailableNow`` query started per stimulus on the same checkpoint.
TRIGGERS = ("stimulus", "available-now")
XSD = "http://www.w3.org/2001/XMLSchema#"
#: Literals with these datatypes have a numeric value (SPARQL 1.1 §17.1 numeric types).
NUMERIC_TYPES = tuple(f"{XSD}{name}" for name in (
    "integer", "decimal", "float", "double", "int", "long", "short", "byte", "nonNegativeInteger",
    "nonPositiveInteger", "negativeInteger", "positiveInteger", "unsignedLong", "unsignedInt",
    "unsignedShort", "unsignedByte"))
COMPARISONS = ("=", "!=", "<", ">", "<=", ">=")

# A FILTER as a small tree of tuples (the job turns it into Spark columns):
#   ("and", a, b) | ("or", a, b) | ("not", a) | ("compare", op, left, right)
#   operands: ("var", name) | ("number", float) | ("term", N-Triples) | ("arith", op, left, right)
Expression = tuple[Any, ...]


@dataclass(frozen=True)
class Count:
    """``COUNT(?x)``/``COUNT(*)`` bound to a projected variable (DISTINCT is left to Spark to refuse)."""

    name: str
    variable: str | None
    distinct: bool


@dataclass(frozen=True)
class StreamPlan:
    """What the job builds: the window, the patterns, the filters, the projection or grouping, and the
    engine parameters that are Spark's (output mode, watermark delay, trigger, window start)."""

    stream: str
    window_graph: str
    size_ms: int
    slide_ms: int
    start_ms: int
    patterns: tuple[Pattern, ...]
    filters: tuple[Expression, ...]
    projection: tuple[str, ...]
    group_by: tuple[str, ...] | None
    counts: tuple[Count, ...]
    output: str
    watermark_ms: int | None
    trigger: str

    @property
    def aggregates(self) -> bool:
        return self.group_by is not None


def refuse(message: str) -> UserError:
    """A query or parameter the plan cannot express: one line saying why."""
    return UserError(f"spark-streaming cannot run this query: {message}", field="query")


def check_static(static: Mapping[str, Any]) -> None:
    """Static data (a register message's ``static``) is outside the fragment: the patterns match the stream's rows only."""
    if static.get("default") or any((static.get("named") or {}).values()):
        raise refuse("static data is outside the fragment (the patterns match the stream's rows only)")


def engine_options(parameters: Mapping[str, Any]) -> tuple[str, int | None, str, int]:
    """Output mode, watermark delay (None: no watermark), trigger and window start (ms) from the
    engine parameters, with their defaults: append, 0 ms, stimulus, 0."""
    output = str(parameters.get("output") or "append")
    if output not in OUTPUT_MODES:
        raise UserError(f"{output!r} is not one of {', '.join(OUTPUT_MODES)}", field="parameters.output")
    trigger = str(parameters.get("trigger") or "stimulus")
    if trigger not in TRIGGERS:
        raise UserError(f"{trigger!r} is not one of {', '.join(TRIGGERS)}", field="parameters.trigger")
    raw = parameters.get("watermark", 0)
    watermark = None if raw in ("none", None) else parse_duration(raw, field="parameters.watermark")
    start = parse_duration(parameters.get("window_start", 0), field="parameters.window_start")
    return output, watermark, trigger, start


def compile_plan(query: ContinuousQuery, parameters: Mapping[str, Any] | None = None) -> StreamPlan:
    """The plan of ``query`` under the engine ``parameters``; UserError (one line) outside the fragment."""
    output, watermark, trigger, start = engine_options(parameters or {})
    if query.form is not QueryForm.SELECT:
        raise refuse(f"{query.form.value} queries are outside the fragment (SELECT only)")
    if len(query.windows) != 1:
        raise refuse(f"{len(query.windows)} windows (one window over one stream only)")
    window = query.windows[0]
    root = query.algebra.algebra
    node = root.p
    if node.name == "Distinct":
        raise refuse("SELECT DISTINCT is outside the fragment")
    if node.name != "Project":
        raise refuse(f"{node.name} is outside the fragment")
    projection = tuple(str(v) for v in node.PV)
    inner = node.p
    renames: dict[str, str] = {}
    while inner.name == "Extend":
        if inner.expr.__class__.__name__ != "Variable":
            raise refuse("BIND and computed projections are outside the fragment")
        renames[str(inner.expr)] = str(inner.var)
        inner = inner.p
    group_by: tuple[str, ...] | None = None
    counts: list[Count] = []
    if inner.name == "AggregateJoin":
        group = inner.p
        group_by = tuple(str(e) for e in (group.expr or ()))
        if any(e.__class__.__name__ != "Variable" for e in (group.expr or ())):
            raise refuse("GROUP BY over expressions is outside the fragment")
        for aggregate in inner.A:
            result = renames.get(str(aggregate.res))
            if aggregate.name == "Aggregate_Sample":
                continue  # a grouped variable projected as itself
            if aggregate.name != "Aggregate_Count":
                raise refuse(f"{aggregate.name.removeprefix('Aggregate_').upper()} is outside the fragment (COUNT only)")
            variable = None if str(aggregate.vars) == "*" else str(aggregate.vars)
            counts.append(Count(result or str(aggregate.res), variable, bool(aggregate.distinct)))
        inner = group.p
    elif renames:
        raise refuse("computed projections are outside the fragment")
    try:
        compiled = compile_select(SimpleNamespace(algebra=SimpleNamespace(
            name="SelectQuery", p=SimpleNamespace(name="Project", PV=node.PV, p=inner))), {window.name})
    except Unsupported as unsupported:
        raise refuse(f"{unsupported} is outside the fragment (BGP, FILTER, GROUP BY + COUNT)") from None
    for pattern in compiled.patterns:
        if pattern.graph not in (None, window.name):
            raise refuse(f"a pattern over graph {pattern.graph} (only the window's content)")
    bound = set().union(*(p.variables() for p in compiled.patterns))
    if group_by is not None:
        missing = [v for v in group_by if v not in bound]
        projected = set(group_by) | {c.name for c in counts}
        if missing or not set(projection) <= projected:
            raise refuse("a projected or grouped variable the patterns do not bind")
    elif not set(projection) <= bound:
        raise refuse(f"?{sorted(set(projection) - bound)[0]} is projected but not bound by a pattern")
    return StreamPlan(
        stream=window.stream, window_graph=window.name, size_ms=window.size_ms, slide_ms=window.slide_ms,
        start_ms=start, patterns=tuple(compiled.patterns), filters=tuple(filter_tree(e) for e in compiled.filters),
        projection=projection, group_by=group_by, counts=tuple(counts), output=output, watermark_ms=watermark,
        trigger=trigger)


def filter_tree(expr: Any) -> Expression:
    """An rdflib FILTER expression as the plan's tree; refused outside comparisons and arithmetic."""
    from rdflib import Literal, URIRef, Variable

    from rsp_workbench.streams.terms import canonical_term, from_rdflib

    def operand(value: Any) -> Expression:
        if isinstance(value, Variable):
            return ("var", str(value))
        if isinstance(value, Literal) and value.datatype is not None and str(value.datatype) in NUMERIC_TYPES:
            return ("number", float(value.toPython()))
        if isinstance(value, (URIRef, Literal)):
            return ("term", canonical_term(from_rdflib(value)))
        name = getattr(value, "name", type(value).__name__)
        if name in ("AdditiveExpression", "MultiplicativeExpression"):
            tree = operand(value.expr)
            for op, other in zip(value.op, value.other):
                tree = ("arith", str(op), tree, operand(other))
            return tree
        raise refuse(f"{name} in a FILTER is outside the fragment (comparisons and arithmetic)")

    def condition(value: Any) -> Expression:
        name = getattr(value, "name", type(value).__name__)
        if name == "RelationalExpression":
            if str(value.op) not in COMPARISONS:
                raise refuse(f"{value.op} in a FILTER is outside the fragment")
            return ("compare", str(value.op), operand(value.expr), operand(value.other))
        if name in ("ConditionalAndExpression", "ConditionalOrExpression"):
            tree = condition(value.expr)
            for other in value.other or ():
                tree = ("and" if name == "ConditionalAndExpression" else "or", tree, condition(other))
            return tree
        if name == "UnaryNot":
            return ("not", condition(value.expr))
        raise refuse(f"{name} in a FILTER is outside the fragment (comparisons, &&, ||, !)")

    return condition(expr)


def pattern_terms(pattern: Pattern) -> tuple[tuple[str, str, bool], ...]:
    """(column, term, is variable) for the subject, predicate and object of a pattern."""
    return tuple((column, str(term), isinstance(term, Var)) for column, term in zip("spo", (pattern.s, pattern.p, pattern.o)))
