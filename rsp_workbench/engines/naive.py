"""``naive``: the Heaven naive ρDF baseline — re-materialise the window snapshot at every report.

Heaven (Heaven Sect. 6, Fig. 2A, like the C-SPARQL engine): at each evaluation the
DSMS hands the snapshot of the active window to the reasoner, which materialises its ρDF
closure *from scratch* w.r.t. the TBox (``rsp_workbench.engines._rhodf.closure``); the query is then
evaluated over the fresh materialisation. When to evaluate follows the engine's
:class:`~rsp_workbench.core.semantics.EngineSemantics` exactly as ``secret`` does
(:class:`rsp_workbench.engines._schedule.ReportScheduler`: border, report policy, tick, t0, R2S, empty
notification). :class:`MaterialisingEngine` holds everything the naive and the
incremental baseline share; they differ only in how the materialisation is obtained.

Parameters: ``tbox`` (path of an RDF file with the ρDF TBox; default the univ-bench ρDF
subset in ``resources/``), ``t0`` (int ms or one per window), ``report_window`` (index,
default 0), ``matcher`` (``auto`` | ``native`` | ``rdflib``). Schema triples in the static
default graph are added to the TBox. Each graph of the dataset (the default graph in
merged mode; each window's named graph in named mode) is materialised on its own,
together with the static triples of that graph.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Hashable, Iterable, Sequence, cast

from rsp_workbench.engines._match import IncrementalBGP, RdflibMirror
from rsp_workbench.engines._rhodf import SCHEMA_PREDICATES, Schema, Triple, closure, default_schema, load_schema
from rsp_workbench.engines._schedule import content_positions
from rsp_workbench.engines._windowed import WindowState, WindowedEngine
from rsp_workbench.core.r2s import OPERATION_SYMBOL, r2s_step
from rsp_workbench.core.report import Evaluation
from rsp_workbench.engine import EngineConfig, StaticGraphs
from rsp_workbench.errors import UserError
from rsp_workbench.query.model import ContinuousQuery
from rsp_workbench.responses.model import EngineResponse, SolutionMapping
from rsp_workbench.streams.terms import canonical_triple

GraphKey = str | None


class MaterialisingEngine(WindowedEngine):
    """Scheduling, window contents, query evaluation and R2S shared by the ρDF baselines.

    Subclasses implement :meth:`_relation`: given the content range of every window at an
    evaluation, return the bag of solution mappings over the materialised dataset.
    """

    def __init__(self, config: EngineConfig) -> None:
        super().__init__(config)
        if any(config.faults.values()):
            raise UserError(f"the {self.type_name} engine has no fault knobs", field="faults")
        params = dict(config.parameters)
        self.tbox_path = params.get("tbox")
        self.previous: Counter[Hashable] = Counter()
        self.evaluations = 0

    # --- registration ------------------------------------------------------------------

    def register(self, query: ContinuousQuery, static: StaticGraphs = StaticGraphs()) -> None:
        self._accept_query(query)
        self.static: dict[GraphKey, list[Triple]] = {None: [canonical_triple(t) for t in static.default]}
        for name, triples in static.named.items():
            self.static[name] = [canonical_triple(t) for t in triples]
        self.schema = self._load_schema(self.static[None])
        self._registered()

    def _load_schema(self, static_default: Sequence[Triple]) -> Schema:
        return engine_schema(self.tbox_path, static_default)

    def _registered(self) -> None:
        """Hook: the query, static data and schema are known."""

    # --- evaluation --------------------------------------------------------------------

    def _run(self, evaluations: list[Evaluation], out: list[EngineResponse]) -> None:
        for evaluation in evaluations:
            self.evaluations += 1
            ranges: list[tuple[int, int]] = []
            for index, window in enumerate(self.windows):
                if index == self.report_window:
                    ranges.append((evaluation.lo, evaluation.hi))
                else:
                    buffer = self.buffers[window.stream]
                    _, lo, hi = content_positions(buffer, window.spec, evaluation.time, self.semantics.active_window)
                    ranges.append((lo, hi))
            current = self._relation(ranges)
            output = r2s_step(self.r2s, self.previous, current)
            self.previous = current
            if output or self.semantics.empty_notification:
                out.append(EngineResponse(
                    evaluation.time, int(time.time() * 1000), OPERATION_SYMBOL[self.r2s],
                    cast(tuple[SolutionMapping, ...], tuple(output.elements())),  # the core's bags: opaque keys
                ))

    def _relation(self, ranges: list[tuple[int, int]]) -> Counter[Hashable]:
        raise NotImplementedError

    def _window_triples(self, window: WindowState, lo: int, hi: int) -> Iterable[Triple]:
        buffer = self.buffers[window.stream]
        for position in range(lo, hi):
            element = buffer.element(position)
            yield (element.subject, element.predicate, element.object)

    def _clamp(self, relation: Counter[Hashable]) -> Counter[Hashable]:
        """DISTINCT of the native fragment: each mapping once."""
        if self.native is not None and self.native.distinct:
            return Counter(dict.fromkeys(relation, 1))
        return relation


def engine_schema(tbox_path: str | None, static_default: Sequence[Triple]) -> Schema:
    """The TBox of a ρDF baseline: the ``tbox`` file (or univ-bench ρDF) plus schema triples of the static data.

    Shared with the oracle, which must entail exactly what the engines entail.
    """
    try:
        base = load_schema(tbox_path) if tbox_path else default_schema()
    except Exception as error:  # unreadable or unparsable file: a user error, before the run
        raise UserError(f"cannot read the TBox {tbox_path}: {error}", field="parameters.tbox") from None
    extra = [t for t in static_default if t[1] in SCHEMA_PREDICATES]
    if not extra:
        return base
    return Schema.from_triples([*_schema_triples(base), *extra])


class NaiveEngine(MaterialisingEngine):
    """Materialise the ρDF closure of the window snapshot from scratch at every report (Heaven Fig. 2A)."""

    type_name = "naive"

    def _relation(self, ranges: list[tuple[int, int]]) -> Counter[Hashable]:
        explicit: dict[GraphKey, list[Triple]] = {key: list(triples) for key, triples in self.static.items()}
        for window, (lo, hi) in zip(self.windows, ranges):
            explicit.setdefault(window.graph, []).extend(self._window_triples(window, lo, hi))
        materialised = {key: closure(triples, self.schema) for key, triples in explicit.items()}
        return evaluate_from_scratch(self, materialised)


def evaluate_from_scratch(engine: MaterialisingEngine, graphs: dict[GraphKey, set[Triple]]) -> Counter[Hashable]:
    """The bag of solution mappings of the engine's query over fully given graphs."""
    assert engine.query is not None
    if engine.native is None:
        mirror = RdflibMirror()
        for key, triples in graphs.items():
            for triple in triples:
                mirror.insert(key, triple)
        return mirror.evaluate(engine.query.algebra)
    relation: Counter[Hashable] = Counter()

    def on_change(mapping: Hashable, delta: int) -> None:
        relation[mapping] += delta

    matcher = IncrementalBGP(engine.native, on_change)
    for key, triples in graphs.items():
        for triple in triples:
            matcher.insert(key, triple)
    return engine._clamp(+relation)


def _schema_triples(schema: Schema) -> list[Triple]:
    return sorted(schema.axioms())


