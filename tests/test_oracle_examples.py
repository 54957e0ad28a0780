"""The oracle on the papers' examples, end to end from query text: RSP-QL Example 10 (the
coupon query: evaluations at 8 and 16, three rows) with the time-varying G_shops graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.semantics import BorderConvention, EngineSemantics, ReportPolicy, Strategy
from workbench.core.time import TimeUnit
from workbench.oracle.annotated import FastPathUnsupported, fast_expected_answer
from workbench.oracle.reference import StaticData, expected_answer
from workbench.query.parser import parse_query
from workbench.streams.model import StreamElement

EX = "http://example.org/"
QUERY = Path(__file__).parent / "data" / "queries" / "rspql_coupon.rq"
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
