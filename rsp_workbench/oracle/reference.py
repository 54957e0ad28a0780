"""The reference path: expected answers by straightforward per-evaluation rdflib SPARQL.

For every evaluation instant of the report policy, build the RSP-QL dataset at that
instant (RSP-QL Def. 14/18: static graphs, time-varying graphs, and the content of every
window), evaluate the query's plain SPARQL with rdflib, then apply R2S. Slow on purpose:
it is the definition the scalable Spark path is tested against.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

from rsp_workbench.core.r2s import Emission, continuous_answer
from rsp_workbench.core.report import Evaluation, content_at, evaluation_instants
from rsp_workbench.core.semantics import EngineSemantics
from rsp_workbench.core.windows import WindowSpec
from rsp_workbench.errors import UserError
from rsp_workbench.query.model import ContinuousQuery, DatasetMode, QueryForm
from rsp_workbench.streams.model import StreamElement
from rsp_workbench.streams.terms import from_rdflib, to_rdflib

Triple = tuple[str, str, str]
TimeVaryingGraph = Callable[[int], Iterable[Triple]]  # RSP-QL Def. 10: instant → graph


@dataclass(frozen=True)
class StaticData:
    """Static and time-varying graphs of an RSP-QL dataset (N-Triples term text)."""

    default: tuple[Triple, ...] = ()
    named: Mapping[str, tuple[Triple, ...]] = field(default_factory=dict)
    time_varying_default: TimeVaryingGraph | None = None


@dataclass(frozen=True)
class ExpectedAnswer:
    """The oracle's answer for one t0 vector: evaluations and what R2S emitted."""

    t0: tuple[int, ...]
    evaluations: tuple[Evaluation, ...]
    relations: tuple[Counter[Hashable], ...]  # the instantaneous relation per evaluation
    emissions: tuple[Emission[Hashable], ...]


def window_specs(query: ContinuousQuery, semantics: EngineSemantics, t0: Sequence[int]) -> list[WindowSpec]:
    if len(t0) != len(query.windows):
        raise UserError(f"expected one t0 per window ({len(query.windows)}), got {len(t0)}", field="t0")
    return [
        WindowSpec(w.size_ms, w.slide_ms, start, semantics.border, semantics.leading_partial)
        for w, start in zip(query.windows, t0)
    ]


def expected_answer(
    query: ContinuousQuery,
    streams: Mapping[str, Sequence[StreamElement]],
    semantics: EngineSemantics,
    t0: Sequence[int],
    *,
    static: StaticData = StaticData(),
    end: int | None = None,
    report_window: int = 0,
) -> ExpectedAnswer:
    """Ans(Q) for one fully defined RSP-QL query (RSP-QL Def. 24).

    The report policy is tied to window ``report_window`` (RSP-QL Example 9); the other
    windows are read at each evaluation instant through their own active window.
    """
    if not query.windows:
        raise UserError("the query has no window over a stream", field="query")
    if query.form not in (QueryForm.SELECT,):
        raise UserError(f"the oracle evaluates SELECT queries; this is a {query.form.value} query", field="query")
    specs = window_specs(query, semantics, t0)
    times = {}
    for window in query.windows:
        if window.stream not in streams:
            raise UserError(f"no stream given for <{window.stream}>", field="stream")
        times[window.stream] = [element.t for element in streams[window.stream]]
    reporting = query.windows[report_window]
    evaluations = evaluation_instants(
        times[reporting.stream], specs[report_window], semantics.report, tick=semantics.tick,
        choice=semantics.active_window, batch_size=semantics.batch_size,
        start=specs[report_window].t0, end=end,
    )

    def evaluate(evaluation: Evaluation) -> Counter[Hashable]:
        contents: list[Sequence[StreamElement]] = []
        for index, (window, spec) in enumerate(zip(query.windows, specs)):
            elements = streams[window.stream]
            if index == report_window:
                contents.append(elements[evaluation.lo : evaluation.hi])
            else:
                _, lo, hi = content_at(times[window.stream], spec, evaluation.time, semantics.active_window)
                contents.append(elements[lo:hi])
        return evaluate_snapshot(query, contents, static, evaluation.time)

    relations: list[Counter[Hashable]] = []

    def recording(evaluation: Evaluation) -> Counter[Hashable]:
        relation = evaluate(evaluation)
        relations.append(relation)
        return relation

    r2s = query.r2s or semantics.r2s
    emissions = continuous_answer(evaluations, recording, r2s, empty_notification=semantics.empty_notification)
    return ExpectedAnswer(tuple(t0), tuple(evaluations), tuple(relations), tuple(emissions))


