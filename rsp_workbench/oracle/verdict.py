"""Correctness verdicts (RSP-QL Def. 25/26) in two matching modes, with an explanation.

* ``strict`` (default): from t_s on, the engine's sequence of relations equals the
  oracle's for some admissible t0: same number of evaluations, each the same *bag* of
  solution mappings (numeric literals by value, see :mod:`compare`); evaluation times are
  compared too when the engine reports application times.
* ``csrbench``: the tolerance of the original CSRBench oracle: the engine's list of
  relations must be a contiguous run, anywhere, inside the oracle's list for some t0;
  relations compared as *sets*; timestamps ignored; an empty answer matches.

When no t0 matches, the verdict explains the closest t0: the first evaluation where the
engine diverges, with the missing and the extra bindings.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Collection, Hashable, Mapping, Sequence

from rsp_workbench.oracle.compare import Tolerance, as_mapping, as_set, compare_bags

MATCH_MODES = ("strict", "csrbench")


@dataclass(frozen=True)
class Relation:
    """One evaluation's output: its time (application ms, if known), operation, bag."""

    time: int | None
    operation: str
    bindings: Counter[Hashable]

    @property
    def size(self) -> int:
        return sum(self.bindings.values())


@dataclass(frozen=True)
class Divergence:
    """Where an engine's answer first departs from the oracle's (for one t0)."""

    t0: int | tuple[int, ...] | None  # None: no admissible t0 to compare with
    index: int  # position in the compared sequences (0-based, from t_s on)
    expected_time: int | None
    actual_time: int | None
    missing: Counter[Hashable]
    extra: Counter[Hashable]
    reason: str
    matched_before: int  # relations that matched before the divergence

    def to_json(self) -> dict[str, Any]:
        return {
            "t0": list(self.t0) if isinstance(self.t0, tuple) else self.t0,
            "index": self.index,
            "expected_time": self.expected_time,
            "actual_time": self.actual_time,
            "reason": self.reason,
            "matched_before": self.matched_before,
            "missing": mappings_to_json(self.missing),
            "extra": mappings_to_json(self.extra),
        }

    @classmethod
    def from_json(cls, payload: Mapping[str, Any]) -> "Divergence":
        """The inverse of :meth:`to_json` (a verdict read back from ``oracle.json`` or a judgement)."""
        t0 = payload.get("t0")
        return cls(
            tuple(t0) if isinstance(t0, list) else t0, int(payload.get("index", 0)), payload.get("expected_time"),
            payload.get("actual_time"), mappings_from_json(payload.get("missing") or []),
            mappings_from_json(payload.get("extra") or []), str(payload.get("reason", "")),
            int(payload.get("matched_before", 0)),
        )


def mappings_to_json(bag: Counter[Hashable]) -> list[dict[str, Any]]:
    rows = []
    for mapping, count in sorted(bag.items(), key=lambda item: sorted(as_mapping(item[0]))):
        row: dict[str, Any] = {"binding": dict(sorted(as_mapping(mapping)))}
        if count != 1:
            row["count"] = count
        rows.append(row)
    return rows


def mappings_from_json(rows: Sequence[Mapping[str, Any]]) -> Counter[Hashable]:
    """The bag that :func:`mappings_to_json` wrote."""
    return Counter({frozenset(row["binding"].items()): int(row.get("count", 1)) for row in rows})


@dataclass(frozen=True)
class Verdict:
    correct: bool
    mode: str
    matching_t0: tuple[Any, ...]
    first_divergence: Divergence | None
    comparison_start: int | None
    tolerance: Tolerance = field(default_factory=Tolerance)
    compared: int = 0  # engine relations compared

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": "correct" if self.correct else "incorrect",
            "match": self.mode,
            "t0": [list(t) if isinstance(t, tuple) else t for t in self.matching_t0],
            "t_s": self.comparison_start,
            "first_divergence": self.first_divergence.to_json() if self.first_divergence else None,
            "compared_relations": self.compared,
            "tolerance": self.tolerance.describe(),
        }


def _strict_against(
    t0: Any,
    engine: Sequence[Relation],
    oracle: Sequence[Relation],
    t_s: int,
    tolerance: Tolerance,
) -> Divergence | None:
    expected = [r for r in oracle if r.time is None or r.time >= t_s]
    engine_has_times = all(r.time is not None for r in engine)
    if engine_has_times:
        actual = [r for r in engine if r.time is not None and r.time >= t_s]
    else:
        # without application times, the engine's transient prefix is whatever precedes
        # the part that can correspond to the oracle's relations from t_s on
        surplus = len(engine) - len(expected)
        actual = list(engine[surplus:]) if surplus > 0 else list(engine)
    for index in range(max(len(expected), len(actual))):
        want = expected[index] if index < len(expected) else None
        got = actual[index] if index < len(actual) else None
        if want is None or got is None:
            reason = "the engine answered fewer times than expected" if got is None else "the engine answered more times than expected"
            return Divergence(
                t0, index, want.time if want else None, got.time if got else None,
                Counter(want.bindings) if want else Counter(), Counter(got.bindings) if got else Counter(),
                reason, index,
            )
        difference, _ = compare_bags(want.bindings, got.bindings, tolerance)
        if not difference.equal:
            return Divergence(t0, index, want.time, got.time, difference.missing, difference.extra,
                              "different bindings", index)
        if engine_has_times and want.time is not None and got.time != want.time:
            return Divergence(t0, index, want.time, got.time, Counter(), Counter(),
                              f"evaluated at {got.time} instead of {want.time}", index)
    return None


