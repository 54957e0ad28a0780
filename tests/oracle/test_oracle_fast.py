"""The scalable oracle path agrees with the rdflib reference path.

Property tests over small random streams (tiny vocabulary, so duplicates, joins across
timestamps and empty windows happen often), every preset and random SECRET parameter
combinations, for the Python fast path and (fewer examples, one shared SparkSession) the
Spark job; a few fixed Spark tests check the DataFrame joins, the vectorised window
assignment, filter push-down and the annotation cache.
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsp_workbench.core.semantics import (
    PRESETS,
    R2S,
    ActiveWindowChoice,
    BorderConvention,
    EngineSemantics,
    ReportPolicy,
    Tick,
)
from rsp_workbench.oracle.annotated import (
    FastPathUnsupported,
    annotate,
    build_context,
    compile_plan,
    fast_expected_answer,
)
from rsp_workbench.oracle.deltas import Timeline, evaluations_for
from rsp_workbench.oracle.reference import StaticData, expected_answer, window_specs
from rsp_workbench.oracle.answers import VectorisedAnswers
from rsp_workbench.oracle.deltas import evaluation_arrays, vectorisable
from rsp_workbench.query.parser import parse_query
from rsp_workbench.streams.model import StreamElement
from rsp_workbench.streams.readers import read_stream
from tests.oracle.cases import BODIES, E, INT, S1, S2, STATIC, assert_same, csparql, semantics, streams  # noqa: F401


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    elements=streams(),
    body=st.sampled_from(sorted(BODIES)),
    sem=semantics(),
    size=st.integers(1, 8),
    slide=st.integers(1, 6),
    t0=st.integers(0, 5),
)
@pytest.mark.slow
def test_fast_path_equals_reference(elements, body, sem, size, slide, t0) -> None:
    query = csparql(BODIES[body], size, slide)
    reference = expected_answer(query, {S1: elements}, sem, (t0,), static=STATIC)
    assert_same(reference, fast_expected_answer(query, {S1: elements}, sem, (t0,), static=STATIC))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=streams(10), second=streams(10), sem=semantics(), t0=st.tuples(st.integers(0, 3), st.integers(0, 3)))
@pytest.mark.slow
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
@pytest.mark.slow
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
@pytest.mark.slow
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
    reference = expected_answer(query, {S1: elements}, sem, (t0,), static=STATIC)
    emitted = {(e.time, e.sequence): e.size for e in reference.emissions}
    expected = [emitted.get((e.time, e.sequence)) for e in reference.evaluations]
    result = vectorised.compute((t0,))  # prefix sums
    assert [int(x) for x in result.relation_size] == [sum(r.values()) for r in reference.relations]
    assert [int(s) if flag else None for s, flag in zip(result.emitted_size, result.emitted)] == expected
    try:  # the per-row presence intervals (used when many rows span whole contents) agree
        sizes, entered, left = vectorised._by_intervals(result.arrays)
    except FastPathUnsupported:  # intervals need contents that only move forward
        return
    assert sizes.tolist() == result.relation_size.tolist()
    assert {R2S.RSTREAM: sizes, R2S.ISTREAM: entered, R2S.DSTREAM: left}[vectorised.r2s].tolist() == result.emitted_size.tolist()


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
    from rsp_workbench.streams.parquet import ParquetStreamWriter

    path = tmp_path_factory.mktemp("oracle") / "s.parquet"
    with ParquetStreamWriter(path) as writer:
        writer.write_all(SPARK_ELEMENTS)
    return str(path)


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("body", ["filter", "join-across-timestamps", "self-join", "group-by", "union", "sum-avg-mixed"])
def test_spark_answers_equal_reference(spark, spark_stream, body) -> None:
    from rsp_workbench.pipeline.oracle_job import expected_answers

    query = csparql(BODIES[body], 5, 3)
    sem = PRESETS["yabench-content-change"] if body != "group-by" else PRESETS["csparql"]
    t0s = list(range(3))
    answers = expected_answers(spark, query, spark_stream, sem, t0s, static=STATIC)
    covered = sorted(v for c in answers.classes for v in c.t0_values)
    assert covered == [(t,) for t in t0s]
    for t0 in t0s:
        assert_same(expected_answer(query, {S1: SPARK_ELEMENTS}, sem, (t0,), static=STATIC), answers.answer(t0))


@pytest.mark.slow
@pytest.mark.spark
def test_spark_vectorised_summary_and_fallback(spark, spark_stream) -> None:
    from rsp_workbench.pipeline.oracle_job import expected_answers

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


@pytest.mark.slow
@pytest.mark.spark
def test_the_executors_group_the_t0_as_the_driver_does(spark, spark_stream, monkeypatch) -> None:
    """Without a t0's result kept, the vectorised answers' digests are computed on the executors, a
    chunk of t0 per task: the same classes of t0 as the driver's own loop gives."""
    from rsp_workbench.oracle import answers as answers_module
    from rsp_workbench.pipeline.oracle_job import expected_answers

    monkeypatch.setattr(answers_module, "T0_PER_TASK", 2)  # 7 t0: four tasks
    query = csparql(BODIES["filter"], 4, 2)
    sem = PRESETS["yabench-content-change"]
    t0s = list(range(7))
    mapped = expected_answers(spark, query, spark_stream, sem, t0s, static=STATIC, keep_results=False, cache=False)
    here = expected_answers(spark, query, spark_stream, sem, t0s, static=STATIC, keep_results=True, cache=False)
    assert mapped.mode == here.mode == "fast-vectorised"
    assert sorted(sorted(c.t0_values) for c in mapped.classes) == sorted(sorted(c.t0_values) for c in here.classes)
    assert len(here.classes) > 1  # the t0 do not all see the same contents
    for t0 in t0s:
        assert mapped.summary(t0) == here.summary(t0)


