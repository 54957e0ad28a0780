"""SUM/AVG over non-numeric values follow SPARQL 1.1 on both oracle paths.

rdflib 7 raises AttributeError for SUM over an IRI, raises SPARQLTypeError for SUM over a
string and silently skips such values in AVG. SPARQL 1.1 (18.5.1.3-4): op:numeric-add
fails, the group's aggregate is an error, the projected variable is unbound for that group
and the other aggregates of the group keep their values. Hand-checked below.
"""

from __future__ import annotations

from collections import Counter

from rsp_workbench.core.semantics import PRESETS
from rsp_workbench.oracle.annotated import fast_expected_answer
from rsp_workbench.oracle.reference import StaticData, evaluate_snapshot, expected_answer
from rsp_workbench.query.parser import parse_query
from rsp_workbench.streams.model import StreamElement

E = "<http://e/{}>"
XSD = "http://www.w3.org/2001/XMLSchema#"
INT = '"{}"^^<' + XSD + 'integer>'
QUERY = ("REGISTER QUERY q AS SELECT ?x (SUM(?v) AS ?s) (AVG(?v) AS ?a) (COUNT(?v) AS ?n) "
         "FROM STREAM <http://s1> [RANGE 10ms STEP 10ms] WHERE { ?x <http://e/p> ?v } GROUP BY ?x")
ELEMENTS = [
    StreamElement(E.format("a"), E.format("p"), E.format("iri"), 1),  # a: an IRI and 2
    StreamElement(E.format("a"), E.format("p"), INT.format(2), 1),
    StreamElement(E.format("b"), E.format("p"), INT.format(2), 2),  # b: 2 and 3
    StreamElement(E.format("b"), E.format("p"), INT.format(3), 3),
    StreamElement(E.format("c"), E.format("p"), '"abc"', 3),  # c: a plain string
]
EXPECTED = Counter({
    frozenset({("x", E.format("a")), ("n", INT.format(2))}): 1,
    frozenset({("x", E.format("b")), ("n", INT.format(2)), ("s", INT.format(5)), ("a", f'"2.5"^^<{XSD}decimal>')}): 1,
    frozenset({("x", E.format("c")), ("n", INT.format(1))}): 1,
})


def test_sum_and_avg_over_non_numbers_are_unbound_per_group() -> None:
    query = parse_query(QUERY, "csparql")
    assert evaluate_snapshot(query, [ELEMENTS], StaticData(), 10) == EXPECTED


def test_fast_path_agrees_with_the_reference() -> None:
    query = parse_query(QUERY, "csparql")
    semantics = PRESETS["csparql"]
    reference = expected_answer(query, {"http://s1": ELEMENTS}, semantics, (0,), end=20)
    fast = fast_expected_answer(query, {"http://s1": ELEMENTS}, semantics, (0,), end=20)
    assert reference.relations[0] == EXPECTED
    assert fast.relations == reference.relations and fast.emissions == reference.emissions


def test_numeric_groups_and_other_rdflib_users_are_unchanged() -> None:
    """Only the oracle's own algebra uses the SPARQL 1.1 accumulators."""
    from rdflib import Graph, Literal, URIRef

    query = parse_query(QUERY.replace("(COUNT(?v) AS ?n) ", ""), "csparql")
    numeric = [e for e in ELEMENTS if e.subject == E.format("b")]
    assert evaluate_snapshot(query, [numeric], StaticData(), 10) == Counter({
        frozenset({("x", E.format("b")), ("s", INT.format(5)), ("a", f'"2.5"^^<{XSD}decimal>')}): 1})
    graph = Graph()
    graph.add((URIRef("http://e/b"), URIRef("http://e/p"), Literal(2)))
    graph.add((URIRef("http://e/c"), URIRef("http://e/p"), Literal("abc")))
    rows = list(graph.query("SELECT (AVG(?v) AS ?a) WHERE { ?x <http://e/p> ?v }"))
    assert rows[0][0] == Literal(2) or float(rows[0][0]) == 2.0  # rdflib's own AVG still skips "abc"