def _csrbench_against(
    t0: Any, engine: Sequence[Relation], oracle: Sequence[Relation], tolerance: Tolerance
) -> Divergence | None:
    """Contiguous run of the engine's relations (as sets) anywhere in the oracle's list.

    Offsets where the engine's list would run past the oracle's end cannot match, but are
    tried for the closest divergence: an answer whose tail the oracle does not expect
    (relations after the last expected one) diverges at the first relation of that tail.
    """
    if not engine:
        return None
    actual = [as_set(r.bindings) for r in engine]
    expected = [as_set(r.bindings) for r in oracle]
    best: Divergence | None = None
    for offset in range(max(1, len(expected))):
        for index, got in enumerate(actual):
            position = offset + index
            want = expected[position] if position < len(expected) else None
            if want is None:
                divergence = Divergence(t0, index, None, engine[index].time, Counter(), got,
                                        "the engine answered more times than expected", index)
                break
            difference, _ = compare_bags(want, got, tolerance)
            if not difference.equal:
                divergence = Divergence(t0, index, oracle[position].time, engine[index].time,
                                        difference.missing, difference.extra, "different bindings", index)
                break
        else:
            return None
        if best is None or divergence.matched_before > best.matched_before:
            best = divergence
    if best is not None and len(actual) > len(expected) and best.reason == "different bindings":
        # whatever the bindings, no contiguous run of the oracle's list is that long
        best = replace(best, reason=f"different bindings (and the engine answered {len(actual)} times, "
                                    f"{len(expected)} expected for this t0)")
    return best


def malformed(engine: Sequence[Relation], variables: Collection[str] | None = None) -> tuple[int, str, Counter[Hashable]] | None:
    """The first relation an engine could not have meant as an answer, as (index, reason, its
    offending bindings): one without a timestamp among timestamped ones, or one that binds a
    variable the query does not project (``variables``). None when every relation is well formed."""
    timed = [r.time is not None for r in engine]
    untimed_at = timed.index(False) if any(timed) and not all(timed) else None
    for index, relation in enumerate(engine):
        if index == untimed_at:
            return (index, f"relation #{index} has no timestamp (the engine's other relations have one)",
                    Counter(relation.bindings))
        if variables is not None:
            unknown = {var for mapping in relation.bindings for var, _ in as_mapping(mapping) if var not in variables}
            if unknown:
                names = ", ".join(f"?{v}" for v in sorted(unknown))
                bad = Counter({m: c for m, c in relation.bindings.items() if any(v in unknown for v, _ in as_mapping(m))})
                return index, f"relation #{index} binds {names}, which the query does not project", bad
    return None


def judge(
    engine: Sequence[Relation],
    candidates: Mapping[Any, Sequence[Relation]],
    *,
    mode: str = "strict",
    comparison_start: int = 0,
    tolerance: Tolerance = Tolerance(),
    stop_at_first: bool = False,
    content_class: Callable[[Any], Hashable | None] | None = None,
    variables: Collection[str] | None = None,
) -> Verdict:
    """Decide correct/incorrect against the oracle's answer for every admissible t0.

    A malformed answer (`malformed`: a relation without a timestamp among timestamped ones,
    bindings of variables outside ``variables``) is incorrect, diverging at that relation.

    ``candidates`` maps each admissible t0 (or t0 vector) to the oracle's relations; it
    may compute them lazily (only one candidate's relations are held at a time here).
    ``stop_at_first``: the verdict names the first matching t0 only and computes no more.
    ``content_class(t0)``: a key shared by t0 whose relations are the same at other
    instants; CSRBench matching ignores instants, so such a t0 matches exactly when the
    first of its class did, and if not it is no closer (same matched prefix): its relations
    are never computed.
    """
    if mode not in MATCH_MODES:
        raise ValueError(f"unknown match mode {mode!r}")
    bad = malformed(engine, variables)
    if bad is not None:  # a wrong answer whatever the t0: named, never skipped or compared around
        index, reason, bindings = bad
        t0 = next(iter(candidates), None)
        return Verdict(correct=False, mode=mode, matching_t0=(), comparison_start=comparison_start if mode == "strict" else None,
                       first_divergence=Divergence(t0, index, None, engine[index].time, Counter(), bindings, reason, 0),
                       tolerance=tolerance, compared=len(engine))
    matching: list[Any] = []
    closest: Divergence | None = None
    outcomes: dict[Hashable, bool] = {}  # content class -> matched (CSRBench matching)
    for t0 in candidates:
        key = content_class(t0) if content_class is not None and mode != "strict" else None
        if key is not None and key in outcomes:
            if outcomes[key]:
                matching.append(t0)
            continue
        oracle = candidates[t0]
        if mode == "strict":
            divergence = _strict_against(t0, engine, oracle, comparison_start, tolerance)
        else:
            divergence = _csrbench_against(t0, engine, oracle, tolerance)
        if key is not None:
            outcomes[key] = divergence is None
        if divergence is None:
            matching.append(t0)
            if stop_at_first:
                break
        elif closest is None or divergence.matched_before > closest.matched_before:
            closest = divergence
    correct = bool(matching)
    return Verdict(
        correct=correct,
        mode=mode,
        matching_t0=tuple(matching),
        first_divergence=None if correct else closest,
        comparison_start=comparison_start if mode == "strict" else None,
        tolerance=tolerance,
        compared=len(engine),
    )


def regroup_by_time(relations: Sequence[Relation]) -> list[Relation]:
    """Merge consecutive relations with the same time and operation (CQELS emits one
    relation per mapping)."""
    merged: list[Relation] = []
    for relation in relations:
        if merged and merged[-1].time == relation.time and merged[-1].operation == relation.operation and relation.time is not None:
            merged[-1] = Relation(relation.time, relation.operation, merged[-1].bindings + relation.bindings)
        else:
            merged.append(relation)
    return merged