@pytest.mark.spark
def test_the_reference_path_on_spark_refuses_a_stream_the_driver_cannot_hold(spark, spark_stream, monkeypatch) -> None:
    """Outside the fast fragment the driver holds the stream (rdflib): refused with the estimate, before it is read."""
    from collections import namedtuple

    import psutil

    from rsp_workbench.errors import UserError
    from rsp_workbench.pipeline.oracle_job import REFERENCE_BYTES_PER_ELEMENT, expected_answers, refuse_on_driver

    refuse_on_driver(1000, "LIMIT", available=1000 * REFERENCE_BYTES_PER_ELEMENT)  # fits: no error
    with pytest.raises(UserError) as refused:
        refuse_on_driver(3_000_000, "LIMIT", available=2 << 30)
    assert str(refused.value) == (
        "query: the query is outside the fast fragment (LIMIT), so rdflib's reference path computes its answers on "
        "the driver over the whole stream: 3,000,000 elements would hold about 2.8 GB and 2.0 GB are available; "
        "give a shorter stream, or a query inside the fragment (docs/oracle.md)")
    limited = csparql("SELECT ?x WHERE { ?x <http://e/p> ?v } LIMIT 1", 4, 4)
    memory = namedtuple("memory", "available")(len(SPARK_ELEMENTS) * REFERENCE_BYTES_PER_ELEMENT - 1)
    monkeypatch.setattr(psutil, "virtual_memory", lambda: memory)
    with pytest.raises(UserError) as refused:
        expected_answers(spark, limited, spark_stream, PRESETS["cqels"], [0], static=STATIC)
    assert f"{len(SPARK_ELEMENTS)} elements would hold" in str(refused.value) and "LIMIT" in str(refused.value)


# --- FILTER bounds pushed into the Spark scan -------------------------------------------------------

def test_numeric_bounds_of_filter_expressions() -> None:
    from rsp_workbench.oracle.annotated import NumericBound, numeric_bounds

    def bounds(condition: str) -> list[NumericBound]:
        query = csparql(f"SELECT ?x WHERE {{ ?x <http://e/p> ?v FILTER({condition}) }}", 4, 4)
        return numeric_bounds(query.algebra.algebra.p.p.expr)

    assert bounds("?v > 50.0") == [NumericBound("v", ">", 50.0)]
    assert bounds("2 <= ?v && ?v < 7 && STR(?x) != 'a'") == [NumericBound("v", ">=", 2.0), NumericBound("v", "<", 7.0)]
    assert bounds("?v != 3") == [] and bounds("?v > 'abc'") == [] and bounds("?v > 1 || ?v < 0") == []


XSD = "http://www.w3.org/2001/XMLSchema#"
DEC, FLT, XINT = XSD + "decimal", XSD + "float", XSD + "integer"
BOUNDED = [  # (object term, value > 50.0 certainly false?)
    (f'"49.9"^^<{DEC}>', True), (f'"10"^^<{XINT}>', True), (f'"-1E3"^^<{FLT}>', True),
    (f'"50.0"^^<{DEC}>', False), (f'"50.00000001"^^<{DEC}>', False),  # inside the margin: rdflib decides
    (f'"49.99999999"^^<{FLT}>', False), (f'"75"^^<{XINT}>', False), (f'"NaN"^^<{FLT}>', False),
    (f'"1.5"^^<{XINT}>', False),  # ill-typed: left to rdflib
    ('"12"', False), ("<http://e/x>", False), ('"abc"@en', False),
]


