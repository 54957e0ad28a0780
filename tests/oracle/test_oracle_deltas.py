"""Answers as deltas (presence runs) equal the reference path; bounded memory; real clocks.

Tuple-tick content change (CQELS) and every
other preset computed from the annotated mappings' runs, answers produced one t0 at a
time, ``--out`` in the compact ``runs`` layout read back, streams stamped in epoch
milliseconds that cost nothing before their first element.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oracle.cases import BODIES, E, INT, S1, STATIC, assert_same, csparql, semantics, streams
from rsp_workbench.core.report import evaluation_instants
from rsp_workbench.core.semantics import PRESETS, ReportPolicy, Tick
from rsp_workbench.errors import UserError
from rsp_workbench.oracle.annotated import annotate, build_context, compile_plan, fast_expected_answers
from rsp_workbench.oracle.deltas import Timeline
from rsp_workbench.oracle.deltas import DeltaAnswer, LazyAnswers, evaluation_grid, presence_runs
from rsp_workbench.oracle.reference import StaticData, expected_answer, window_specs
from rsp_workbench.oracle.run import windows_summary
from rsp_workbench.streams.model import StreamElement

MONOTONE = ["filter", "join-across-timestamps", "static-join", "union", "distinct-bind", "self-join"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(elements=streams(16), body=st.sampled_from(MONOTONE), preset=st.sampled_from(sorted(PRESETS)),
       size=st.integers(1, 8), slide=st.integers(1, 6), t0=st.integers(0, 5))
def test_every_preset_from_presence_runs_equals_the_reference(elements, body, preset, size, slide, t0) -> None:
    query = csparql(BODIES[body], size, slide)
    sem = PRESETS[preset]
    reference = expected_answer(query, {S1: elements}, sem, (t0,), static=STATIC)
    fast = fast_expected_answers(query, {S1: elements}, sem, [(t0,)], static=STATIC)[(t0,)]
    assert isinstance(fast, DeltaAnswer)  # single window, monotone pattern: the delta path ran
    assert_same(reference, fast)
    assert list(fast.summary_rows()) == windows_summary(reference)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(elements=streams(16), body=st.sampled_from(MONOTONE), sem=semantics(), size=st.integers(1, 8),
       slide=st.integers(1, 6), t0=st.integers(0, 5))
@pytest.mark.slow
def test_random_semantics_from_presence_runs_equal_the_reference(elements, body, sem, size, slide, t0) -> None:
    query = csparql(BODIES[body], size, slide)
    reference = expected_answer(query, {S1: elements}, sem, (t0,), static=STATIC)
    fast = fast_expected_answers(query, {S1: elements}, sem, [(t0,)], static=STATIC)[(t0,)]
    assert_same(reference, fast)
    assert [e.time for e in reference.evaluations] == list(fast.evaluations[i].time for i in range(len(fast.evaluations)))


@settings(max_examples=100, deadline=None)
@given(elements=streams(20), sem=semantics(), size=st.integers(1, 9), slide=st.integers(1, 7), t0=st.integers(0, 6),
       extra_end=st.integers(0, 6))
@pytest.mark.slow
def test_evaluation_grid_equals_the_scalar_definition(elements, sem, size, slide, t0, extra_end) -> None:
    """Tuple tick included: every element a tick, several evaluations at one instant."""
    if not elements:
        return
    query = csparql(BODIES["filter"], size, slide)
    times = [e.t for e in elements]
    spec = window_specs(query, sem, (t0,))[0]
    end = times[-1] + extra_end
    scalar = evaluation_instants(times, spec, sem.report, tick=sem.tick, choice=sem.active_window,
                                 batch_size=sem.batch_size, start=spec.t0, end=end)
    grid = evaluation_grid(Timeline.of(times), spec, sem, end)
    assert [grid.evaluation(j) for j in range(len(grid))] == scalar


def test_a_mapping_enters_with_its_last_element_and_leaves_with_its_first() -> None:
    """Hand-checked: ?x :p ?v . ?x :r ?y joined across t=1 and t=3, window 5, tuple tick."""
    a, b = E.format("a"), E.format("b")
    elements = [StreamElement(a, E.format("p"), INT.format(2), 1), StreamElement(b, E.format("p"), INT.format(0), 2),
                StreamElement(a, E.format("r"), b, 3), StreamElement(b, E.format("p"), INT.format(3), 7)]
    query = csparql("SELECT ?x ?v ?y WHERE { ?x <http://e/p> ?v . ?x <http://e/r> ?y }", 5, 5)
    sem = PRESETS["cqels"]
    plan = compile_plan(query)
    table = annotate(plan, build_context(query, {S1: elements}, StaticData()))[0]
    grid = evaluation_grid(Timeline.of([e.t for e in elements]), window_specs(query, sem, (0,))[0], sem, 12)
    # ticks at 1, 2, 3 (window [0,5)), boundary 5 ([5,10) empty so far), tick 7, boundary 10 ([10,15) empty)
    assert grid.time.tolist() == [1, 2, 3, 5, 7, 10]
    runs = presence_runs(table, grid)
    assert (runs.first.tolist(), runs.last.tolist(), runs.count.tolist()) == ([2], [2], [1])  # in at 3, out at 5
    answer = fast_expected_answers(query, {S1: elements}, sem, [(0,)])[(0,)]
    assert [(e.time, e.operation, e.size) for e in answer.emissions] == [(3, "+", 1)]


def test_answers_are_computed_one_t0_at_a_time() -> None:
    computed: list[tuple[int, ...]] = []

    def compute(t0: tuple[int, ...]) -> object:
        computed.append(t0)
        return object()

    answers = LazyAnswers([(0,), (1,), (2,)], compute)
    assert computed == []
    first = answers[(0,)]
    assert answers[(0,)] is first and computed == [(0,)]
    answers[(1,)]
    assert computed == [(0,), (1,)] and answers._last is not None and answers._last[0] == (1,)
    with pytest.raises(KeyError):
        answers[(9,)]


# --- real clocks ------------------------------------------------------------------------------

EPOCH = 1_700_000_000_000


def _real_clock(count: int, start: int = EPOCH, step: int = 1000) -> list[StreamElement]:
    return [StreamElement(E.format("abc"[i % 3]), E.format("p"), INT.format(i % 4), start + i * step) for i in range(count)]


@pytest.mark.parametrize("preset", ["cqels", "csparql", "sparqlstream", "yabench-content-change"])
def test_epoch_milliseconds_with_t0_zero_cost_nothing_before_the_first_element(preset: str) -> None:
    elements = _real_clock(350)
    query = csparql(BODIES["filter"], 5000, 5000)
    sem = PRESETS[preset]
    answers = fast_expected_answers(query, {S1: elements}, sem, [(0,)], end=elements[-1].t + 5000)
    answer = answers[(0,)]
    assert len(answer.evaluations) > 0 and min(e.time for e in answer.evaluations) >= EPOCH
    assert_same(expected_answer(query, {S1: elements[:40]}, sem, (0,)),
                fast_expected_answers(query, {S1: elements[:40]}, sem, [(0,)])[(0,)])


def test_empty_windows_reported_from_zero_are_refused_with_what_to_ask_for() -> None:
    elements = _real_clock(5)
    query = csparql(BODIES["filter"], 5000, 5000)
    with pytest.raises(UserError, match="t0 near the stream's first element"):
        fast_expected_answers(query, {S1: elements}, PRESETS["yabench-window-close"], [(0,)])[(0,)]
    near = fast_expected_answers(query, {S1: elements}, PRESETS["yabench-window-close"], [(EPOCH,)],
                                 end=EPOCH + 10_000)[(EPOCH,)]
    assert [(e.window.open, e.window.close, e.size) for e in near.evaluations] == [
        (EPOCH, EPOCH + 5000, 5), (EPOCH + 5000, EPOCH + 10_000, 0)]


def test_the_largest_int64_time_is_answered() -> None:
    top = (1 << 63) - 1
    elements = [StreamElement(E.format("a"), E.format("p"), INT.format(2), top - 3000),
                StreamElement(E.format("b"), E.format("p"), INT.format(3), top)]
    query = csparql(BODIES["filter"], 5000, 5000)
    for preset in ("cqels", "csparql"):
        answer = fast_expected_answers(query, {S1: elements}, PRESETS[preset], [(0,)], end=top)[(0,)]
        assert all(e.time <= top for e in answer.evaluations)


# --- --out in the runs layout -------------------------------------------------------------------


def test_out_runs_layout_reads_back_every_t0(tmp_path: Path) -> None:
    from rsp_workbench.oracle.output import OracleOutput, write_expected_answers

    elements = [StreamElement(E.format("abc"[i % 3]), E.format("p"), INT.format(i % 4), i // 2) for i in range(40)]
    query = csparql(BODIES["filter"], 5, 5)
    for sem in (PRESETS["cqels"], PRESETS["csparql"], replace(PRESETS["cqels"], r2s=PRESETS["csparql"].r2s)):
        vectors = [(t,) for t in range(25)]  # above the per-t0 file limit: the compact layout
        answers = fast_expected_answers(query, {S1: elements}, sem, vectors)
        out = tmp_path / f"out-{sem.r2s.value}-{sem.tick.value}"
        write_expected_answers(out, answers, vectors, semantics=sem)
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["layout"] == "runs" and manifest["status"] == "complete"
        reader = OracleOutput(out)
        for t0 in (0, 7, 24):
            assert_same(expected_answer(query, {S1: elements}, sem, (t0,)), reader.answer(t0))


def test_out_runs_layout_from_relations_of_the_generic_path(tmp_path: Path) -> None:
    """Aggregates above the pattern: runs built from each evaluation's relation."""
    from rsp_workbench.oracle.output import OracleOutput, write_expected_answers

    elements = [StreamElement(E.format("abc"[i % 3]), E.format("p"), INT.format(i % 4), i // 2) for i in range(30)]
    query = csparql(BODIES["group-by"], 4, 2)
    sem = replace(PRESETS["csparql"], tick=Tick.TIME, report=ReportPolicy.parse("content-change"))
    vectors = [(t,) for t in range(22)]
    answers = fast_expected_answers(query, {S1: elements}, sem, vectors)
    write_expected_answers(tmp_path / "o", answers, vectors, semantics=sem)
    reader = OracleOutput(tmp_path / "o")
    for t0 in (0, 3):
        assert_same(expected_answer(query, {S1: elements}, sem, (t0,)), reader.answer(t0))


def test_grid_arrays_are_int64_throughout() -> None:
    elements = _real_clock(20, start=0, step=300)
    query = csparql(BODIES["filter"], 2000, 1000)
    grid = evaluation_grid(Timeline.of([e.t for e in elements]), window_specs(query, PRESETS["cqels"], (0,))[0],
                           PRESETS["cqels"], 9000)
    assert all(a.dtype == np.int64 for a in (grid.time, grid.sequence, grid.lo, grid.hi))


# --- the CLI -------------------------------------------------------------------------------------

from tests.oracle.cli_support import CORRECT_ANSWERS, check, oracle_args, relation  # noqa: E402


def test_oracle_out_many_t0_in_the_runs_layout(capsys: pytest.CaptureFixture[str], rooms: Path) -> None:
    from rsp_workbench.cli.main import main
    from rsp_workbench.oracle.output import OracleOutput
    from rsp_workbench.query.parser import parse_query
    from rsp_workbench.streams.readers import read_stream

    out = rooms / "expected"
    argv = oracle_args(rooms, "--out", str(out))
    argv[argv.index("csparql")] = "cqels"  # 100 admissible t0 (100 ms grid, 10 s slide)
    assert main(argv + ["--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["t0_candidates"] == 100 and "by_t0" not in payload
    reader = OracleOutput(out)
    assert len(reader.t0_values) == 100 and not (rooms / "expected.partial").exists()
    query = parse_query((rooms / "q.rq").read_text(), None)
    elements = list(read_stream(str(rooms / "stream"), "csrbench-dir", interval_ms=1000))
    for t0 in (0, 4200, 9900):
        reference = expected_answer(query, {query.streams[0]: elements}, PRESETS["cqels"], (t0,), end=payload["end"])
        assert_same(reference, reader.answer(t0))
    assert [row["time"] for row in payload["windows"]] == [e.time for e in reader.answer(0).evaluations]


def test_check_prunes_t0_by_the_engine_times_and_stops_at_the_first_match(
        capsys: pytest.CaptureFixture[str], rooms: Path) -> None:
    payload = check(capsys, rooms, "cqels", CORRECT_ANSWERS["cqels"])
    assert payload["verdict"] == "correct" and payload["t0"] == [0] and len(payload["admissible_t0"]) == 100
    wrong = [relation(3_000, ["r1"]), relation(13_500, ["r2"])]  # no t0 evaluates at 13.5 s
    payload = check(capsys, rooms, "cqels", wrong)
    divergence = payload["first_divergence"]
    assert payload["verdict"] == "incorrect" and (divergence["expected_time"], divergence["actual_time"]) == (13_000, 13_500)


def test_plausible_order_computes_no_relation() -> None:
    from collections import Counter

    from rsp_workbench.oracle.run import plausible_order
    from rsp_workbench.oracle.verdict import Relation

    elements = [StreamElement(E.format("a"), E.format("p"), INT.format(2), t) for t in (1000, 3000, 7000)]
    query = csparql(BODIES["filter"], 5000, 5000)
    vectors = [(t,) for t in range(0, 5000, 100)]
    answers = fast_expected_answers(query, {S1: elements}, PRESETS["cqels"], vectors)
    computed: list[tuple[int, ...]] = []
    original = answers._compute
    answers._compute = lambda v: computed.append(v) or original(v)
    binding = frozenset({("x", E.format("a")), ("v", INT.format(2))})
    order = list(plausible_order(answers, vectors, [Relation(5000, "+", Counter({binding: 1}))], 0))
    assert computed == [] and order == [(0,)]  # only t0 = 0 evaluates at 5 s (its second window opens)
    assert len(list(plausible_order(answers, vectors, [Relation(5001, "+", Counter())], 0))) == 3  # the closest 3
    grids: list[tuple[int, ...]] = []
    times = answers._times
    answers._times = lambda v: grids.append(v) or times(v)
    lazy = plausible_order(answers, vectors, [Relation(3000, "+", Counter({binding: 1}))], 0)
    assert next(lazy) == (0,) and grids == [(0,)]  # found lazily: one grid computed so far


def test_distinct_support_pairs_are_counted_in_order_and_row_numbers_checked_distinct() -> None:
    """The vectorised answers group the rows' supports ``(dmin, dmax)`` (distinct-timestamp indices;
    -1 and size + 1 mark open ends) and need every row and mapping number once."""
    from rsp_workbench.oracle.annotated import all_distinct
    from rsp_workbench.oracle.answers import distinct_pairs

    size = 4
    dmin = np.array([2, 5, 0, 2, -1, 0, 2])
    dmax = np.array([3, -1, 0, 3, 3, 0, 2])
    lows, highs, counts = distinct_pairs(dmin, dmax, size)
    assert list(zip(lows.tolist(), highs.tolist(), counts.tolist())) == [
        (-1, 3, 1), (0, 0, 2), (2, 2, 1), (2, 3, 2), (5, -1, 1)]
    assert [len(a) for a in distinct_pairs(np.array([], np.int64), np.array([], np.int64), size)] == [0, 0, 0]
    assert all_distinct(np.array([2, 0, 1])) and all_distinct(np.array([], np.int64))
    assert not all_distinct(np.array([0, 2, 2]))
