"""Windows, scope and t0: RSP-QL Examples 6, 7, 11 and Theorem 1, hand-checked."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsp_workbench.core.report import content_at
from rsp_workbench.core.semantics import ActiveWindowChoice, BorderConvention
from rsp_workbench.core.t0 import admissible_t0, admissible_t0_vectors, comparison_start
from rsp_workbench.core.time import TimeUnit, format_duration, parse_duration
from rsp_workbench.core.windows import WindowSpec, content_range
from rsp_workbench.errors import UserError

# RSP-QL Example 3: S_nearby (times in the paper's abstract units, used as ms here)
S_NEARBY = [
    ("diana", "a", 2),
    ("eve", "b", 2),
    ("carl", "a", 5),
    ("eve", "a", 7),
    ("diana", "b", 12),
]
NEARBY_TIMES = [t for _, _, t in S_NEARBY]

OC = BorderConvention.OPEN_CLOSED


def names(lo: int, hi: int) -> list[tuple[str, str]]:
    return [(who, shop) for who, shop, _ in S_NEARBY[lo:hi]]


def test_example_6_time_based_window_4_8() -> None:
    """RSP-QL Example 6: W(S_nearby) with o=4, c=8 holds carl@a and eve@a."""
    assert names(*content_range(NEARBY_TIMES, 4, 8, OC)) == [("carl", "a"), ("eve", "a")]


def test_example_7_windows_of_sliding_window() -> None:
    """RSP-QL Example 7: (α=5, β=2, t0=1) → (1,6], (3,8], (5,10], …"""
    spec = WindowSpec(size=5, slide=2, t0=1, border=OC)
    assert [(w.open, w.close) for w in spec.closing_within(0, 10)] == [(1, 6), (3, 8), (5, 10)]
    assert [str(w) for w in spec.closing_within(0, 10)] == ["(1, 6]", "(3, 8]", "(5, 10]"]


def test_example_7_present_window_at_9_earliest() -> None:
    """At t=9 the paper's present window is W3 = (5,10], holding only :eve :isNearby :a.

    This is the window with the *earliest* opening time among those containing 9
    (SECRET's active window), which is what the paper's numbers compute.
    """
    spec = WindowSpec(size=5, slide=2, t0=1, border=OC)
    window, lo, hi = content_at(NEARBY_TIMES, spec, 9, ActiveWindowChoice.EARLIEST)
    assert window is not None and (window.open, window.close) == (5, 10)
    assert names(lo, hi) == [("eve", "a")]


def test_example_7_present_window_at_9_latest() -> None:
    """The literal RSP-QL definition (most recent opening time) picks (9,14] at t=9.

    Its sub-window (9, 9] is empty (and so would (7, 9] be, had the window opening at 9
    been excluded): the paper's example and its formal definition disagree; the
    workbench offers both (``active_window: earliest|latest``).
    """
    spec = WindowSpec(size=5, slide=2, t0=1, border=OC)
    window, lo, hi = content_at(NEARBY_TIMES, spec, 9, ActiveWindowChoice.LATEST)
    assert window is not None and (window.open, window.close) == (9, 14)
    assert names(lo, hi) == []


def test_example_11_first_window_depends_on_t0() -> None:
    """RSP-QL Example 11 (α=5, β=2): the first window's content for t0 = 0, 1, 2.

    Fig. 4 is not in the text; with S_nearby and open-closed windows: t0=0 → (0,5] holds
    the elements at 2, 2, 5; t0=1 → (1,6] the same three; t0=2 → (2,7] holds 5 and 7.
    """
    firsts = {}
    for t0 in (0, 1, 2):
        first = WindowSpec(5, 2, t0, OC).window(0)
        firsts[t0] = [t for t in NEARBY_TIMES[slice(*first.position_range(NEARBY_TIMES))]]
    assert firsts == {0: [2, 2, 5], 1: [2, 2, 5], 2: [5, 7]}


@pytest.mark.parametrize(
    ("border", "expected"),
    [
        (BorderConvention.CLOSED_OPEN, [2, 2, 5]),  # [2, 7)
        (BorderConvention.OPEN_CLOSED, [5, 7]),  # (2, 7]
        (BorderConvention.CLOSED, [2, 2, 5, 7]),  # [2, 7]
    ],
)
def test_border_conventions(border: BorderConvention, expected: list[int]) -> None:
    lo, hi = content_range(NEARBY_TIMES, 2, 7, border)
    assert NEARBY_TIMES[lo:hi] == expected


def test_yabench_leading_partial_windows() -> None:
    """YABench's window-close oracle: [max(0, iβ−ω), iβ] for i ≥ 1 (ω=5, β=2)."""
    spec = WindowSpec(5, 2, 0, BorderConvention.CLOSED, leading_partial=True)
    assert [(w.open, w.close) for w in spec.closing_within(0, 10)] == [(0, 2), (0, 4), (1, 6), (3, 8), (5, 10)]


def test_hopping_window_has_gaps() -> None:
    spec = WindowSpec(size=2, slide=5, t0=0)
    assert spec.kind == "hopping"
    assert spec.active(3) is None
    assert spec.active(1) is not None


def test_invalid_window_spec() -> None:
    with pytest.raises(UserError, match="slide must be positive"):
        WindowSpec(5, 0)


def test_admissible_t0_csparql_rooms() -> None:
    """β = 10 s with a 1 s time unit: t0 ∈ {a, a+1s, …, a+9s}; t_s = a + 9 s."""
    assert admissible_t0(0, 10_000, 1000) == [i * 1000 for i in range(10)]
    assert comparison_start(0, [10_000], 1000) == 9000
    assert admissible_t0(500, 300, 100) == [500, 600, 700]


def test_admissible_t0_several_windows() -> None:
    """RSP-QL Def. 25: Z is the Cartesian product (Example 10's windows: β=2 and β=2)."""
    assert len(list(admissible_t0_vectors(0, [2, 3]))) == 6
    assert comparison_start(0, [2, 3]) == 2


def test_durations() -> None:
    assert parse_duration("10s") == 10_000
    assert parse_duration("PT10S") == 10_000
    assert parse_duration("PT0.5S") == 500
    assert parse_duration("1m") == 60_000
    assert parse_duration("2h") == 7_200_000
    assert parse_duration(5, default_unit="s") == 5000
    assert format_duration(300_000) == "5m"
    assert TimeUnit.parse("100ms").millis == 100
    with pytest.raises(UserError, match="invalid duration"):
        parse_duration("ten seconds")


def present(
    times: list[int], spec: WindowSpec, t: int, choice: ActiveWindowChoice = ActiveWindowChoice.LATEST
) -> list[int]:
    """The timestamps of the window content an evaluation at t reads."""
    _, lo, hi = content_at(times, spec, t, choice)
    return times[lo:hi]


times_strategy = st.lists(st.integers(0, 200), max_size=40).map(sorted)


@settings(max_examples=200, deadline=None)
@given(
    times=times_strategy,
    size=st.integers(1, 30),
    slide=st.integers(1, 30),
    a=st.integers(0, 20),
    n=st.integers(0, 5),
    border=st.sampled_from(list(BorderConvention)),
)
def test_theorem_1_present_window(
    times: list[int], size: int, slide: int, a: int, n: int, border: BorderConvention
) -> None:
    """RSP-QL Theorem 1: t0 = a and t0 = a + nβ give the same present window content from a + nβ on."""
    early, late = WindowSpec(size, slide, a, border), WindowSpec(size, slide, a + n * slide, border)
    for t in range(a + n * slide, a + n * slide + 3 * max(size, slide)):
        assert present(times, early, t) == present(times, late, t)


@settings(max_examples=200, deadline=None)
@given(
    times=times_strategy,
    size=st.integers(1, 30),
    slide=st.integers(1, 30),
    a=st.integers(0, 20),
    n=st.integers(0, 5),
    border=st.sampled_from(list(BorderConvention)),
)
@pytest.mark.slow
def test_theorem_1_earliest_window_after_transient(
    times: list[int], size: int, slide: int, a: int, n: int, border: BorderConvention
) -> None:
    """With SECRET's earliest active window the windows opened before a + nβ still
    report; the two grids agree once those have closed (from a + nβ + ω on)."""
    early, late = WindowSpec(size, slide, a, border), WindowSpec(size, slide, a + n * slide, border)
    start = a + n * slide + size + 1
    for t in range(start, start + 3 * max(size, slide)):
        assert present(times, early, t, ActiveWindowChoice.EARLIEST) == present(times, late, t, ActiveWindowChoice.EARLIEST)
    closes_early = {(w.open, w.close) for w in early.closing_within(a + n * slide + size, 400)}
    closes_late = {(w.open, w.close) for w in late.closing_within(a + n * slide + size, 400)}
    assert closes_early == closes_late
