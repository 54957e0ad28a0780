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


def test_an_aggregate_is_evaluated_once_per_distinct_set_of_present_mappings(monkeypatch) -> None:
    """CQELS' semantics (tuple tick, content change): one evaluation per element, but AVG only
    changes where a matching element enters or leaves — rdflib runs once per distinct set of
    present mappings (docs/oracle.md), not once per window content; the answer is the reference's."""
    from rsp_workbench.oracle.annotated import RelationEvaluator

    query = parse_query("REGISTER QUERY q AS SELECT (AVG(?v) AS ?a) FROM STREAM <http://s1> [RANGE 4ms STEP 4ms] "
                        "WHERE { ?x <http://e/p> ?v }", "csparql")
    # two readings (at 1 and 5 ms) among 40 elements of another predicate: an evaluation per element
    noise = [StreamElement(E.format(f"n{i}"), E.format("q"), INT.format(i), i // 5) for i in range(40)]
    readings = [StreamElement(E.format("a"), E.format("p"), INT.format(90), 1),
                StreamElement(E.format("b"), E.format("p"), INT.format(80), 5)]
    elements = sorted(noise + readings, key=lambda e: e.t)
    semantics = PRESETS["cqels"].with_overrides({"time_unit": "ms"})
    calls = []
    upper = RelationEvaluator._upper
    monkeypatch.setattr(RelationEvaluator, "_upper", lambda self, present: calls.append(present) or upper(self, present))
    fast = fast_expected_answer(query, {"http://s1": elements}, semantics, (0,), end=12)
    reference = expected_answer(query, {"http://s1": elements}, semantics, (0,), end=12)
    assert len(fast.evaluations) == len(reference.evaluations) > 40
    assert tuple(fast.relations) == reference.relations and fast.emissions == reference.emissions
    # present: {} (0 ms), {a} (1–3 ms), {} (4 ms, a has left), {b} (5–7 ms), {} (8 ms on)
    assert len(calls) == 3


def test_present_rows_are_the_same_by_sweep_and_by_test_per_cut() -> None:
    """The two ways `UpperOracle` finds the rows present at each cut agree (runs of two tables,
    a row with two runs)."""
    import numpy as np

    from rsp_workbench.oracle.annotated import _present_rows_at

    rng = np.random.default_rng(7)
    runs = []
    for rows in (30, 12):
        first = rng.integers(0, 40, rows)
        runs.append((first, first + rng.integers(0, 10, rows), rng.integers(0, rows // 2, rows)))
    cuts = np.unique(np.concatenate([[0], *(f for f, _, _ in runs), *(l + 1 for _, l, _ in runs)]))
    by_test = [[r.tolist() for r in rows] for rows in _present_rows_at(cuts, runs)]
    by_sweep = [[r.tolist() for r in rows] for rows in _present_rows_at(cuts, runs, budget=0)]
    assert by_test == by_sweep and any(any(rows) for rows in by_test)
