"""chain-join: match probability, skew, rate and bursts, determinism, parameter errors."""

from __future__ import annotations

from collections import Counter

import pytest

from rsp_workbench.errors import UserError
from rsp_workbench.generators import chain_join as cj
from rsp_workbench.generators import generator_spec

BASE = {"duration": "10s", "rate": 1000, "keys": 200, "seed": 11}
AB, BC, CD = cj.PREDICATES


def match_fractions(elements) -> tuple[float, float]:
    """Fraction of :bc (:cd) triples whose subject is an earlier :ab (:bc) object."""
    seen = {AB: set(), BC: set()}
    hits = Counter()
    totals = Counter()
    for e in elements:
        if e.predicate in (BC, CD):
            partner = AB if e.predicate == BC else BC
            totals[e.predicate] += 1
            hits[e.predicate] += e.subject in seen[partner]
        if e.predicate in seen:
            seen[e.predicate].add(e.object)
    return hits[BC] / totals[BC], hits[CD] / totals[CD]


def test_spec_is_registered() -> None:
    names = {p.name for p in generator_spec("chain-join").params}
    assert {"match_probability", "keys", "distribution", "rate", "burst_every", "duration", "seed"} <= names


@pytest.mark.parametrize("probability", [0.0, 0.3, 0.8])
def test_match_probability_is_roughly_as_asked(probability: float) -> None:
    bc, cd = match_fractions(cj.iter_elements({**BASE, "match_probability": probability}))
    assert bc == pytest.approx(probability, abs=0.03)
    assert cd == pytest.approx(probability, abs=0.03)


def test_predicates_are_balanced_and_rate_is_kept() -> None:
    elements = list(cj.iter_elements(BASE))
    assert len(elements) == 10_000 == cj.estimate_elements(BASE)
    counts = Counter(e.predicate for e in elements)
    assert all(3000 < counts[p] < 3700 for p in cj.PREDICATES)
    per_tick = Counter(e.t for e in elements)
    assert set(per_tick.values()) == {100} and min(per_tick) == 0 and max(per_tick) == 9900


def test_zipf_makes_key_frequencies_uneven() -> None:
    def subject_counts(params: dict) -> list[int]:
        counts = Counter(e.subject for e in cj.iter_elements(params) if e.predicate == AB)
        return sorted(counts.values(), reverse=True)

    uniform = subject_counts(BASE)
    skewed = subject_counts({**BASE, "distribution": "zipf", "zipf_exponent": 1.2})
    assert uniform[0] < 3 * uniform[len(uniform) // 2]
    assert skewed[0] > 20 * skewed[len(skewed) // 2]


def test_bursts_multiply_the_rate() -> None:
    params = {"duration": "2s", "rate": 100, "burst_every": "1s", "burst_length": "200ms", "burst_factor": 5}
    assert list(cj.tick_sizes(params)) == [
        (t, 50 if t % 1000 < 200 else 10) for t in range(0, 2000, 100)
    ]
    assert Counter(e.t for e in cj.iter_elements(params))[1000] == 50


def test_fractional_rates_carry_over() -> None:
    sizes = [n for _, n in cj.tick_sizes({"duration": "1s", "rate": 15, "tick": "100ms"})]
    assert sizes == [1, 2, 1, 2, 1, 2, 1, 2, 1, 2]


def test_deterministic_by_seed() -> None:
    small = {**BASE, "duration": "1s"}
    assert list(cj.iter_elements(small)) == list(cj.iter_elements(small))
    assert list(cj.iter_elements(small)) != list(cj.iter_elements({**small, "seed": 12}))


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"rate": 0}, "param rate"),
        ({"rate": -5}, "param rate"),
        ({"tick": 0}, "param tick"),
        ({"keys": 0}, "param keys"),
        ({"match_probability": 1.2}, "param match_probability"),
        ({"distribution": "pareto"}, "param distribution"),
        ({"distribution": "zipf", "zipf_exponent": 0}, "param zipf_exponent"),
        ({"burst_every": "1s", "burst_length": "2s"}, "param burst_length"),
        ({"burst_every": "1s"}, "param burst_length"),
        ({"burst_length": "1s"}, "param burst_every"),
    ],
)
def test_invalid_parameters_name_the_parameter(override: dict, field: str) -> None:
    with pytest.raises(UserError) as info:
        cj.check_params({**BASE, **override})
    assert info.value.field == field
