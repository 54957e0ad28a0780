"""Verdicts in strict and csrbench modes, numeric tolerance, per-window quality, gracious mode."""

from __future__ import annotations

from collections import Counter

from rsp_workbench.oracle.compare import Tolerance, compare_bags
from rsp_workbench.oracle.quality import ExpectedWindow, boxplots_text, precision_recall, window_quality
from rsp_workbench.oracle.verdict import Relation, judge, regroup_by_time

XSD = "http://www.w3.org/2001/XMLSchema#"


def m(**values: str) -> frozenset[tuple[str, str]]:
    return frozenset(values.items())


def rel(time: int | None, *mappings: frozenset[tuple[str, str]], op: str = "=") -> Relation:
    return Relation(time, op, Counter(mappings))


R1, R2 = m(room="<http://ex.org/r1>"), m(room="<http://ex.org/r2>")


def test_numeric_literals_compare_by_value() -> None:
    decimal = m(avg=f'"87.666666666666666667"^^<{XSD}decimal>')
    double = m(avg=f'"8.766666666666667E1"^^<{XSD}double>')
    difference, matched = compare_bags(Counter([decimal]), Counter([double]), Tolerance())
    assert difference.equal and matched == 1
    other = m(avg=f'"87.7"^^<{XSD}double>')
    difference, matched = compare_bags(Counter([decimal]), Counter([other]), Tolerance())
    assert not difference.equal and matched == 0


def test_strict_correct_for_one_t0_not_another() -> None:
    oracle = {0: [rel(10_000, R1), rel(20_000, R2)], 2000: []}
    verdict = judge([rel(10_000, R1), rel(20_000, R2)], oracle, mode="strict", comparison_start=0)
    assert verdict.correct and verdict.matching_t0 == (0,)
    wrong = judge([rel(10_000, R2)], oracle, mode="strict", comparison_start=0)
    assert not wrong.correct
    divergence = wrong.first_divergence
    assert divergence is not None and divergence.t0 == 0 and divergence.index == 0
    assert divergence.missing == Counter([R1]) and divergence.extra == Counter([R2])


def test_strict_bag_semantics_counts_duplicates() -> None:
    oracle = {0: [rel(5, R1, R1)]}
    assert not judge([rel(5, R1)], oracle).correct
    assert judge([Relation(5, "=", Counter({R1: 2}))], oracle).correct


def test_strict_cuts_the_transient_before_t_s() -> None:
    oracle = {0: [rel(5, R1), rel(15, R2)]}
    engine = [rel(3, R2), rel(15, R2)]  # the first relation is before t_s = 9
    assert judge(engine, oracle, comparison_start=9).correct
    assert not judge(engine, oracle, comparison_start=0).correct


def test_strict_checks_evaluation_times_when_reported() -> None:
    oracle = {0: [rel(10, R1)]}
    verdict = judge([rel(11, R1)], oracle)
    assert not verdict.correct and "instead of 10" in verdict.first_divergence.reason  # type: ignore[union-attr]
    assert judge([rel(None, R1)], oracle).correct  # no application times: not compared


def test_csrbench_mode_contiguous_run_sets_empty_matches() -> None:
    oracle = {0: [rel(10, R1), rel(20, R2), rel(30, R1)]}
    assert judge([rel(None, R2), rel(None, R1, R1)], oracle, mode="csrbench").correct  # run, as sets
    assert judge([], oracle, mode="csrbench").correct  # an empty answer matches
    assert not judge([rel(None, R2), rel(None, R2)], oracle, mode="csrbench").correct


def test_regroup_by_time_for_one_relation_per_mapping() -> None:
    grouped = regroup_by_time([rel(3, R1, op="+"), rel(3, R2, op="+"), rel(4, R1, op="+")])
    assert [(r.time, r.size) for r in grouped] == [(3, 2), (4, 1)]


def test_precision_recall_multisets_and_vacuous_cases() -> None:
    assert precision_recall(Counter({R1: 2, R2: 1}), Counter({R1: 1})) == (1.0, 1 / 3)
    assert precision_recall(Counter(), Counter()) == (1.0, 1.0)
    assert precision_recall(Counter([R1]), Counter()) == (1.0, 0.0)


def test_yabench_fig5_shifted_window_and_gracious_reconstruction() -> None:
    """YABench Fig. 5: the engine's window is shifted; gracious mode finds its borders."""
    elements = {1: m(s="s1"), 4: m(s="s2"), 6: m(s="s3"), 7: m(s="s4")}  # one result per element

    def expected_for(start: int, end: int) -> Counter[frozenset[tuple[str, str]]]:
        return Counter(mapping for t, mapping in elements.items() if start <= t <= end)

    window = ExpectedWindow(0, 5, expected_for(0, 5), triples=2, report_time=5)
    actual = Counter([elements[4], elements[6], elements[7]])  # engine used [2, 7]
    [plain] = window_quality([window], [(5120, actual)])
    assert (plain.precision, plain.recall) == (1 / 3, 1 / 2)
    assert plain.delay == 5115
    [gracious] = window_quality(
        [window], [(5120, actual)], gracious=True, expected_for=expected_for, timestamps=sorted(elements)
    )
    assert (gracious.precision, gracious.recall) == (1.0, 1.0)
    assert (gracious.reconstructed_start, gracious.reconstructed_end) == (4, 7)
    assert gracious.oracle_line() == "1.0,1.0,3,3,2,4,7,5115"


def test_boxplots_file_format() -> None:
    window = ExpectedWindow(0, 5, Counter([R1]), 1, 5)
    runs = [window_quality([window], [(7, Counter([R1]))]), window_quality([window], [(9, Counter())])]
    assert boxplots_text("cqels", runs) == "cqels\n1.0,1.0;1.0,0.0;2,4\n"
