"""The ``secret`` engine: with all faults off it answers exactly like the oracle's reference path
(`rsp_workbench.oracle.reference.expected_answer`); each fault knob makes a visible difference."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, Mapping, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsp_workbench.engines._schedule import ReportScheduler, StreamBuffer
from rsp_workbench.core.report import evaluation_instants
from rsp_workbench.core.semantics import (
    PRESETS,
    ActiveWindowChoice,
    BorderConvention,
    EngineSemantics,
    R2S,
    ReportPolicy,
    Tick,
)
from rsp_workbench.core.windows import WindowSpec
from rsp_workbench.engine import EngineConfig, StaticGraphs, Stimulus, group_contemporaneous, merge_streams
from rsp_workbench.engines import create_engine, engine_class
from rsp_workbench.errors import UserError
from rsp_workbench.generators.sg1 import observation_elements
from rsp_workbench.oracle.reference import StaticData, expected_answer
from rsp_workbench.query.parser import parse_query
from rsp_workbench.streams.model import StreamElement
from tests.engines.support import OBS_STREAM, PREFIXES, filter_query, observations, variation_query  # noqa: F401

EX = "http://example.org/"


def iri(name: str) -> str:
    return f"<{EX}{name}>"


def avg_query(size: str, slide: str, threshold: int) -> str:
    """CSRBench Q4-like: the average temperature above a threshold (implicit group)."""
    return PREFIXES + f"""SELECT (AVG(?v) AS ?avg)
