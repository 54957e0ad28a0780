"""Helpers shared by several test modules of this folder (constants, builders, comparisons)."""

from __future__ import annotations

from hypothesis import strategies as st

from rsp_workbench.core.semantics import PRESETS, R2S, ActiveWindowChoice, BorderConvention, EngineSemantics, ReportPolicy, Tick
from rsp_workbench.oracle.reference import StaticData
from rsp_workbench.query.parser import parse_query
from rsp_workbench.streams.model import StreamElement


E = "<http://e/{}>"


INT = '"{}"^^<http://www.w3.org/2001/XMLSchema#integer>'


S1, S2 = "http://s1", "http://s2"


BODIES = {
    "filter": "SELECT ?x ?v WHERE { ?x <http://e/p> ?v FILTER(?v > 1) }",
    "join-across-timestamps": "SELECT ?x ?v ?w WHERE { ?x <http://e/p> ?v . ?x <http://e/r> [ <http://e/p> ?w ] FILTER(?v - ?w >= 1) }",
    "static-join": "SELECT ?x ?c WHERE { ?x <http://e/p> ?v . ?x <http://e/lives> ?c }",
    "union": "SELECT ?x WHERE { { ?x <http://e/p> ?v } UNION { ?x <http://e/r> ?y } }",
    "avg-count": "SELECT (AVG(?v) AS ?a) (COUNT(*) AS ?n) WHERE { ?x <http://e/p> ?v }",
    "group-by": "SELECT ?x (SUM(?v) AS ?s) (MAX(?v) AS ?m) WHERE { ?x <http://e/p> ?v } GROUP BY ?x HAVING (COUNT(?v) >= 1)",
    "distinct-bind": "SELECT DISTINCT ?x ?k WHERE { ?x ?pred ?v BIND(STR(?pred) AS ?k) }",
    "optional": "SELECT ?x ?y WHERE { ?x <http://e/p> ?v OPTIONAL { ?x <http://e/r> ?y } }",
    "self-join": "SELECT ?x ?y WHERE { ?x <http://e/r> ?y . ?y <http://e/r> ?x }",
    # SUM/AVG over IRIs and numbers: SPARQL 1.1 leaves the group's aggregate unbound
    "sum-avg-mixed": "SELECT ?x (SUM(?o) AS ?s) (AVG(?o) AS ?a) (COUNT(?o) AS ?n) WHERE { ?x ?pred ?o } GROUP BY ?x",
}


STATIC = StaticData(default=((E.format("a"), E.format("lives"), E.format("c1")),
                             (E.format("b"), E.format("lives"), E.format("c2")),
                             (E.format("a"), E.format("r"), E.format("b"))))


def csparql(body: str, size: int, slide: int) -> object:
    text = body.replace(" WHERE", f" FROM STREAM <{S1}> [RANGE {size}ms STEP {slide}ms] WHERE", 1)
    return parse_query("REGISTER QUERY q AS " + text, "csparql")


@st.composite
def streams(draw: st.DrawFn, length: int = 14) -> list[StreamElement]:
    n = draw(st.integers(0, length))
    t, out = 0, []
    for _ in range(n):
        t += draw(st.sampled_from([0, 0, 1, 1, 2, 3, 5]))
        subject = E.format(draw(st.sampled_from("abc")))
        if draw(st.booleans()):
            out.append(StreamElement(subject, E.format("p"), INT.format(draw(st.integers(0, 3))), t))
        else:
            out.append(StreamElement(subject, E.format("r"), E.format(draw(st.sampled_from("abc"))), t))
    return out


@st.composite
def semantics(draw: st.DrawFn) -> EngineSemantics:
    if draw(st.booleans()):
        return draw(st.sampled_from(list(PRESETS.values())))
    report = draw(st.sampled_from(["window-close", "window-close & non-empty", "content-change",
                                   "content-change & non-empty", "window-close & content-change", "periodic(3ms)",
                                   "window-close & next-element", "window-close & next-element & non-empty"]))
    return EngineSemantics(
        border=draw(st.sampled_from(list(BorderConvention))),
        report=ReportPolicy.parse(report),
        tick=draw(st.sampled_from(list(Tick))),
        r2s=draw(st.sampled_from(list(R2S))),
        empty_notification=draw(st.booleans()),
        leading_partial=draw(st.booleans()),
        active_window=draw(st.sampled_from(list(ActiveWindowChoice))),
        batch_size=draw(st.integers(1, 3)),
    )


def assert_same(reference: object, fast: object) -> None:
    assert fast.evaluations == reference.evaluations
    assert fast.relations == reference.relations
    assert fast.emissions == reference.emissions