@pytest.mark.spark
def test_certainly_fails_is_conservative(spark) -> None:
    from pyspark.sql import functions as F

    from rsp_workbench.oracle.annotated import NumericBound
    from rsp_workbench.pipeline.oracle_job import certainly_fails

    frame = spark.createDataFrame([(term,) for term, _ in BOUNDED], "o string")
    dropped = {row.o for row in frame.where(certainly_fails(F.col("o"), NumericBound("v", ">", 50.0))).collect()}
    assert dropped == {term for term, fails in BOUNDED if fails}


@pytest.mark.spark
def test_spark_filter_pushdown_equals_reference(spark, tmp_path) -> None:
    """Literals of every kind around the bound: the pruned Spark join and rdflib agree."""
    from rsp_workbench.pipeline.oracle_job import clear_annotation_cache, expected_answers
    from rsp_workbench.streams.parquet import ParquetStreamWriter

    terms = [term for term, _ in BOUNDED if "NaN" not in term]  # rdflib raises on NaN > decimal (both paths)
    elements = [StreamElement(E.format(f"s{i}"), E.format("p"), term, i) for i, term in enumerate(terms)]
    elements += [StreamElement(E.format(f"s{i}"), E.format("r"), E.format("b"), i) for i in range(len(terms))]
    elements.sort(key=lambda e: e.t)
    path = tmp_path / "bounded.parquet"
    with ParquetStreamWriter(path) as writer:
        writer.write_all(elements)
    query = csparql("SELECT ?x ?v WHERE { ?x <http://e/p> ?v . ?x <http://e/r> ?y FILTER(?v > 50.0 && ?v <= 1E9) }", 4, 4)
    sem = PRESETS["yabench-window-close"]
    clear_annotation_cache()
    answers = expected_answers(spark, query, str(path), sem, [0, 1])
    for t0 in (0, 1):
        assert_same(expected_answer(query, {S1: elements}, sem, (t0,)), answers.answer(t0))
    kept = {dict(m)["v"] for r in answers.answer(0).relations for m in r}
    assert kept == {f'"50.00000001"^^<{DEC}>', f'"75"^^<{XINT}>'}


# --- Spark: exactness of the hash joins, DataFrame sources, reuse, reported paths -----------------

@pytest.mark.spark
def test_rows_whose_shared_terms_differ_are_dropped(spark, spark_stream, monkeypatch) -> None:
    """Spark joins on 64-bit hashes; a candidate whose shared variable has different terms (what a
    hash collision produces) is dropped by the executors' exact check. Here every term has the same
    hash, so every pair of elements in a window's reach is a candidate: the answers stay exact."""
    from pyspark.sql import functions as F

    from rsp_workbench.pipeline import oracle_job

    query = csparql(BODIES["join-across-timestamps"], 5, 3)
    sem = PRESETS["cqels"]
    honest = oracle_job.expected_answers(spark, query, spark_stream, sem, [0, 1], cache=False)
    monkeypatch.setattr(oracle_job, "term_hash", lambda column: F.lit(7).cast("long"))
    colliding = oracle_job.expected_answers(spark, query, spark_stream, sem, [0, 1], cache=False)
    for t0 in (0, 1):
        assert_same(expected_answer(query, {S1: SPARK_ELEMENTS}, sem, (t0,)), colliding.answer(t0))
        assert_same(honest.answer(t0), colliding.answer(t0))
    assert any(relation for relation in colliding.answer(0).relations)