FROM NAMED STREAM <{OBS_STREAM}> [NOW - {size} SLIDE {slide}]
WHERE {{ ?obs om-owl:result [om-owl:floatValue ?v] . FILTER(?v > {threshold}) }}"""


def engine_answer(
    query_text: str, streams: Mapping[str, Sequence[StreamElement]], semantics: EngineSemantics, t0: Any,
    *, faults: Mapping[str, bool] | None = None, static: StaticGraphs = StaticGraphs(), end: int | None = None,
    **parameters: Any,
) -> list[tuple[int | None, str, Counter[Any]]]:
    engine = create_engine(EngineConfig("secret", semantics, dict(faults or {}), {"t0": t0, **parameters}))
    engine.register(parse_query(query_text), static)
    stimuli = (
        group_contemporaneous(next(iter(streams.values()))) if len(streams) == 1 else merge_streams(streams)
    )
    return [(r.application_time, r.operation, Counter(r.bindings)) for r in engine.run(stimuli, end=end)]


def oracle_answer(
    query_text: str, streams: Mapping[str, Sequence[StreamElement]], semantics: EngineSemantics,
    t0: Sequence[int], *, static: StaticData = StaticData(), end: int | None = None, report_window: int = 0,
) -> list[tuple[int | None, str, Counter[Any]]]:
    answer = expected_answer(parse_query(query_text), streams, semantics, t0, static=static, end=end,
                             report_window=report_window)
    return [(e.time, e.operation, Counter(e.bindings)) for e in answer.emissions]


# --- the scheduler is evaluation_instants, incrementally ------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    times=st.lists(st.integers(0, 60), max_size=25).map(sorted),
    size=st.integers(1, 15),
    slide=st.integers(1, 15),
    t0=st.integers(0, 6),
    border=st.sampled_from(list(BorderConvention)),
    policy=st.sampled_from(["wc", "wc & nc", "cc", "cc & nc", "periodic(4ms)", "periodic(3ms) & nc", "wc & cc",
                            "wc & next-element", "wc & next-element & nc"]),
    tick=st.sampled_from(list(Tick)),
    choice=st.sampled_from(list(ActiveWindowChoice)),
    batch=st.integers(1, 3),
    leading=st.booleans(),
)
@pytest.mark.slow
def test_scheduler_matches_evaluation_instants(
    times: list[int], size: int, slide: int, t0: int, border: BorderConvention, policy: str, tick: Tick,
    choice: ActiveWindowChoice, batch: int, leading: bool,
) -> None:
    spec = WindowSpec(size, slide, t0, border, leading)
    report = ReportPolicy.parse(policy)
    expected = evaluation_instants(times, spec, report, tick=tick, choice=choice, batch_size=batch, start=t0)
    buffer: StreamBuffer[int] = StreamBuffer()
    scheduler = ReportScheduler(buffer, spec, report, tick=tick, choice=choice, batch_size=batch)
    got = []
    for stimulus in group_contemporaneous(StreamElement("s", "p", "o", t) for t in times):
        got += scheduler.before(stimulus.application_time)
        before = buffer.size
        for element in stimulus.elements:
            buffer.append(element.t, element)
        got += scheduler.at(stimulus.application_time, before)
    got += scheduler.flush_partial_batch()
    if not times:  # the oracle's end defaults to t0 for an empty stream
        got += scheduler.advance(t0)
    assert [(e.time, e.window, e.lo, e.hi) for e in got] == [(e.time, e.window, e.lo, e.hi) for e in expected]


# --- CSRBench rooms stream (Fig. 1/2) ---------------------------------------------------------

ROOMS_QUERY = f"""PREFIX : <{EX}>
SELECT ?room FROM NAMED STREAM <{EX}rooms> [NOW - 10 S SLIDE 10 S]
WHERE {{ :m1 :detectedAt ?room . :m2 :detectedAt ?room }}"""
ROOMS = [
    StreamElement(iri(who), iri("detectedAt"), iri(room), t)
    for who, room, t in [("m1", "r1", 1000), ("m2", "r1", 3000), ("m1", "r2", 11000), ("m2", "r2", 13000), ("p3", "r3", 25000)]
]


@pytest.mark.parametrize("preset", ["csparql", "cqels", "sparqlstream"])
@pytest.mark.parametrize("t0", [0, 1000, 2000])
def test_rooms_stream_equals_oracle(preset: str, t0: int) -> None:
    streams = {f"{EX}rooms": ROOMS}
    semantics = PRESETS[preset]
    expected = oracle_answer(ROOMS_QUERY, streams, semantics, [t0], end=40_000)
    assert engine_answer(ROOMS_QUERY, streams, semantics, t0, end=40_000) == expected


def test_rooms_stream_csrbench_fig2_csparql() -> None:
    answer = engine_answer(ROOMS_QUERY, {f"{EX}rooms": ROOMS}, PRESETS["csparql"], 0, end=40_000)
    assert [(t, op, sorted(dict(m)["room"] for m in bag.elements())) for t, op, bag in answer] == [
        (10_000, "=", [iri("r1")]), (20_000, "=", [iri("r2")]), (30_000, "=", []),
    ]


# --- RSP-QL Example 10: the coupon query (two windows, named graphs, static data) ---------------

COUPON_QUERY = f"""PREFIX : <{EX}>
REGISTER RSTREAM :out AS
SELECT ?shopper ?shop ?shop_owner ?coupon
FROM NAMED WINDOW :w1 ON :nearby [RANGE 5ms STEP 2ms]
FROM NAMED WINDOW :w2 ON :coupons [RANGE 2ms STEP 2ms]
WHERE {{ WINDOW :w1 {{ ?shopper :isNearby ?shop }} WINDOW :w2 {{ ?shop_owner :offers ?coupon }}
        ?shop_owner :owns ?shop }}"""
NEARBY = [StreamElement(iri(w), iri("isNearby"), iri(s), t) for w, s, t in
          [("diana", "a", 2), ("eve", "b", 2), ("carl", "a", 5), ("eve", "a", 7), ("diana", "b", 12)]]
COUPONS = [StreamElement(iri(w), iri("offers"), text, t) for w, text, t in
           [("alice", '"10% discount on"', 8), ("bob", '"free coffee at"', 15)]]
OWNS = ((iri("alice"), iri("owns"), iri("a")), (iri("bob"), iri("owns"), iri("b")))


def test_coupon_example_equals_oracle() -> None:
    semantics = EngineSemantics(border=BorderConvention.OPEN_CLOSED, report=ReportPolicy.parse("wc & nc"),
                                r2s=R2S.RSTREAM, empty_notification=False)
    streams = {f"{EX}nearby": NEARBY, f"{EX}coupons": COUPONS}
    expected = oracle_answer(COUPON_QUERY, streams, semantics, [1, 0], static=StaticData(default=OWNS), end=20,
                             report_window=1)
    got = engine_answer(COUPON_QUERY, streams, semantics, [1, 0], static=StaticGraphs(default=OWNS), end=20,
                        report_window=1)
    assert got == expected
    assert [(t, sorted(dict(m)["shopper"] for m in bag.elements())) for t, _, bag in got] == [
        (8, [iri("carl"), iri("eve")]), (16, [iri("diana")]),
    ]


# --- filter, join and AVG queries on observation streams ----------------------------------------

SEMANTICS_CASES = [*(PRESETS[name] for name in PRESETS)]


@pytest.mark.slow
@pytest.mark.parametrize("semantics", SEMANTICS_CASES, ids=list(PRESETS))
@pytest.mark.parametrize("window", [("5 S", "2 S"), ("4 S", "4 S"), ("2 S", "3 S")])
def test_filter_query_equals_oracle(semantics: EngineSemantics, window: tuple[str, str]) -> None:
    elements = observations(30, seed=7)
    streams = {OBS_STREAM: elements}
    query = filter_query(*window)
    expected = oracle_answer(query, streams, semantics, [300])
    for matcher in ("native", "rdflib"):
        assert engine_answer(query, streams, semantics, 300, matcher=matcher) == expected


@pytest.mark.parametrize("preset", ["csparql", "cqels"])
@pytest.mark.slow
def test_join_query_equals_oracle(preset: str) -> None:
    elements = observations(30, seed=3, stations=3)
    streams = {OBS_STREAM: elements}
    query = variation_query("5s", "5s")
    expected = oracle_answer(query, streams, PRESETS[preset], [0])
    assert any(bag for _, _, bag in expected)
    assert engine_answer(query, streams, PRESETS[preset], 0) == expected


@pytest.mark.parametrize("preset", ["csparql", "sparqlstream", "cqels"])
def test_avg_query_equals_oracle(preset: str) -> None:
    elements = observations(25, seed=11)
    streams = {OBS_STREAM: elements}
    query = avg_query("4 S", "4 S", 60)
    expected = oracle_answer(query, streams, PRESETS[preset], [0])
    got = engine_answer(query, streams, PRESETS[preset], 0)
    assert got == expected


def test_matcher_choice() -> None:
    engine = create_engine(EngineConfig("secret", PRESETS["csparql"]))
    engine.register(parse_query(filter_query("5 S", "5 S")))
    assert engine.matcher == "native"  # type: ignore[attr-defined]
    engine = create_engine(EngineConfig("secret", PRESETS["csparql"]))
    engine.register(parse_query(avg_query("5 S", "5 S", 1)))
    assert engine.matcher == "rdflib"  # type: ignore[attr-defined]
    engine = create_engine(EngineConfig("secret", PRESETS["csparql"], parameters={"matcher": "native"}))
    with pytest.raises(UserError, match="native matcher"):
        engine.register(parse_query(avg_query("5 S", "5 S", 1)))


policies = st.sampled_from(["wc", "wc & nc", "cc", "cc & nc", "periodic(2s)", "wc & next-element & nc"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    count=st.integers(0, 12),
    size=st.integers(1, 5),
    slide=st.integers(1, 5),
    t0=st.integers(0, 900),
    border=st.sampled_from(list(BorderConvention)),
    policy=policies,
    tick=st.sampled_from([Tick.TUPLE, Tick.TIME]),
    r2s=st.sampled_from(list(R2S)),
    notify=st.booleans(),
    join=st.booleans(),
)
@pytest.mark.slow
def test_random_streams_equal_oracle(
    seed: int, count: int, size: int, slide: int, t0: int, border: BorderConvention, policy: str, tick: Tick,
    r2s: R2S, notify: bool, join: bool,
) -> None:
    semantics = EngineSemantics(border=border, report=ReportPolicy.parse(policy), tick=tick, r2s=r2s,
                                empty_notification=notify)
    elements = observations(count, seed, spacing=600, stations=2)
    streams = {OBS_STREAM: elements}
    query = variation_query(f"{size}s", f"{slide}s") if join else filter_query(f"{size} S", f"{slide} S")
    end = (elements[-1].t if elements else 0) + 3000
    expected = oracle_answer(query, streams, semantics, [t0], end=end)
    assert engine_answer(query, streams, semantics, t0, end=end) == expected


# --- fault knobs ----------------------------------------------------------------------------


@pytest.mark.slow
def test_late_purge_keeps_expired_elements() -> None:
    """CQELS / CSRBench Q6: a join over elements that should have left the window."""
    elements = observations(30, seed=3, stations=2)
    streams = {OBS_STREAM: elements}
    query = variation_query("2s", "2s")
    for preset in ("cqels", "csparql"):
        correct = engine_answer(query, streams, PRESETS[preset], 0)
        assert correct == oracle_answer(query, streams, PRESETS[preset], [0])
        faulty = engine_answer(query, streams, PRESETS[preset], 0, faults={"late_purge": True})
        assert faulty != correct
    # more mappings in total: the stale elements join with the fresh ones
    total = sum(sum(b.values()) for *_, b in faulty)
    assert total > sum(sum(b.values()) for *_, b in correct)


def test_border_drift_shifts_windows_later() -> None:
    elements = observations(40, seed=5)
    streams = {OBS_STREAM: elements}
    query = filter_query("2 S", "2 S", threshold=0)
    semantics = PRESETS["csparql"]
    correct = engine_answer(query, streams, semantics, 0)
    faulty = engine_answer(query, streams, semantics, 0, faults={"border_drift": True}, drift_ms=400,
                           drift_per_element_ms=0)
    assert faulty != correct
    # same report instants, contents shifted by 400 ms: every obs in a drifted window is in [o+400, c+400)
    assert [t for t, *_ in faulty] == [t for t, *_ in correct][: len(faulty)]
    for t, _, bag in faulty:
        for mapping in bag:
            obs_time = int(dict(mapping)["obs"].rsplit("_", 1)[1].rstrip(">"))
            assert t - 2000 + 400 <= obs_time < t + 400


def test_null_aggregate_returns_unbound_over_no_matches() -> None:
    """SPARQLstream / CSRBench Q4: AVG over no matches is null instead of 0."""
    elements = observations(12, seed=2)
    streams = {OBS_STREAM: elements}
    query = avg_query("4 S", "4 S", 1000)  # nothing is above 1000
    semantics = PRESETS["sparqlstream"]
    correct = engine_answer(query, streams, semantics, 0)
    assert correct == oracle_answer(query, streams, semantics, [0])
    zero = '"0"^^<http://www.w3.org/2001/XMLSchema#integer>'
    assert all(bag == Counter({frozenset({("avg", zero)}): 1}) for *_, bag in correct) and correct
    faulty = engine_answer(query, streams, semantics, 0, faults={"null_aggregate": True})
    assert [t for t, *_ in faulty] == [t for t, *_ in correct]
    assert all(bag == Counter({frozenset(): 1}) for *_, bag in faulty)


def test_misaligned_first_window_reports_early_partial_windows() -> None:
    """C-SPARQL / CSRBench Q5: on a sliding window the first reports are misaligned."""
    elements = observations(20, seed=9)
    streams = {OBS_STREAM: elements}
    query = filter_query("5 S", "1 S", threshold=0)
    semantics = PRESETS["csparql"]
    correct = engine_answer(query, streams, semantics, 0)
    faulty = engine_answer(query, streams, semantics, 0, faults={"misaligned_first_window": True})
    assert [t for t, *_ in faulty if t is not None and t < 5000] == [1000, 2000, 3000, 4000]
    assert [t for t, *_ in correct][0] == 5000
    assert faulty[4:] == correct  # aligned once the first full window has closed
    # tumbling windows are not affected
    tumbling = filter_query("2 S", "2 S", threshold=0)
    assert engine_answer(tumbling, streams, semantics, 0, faults={"misaligned_first_window": True}) == \
        engine_answer(tumbling, streams, semantics, 0)


# --- registry and bad input -------------------------------------------------------------------


def test_registry_and_errors() -> None:
    assert engine_class("secret").type_name == "secret"
    with pytest.raises(UserError, match="unknown engine type"):
        engine_class("nope")
    with pytest.raises(UserError, match="unknown fault"):
        create_engine(EngineConfig("secret", faults={"slow": True}))
    config = EngineConfig("secret", PRESETS["cqels"], {"late_purge": True}, {"t0": 5})
    assert EngineConfig.from_json(config.to_json()) == config


def test_stimulus_streams_must_match_elements() -> None:
    with pytest.raises(ValueError):
        Stimulus(0, 1, (StreamElement("s", "p", "o", 1),), ("a", "b"))


# --- the oracle detects every fault (all admissible t0, strict and CSRBench matching) --------


def _verdicts(query_text: str, streams: Mapping[str, Sequence[StreamElement]], semantics: EngineSemantics,
              faults: Mapping[str, bool], **parameters: Any) -> dict[str, bool]:
    from rsp_workbench.oracle.run import compute_expected, expected_relations, t0_vectors
    from rsp_workbench.oracle.verdict import Relation, judge

    query = parse_query(query_text)
    vectors, t_s = t0_vectors(query, semantics, "all")
    last = max(e.t for elements in streams.values() for e in elements)
    answers = compute_expected(query, streams, semantics, vectors, end=last + query.windows[0].size_ms)
    candidates = {v[0]: expected_relations(a) for v, a in answers.items()}
    verdicts = {}
    for label, active in (("clean", {}), ("faulty", faults)):
        responses = engine_answer(query_text, streams, semantics, 0, faults=active,
                                  end=last + query.windows[0].size_ms, **parameters)
        relations = [Relation(t, op, bag) for t, op, bag in responses]
        verdicts[label] = judge(relations, candidates, comparison_start=t_s).correct
        verdicts[label + "-csrbench"] = judge(relations, candidates, mode="csrbench").correct
    return verdicts


@pytest.mark.parametrize(
    ("fault", "preset", "make_query", "stations", "parameters"),
    [
        ("late_purge", "cqels", lambda: variation_query("2s", "2s"), 2, {}),
        ("border_drift", "csparql", lambda: filter_query("2 S", "2 S", threshold=0), 1,
         {"drift_ms": 400, "drift_per_element_ms": 0}),
        ("null_aggregate", "sparqlstream", lambda: avg_query("4 S", "4 S", 1000), 1, {}),
        ("misaligned_first_window", "csparql", lambda: filter_query("5 S", "1 S", threshold=0), 1, {}),
    ],
)
def test_the_oracle_detects_each_fault(fault: str, preset: str, make_query: Any, stations: int,
                                       parameters: dict[str, Any]) -> None:
    """With a fault on the oracle says incorrect for every admissible t0; with all off, correct."""
    streams = {OBS_STREAM: observations(30, seed=3, stations=stations)}
    verdicts = _verdicts(make_query(), streams, PRESETS[preset], {fault: True}, **parameters)
    assert verdicts["clean"] and verdicts["clean-csrbench"]
    assert not verdicts["faulty"]
    assert not verdicts["faulty-csrbench"]
