"""Report policies, ticks, R2S and empty notification: RSP-QL Examples 10, 13 and the
CSRBench Fig. 1/Fig. 2 rooms stream, all hand-checked."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.rsp_reference import iri, select
from rsp_workbench.core.r2s import apply_r2s, continuous_answer, r2s_step
from rsp_workbench.core.report import Evaluation, content_at, evaluation_instants
from rsp_workbench.core.semantics import (
    PRESETS,
    ActiveWindowChoice,
    BorderConvention,
    R2S,
    ReportPolicy,
    Strategy,
    Tick,
)
from rsp_workbench.core.windows import WindowSpec
from rsp_workbench.errors import UserError

OC = BorderConvention.OPEN_CLOSED
NEARBY_TIMES = [2, 2, 5, 7, 12]  # RSP-QL Example 3


def instants(evaluations: list[Evaluation]) -> list[int]:
    return [e.time for e in evaluations]


# --- RSP-QL Example 13: report policies over S_nearby, W(α=5, β=2, t0=1) ------------


def test_example_13_window_close_non_empty() -> None:
    """C-SPARQL/SPARQLstream (WC ∧ NC): every window close with content: 6, 8, …, 16."""
    spec = WindowSpec(5, 2, 1, OC)
    policy = ReportPolicy.of(Strategy.WINDOW_CLOSE, Strategy.NON_EMPTY)
    result = evaluation_instants(NEARBY_TIMES, spec, policy, end=20)
    assert instants(result) == [6, 8, 10, 12, 14, 16]  # (13,18] is empty: no report at 18
    assert [(e.window.open, e.window.close, e.size) for e in result[:3]] == [(1, 6, 3), (3, 8, 2), (5, 10, 1)]


def test_example_13_window_close_reports_empty_windows_without_nc() -> None:
    spec = WindowSpec(5, 2, 1, OC)
    result = evaluation_instants(NEARBY_TIMES, spec, ReportPolicy.of(Strategy.WINDOW_CLOSE), end=20)
    assert instants(result) == [6, 8, 10, 12, 14, 16, 18, 20]


def test_example_13_content_change_tuple_tick() -> None:
    """CQELS (CC, tuple tick): one evaluation per arriving element (two at 2), plus the
    instants where the active window slides and its content changes: 9 (carl@5 leaves),
    11 (eve@7 leaves, content empty) and 17 (diana@12 leaves)."""
    spec = WindowSpec(5, 2, 1, OC)
    result = evaluation_instants(NEARBY_TIMES, spec, ReportPolicy.of(Strategy.CONTENT_CHANGE), end=20)
    assert instants(result) == [2, 2, 5, 7, 9, 11, 12, 17]
    assert [e.size for e in result] == [1, 2, 3, 2, 1, 0, 1, 0]
    assert [e.sequence for e in result[:2]] == [0, 1]


def test_content_change_time_tick_merges_contemporaneous_elements() -> None:
    spec = WindowSpec(5, 2, 1, OC)
    result = evaluation_instants(
        NEARBY_TIMES, spec, ReportPolicy.of(Strategy.CONTENT_CHANGE), tick=Tick.TIME, end=20
    )
    assert instants(result) == [2, 5, 7, 9, 11, 12, 17]


def test_content_change_batch_tick() -> None:
    spec = WindowSpec(5, 2, 1, OC)
    policy = ReportPolicy.of(Strategy.CONTENT_CHANGE, Strategy.NON_EMPTY)
    result = evaluation_instants(NEARBY_TIMES, spec, policy, tick=Tick.BATCH, batch_size=2, end=20)
    # batches {2,2} at 2, {5,7} at 7, {12} at 12; slides at 9 and 11/17 change content
    assert [(e.time, e.size) for e in result] == [(2, 2), (7, 2), (9, 1), (12, 1)]


def test_periodic_policy() -> None:
    spec = WindowSpec(5, 2, 1, OC)
    policy = ReportPolicy.parse("periodic(4ms) & non-empty")
    result = evaluation_instants(NEARBY_TIMES, spec, policy, end=20)
    # instants 1, 5, 9, 13, 17; earliest active window content non-empty at 5, 9, 13
    assert [(e.time, e.size) for e in result] == [(5, 3), (9, 1), (13, 1)]


def test_policy_parse_and_errors() -> None:
    assert ReportPolicy.parse("WC & NC") == ReportPolicy.of(Strategy.WINDOW_CLOSE, Strategy.NON_EMPTY)
    assert str(ReportPolicy.parse("cc")) == "content-change"
    with pytest.raises(UserError, match="non-empty alone"):
        ReportPolicy.parse("nc")
    with pytest.raises(UserError, match="is not one of"):
        ReportPolicy.parse("window-closes")


def test_window_close_at_the_next_element() -> None:
    """Data-driven engines (rsp-js; C-SPARQL in practice) learn that time passed only from the
    data: each closed window is evaluated when the first element strictly after its close
    arrives, at that element's time, over the window's own content."""
    spec = WindowSpec(2000, 2000, 0, BorderConvention.CLOSED_OPEN)  # [0,2000) [2000,4000) ...
    times = [500, 1500, 2000, 2500, 4500, 4700, 9000]
    policy = ReportPolicy.parse("window-close & next-element")
    result = evaluation_instants(times, spec, policy, end=20_000)
    # [0,2000) holds 500, 1500; the element at 2000 is not after the close: 2500 reports it.
    # [2000,4000) holds 2000, 2500, reported at 4500; [4000,6000) and the empty [6000,8000)
    # are both closed by 9000 (in close order: sequence 0, 1); [8000,10000) has no later
    # element: never reported, whatever the end
    assert [(e.time, e.sequence, e.window.open, e.size) for e in result] == [
        (2500, 0, 0, 2), (4500, 0, 2000, 2), (9000, 0, 4000, 2), (9000, 1, 6000, 0)]
    with_nc = evaluation_instants(times, spec, ReportPolicy.parse("wc & next-element & nc"), end=20_000)
    assert [(e.time, e.window.open) for e in with_nc] == [(2500, 0), (4500, 2000), (9000, 4000)]
    # the closing element must arrive within the end
    assert instants(evaluation_instants(times, spec, policy, end=8999)) == [2500, 4500]
    # a closed border keeps the element at the close in the window; it still does not close it
    closed = WindowSpec(2000, 2000, 0, BorderConvention.CLOSED)
    assert [(e.time, e.size) for e in evaluation_instants(times, closed, policy, end=5000)] == [(2500, 3), (4500, 2)]
    assert str(ReportPolicy.parse("next-element & nc & wc")) == "window-close & next-element & non-empty"
    with pytest.raises(UserError, match="combine it with window-close"):
        ReportPolicy.parse("content-change & next-element")


# --- CSRBench Fig. 1 and Fig. 2: the rooms query -----------------------------------

ROOMS_QUERY = """
SELECT ?room WHERE { <http://example.org/m1> <http://example.org/detectedAt> ?room .
                     <http://example.org/m2> <http://example.org/detectedAt> ?room }
"""
# Fig. 1 is not in the text; this stream reproduces every outcome the paper states
# (times in ms, window 10 s / 10 s): m1, m2 in r1 at 1 s and 3 s, in r2 at 11 s and 13 s,
# and p3 alone in r3 at 25 s (a window with content but no answer, for Fig. 2).
ROOMS_STREAM = [
    ("m1", "r1", 1000),
    ("m2", "r1", 3000),
    ("m1", "r2", 11000),
    ("m2", "r2", 13000),
    ("p3", "r3", 25000),
]
ROOMS_TIMES = [t for *_, t in ROOMS_STREAM]


def rooms_answer(preset_name: str, t0: int, end: int = 40_000) -> list[tuple[int, str, list[str]]]:
    semantics = PRESETS[preset_name]
    spec = WindowSpec(10_000, 10_000, t0, semantics.border)
    evaluations = evaluation_instants(
        ROOMS_TIMES, spec, semantics.report, tick=semantics.tick, start=t0, end=end
    )

    def evaluate(evaluation: Evaluation) -> Counter[frozenset[tuple[str, str]]]:
        triples = [(iri(who), iri("detectedAt"), iri(room)) for who, room, _ in ROOMS_STREAM[evaluation.lo : evaluation.hi]]
        return select(ROOMS_QUERY, triples)

    emissions = continuous_answer(
        evaluations, evaluate, semantics.r2s, empty_notification=semantics.empty_notification
    )
    return [
        (e.time, e.operation, sorted(dict(m)["room"] for m in e.bindings.elements())) for e in emissions
    ]


def test_csrbench_fig1_t0_0_gives_r1_then_r2() -> None:
    assert rooms_answer("sparqlstream", 0) == [(10_000, "=", [iri("r1")]), (20_000, "=", [iri("r2")])]


def test_csrbench_fig1_t0_2_gives_nothing() -> None:
    assert rooms_answer("sparqlstream", 2000) == []


def test_csrbench_fig1_t0_1_also_gives_r1_then_r2() -> None:
    assert rooms_answer("sparqlstream", 1000) == [(11_000, "=", [iri("r1")]), (21_000, "=", [iri("r2")])]


def test_csrbench_fig2_report_times_differ_by_policy() -> None:
    """CSRBench Fig. 2 (t0 = 0): CQELS reports as soon as the content changes; C-SPARQL
    and SPARQLstream when the window closes; C-SPARQL also emits the empty relation of
    the window [20 s, 30 s) that has content (p3) but no answer; nobody evaluates the
    empty window [30 s, 40 s)."""
    assert rooms_answer("cqels", 0) == [(3000, "+", [iri("r1")]), (13_000, "+", [iri("r2")])]
    assert rooms_answer("csparql", 0) == [
        (10_000, "=", [iri("r1")]),
        (20_000, "=", [iri("r2")]),
        (30_000, "=", []),
    ]
    assert rooms_answer("sparqlstream", 0) == [(10_000, "=", [iri("r1")]), (20_000, "=", [iri("r2")])]


# --- RSP-QL Example 10: the coupon query ------------------------------------------

COUPON_QUERY = """
PREFIX : <http://example.org/>
SELECT ?shopper ?shop ?shop_owner ?coupon WHERE {
  GRAPH :w1 { ?shopper :isNearby ?shop }
  GRAPH :w2 { ?shop_owner :offers ?coupon }
  ?shop_owner :owns ?shop
}
"""
S_NEARBY = [("diana", "a", 2), ("eve", "b", 2), ("carl", "a", 5), ("eve", "a", 7), ("diana", "b", 12)]
S_COUPON = [("alice", '"10% discount on"', 8), ("bob", '"free coffee at"', 15)]


def shops_at(t: int) -> list[tuple[str, str, str]]:
    """G_shops of RSP-QL Example 4: empty before 2, both shops in [2, 13], only B after."""
    rdf_type = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
    both = [(iri("a"), rdf_type, iri("Shop")), (iri("b"), rdf_type, iri("Shop")),
            (iri("alice"), iri("owns"), iri("a")), (iri("bob"), iri("owns"), iri("b"))]
    if t < 2:
        return []
    return both if t <= 13 else [both[1], both[3]]


def test_example_10_coupon_query() -> None:
    """Evaluations at 8 and 16 with three rows (the paper's table names the owner of :a
    ':adam'; its Example 1 data says :alice, which is what we use)."""
    w1 = WindowSpec(5, 2, 1, OC)
    w2 = WindowSpec(2, 2, 0, OC)
    policy = ReportPolicy.of(Strategy.WINDOW_CLOSE, Strategy.NON_EMPTY)  # on W2
    coupon_times = [t for *_, t in S_COUPON]
    nearby_times = [t for *_, t in S_NEARBY]
    evaluations = evaluation_instants(coupon_times, w2, policy, end=20)
    assert instants(evaluations) == [8, 16]

    def evaluate(evaluation: Evaluation) -> Counter[frozenset[tuple[str, str]]]:
        _, lo, hi = content_at(nearby_times, w1, evaluation.time, ActiveWindowChoice.EARLIEST)
        nearby = [(iri(who), iri("isNearby"), iri(shop)) for who, shop, _ in S_NEARBY[lo:hi]]
        coupons = [(iri(who), iri("offers"), text) for who, text, _ in S_COUPON[evaluation.lo : evaluation.hi]]
        return select(COUPON_QUERY, shops_at(evaluation.time), {"http://example.org/w1": nearby, "http://example.org/w2": coupons})

    emissions = continuous_answer(evaluations, evaluate, R2S.RSTREAM, empty_notification=False)
    rows = sorted(
        (e.time, m["shopper"], m["shop"], m["shop_owner"], m["coupon"])
        for e in emissions
        for m in map(dict, e.bindings.elements())
    )
    assert rows == [
        (8, iri("carl"), iri("a"), iri("alice"), '"10% discount on"'),
        (8, iri("eve"), iri("a"), iri("alice"), '"10% discount on"'),
        (16, iri("diana"), iri("b"), iri("bob"), '"free coffee at"'),
    ]


# --- R2S over bags ----------------------------------------------------------------


def test_istream_dstream_over_bags() -> None:
    """Multiset differences: {a, a, b} → {a, b, b, c}: Istream {b, c}, Dstream {a}."""
    previous, current = Counter("aab"), Counter("abbc")
    assert r2s_step(R2S.ISTREAM, previous, current) == Counter("bc")
    assert r2s_step(R2S.DSTREAM, previous, current) == Counter("a")
    assert r2s_step(R2S.RSTREAM, previous, current) == current


def test_empty_notification_is_applied_after_r2s() -> None:
    relations = [(1, 0, Counter("a")), (2, 0, Counter("a")), (3, 0, Counter())]
    notified = list(apply_r2s(R2S.ISTREAM, relations, empty_notification=True))
    silent = list(apply_r2s(R2S.ISTREAM, relations, empty_notification=False))
    assert [(e.time, dict(e.bindings)) for e in notified] == [(1, {"a": 1}), (2, {}), (3, {})]
    assert [(e.time, dict(e.bindings)) for e in silent] == [(1, {"a": 1})]
    # the predecessor of the evaluation at 3 is the evaluation at 2, even though it was not emitted
    deletions = list(apply_r2s(R2S.DSTREAM, relations, empty_notification=False))
    assert [(e.time, dict(e.bindings)) for e in deletions] == [(3, {"a": 1})]


bags = st.lists(st.lists(st.sampled_from("abcd"), max_size=6).map(Counter), min_size=1, max_size=12)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(relations=bags)
def test_accumulated_istream_minus_dstream_equals_rstream(relations: list[Counter[str]]) -> None:
    """Σ Istream − Σ Dstream up to t_j equals Rstream at t_j, for bags."""
    timed = [(j, 0, relation) for j, relation in enumerate(relations)]
    inserts = list(apply_r2s(R2S.ISTREAM, timed, empty_notification=True))
    deletes = list(apply_r2s(R2S.DSTREAM, timed, empty_notification=True))
    rstream = list(apply_r2s(R2S.RSTREAM, timed, empty_notification=True))
    running: Counter[str] = Counter()
    for plus, minus, whole in zip(inserts, deletes, rstream, strict=True):
        running.update(plus.bindings)
        running.subtract(minus.bindings)
        assert +running == whole.bindings
        assert all(count >= 0 for count in running.values())


@settings(max_examples=200, deadline=None)
@given(
    times=st.lists(st.integers(0, 100), max_size=30).map(sorted),
    size=st.integers(1, 20),
    slide=st.integers(1, 20),
    border=st.sampled_from(list(BorderConvention)),
)
def test_window_close_reads_each_closing_window_completely(
    times: list[int], size: int, slide: int, border: BorderConvention
) -> None:
    spec = WindowSpec(size, slide, 0, border)
    for evaluation in evaluation_instants(times, spec, ReportPolicy.of(Strategy.WINDOW_CLOSE), end=120):
        assert evaluation.time == evaluation.window.close
        assert times[evaluation.lo : evaluation.hi] == [t for t in times if evaluation.window.contains(t)]


def test_grouping_is_a_semantics_parameter_rspjs_declares_by_binding() -> None:
    from rsp_workbench.core.semantics import EngineSemantics, Grouping

    assert EngineSemantics().grouping is Grouping.EVALUATION and PRESETS["rspjs"].grouping is Grouping.BINDING
    assert EngineSemantics().with_overrides({"grouping": "binding"}).describe()["grouping"] == "binding"
    with pytest.raises(UserError, match="'bindings' is not one of evaluation, binding"):
        EngineSemantics().with_overrides({"grouping": "bindings"})