@pytest.mark.spark
def test_the_joins_partition_and_sort_on_the_hashes_only(spark, spark_stream, monkeypatch) -> None:
    """The exact check of the shared terms stays a condition on the pairs the hashes matched
    (`exact_match`): the optimizer does not make the terms join keys, so no shuffle partitions,
    and no sort-merge join sorts, by the term strings. Each pattern is shuffled by its join key
    with ``pos`` and ``t``; its requirement columns are made after the shuffle."""
    import re
    from contextlib import contextmanager

    from rsp_workbench.pipeline import oracle_job

    plans: list[str] = []
    logical: list[list[str]] = []
    collected_parts = oracle_job.collected_parts

    @contextmanager
    def planned(frame):
        plans.append(frame._jdf.queryExecution().executedPlan().toString())
        logical.append(frame._jdf.queryExecution().optimizedPlan().toString().splitlines())
        with collected_parts(frame) as parts:
            yield parts

    monkeypatch.setattr(oracle_job, "collected_parts", planned)
    query = csparql(BODIES["join-across-timestamps"], 5, 3)
    sem = PRESETS["cqels"]
    threshold = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")  # the joins of big streams: shuffled
    try:
        answers = oracle_job.expected_answers(spark, query, spark_stream, sem, [0], cache=False)
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", threshold)
    assert_same(expected_answer(query, {S1: SPARK_ELEMENTS}, sem, (0,)), answers.answer(0))
    keys = re.findall(r"hashpartitioning\(([^)]*)\)", plans[0]) + re.findall(r"SortMergeJoin \[([^]]*)\]", plans[0])
    assert keys and all("term" not in key for key in keys), plans[0]
    assert "coalesce((term" in plans[0]  # the terms' check, on the matched pairs
    shuffles = [i for i, line in enumerate(logical[0]) if "RepartitionByExpression" in line]
    assert len(shuffles) == 3, "\n".join(logical[0])  # one per pattern
    for i in shuffles:
        below, above = logical[0][i + 1], logical[0][i - 1]
        assert "pos#" in below and " t#" in below and "pmin" not in below and "tmax" not in below, below
        assert "pmin0" in above and "tmax0" in above, above


def from_iri(name: str) -> object:
    from rdflib import URIRef

    return URIRef(f"http://e/{name}")


@pytest.mark.slow
@pytest.mark.spark
def test_dataframe_source_equals_reference(spark) -> None:
    from rsp_workbench.pipeline.oracle_job import expected_answers

    frame = spark.createDataFrame([(e.subject, e.predicate, e.object, e.t, i) for i, e in enumerate(SPARK_ELEMENTS)],
                                  "subject string, predicate string, object string, t long, pos long")
    query = csparql(BODIES["join-across-timestamps"], 5, 3)
    sem = PRESETS["cqels"]
    answers = expected_answers(spark, query, frame, sem, [0, 2])
    assert not answers.annotations_reused
    for t0 in (0, 2):
        assert_same(expected_answer(query, {S1: SPARK_ELEMENTS}, sem, (t0,)), answers.answer(t0))


@pytest.fixture(scope="module")
def spark_warmed(spark) -> None:
    """One Spark oracle job before hypothesis runs a test: the first one raises the recursion
    limit (a lazy import on the way), which hypothesis would report as changed under it."""
    from rsp_workbench.pipeline.oracle_job import expected_answers

    frame = spark.createDataFrame([(e.subject, e.predicate, e.object, e.t, i) for i, e in enumerate(SPARK_ELEMENTS)],
                                  "subject string, predicate string, object string, t long, pos long")
    expected_answers(spark, csparql(BODIES["filter"], 4, 4), frame, PRESETS["csparql"], [0], cache=False)


@pytest.mark.spark
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(elements=streams(12), body=st.sampled_from(sorted(BODIES)), sem=semantics(), size=st.integers(1, 6),
       slide=st.integers(1, 4), t0=st.integers(0, 3))
def test_spark_path_equals_reference_on_random_streams(spark, spark_warmed, elements, body, sem, size, slide, t0) -> None:
    """The Spark job (DataFrame joins, vectorised windows or its fallbacks) against rdflib per window,
    on random streams, queries and semantics: a few examples, the session's one SparkSession."""
    from rsp_workbench.pipeline.oracle_job import expected_answers

    query = csparql(BODIES[body], size, slide)
    frame = spark.createDataFrame([(e.subject, e.predicate, e.object, e.t, i) for i, e in enumerate(elements)],
                                  "subject string, predicate string, object string, t long, pos long")
    answers = expected_answers(spark, query, frame, sem, [t0], static=STATIC, cache=False)
    assert_same(expected_answer(query, {S1: elements}, sem, (t0,), static=STATIC), answers.answer(t0))


@pytest.mark.spark
def test_annotations_are_reused_across_report_policies(spark, tmp_path) -> None:
    from rsp_workbench.pipeline.oracle_job import clear_annotation_cache, expected_answers
    from rsp_workbench.streams.parquet import ParquetStreamWriter

    path = tmp_path / "s.parquet"
    with ParquetStreamWriter(path) as writer:
        writer.write_all(SPARK_ELEMENTS)
    query = csparql(BODIES["filter"], 4, 2)
    clear_annotation_cache()
    first = expected_answers(spark, query, str(path), PRESETS["yabench-window-close"], [0, 1])
    second = expected_answers(spark, query, str(path), PRESETS["yabench-content-change"], [0, 1])
    assert (first.annotations_reused, second.annotations_reused) == (False, True)
    assert_same(expected_answer(query, {S1: SPARK_ELEMENTS}, PRESETS["yabench-content-change"], (1,)), second.answer(1))
    changed = SPARK_ELEMENTS[:-1]
    with ParquetStreamWriter(path) as writer:  # a rewritten stream file is not taken from the cache
        writer.write_all(changed)
    third = expected_answers(spark, query, str(path), PRESETS["yabench-content-change"], [1])
    assert not third.annotations_reused
    assert_same(expected_answer(query, {S1: changed}, PRESETS["yabench-content-change"], (1,)), third.answer(1))


