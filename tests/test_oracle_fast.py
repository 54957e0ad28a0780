"""The scalable oracle path agrees with the rdflib reference path (issue 4 item 4).

Property tests over small random streams (tiny vocabulary, so duplicates, joins across
timestamps and empty windows happen often), every preset and random SECRET parameter
combinations; a few Spark tests check that the DataFrame joins and the vectorised
window assignment give the same answers as the pure path.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.core.semantics import (
    PRESETS,
    R2S,
    ActiveWindowChoice,
    BorderConvention,
    EngineSemantics,
    ReportPolicy,
    Tick,
)
from workbench.oracle.annotated import (
    FastPathUnsupported,
    RelationEvaluator,
    Timeline,
    annotate,
    build_context,
    compile_plan,
    evaluations_for,
    fast_expected_answer,
)
from workbench.oracle.reference import StaticData, expected_answer, window_specs
from workbench.pipeline.oracle_job import VectorisedAnswers, evaluation_arrays, vectorisable
from workbench.query.parser import parse_query
from workbench.streams.model import StreamElement

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
                                   "content-change & non-empty", "window-close & content-change", "periodic(3ms)"]))
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


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    elements=streams(),
    body=st.sampled_from(sorted(BODIES)),
    sem=semantics(),
    size=st.integers(1, 8),
    slide=st.integers(1, 6),
    t0=st.integers(0, 5),
)
def test_fast_path_equals_reference(elements, body, sem, size, slide, t0) -> None:
    query = csparql(BODIES[body], size, slide)
    reference = expected_answer(query, {S1: elements}, sem, (t0,), static=STATIC)
    assert_same(reference, fast_expected_answer(query, {S1: elements}, sem, (t0,), static=STATIC))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=streams(10), second=streams(10), sem=semantics(), t0=st.tuples(st.integers(0, 3), st.integers(0, 3)))
def test_named_windows_over_two_streams(first, second, sem, t0) -> None:
    query = parse_query(
        "PREFIX : <http://e/> SELECT ?x ?v ?y FROM NAMED WINDOW :w1 ON <http://s1> [RANGE 5ms STEP 2ms] "
        "FROM NAMED WINDOW :w2 ON <http://s2> [RANGE 4ms STEP 4ms] "
        "WHERE { WINDOW :w1 { ?x :p ?v } WINDOW :w2 { ?x :r ?y } ?x :lives ?c }", "rspql")
    data = {S1: first, S2: second}
    reference = expected_answer(query, data, sem, t0, static=STATIC)
    assert_same(reference, fast_expected_answer(query, data, sem, t0, static=STATIC))


def test_duplicate_elements_are_one_triple_per_window() -> None:
    """rdflib sees a set: the same triple at t=1 and t=3 counts once while both are in."""
    a, p, one = E.format("a"), E.format("p"), INT.format(1)
    elements = [StreamElement(a, p, one, 1), StreamElement(a, p, one, 3), StreamElement(a, p, one, 8)]
    query = csparql("SELECT ?x (COUNT(*) AS ?n) WHERE { ?x <http://e/p> ?v } GROUP BY ?x", 5, 2)
    plain = csparql("SELECT ?x WHERE { ?x <http://e/p> ?v }", 5, 2)
    for q in (query, plain):
        for name in ("csparql", "cqels", "yabench-window-close", "yabench-content-change"):
            reference = expected_answer(q, {S1: elements}, PRESETS[name], (0,))
            assert_same(reference, fast_expected_answer(q, {S1: elements}, PRESETS[name], (0,)))
    relation = fast_expected_answer(plain, {S1: elements}, PRESETS["csparql"], (0,)).relations[0]
    assert sum(relation.values()) == 1


def test_avg_over_empty_window_is_zero_integer() -> None:
    query = csparql(BODIES["avg-count"], 4, 4)
    elements = [StreamElement(E.format("a"), E.format("r"), E.format("b"), 1)]
    answer = fast_expected_answer(query, {S1: elements}, replace(PRESETS["csparql"], report=ReportPolicy.parse("window-close")), (0,), end=8)
    zero = INT.format(0)
    assert answer.relations[1] == {frozenset({("a", zero), ("n", zero)}): 1}


@pytest.mark.parametrize("body, construct", [
    ("SELECT ?x WHERE { ?x <http://e/p> ?v } LIMIT 2", "LIMIT"),
    ("SELECT (GROUP_CONCAT(?v) AS ?g) WHERE { ?x <http://e/p> ?v }", "GROUP_CONCAT"),
    ("SELECT (SAMPLE(?v) AS ?g) WHERE { ?x <http://e/p> ?v }", "SAMPLE"),
    ("SELECT ?x WHERE { ?x <http://e/p> ?v FILTER EXISTS { ?x <http://e/r> ?y } }", "EXISTS"),
    ("SELECT ?x ?n WHERE { ?x <http://e/p> ?v BIND(RAND() AS ?n) }", "RAND"),
])
def test_unsupported_constructs_are_named(body: str, construct: str) -> None:
    with pytest.raises(FastPathUnsupported, match=construct):
        compile_plan(csparql(body, 4, 4))


@settings(max_examples=150, deadline=None)
@given(elements=streams(20), sem=semantics(), size=st.integers(1, 9), slide=st.integers(1, 7), t0=st.integers(0, 6),
       extra_end=st.integers(0, 6))
def test_vectorised_evaluations_equal_the_scalar_definition(elements, sem, size, slide, t0, extra_end) -> None:
    query = csparql(BODIES["filter"], size, slide)
    if not vectorisable(query, sem) or not elements:
        return
    timeline = Timeline.of([e.t for e in elements])
    spec = window_specs(query, sem, (t0,))[0]
    end = timeline.distinct[-1] + extra_end
    scalar = evaluations_for(timeline, spec, sem, end=end)
    arrays = evaluation_arrays(np.asarray(timeline.distinct), spec, sem, end)
    starts = timeline.starts
    assert [(e.time, e.window.open, e.window.close, e.window.index, e.lo, e.hi) for e in scalar] == [
        (int(a), int(b), int(c), int(d), starts[lo], starts[hi])
        for a, b, c, d, lo, hi in zip(arrays.time, arrays.open, arrays.close, arrays.index, arrays.lo, arrays.hi)
    ]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(elements=streams(16), sem=semantics(), size=st.integers(1, 8), slide=st.integers(1, 6), t0=st.integers(0, 5),
       body=st.sampled_from(["filter", "join-across-timestamps", "static-join"]))
def test_vectorised_sizes_equal_the_reference(elements, sem, size, slide, t0, body) -> None:
    query = csparql(BODIES[body], size, slide)
    if not vectorisable(query, sem) or not elements:
        return
    plan = compile_plan(query)
    context = build_context(query, {S1: elements}, STATIC)
    tables = annotate(plan, context)
    timeline = Timeline.of(context.windows[0].times)
    try:
        vectorised = VectorisedAnswers(tables[0], timeline, query, sem, timeline.distinct[-1])
    except FastPathUnsupported:
        return
    result = vectorised.compute((t0,))
    reference = expected_answer(query, {S1: elements}, sem, (t0,), static=STATIC)
    assert [int(x) for x in result.relation_size] == [sum(r.values()) for r in reference.relations]
    emitted = {(e.time, e.sequence): e.size for e in reference.emissions}
    expected = [emitted.get((e.time, e.sequence)) for e in reference.evaluations]
    assert [int(s) if flag else None for s, flag in zip(result.emitted_size, result.emitted)] == expected


# --- Spark -----------------------------------------------------------------------------------------

SPARK_ELEMENTS = [
    StreamElement(E.format(s), E.format(p), INT.format(v) if p == "p" else E.format(o), t)
    for s, p, v, o, t in [
        ("a", "p", 3, "", 0), ("a", "r", 0, "b", 0), ("b", "p", 1, "", 1), ("b", "r", 0, "a", 2),
        ("a", "p", 2, "", 2), ("c", "p", 2, "", 4), ("c", "r", 0, "c", 4), ("a", "p", 0, "", 6),
        ("b", "p", 3, "", 7), ("b", "r", 0, "a", 9), ("a", "r", 0, "b", 9), ("c", "p", 1, "", 11),
    ]
]


@pytest.fixture(scope="module")
def spark_stream(spark, tmp_path_factory):
    from workbench.streams.parquet import ParquetStreamWriter

    path = tmp_path_factory.mktemp("oracle") / "s.parquet"
    with ParquetStreamWriter(path) as writer:
        writer.write_all(SPARK_ELEMENTS)
    return str(path)


@pytest.mark.spark
@pytest.mark.parametrize("body", ["filter", "join-across-timestamps", "self-join", "group-by", "union"])
def test_spark_answers_equal_reference(spark, spark_stream, body) -> None:
    from workbench.pipeline.oracle_job import expected_answers

    query = csparql(BODIES[body], 5, 3)
    sem = PRESETS["yabench-content-change"] if body != "group-by" else PRESETS["csparql"]
    t0s = list(range(3))
    answers = expected_answers(spark, query, spark_stream, sem, t0s, static=STATIC)
    covered = sorted(v for c in answers.classes for v in c.t0_values)
    assert covered == [(t,) for t in t0s]
    for t0 in t0s:
        assert_same(expected_answer(query, {S1: SPARK_ELEMENTS}, sem, (t0,), static=STATIC), answers.answer(t0))


@pytest.mark.spark
def test_spark_vectorised_summary_and_fallback(spark, spark_stream) -> None:
    from workbench.pipeline.oracle_job import expected_answers

    query = csparql(BODIES["filter"], 4, 4)
    sem = PRESETS["yabench-window-close"]
    answers = expected_answers(spark, query, spark_stream, sem, [0, 1, 2, 3], static=STATIC)
    assert answers.mode == "fast-vectorised", answers.reason
    reference = expected_answer(query, {S1: SPARK_ELEMENTS}, sem, (1,), static=STATIC)
    summary = answers.summary(1)
    assert [(w.start, w.end, w.triples, w.expected) for w in summary] == [
        (e.window.open, e.window.close, e.size, sum(r.values())) for e, r in zip(reference.evaluations, reference.relations)
    ]
    limited = csparql("SELECT ?x WHERE { ?x <http://e/p> ?v } LIMIT 1", 4, 4)
    fallback = expected_answers(spark, limited, spark_stream, sem, [0], static=STATIC)
    assert fallback.mode == "reference" and "LIMIT" in (fallback.reason or "")
    assert_same(expected_answer(limited, {S1: SPARK_ELEMENTS}, sem, (0,), static=STATIC), fallback.answer(0))
