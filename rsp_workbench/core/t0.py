"""Admissible t0 values and the comparison start t_s (RSP-QL Theorem 1, Def. 25/26).

An engine hides t0. Theorem 1: windows with t0 = a and t0 = a + nβ coincide from
a + nβ on, so only ``{a, a+u, …, a+β−u}`` (u = time unit) need to be tried per window,
where ``a`` is the registration time. With several windows the candidates are the
Cartesian product; the comparison starts at t_s = the largest admissible t0 of any window.
"""

from __future__ import annotations

import itertools
from typing import Iterator, Sequence

from rsp_workbench.errors import UserError


def admissible_t0(registration: int, slide: int, unit: int = 1) -> list[int]:
    """``{a, a+u, …, a+β−u}`` in ms: one candidate per time unit within one slide."""
    if unit <= 0:
        raise UserError(f"time unit must be positive, got {unit}", field="time_unit")
    if slide <= 0:
        raise UserError(f"slide must be positive, got {slide}", field="slide")
    count = max(1, -(-slide // unit))  # a slide shorter than the unit still has one candidate
    return [registration + i * unit for i in range(count)]


def admissible_t0_vectors(registration: int, slides: Sequence[int], unit: int = 1) -> Iterator[tuple[int, ...]]:
    """The set Z of RSP-QL Def. 25: one t0 per window, Cartesian product."""
    return itertools.product(*(admissible_t0(registration, slide, unit) for slide in slides))


def comparison_start(registration: int, slides: Sequence[int], unit: int = 1) -> int:
    """t_s = max of all admissible t0 values (RSP-QL Def. 26); transients before are cut off."""
    return max(max(admissible_t0(registration, slide, unit)) for slide in slides)