@pytest.mark.spark
def test_a_text_stream_is_known_by_the_digest_its_readers_computed(spark, tmp_path, monkeypatch) -> None:
    """A YABench text stream read in ranges is identified by the digest of the bytes the tasks read
    (the driver does not read the file again for the cache's key): the same file hits the cache, a
    rewrite of the same size with the same modification time does not."""
    from rsp_workbench.pipeline import oracle_job, stream_sources
    from rsp_workbench.streams.model import StreamSource
    from rsp_workbench.streams.writers import write_stream

    monkeypatch.setattr(stream_sources, "RANGE_BYTES", 256)  # several ranges, a digest each
    path = tmp_path / "s.stream"
    write_stream(path, SPARK_ELEMENTS, "yabench")
    query = csparql(BODIES["filter"], 4, 2)
    sem = PRESETS["yabench-content-change"]
    hashed: list[str] = []
    fingerprint = oracle_job._file_fingerprint

    def noted(path: str, digest: str | None = None) -> tuple[str, int, int, str]:
        hashed.append(digest or "read here")  # "read here": the driver read the file for its digest
        return fingerprint(path, digest)

    monkeypatch.setattr(oracle_job, "_file_fingerprint", noted)
    oracle_job.clear_annotation_cache()
    first = oracle_job.expected_answers(spark, query, StreamSource(str(path), "yabench"), sem, [0, 1])
    second = oracle_job.expected_answers(spark, query, StreamSource(str(path), "yabench"), sem, [0, 1])
    assert (first.annotations_reused, second.annotations_reused) == (False, True)
    assert len(hashed) == 2 and "read here" not in hashed and hashed[0] == hashed[1]
    stat = path.stat()
    text = path.read_text(encoding="utf-8")
    assert " 3^^<" in text
    path.write_text(text.replace(" 3^^<", " 4^^<", 1), encoding="utf-8")  # same size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    third = oracle_job.expected_answers(spark, query, StreamSource(str(path), "yabench"), sem, [1])
    assert not third.annotations_reused and hashed[2] != hashed[0]
    changed = list(read_stream(str(path), "yabench"))
    assert_same(expected_answer(query, {S1: changed}, sem, (1,)), third.answer(1))


@pytest.mark.spark
@pytest.mark.parametrize("sem, reason", [
    (replace(PRESETS["cqels"], tick=Tick.TUPLE), "tuple tick"),
    (PRESETS["csparql"], None),
])
def test_spark_reports_the_path_it_took(spark, spark_stream, sem, reason) -> None:
    from rsp_workbench.pipeline.oracle_job import expected_answers

    answers = expected_answers(spark, csparql(BODIES["filter"], 4, 4), spark_stream, sem, [0])
    if reason is None:
        assert answers.mode == "fast-vectorised" and answers.reason is None
    else:
        assert answers.mode == "fast" and reason in answers.reason
    grouped = expected_answers(spark, csparql(BODIES["group-by"], 4, 4), spark_stream, PRESETS["csparql"], [0])
    assert grouped.mode == "fast" and "aggregates" in grouped.reason


@pytest.mark.spark
def test_unsorted_parquet_stream_is_named(spark, tmp_path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rsp_workbench.errors import UserError
    from rsp_workbench.pipeline.oracle_job import expected_answers

    path = tmp_path / "unsorted.parquet"
    rows = [(E.format("a"), E.format("p"), INT.format(1), 5), (E.format("b"), E.format("p"), INT.format(2), 3)]
    pq.write_table(pa.table({name: [row[i] for row in rows] for i, name in enumerate(("subject", "predicate", "object", "t"))}), path)
    with pytest.raises(UserError, match="row 2") as error:  # rows named from 1, as the Python reader does
        expected_answers(spark, csparql(BODIES["filter"], 4, 4), str(path), PRESETS["csparql"], [0])
    assert error.value.file == str(path)
    from rsp_workbench.streams.readers import read_parquet

    with pytest.raises(UserError) as python:
        list(read_parquet(path))
    assert str(error.value) == str(python.value)
