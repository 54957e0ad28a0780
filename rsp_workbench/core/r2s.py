"""Relation-to-stream operators over bags of solution mappings (RSP-QL Def. 20-22, CQL).

Relations are *bags* (multisets): ``collections.Counter`` keyed by a hashable solution
mapping. Istream(t_j) = Ψ(t_j) − Ψ(t_{j−1}) and Dstream(t_j) = Ψ(t_{j−1}) − Ψ(t_j) use
multiset difference (counts subtract, floored at zero), which makes the invariant
``previous + Istream − Dstream == current`` hold exactly. The first evaluation's
predecessor is the empty bag. *Empty-relation notification* is applied to the output of
the operator, after R2S (CSRBench Sect. 3): it is distinct from non-empty content, which
suppresses the evaluation itself.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Generic, Hashable, Iterable, Iterator, Sequence, TypeVar

from rsp_workbench.core.report import Evaluation
from rsp_workbench.core.semantics import R2S

M = TypeVar("M", bound=Hashable)

OPERATION_SYMBOL = {R2S.RSTREAM: "=", R2S.ISTREAM: "+", R2S.DSTREAM: "-"}


def bag(mappings: Iterable[M]) -> Counter[M]:
    """A bag of solution mappings."""
    return Counter(mappings)


def bag_difference(left: Counter[M], right: Counter[M]) -> Counter[M]:
    """Multiset difference ``left − right`` (counts floored at zero)."""
    return left - right


def r2s_step(operator: R2S, previous: Counter[M], current: Counter[M]) -> Counter[M]:
    """The output of one R2S step at t_j given Ψ(t_{j−1}) and Ψ(t_j)."""
    if operator is R2S.RSTREAM:
        return Counter(current)
    if operator is R2S.ISTREAM:
        return current - previous
    return previous - current


@dataclass(frozen=True)
class Emission(Generic[M]):
    """What the R2S operator streams out at one evaluation (``operation``: = + -)."""

    time: int
    sequence: int
    operation: str
    bindings: Counter[M]

    @property
    def size(self) -> int:
        return sum(self.bindings.values())


def apply_r2s(
    operator: R2S,
    relations: Iterable[tuple[int, int, Counter[M]]],
    *,
    empty_notification: bool,
) -> Iterator[Emission[M]]:
    """Turn the sequence of evaluation results ``(time, sequence, relation)`` into a stream.

    The predecessor of every evaluation is the previous *evaluation*, whether or not its
    output was emitted (empty outputs are dropped only at the end, if not notified).
    """
    previous: Counter[M] = Counter()
    symbol = OPERATION_SYMBOL[operator]
    for time, sequence, current in relations:
        output = r2s_step(operator, previous, current)
        previous = current
        if output or empty_notification:
            yield Emission(time, sequence, symbol, output)


def continuous_answer(
    evaluations: Sequence[Evaluation],
    evaluate: Callable[[Evaluation], Counter[M]],
    operator: R2S,
    *,
    empty_notification: bool,
) -> list[Emission[M]]:
    """Ans(Q) (RSP-QL Def. 24): evaluate at every instant of ET, then apply R2S.

    ``evaluate`` computes the instantaneous relation for one evaluation (the SPARQL part
    is injected so that this module stays free of any query engine).
    """
    relations = ((e.time, e.sequence, evaluate(e)) for e in evaluations)
    return list(apply_r2s(operator, relations, empty_notification=empty_notification))
