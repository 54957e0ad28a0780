"""The oracle on the papers' examples, end to end from query text: RSP-QL Example 10 (the
coupon query: evaluations at 8 and 16, three rows) with the time-varying G_shops graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsp_workbench.core.semantics import BorderConvention, EngineSemantics, ReportPolicy, Strategy
from rsp_workbench.core.time import TimeUnit
from rsp_workbench.oracle.annotated import FastPathUnsupported, fast_expected_answer
from rsp_workbench.oracle.reference import StaticData, expected_answer
from rsp_workbench.query.parser import parse_query
from rsp_workbench.streams.model import StreamElement
from tests.paths import DATA

EX = "http://example.org/"
QUERY = DATA / "queries" / "rspql_coupon.rq"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"


def iri(name: str) -> str:
    return f"<{EX}{name}>"


def element(s: str, p: str, o: str, seconds: int) -> StreamElement:
    return StreamElement(iri(s), iri(p), o, seconds * 1000)


S_NEARBY = [element(w, "isNearby", iri(shop), t) for w, shop, t in
            [("diana", "a", 2), ("eve", "b", 2), ("carl", "a", 5), ("eve", "a", 7), ("diana", "b", 12)]]
S_COUPON = [element("alice", "offers", '"10% discount on"', 8), element("bob", "offers", '"free coffee at"', 15)]


def shops(t: int) -> list[tuple[str, str, str]]:
    """G_shops (RSP-QL Example 4): empty before 2 s, both shops in [2 s, 13 s], then only B."""
    both = [(iri("a"), RDF_TYPE, iri("Shop")), (iri("b"), RDF_TYPE, iri("Shop")),
            (iri("alice"), iri("owns"), iri("a")), (iri("bob"), iri("owns"), iri("b"))]
    if t < 2000:
        return []
    return both if t <= 13_000 else [both[1], both[3]]


SEMANTICS = EngineSemantics(
    border=BorderConvention.OPEN_CLOSED,  # RSP-QL Def. 12
    report=ReportPolicy.of(Strategy.WINDOW_CLOSE, Strategy.NON_EMPTY),  # on W2 (Example 9)
    time_unit=TimeUnit.S,
    empty_notification=False,
)


def test_example_10_from_query_text() -> None:
    query = parse_query(QUERY.read_text(), source=str(QUERY))
    streams = {f"{EX}S_nearby": S_NEARBY, f"{EX}S_coupon": S_COUPON}
    answer = expected_answer(
        query, streams, SEMANTICS, (1000, 0), static=StaticData(time_varying_default=shops),
        end=20_000, report_window=1,
    )
    assert [e.time for e in answer.evaluations] == [8000, 16_000]
    rows = sorted(
        (e.time, m["shopper"], m["shop"], m["shop_owner"], m["coupon"])
        for e in answer.emissions for m in map(dict, e.bindings.elements())
    )
    assert rows == [
        (8000, iri("carl"), iri("a"), iri("alice"), '"10% discount on"'),
        (8000, iri("eve"), iri("a"), iri("alice"), '"10% discount on"'),
        (16_000, iri("diana"), iri("b"), iri("bob"), '"free coffee at"'),
    ]


def test_example_10_fast_path_declines_time_varying_graphs() -> None:
    query = parse_query(QUERY.read_text(), source=str(QUERY))
    streams = {f"{EX}S_nearby": S_NEARBY, f"{EX}S_coupon": S_COUPON}
    with pytest.raises(FastPathUnsupported):
        fast_expected_answer(
            query, streams, SEMANTICS, (1000, 0), static=StaticData(time_varying_default=shops),
            end=20_000, report_window=1,
        )


TWO_TUMBLING = f"""PREFIX : <{EX}>
SELECT ?a ?b FROM NAMED WINDOW :w1 ON :s1 [RANGE PT5S STEP PT5S]
FROM NAMED WINDOW :w2 ON :s2 [RANGE PT5S STEP PT5S]
WHERE {{ WINDOW :w1 {{ ?a :p ?x }} WINDOW :w2 {{ ?b :q ?x }} }}"""


@pytest.mark.parametrize("border, pairs", [(BorderConvention.CLOSED_OPEN, 5), (BorderConvention.OPEN_CLOSED, 25)])
def test_a_window_close_reads_the_other_window_through_its_active_window(border: BorderConvention,
                                                                        pairs: int) -> None:
    """docs/experiment-format.md, several windows: at the close t = 5 s of [0, 5 s) the other
    window with the same borders is already in [5 s, 10 s), where only b5 (stamped 5 s) has
    arrived: a0…a4 × b5 = 5 pairs; under (o, c] the closing (0, 5 s] of both windows is still
    active at 5 s: a1…a5 × b1…b5 = 25 pairs."""
    query = parse_query(TWO_TUMBLING)
    streams = {f"{EX}s1": [element(f"a{i}", "p", iri("k"), i) for i in range(10)],
               f"{EX}s2": [element(f"b{i}", "q", iri("k"), i) for i in range(10)]}
    semantics = EngineSemantics(border=border, report=ReportPolicy.of(Strategy.WINDOW_CLOSE))
    for answer in (expected_answer(query, streams, semantics, (0, 0), end=5000),
                   fast_expected_answer(query, streams, semantics, (0, 0), end=5000)):
        assert [(e.time, sum(r.values())) for e, r in zip(answer.evaluations, answer.relations)] == [(5000, pairs)]