# --- SUM/AVG with SPARQL 1.1 error semantics -------------------------------------------------

_SPARQL11_AGGREGATES = {"Aggregate_Sum": "Aggregate_Sum_SPARQL11", "Aggregate_Avg": "Aggregate_Avg_SPARQL11"}


def _register_sparql11_aggregates() -> None:
    """Add (never replace) SUM/AVG accumulators with the SPARQL 1.1 error semantics to rdflib.

    rdflib 7 crashes on SUM over an IRI (AttributeError) or a non-numeric literal
    (SPARQLTypeError out of the query) and silently skips such values in AVG. SPARQL 1.1
    (Sect. 18.5.1.3/18.5.1.4: op:numeric-add raises a type error) makes the group's
    aggregate an error, so the projected variable is unbound for that group while the
    group's other aggregates keep their values. Unbound inputs are skipped, as rdflib
    does. Only algebra rewritten by `with_sparql11_aggregates` uses these keys, so other
    rdflib users in the process are unaffected.
    """
    from rsp_workbench.query.rdflib_sparql import Aggregator, Average, Sum, type_safe_numbers
    from rsp_workbench.query.rdflib_sparql import type_promotion
    from rsp_workbench.query.rdflib_sparql import eval_expression
    from rsp_workbench.query.rdflib_sparql import numeric
    from rsp_workbench.query.rdflib_sparql import NotBoundError, SPARQLError

    if "Aggregate_Sum_SPARQL11" in Aggregator.accumulator_classes:
        return

    def number_of(accumulator: Any, row: Any) -> Any:
        """The row's numeric value; None to skip the row (unbound); sets ``error`` otherwise."""
        try:
            value = eval_expression(accumulator.expr, row)
        except NotBoundError:
            return None
        if isinstance(value, NotBoundError):
            return None
        try:
            if isinstance(value, SPARQLError):
                raise value
            if getattr(value, "ill_typed", False):  # "abc"^^xsd:integer: not a number (SPARQL 1.1 Sect. 17.3)
                raise SPARQLError("type error: an ill-typed literal")
            number = numeric(value)
            accumulator.datatype = (
                value.datatype if accumulator.datatype is None else type_promotion(accumulator.datatype, value.datatype)
            )
        except SPARQLError:  # a non-numeric value (IRI, blank node, string, ...) or an expression error
            accumulator.error = True
            return None
        if accumulator.distinct:
            accumulator.seen.add(value)
        return number

    class SumSPARQL11(Sum):
        error = False

        def update(self, row: Any, aggregator: Any) -> None:
            if not self.error and (number := number_of(self, row)) is not None:
                self.value = sum(type_safe_numbers(self.value, number))

        def set_value(self, bindings: Any) -> None:
            if not self.error:
                super().set_value(bindings)

    class AverageSPARQL11(Average):
        error = False

        def update(self, row: Any, aggregator: Any) -> None:
            if not self.error and (number := number_of(self, row)) is not None:
                self.sum = sum(type_safe_numbers(self.sum, number))
                self.counter += 1

        def set_value(self, bindings: Any) -> None:
            if not self.error:
                super().set_value(bindings)

    Aggregator.accumulator_classes = {
        **Aggregator.accumulator_classes,
        "Aggregate_Sum_SPARQL11": SumSPARQL11,
        "Aggregate_Avg_SPARQL11": AverageSPARQL11,
    }


