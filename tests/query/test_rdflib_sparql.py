"""The rdflib internals the workbench builds on (`rsp_workbench.query.rdflib_sparql`) still exist and behave
as the oracle assumes: this fails loudly when an rdflib release changes them."""

from __future__ import annotations

import inspect

import rdflib
from rdflib import Literal, Variable
from rdflib.namespace import XSD

from rsp_workbench.query import rdflib_sparql as internals


def test_rdflib_is_the_pinned_major_version() -> None:
    assert rdflib.__version__.split(".")[0] == "7", "the internals below were checked against rdflib 7"


def test_every_wrapped_name_exists() -> None:
    for name in internals.__all__:
        assert getattr(internals, name) is not None, name
    # both take (expression, bindings): the oracle's FILTER test and BIND/aggregate argument evaluation
    assert list(inspect.signature(internals.ebv).parameters) == ["expr", "ctx"]
    assert list(inspect.signature(internals.eval_expression).parameters)[:2] == ["expr", "ctx"]


def filter_expression(text: str) -> object:
    algebra = internals.translateQuery(internals.parseQuery(f"SELECT ?x WHERE {{ ?s ?p ?x FILTER({text}) }}"))
    node = algebra.algebra
    while node.name != "Filter":
        node = node.p
    assert isinstance(node, internals.CompValue)
    return node.expr


def test_an_expression_evaluates_over_frozen_bindings() -> None:
    context = internals.QueryContext(rdflib.Graph())
    bindings = internals.FrozenBindings(context, {Variable("x"): Literal(7, datatype=XSD.integer)})
    assert internals.eval_expression(filter_expression("?x > 5"), bindings) == Literal(True)
    assert internals.ebv(filter_expression("?x > 5"), bindings) is True
    assert internals.ebv(filter_expression("?x > 9"), bindings) is False
    # a type error is a SPARQLError, returned or raised (the oracle's BIND handles both: oracle/annotated.py)
    ill_typed = internals.FrozenBindings(context, {Variable("x"): Literal("abc")})
    try:
        result = internals.eval_expression(filter_expression("?x + 1"), ill_typed)
    except internals.SPARQLError:
        result = internals.SPARQLError()
    assert isinstance(result, internals.SPARQLError)


def test_ebv_of_a_literal_follows_sparql() -> None:
    context = internals.QueryContext(rdflib.Graph())
    bindings = internals.FrozenBindings(context, {Variable("x"): Literal(0), Variable("y"): Literal("a")})
    assert internals.ebv(filter_expression("?x"), bindings) is False  # 0 is false (SPARQL 1.1 §17.2.2)
    assert internals.ebv(filter_expression("?y"), bindings) is True  # a non-empty string is true


def test_numeric_promotion_and_aggregates() -> None:
    assert internals.numeric(Literal("2.5", datatype=XSD.decimal)) == 2.5
    assert internals.type_promotion(XSD.integer, XSD.decimal) == XSD.decimal
    # the oracle registers SPARQL 1.1 SUM/AVG as accumulators beside rdflib's own (oracle/reference.py)
    assert {"Aggregate_Sum", "Aggregate_Avg"} <= set(internals.Aggregator.accumulator_classes)
    assert internals.Aggregator.accumulator_classes["Aggregate_Sum"] is internals.Sum
    assert internals.Aggregator.accumulator_classes["Aggregate_Avg"] is internals.Average
    assert list(internals.type_safe_numbers(Literal(1), Literal(2))) == [Literal(1), Literal(2)]


def test_eval_part_enumerates_a_pattern() -> None:
    graph = rdflib.Graph()
    graph.add((rdflib.URIRef("http://s"), rdflib.URIRef("http://p"), Literal(1)))
    query = internals.translateQuery(internals.parseQuery("SELECT ?o WHERE { ?s ?p ?o }"))
    assert isinstance(query, internals.Query)
    node = query.algebra.p
    while node.name != "BGP":
        node = node.p
    solutions = list(internals.evalPart(internals.QueryContext(graph), node))
    assert [s[Variable("o")] for s in solutions] == [Literal(1)]
