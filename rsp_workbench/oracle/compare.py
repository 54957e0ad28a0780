"""Comparing relations: numeric literals by value, bags with a stated tolerance.

Engines print numbers differently (an AVG as ``xsd:decimal`` 87.666… in one engine, an
``xsd:double`` in another); the oracle follows SPARQL 1.1 but compares numeric literals
*by value*: two numeric literals match when |a − b| ≤ ``abs_tol`` + ``rel_tol``·max(|a|, |b|).
Everything else is compared as N-Triples text.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Hashable, Iterable, cast

from rsp_workbench.responses.model import SolutionMapping
from rsp_workbench.streams.terms import split_literal

XSD = "http://www.w3.org/2001/XMLSchema#"
NUMERIC_DATATYPES = frozenset(
    XSD + name
    for name in (
        "integer", "decimal", "float", "double", "int", "long", "short", "byte", "nonNegativeInteger",
        "positiveInteger", "negativeInteger", "nonPositiveInteger", "unsignedInt", "unsignedLong",
        "unsignedShort", "unsignedByte",
    )
)



def as_mapping(key: Hashable) -> SolutionMapping:
    """A bag's key as the solution mapping it is: the core keeps the keys of its bags opaque
    (``Counter[Hashable]``: any hashable works for R2S); the oracle's relations hold mappings."""
    return cast(SolutionMapping, key)


@dataclass(frozen=True)
class Tolerance:
    """How close two numeric literals must be to count as equal (stated in every verdict)."""

    rel_tol: float = 1e-9
    abs_tol: float = 1e-9

    def close(self, a: float, b: float) -> bool:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=self.rel_tol, abs_tol=self.abs_tol)

    def describe(self) -> str:
        return f"numeric literals equal when |a-b| <= {self.abs_tol:g} + {self.rel_tol:g}*max(|a|,|b|)"


def numeric_value(term: str) -> float | None:
    """The value of a numeric literal, or None for any other term."""
    if not term.startswith('"'):
        return None
    try:
        lexical, datatype, _ = split_literal(term)
    except ValueError:
        return None
    if datatype not in NUMERIC_DATATYPES:
        return None
    try:
        return float(lexical)
    except ValueError:
        return None


def _shape(mapping: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Non-numeric part of a mapping (numeric values replaced by a marker), for grouping."""
    return tuple(sorted((var, "#num" if numeric_value(term) is not None else term) for var, term in mapping))


def _numbers(mapping: Iterable[tuple[str, str]]) -> tuple[float, ...]:
    values = []
    for _, term in sorted(mapping):
        value = numeric_value(term)
        if value is not None:
            values.append(value)
    return tuple(values)


def mappings_equal(left: Iterable[tuple[str, str]], right: Iterable[tuple[str, str]], tolerance: Tolerance) -> bool:
    left_items, right_items = sorted(left), sorted(right)
    if len(left_items) != len(right_items):
        return False
    for (lvar, lterm), (rvar, rterm) in zip(left_items, right_items):
        if lvar != rvar:
            return False
        if lterm == rterm:
            continue
        lnum, rnum = numeric_value(lterm), numeric_value(rterm)
        if lnum is None or rnum is None or not tolerance.close(lnum, rnum):
            return False
    return True


@dataclass(frozen=True)
class BagDifference:
    """What one bag lacks and has too many of, relative to the expected bag."""

    missing: Counter[Hashable]  # expected but not produced
    extra: Counter[Hashable]  # produced but not expected

    @property
    def equal(self) -> bool:
        return not self.missing and not self.extra


def compare_bags(
    expected: Counter[Hashable], actual: Counter[Hashable], tolerance: Tolerance = Tolerance()
) -> tuple[BagDifference, int]:
    """Multiset comparison with numeric tolerance: (missing/extra, number matched).

    Exact matches are taken first; leftovers are paired when equal within tolerance.
    """
    common = expected & actual
    missing = expected - common
    extra = actual - common
    matched = sum(common.values())
    if missing and extra:
        by_shape: dict[tuple[tuple[str, str], ...], list[Hashable]] = {}
        for mapping, count in extra.items():
            by_shape.setdefault(_shape(as_mapping(mapping)), []).extend([mapping] * count)
        still_missing: Counter[Hashable] = Counter()
        for mapping, count in missing.items():
            candidates = by_shape.get(_shape(as_mapping(mapping)), [])
            for _ in range(count):
                for index, candidate in enumerate(candidates):
                    if mappings_equal(as_mapping(mapping), as_mapping(candidate), tolerance):
                        extra[candidate] -= 1
                        candidates.pop(index)
                        matched += 1
                        break
                else:
                    still_missing[mapping] += 1
        missing = still_missing
        extra = +extra
    return BagDifference(missing, extra), matched


def as_set(bag: Counter[Hashable]) -> Counter[Hashable]:
    """Set semantics (CSRBench compares relations as sets of bindings)."""
    return Counter({mapping: 1 for mapping in bag})