def with_sparql11_aggregates(node: Any) -> Any:
    """A copy of an algebra (sub)tree whose SUM/AVG follow SPARQL 1.1 on non-numeric values, and whose
    FILTER and BIND expressions follow it on ill-typed literals (`_guarded`).

    Copy-on-write: subtrees without SUM/AVG are shared, not copied (the fast path's VALUES
    placeholders stay the same objects).
    """
    from rsp_workbench.query.rdflib_sparql import CompValue

    if isinstance(node, CompValue):
        changed = {key: with_sparql11_aggregates(value) for key, value in node.items()}
        if node.name in ("Filter", "Extend") and not _is_guarded(changed.get("expr")):
            changed["expr"] = _guarded(changed["expr"])
        name = _SPARQL11_AGGREGATES.get(node.name, node.name)
        if name == node.name and all(changed[key] is value for key, value in node.items()):
            return node
        _register_sparql11_aggregates()
        copy = CompValue(name)
        copy.update(changed)
        return copy
    if isinstance(node, list):
        items = [with_sparql11_aggregates(item) for item in node]
        return node if all(a is b for a, b in zip(items, node)) else items
    return node


_GUARD = "SPARQL11_Guard"


def _is_guarded(expr: Any) -> bool:
    return getattr(expr, "name", None) == _GUARD


def _guarded(expr: Any) -> Any:
    """``expr`` evaluated by `rsp_workbench.query.rdflib_sparql.eval_expression`: an ill-typed operand of an
    arithmetic or comparison operator, or a Python error inside rdflib's operators, is a SPARQL type
    error (FILTER drops the solution, BIND leaves the variable unbound; SPARQL 1.1 Sect. 17.3) —
    rdflib itself keeps such solutions or raises RecursionError/TypeError."""
    from rsp_workbench.query.rdflib_sparql import Expr, eval_expression

    # dict.__getitem__, not guard.inner: CompValue's attribute access evaluates a child while ctx is set
    return Expr(_GUARD, lambda guard, ctx: eval_expression(dict.__getitem__(guard, "inner"), ctx), inner=expr)


def sparql11_query(query: ContinuousQuery) -> Any:
    """``query.algebra`` (an rdflib Query) with SPARQL 1.1 SUM/AVG, cached per query."""
    from rsp_workbench.query.rdflib_sparql import Query

    algebra = query.algebra
    cached = _SPARQL11_QUERIES.get(id(algebra))
    if cached is not None and cached[0] is algebra:
        return cached[1]
    rewritten = with_sparql11_aggregates(algebra.algebra)
    result = algebra if rewritten is algebra.algebra else Query(algebra.prologue, rewritten)
    if len(_SPARQL11_QUERIES) > 64:
        _SPARQL11_QUERIES.clear()
    _SPARQL11_QUERIES[id(algebra)] = (algebra, result)
    return result


_SPARQL11_QUERIES: dict[int, tuple[Any, Any]] = {}


def evaluate_snapshot(
    query: ContinuousQuery,
    window_contents: Sequence[Sequence[StreamElement]],
    static: StaticData,
    time: int,
) -> Counter[Hashable]:
    """One instantaneous evaluation (RSP-QL Def. 17) with rdflib; returns a bag of mappings."""
    from rdflib import Dataset, Graph, URIRef

    dataset = Dataset(default_union=False)
    default = dataset.default_graph

    def add(graph: Graph, triples: Iterable[Triple]) -> None:
        for s, p, o in triples:
            graph.add((to_rdflib(s), to_rdflib(p), to_rdflib(o)))

    add(default, static.default)
    if static.time_varying_default is not None:
        add(default, static.time_varying_default(time))
    for name, triples in static.named.items():
        add(dataset.graph(URIRef(name)), triples)
    for window, elements in zip(query.windows, window_contents):
        target = default if query.dataset_mode is DatasetMode.MERGED else dataset.graph(URIRef(window.name))
        add(target, (element.triple() for element in elements))
    bag: Counter[Hashable] = Counter()
    for row in dataset.query(sparql11_query(query)):
        values = row.asdict()  # type: ignore[union-attr]  # a SELECT's rows are ResultRows (not an ASK's bool)
        bag[frozenset((str(var), from_rdflib(value)) for var, value in values.items() if value is not None)] += 1
    return bag
