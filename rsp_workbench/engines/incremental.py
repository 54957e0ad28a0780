"""``incremental``: the Heaven incremental ρDF baseline — maintain the materialisation under Δ+ / Δ−.

Heaven (Heaven Sect. 6, Fig. 2B, like TrOWL and RDFox): between two evaluations the
DSMS hands the reasoner the differences of the window content — Δ+ (elements that
entered) and Δ− (elements that left) — and the reasoner maintains the materialisation
(:class:`rsp_workbench.engines._rhodf.IncrementalClosure`, support counting). The materialised triples
that appear/disappear are in turn fed to the incremental BGP matcher
(:class:`rsp_workbench.engines._match.IncrementalBGP`), so the bag of solution mappings is maintained
too; queries outside the native fragment go through an rdflib dataset that is updated
with the same deltas. Scheduling, parameters and R2S as in :mod:`rsp_workbench.engines.naive`; on
every stimulus the answers equal the naive baseline's (tests/engines/test_rhodf_engines.py).
"""

from __future__ import annotations

from collections import Counter
from typing import Hashable

from rsp_workbench.engines._match import IncrementalBGP, RdflibMirror
from rsp_workbench.engines._rhodf import IncrementalClosure, Triple
from rsp_workbench.engines._windowed import WindowState
from rsp_workbench.engines.naive import GraphKey, MaterialisingEngine


class IncrementalEngine(MaterialisingEngine):
    """Maintain the ρDF closure of the window content as it enters and expires (Heaven Fig. 2B)."""

    type_name = "incremental"

    def _registered(self) -> None:
        self.relation: Counter[Hashable] = Counter()
        if self.native is not None:
            self.sink: IncrementalBGP | RdflibMirror = IncrementalBGP(self.native, self._on_change)
        else:
            self.sink = RdflibMirror()
        self.closures: dict[GraphKey, IncrementalClosure] = {}
        for key, triples in self.static.items():
            self._apply(key, triples, [])

    def _closure(self, key: GraphKey) -> IncrementalClosure:
        reasoner = self.closures.get(key)
        if reasoner is None:
            reasoner = self.closures[key] = IncrementalClosure(self.schema)
        return reasoner

    def _apply(self, key: GraphKey, entering: list[Triple], leaving: list[Triple]) -> None:
        """Δ+ first, then Δ− (a triple that leaves and re-enters at once causes no churn)."""
        reasoner = self._closure(key)
        sink = self.sink
        for triple in reasoner.add(entering):
            sink.insert(key, triple)
        for triple in reasoner.remove(leaving):
            sink.delete(key, triple)

    def _relation(self, ranges: list[tuple[int, int]]) -> Counter[Hashable]:
        for window, (lo, hi) in zip(self.windows, ranges):
            self._move(window, lo, hi)
        if self.native is None:
            assert isinstance(self.sink, RdflibMirror) and self.query is not None
            return self.sink.evaluate(self.query.algebra)
        return self._clamp(Counter(self.relation))

    def _move(self, window: WindowState, lo: int, hi: int) -> None:
        """Δ+ / Δ− of the window content [window.lo, window.hi) → [lo, hi), applied to the reasoner."""
        old_lo, old_hi = window.lo, window.hi
        if hi <= lo:
            lo = hi = 0
        if (old_lo, old_hi) == (lo, hi):
            return
        if hi <= lo or old_hi <= old_lo or hi <= old_lo or old_hi <= lo:  # disjoint
            leaving = list(self._window_triples(window, old_lo, old_hi))
            entering = list(self._window_triples(window, lo, hi))
        else:
            leaving = [*self._window_triples(window, old_lo, lo), *self._window_triples(window, hi, old_hi)]
            entering = [*self._window_triples(window, lo, old_lo), *self._window_triples(window, old_hi, hi)]
        self._apply(window.graph, entering, leaving)
        window.lo, window.hi = lo, hi

    def _on_change(self, mapping: Hashable, delta: int) -> None:
        count = self.relation.get(mapping, 0) + delta
        if count:
            self.relation[mapping] = count
        else:
            del self.relation[mapping]

    @property
    def materialised(self) -> int:
        """Number of triples in the maintained materialisation (all graphs)."""
        return sum(len(reasoner) for reasoner in self.closures.values())
