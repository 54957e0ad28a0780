"""Ill-typed literals (``"abc"^^xsd:integer``) follow SPARQL 1.1 on both oracle paths: an arithmetic or
comparison operand that is ill-typed is a type error (Sect. 17.3) — FILTER drops the solution, an
expression in SELECT/BIND leaves its variable unbound, SUM/AVG leave the aggregate unbound — never a
Python traceback. Hand-checked: a has "abc"^^xsd:integer, b has 5."""

from __future__ import annotations

from collections import Counter

import pytest

from rsp_workbench.core.semantics import PRESETS
from rsp_workbench.oracle.annotated import fast_expected_answer
from rsp_workbench.oracle.reference import expected_answer
from rsp_workbench.query.parser import parse_query
from rsp_workbench.streams.model import StreamElement

XSD = "http://www.w3.org/2001/XMLSchema#"
A, B, V = "<http://e/a>", "<http://e/b>", "<http://e/v>"
ELEMENTS = [
    StreamElement(A, V, f'"abc"^^<{XSD}integer>', 1),
    StreamElement(B, V, f'"5"^^<{XSD}integer>', 2),
]


def answer(select: str, where: str, path: str) -> Counter:
    text = f"REGISTER QUERY q AS SELECT {select} FROM STREAM <http://s1> [RANGE 10ms STEP 10ms] WHERE {{ {where} }}"
    query = parse_query(text, "csparql")
    compute = fast_expected_answer if path == "fast" else expected_answer
    result = compute(query, {"http://s1": ELEMENTS}, PRESETS["csparql"], (0,), end=20)
    return result.relations[0]


PATHS = ["fast", "reference"]


@pytest.mark.parametrize("path", PATHS)
def test_a_numeric_filter_drops_the_ill_typed_solution(path: str) -> None:
    assert answer("?x", f"?x {V} ?v FILTER(?v > 2)", path) == Counter({frozenset({("x", B)}): 1})


@pytest.mark.parametrize("path", PATHS)
def test_arithmetic_leaves_the_variable_unbound(path: str) -> None:
    assert answer("?x (?v + 1 AS ?w)", f"?x {V} ?v", path) == Counter({
        frozenset({("x", A)}): 1, frozenset({("x", B), ("w", f'"6"^^<{XSD}integer>')}): 1})


@pytest.mark.parametrize("path", PATHS)
def test_sum_and_avg_over_an_ill_typed_value_are_unbound(path: str) -> None:
    relation = answer("(SUM(?v) AS ?s) (AVG(?v) AS ?m) (COUNT(?v) AS ?n)", f"?x {V} ?v", path)
    assert relation == Counter({frozenset({("n", f'"2"^^<{XSD}integer>')}): 1})


@pytest.mark.parametrize("path", PATHS)
def test_order_by_an_ill_typed_value_answers(path: str) -> None:
    text = f"REGISTER QUERY q AS SELECT ?x FROM STREAM <http://s1> [RANGE 10ms STEP 10ms] WHERE {{ ?x {V} ?v }} ORDER BY ?v"
    compute = fast_expected_answer if path == "fast" else expected_answer
    result = compute(parse_query(text, "csparql"), {"http://s1": ELEMENTS}, PRESETS["csparql"], (0,), end=20)
    assert result.relations[0] == Counter({frozenset({("x", A)}): 1, frozenset({("x", B)}): 1})
