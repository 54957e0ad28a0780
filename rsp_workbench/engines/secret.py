"""``secret``: a configurable RSP engine parameterised by SECRET + R2S (CSRBench Sect. 3).

Every parameter of :class:`rsp_workbench.core.semantics.EngineSemantics` is honoured: border
convention, report policy, tick, R2S, empty-relation notification, t0 (hidden t0 = the
application time of the first input, i.e. the registration instant, if not given), time
unit, leading partial windows, active-window choice, batch size. Presets ``csparql``,
``cqels`` and ``sparqlstream`` carry the CSRBench Table 1 parameters.

Processing is incremental: each stream keeps a buffer of its recent elements; at every
evaluation instant (decided by :class:`rsp_workbench.engines._schedule.ReportScheduler`, which mirrors
the oracle's ``evaluation_instants``) the window store is moved from its previous content
to the new one by adding the elements that entered and removing those that left; the
bag of solution mappings is maintained under those deltas by an incremental BGP matcher
(BGP + FILTER + projection + DISTINCT) or, for other queries, by rdflib over an rdflib
dataset that is itself updated incrementally. Istream/Dstream differences are computed on
the mappings that changed only. Under a window-close policy the store does not wait for the
close: between evaluations it is moved toward the next window's content as the elements
arrive (``_prefill``), so the close finds the relation in place and only emits. With all faults off the answer equals
``rsp_workbench.oracle.reference.expected_answer`` (tests/engines/test_engine_secret.py).

Fault knobs (off by default; each reproduces a behaviour found in a real engine):

``late_purge``
    Expired elements leave the window one slide late: the evaluated content of window
    ``[o, c)`` starts at ``o − β``. CQELS did not remove expired statements from its
    active window (CSRBench Sect. 6, Q6/Q7: extra mappings from joins and aggregates over
    elements that should be gone); YABench Exp. 4 ("delayed purging of active window
    content"). Only the content read is affected, not when the engine reports.
``border_drift``
    Window borders drift later under load (C-SPARQL; YABench Sect. 5, Fig. 5: the actual
    window is ``[t_s + d_s, t_e + d_e)``). Window-close/periodic reports read the window
    shifted by ``d = drift_ms + drift_per_element_ms × n`` (n = elements in the nominal
    window, i.e. the load), and are emitted only once application time reaches the
    shifted close. Parameters ``drift_ms`` (default 100) and ``drift_per_element_ms``
    (default 0.05). Deterministic, so tests and the oracle's gracious mode can see it.
``null_aggregate``
    An aggregate over no matches yields an unbound value (``null``) instead of the SPARQL
    1.1 result (0 for COUNT/SUM/AVG): SPARQLstream, CSRBench Sect. 6, Q4.
``misaligned_first_window``
    On a sliding window (β < ω) with a window-close policy, the engine also reports the
    partial windows ``[t0, t0 + iβ)`` that close before the first full window
    ``[t0, t0 + ω)`` does; after that it is aligned. C-SPARQL, CSRBench Sect. 6, Q5:
    "when the system becomes stable and the first window closes, C-SPARQL starts to
    behave correctly … related to the sliding windows".

Parameters: ``t0`` (int ms, or a list with one per window), ``report_window`` (index of
the window the report policy is tied to, default 0), ``drift_ms``, ``drift_per_element_ms``,
``matcher`` (``auto`` | ``native`` | ``rdflib``), and for tests and benchmarks (not in the
experiment format) ``prefill``: true by default, under a window-close policy the native
matcher joins each element into the next window's store as it arrives, so a close only
emits; false: the window is joined at its close; ``tick_runs``: true by default, the elements
of a tuple tick at one instant join the store in one batch and each evaluation then takes
the mappings its element adds; false: one delta join per element (both: the same answers,
tests/engines/test_engine_prefill.py compares them).
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, Hashable, cast

from rsp_workbench.engines._match import IncrementalBGP, RdflibMirror
from rsp_workbench.engines._window_store import WindowStore
from rsp_workbench.engines._schedule import StreamBuffer, content_positions
from rsp_workbench.engines._windowed import WindowState, WindowedEngine
from rsp_workbench.core.r2s import OPERATION_SYMBOL, r2s_step
from rsp_workbench.core.report import Evaluation
from rsp_workbench.core.semantics import R2S, Strategy
from rsp_workbench.core.windows import WindowSpec
from rsp_workbench.engine import EngineConfig, StaticGraphs
from rsp_workbench.errors import UserError
from rsp_workbench.query.model import ContinuousQuery
from rsp_workbench.responses.model import EngineResponse, SolutionMapping
from rsp_workbench.streams.model import StreamElement
from rsp_workbench.streams.terms import canonical_triple

FAULTS = ("late_purge", "border_drift", "null_aggregate", "misaligned_first_window")
_NO_CHANGE: Counter[Hashable] = Counter()  # Istream/Dstream output when no mapping changed (never mutated)


class SecretEngine(WindowedEngine):
    """The SECRET-parameterised reference engine with named fault knobs."""

    type_name = "secret"

    def __init__(self, config: EngineConfig) -> None:
        super().__init__(config)
        unknown = set(config.faults) - set(FAULTS)
        if unknown:
            raise UserError(f"unknown fault {sorted(unknown)[0]!r}; expected one of {', '.join(FAULTS)}", field="faults")
        self.faults = {name: bool(config.faults.get(name, False)) for name in FAULTS}
        params = dict(config.parameters)
        self.drift_ms = float(params.get("drift_ms", 100))
        self.drift_per_element_ms = float(params.get("drift_per_element_ms", 0.05))
        for name, value in (("drift_ms", self.drift_ms), ("drift_per_element_ms", self.drift_per_element_ms)):
            if not 0 <= value < float("inf"):
                raise UserError(f"{name} must be a number ≥ 0, got {value!r}", field=f"parameters.{name}")
        prefill, self.tick_runs = params.get("prefill", True), params.get("tick_runs", True)
        for name, value in (("prefill", prefill), ("tick_runs", self.tick_runs)):
            if not isinstance(value, bool):
                raise UserError(f"{name} must be true or false, got {value!r}", field=f"parameters.{name}")
        # a fault that reads other content than the window's: the store is filled at the evaluation
        self.prefill = prefill and not (self.faults["late_purge"] or self.faults["border_drift"])
        self.pending: list[tuple[int, Evaluation]] = []  # border_drift: (due time, evaluation)
        self.relation: Counter[Hashable] = Counter()
        self.dirty: dict[Hashable, int] = {}
        self.previous: Counter[Hashable] = Counter()
        self.evaluations = 0

    # --- registration ------------------------------------------------------------------

    def register(self, query: ContinuousQuery, static: StaticGraphs = StaticGraphs()) -> None:
        self._accept_query(query)
        self.static = static
        if self.native is not None:
            self.sink: IncrementalBGP | RdflibMirror = IncrementalBGP(self.native, self._on_change)
        else:
            self.sink = RdflibMirror()
        self.store = WindowStore(self.sink)
        for triple in static.default:
            self.store.add(None, canonical_triple(triple))
        for name, triples in static.named.items():
            for triple in triples:
                self.store.add(name, canonical_triple(triple))
        self.aggregate_group = _implicit_group(query.algebra.algebra) if self.faults["null_aggregate"] else None

    # --- evaluation --------------------------------------------------------------------

    def _run(self, evaluations: list[Evaluation], out: list[EngineResponse]) -> None:
        if self.faults["border_drift"] and self._drifts():
            for evaluation in evaluations:
                delay = self.drift_ms + self.drift_per_element_ms * evaluation.size
                shift = max(1, int(round(delay)))
                self.pending.append((evaluation.time + shift, evaluation))
            return
        index = 0
        while index < len(evaluations):
            end = self._tick_run(evaluations, index)
            if end - index > 1:
                self._evaluate_run(evaluations[index:end], out)
                index = end
                continue
            evaluation = evaluations[index]
            self._evaluate(evaluation, self._reporting_range(evaluation), out)
            index += 1

    def _tick_run(self, evaluations: list[Evaluation], start: int) -> int:
        """The end of the run of evaluations from ``start`` that each read one element more
        than the one before, from the store's content on (a tuple tick's arrivals at one
        instant: ~70 per stimulus at YABench BIG); ``start`` if there is none."""
        if not self.tick_runs or len(self.windows) != 1 or self.native is None or self.faults["late_purge"]:
            return start
        window = self.windows[0]
        lo, hi = window.lo, window.hi
        if hi <= lo:
            return start
        end = start
        while end < len(evaluations) and evaluations[end].lo == lo and evaluations[end].hi == hi + 1:
            hi += 1
            end += 1
        return end

    def _evaluate_run(self, run: list[Evaluation], out: list[EngineResponse]) -> None:
        """Evaluate a tick run (:meth:`_tick_run`): its elements join the store in one batch
        delta join, then each evaluation applies the mappings its element adds and answers —
        the answers of one evaluation after the other (tests/engines/test_engine_prefill.py)."""
        window = self.windows[0]
        buffer = self.buffers[window.stream]
        added = self.store.add_run(window.graph, buffer.elements[window.hi - buffer.offset:run[-1].hi - buffer.offset])
        window.hi = run[-1].hi
        on_change = self._on_change
        # Istream/Dstream without empty notifications answer nothing when nothing changed
        quiet = self.r2s is not R2S.RSTREAM and not self.semantics.empty_notification
        self.evaluations += len(run)
        for evaluation, mappings in zip(run, added):
            if mappings:
                for mapping in mappings:
                    on_change(mapping, +1)
            elif quiet and not self.dirty:
                continue
            self._respond(evaluation, out)

    def _scheduler_options(self) -> dict[str, Any]:
        return {"misaligned_first_window": self.faults["misaligned_first_window"]}

    def _drifts(self) -> bool:
        strategies = self.semantics.report.strategies
        return Strategy.WINDOW_CLOSE in strategies or Strategy.PERIODIC in strategies

    def _release_pending(self, now: int, out: list[EngineResponse]) -> None:
        """border_drift: evaluate the shifted windows whose shifted close has been reached."""
        while self.pending and self.pending[0][0] <= now:
            due, evaluation = self.pending.pop(0)
            shift = due - evaluation.time
            window = evaluation.window
            buffer = self.buffers[self.windows[self.report_window].stream]
            lo, hi = buffer.window_range(window.open + shift, window.close + shift, window.border)
            self._evaluate(evaluation, (lo, hi), out)

    def _reporting_range(self, evaluation: Evaluation) -> tuple[int, int]:
        lo, hi = evaluation.lo, evaluation.hi
        if self.faults["late_purge"]:
            window = evaluation.window
            spec = self.windows[self.report_window].spec
            buffer = self.buffers[self.windows[self.report_window].stream]
            stale_lo, _ = buffer.window_range(window.open - spec.slide, window.close, window.border)
            lo = min(lo, max(stale_lo, buffer.first_at_or_after(spec.t0)))
        return lo, hi

    def _evaluate(self, evaluation: Evaluation, reporting: tuple[int, int], out: list[EngineResponse]) -> None:
        """Move the store to the content at this evaluation, compute the relation, apply R2S."""
        self.evaluations += 1
        if len(self.windows) == 1:  # the common case, once per element under a tuple tick
            window = self.windows[0]
            self._move(window, self.buffers[window.stream], *reporting)
        else:
            for index, window in enumerate(self.windows):
                buffer = self.buffers[window.stream]
                if index == self.report_window:
                    lo, hi = reporting
                else:
                    active, lo, hi = content_positions(buffer, window.spec, evaluation.time,
                                                       self.semantics.active_window)
                    if self.faults["late_purge"] and active is not None:
                        stale_lo, _ = buffer.window_range(active.open - window.spec.slide, active.close, active.border)
                        lo = min(lo, max(stale_lo, buffer.first_at_or_after(window.spec.t0)))
                self._move(window, buffer, lo, hi)
        self._respond(evaluation, out)

    def _respond(self, evaluation: Evaluation, out: list[EngineResponse]) -> None:
        """R2S over the relation at this evaluation; a response unless it is empty and not notified."""
        output = self._r2s_output()
        if output or self.semantics.empty_notification:
            # the core's bags keep their keys opaque; an engine's relations hold solution mappings
            bindings = cast(tuple[SolutionMapping, ...], tuple(output.elements()))
            out.append(EngineResponse(evaluation.time, int(time.time() * 1000), OPERATION_SYMBOL[self.r2s], bindings))

    def _prefill(self, arrived: int) -> None:
        """Window close: move the store toward the content of the next window to be reported as
        its elements arrive, so the close only emits. Without it a close (re)joins the whole
        window at once — 350 k elements at YABench BIG, seconds behind in real time. The
        evaluation still moves the store to exactly its content first, and the relation's
        changes in between are only read at an evaluation (``dirty``), so the answers are
        those of filling at the close. Elements that leave an overlapping (sliding) window go
        a few at a time: at most twice as many as arrived, plus a few hundred, per stimulus."""
        if not self.prefill or self.native is None:
            return
        assert self.scheduler is not None
        upcoming = self.scheduler.upcoming()
        if upcoming is None:
            return
        budget = 2 * arrived + 256
        for index, window in enumerate(self.windows):
            buffer = self.buffers[window.stream]
            if index == self.report_window:
                lo, hi = buffer.window_range(upcoming.open, upcoming.close, upcoming.border)
            else:
                _, lo, hi = content_positions(buffer, window.spec, upcoming.close, self.semantics.active_window)
            if window.lo < lo < window.hi and hi > lo:  # the windows overlap: expire gradually
                lo = min(lo, window.lo + budget)
            if (lo, hi) != (window.lo, window.hi):
                self._move(window, buffer, lo, hi)

    def _move(self, window: WindowState, buffer: StreamBuffer[StreamElement], lo: int, hi: int) -> None:
        """Apply the content delta [window.lo, window.hi) → [lo, hi) to the store."""
        old_lo, old_hi = window.lo, window.hi
        store, graph = self.store, window.graph
        elements, offset = buffer.elements, buffer.offset  # position p is elements[p - offset]
        if hi == old_hi + 1 and lo == old_lo < old_hi:  # a tuple tick's common case: one more element
            store.add_one(graph, elements[old_hi - offset])
            window.hi = hi
            return
        if hi <= lo or old_hi <= old_lo or hi <= old_lo or old_hi <= lo:
            if old_hi - old_lo == store.copies and self.native is not None:
                # the old content is all the store holds (no static data, no other window):
                # empty it at once; the relation over no triple is the empty bag
                store.clear()
                for mapping, count in list(self.relation.items()):
                    self._on_change(mapping, -count)
            elif old_hi > old_lo:
                store.remove_all(graph, elements[old_lo - offset:old_hi - offset])
            if hi > lo:
                store.add_all(graph, elements[lo - offset:hi - offset])
        else:
            if lo > old_lo:
                store.remove_all(graph, elements[old_lo - offset:lo - offset])
            if old_hi > hi:
                store.remove_all(graph, elements[hi - offset:old_hi - offset])
            if old_lo > lo:
                store.add_all(graph, elements[lo - offset:old_lo - offset])
            if hi > old_hi:
                store.add_all(graph, elements[old_hi - offset:hi - offset])
        window.lo, window.hi = (lo, hi) if hi > lo else (0, 0)

    def _on_change(self, mapping: Hashable, delta: int) -> None:
        relation = self.relation
        if mapping not in self.dirty:
            self.dirty[mapping] = relation.get(mapping, 0)
        count = relation.get(mapping, 0) + delta
        if count:
            relation[mapping] = count
        else:
            del relation[mapping]

    def _r2s_output(self) -> Counter[Hashable]:
        if self.native is None:
            assert isinstance(self.sink, RdflibMirror) and self.query is not None
            current = self.sink.evaluate(self.query.algebra)
            if self.aggregate_group is not None:
                current = self._null_aggregate(current)
            output = r2s_step(self.r2s, self.previous, current)
            self.previous = current
            return output
        distinct = self.native.distinct
        if self.r2s is R2S.RSTREAM:
            self.dirty.clear()
            if distinct:
                return Counter(dict.fromkeys(self.relation, 1))
            return Counter(self.relation)
        # Istream/Dstream: only the mappings whose count changed since the last evaluation
        if not self.dirty:
            return _NO_CHANGE  # nothing changed: no insertion, no deletion
        old: Counter[Hashable] = Counter()
        new: Counter[Hashable] = Counter()
        for mapping, before in self.dirty.items():
            after = self.relation.get(mapping, 0)
            if distinct:
                before, after = min(before, 1), min(after, 1)
            if before:
                old[mapping] = before
            if after:
                new[mapping] = after
        self.dirty.clear()
        return r2s_step(self.r2s, old, new)

    def _null_aggregate(self, current: Counter[Hashable]) -> Counter[Hashable]:
        """Fault null_aggregate: over no matches, aggregate results become unbound (SPARQLstream)."""
        assert isinstance(self.sink, RdflibMirror) and self.query is not None
        group, aggregate_vars = self.aggregate_group  # type: ignore[misc]
        if not self.sink.pattern_is_empty(group.p, self.query.algebra.prologue):
            return current
        result: Counter[Hashable] = Counter()
        for mapping, count in current.items():
            result[frozenset((var, term) for var, term in mapping if var not in aggregate_vars)] += count  # type: ignore[attr-defined]
        return result

    def _reads_before(self, spec: WindowSpec) -> int:
        """late_purge: a window's content starts one slide before its opening."""
        return spec.slide if self.faults["late_purge"] else 0

    def _held_back_from(self) -> tuple[int, int] | None:
        """border_drift: a shifted evaluation reads its report window from the shifted opening
        (the other windows at its own instant)."""
        if not self.pending:
            return None
        return (min(evaluation.window.open + due - evaluation.time for due, evaluation in self.pending),
                min(evaluation.time for _, evaluation in self.pending))

    # --- introspection (tests, benchmarks) --------------------------------------------

    @property
    def matcher(self) -> str:
        return "native" if self.native is not None else "rdflib"


def _implicit_group(root: Any) -> tuple[Any, set[str]] | None:
    """The Group node of an aggregate query without GROUP BY, and the aggregate result variables."""
    found: list[tuple[Any, set[str]]] = []

    def walk(node: Any) -> None:
        name = getattr(node, "name", None)
        if name == "AggregateJoin":
            group = node.p
            if group.name == "Group" and group.expr is None:
                results = {str(a.res) for a in node.A}
                found.append((group, results))
            return
        for key in ("p", "p1", "p2"):
            child = node.get(key) if hasattr(node, "get") else None
            if child is not None and hasattr(child, "name"):
                walk(child)

    walk(root)
    if not found:
        return None
    group, internal = found[0]
    # the projected names are bound by Extend(var ← __agg_n__) above the AggregateJoin
    names: set[str] = set()

    def extends(node: Any) -> None:
        from rdflib import Variable

        if getattr(node, "name", None) == "Extend" and isinstance(node.expr, Variable) and str(node.expr) in internal:
            names.add(str(node.var))
        for key in ("p", "p1", "p2"):
            child = node.get(key) if hasattr(node, "get") else None
            if child is not None and hasattr(child, "name"):
                extends(child)

    extends(root)
    return group, names | internal
