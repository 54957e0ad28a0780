"""``naive``: the Heaven naive ρDF baseline — re-materialise the window snapshot at every report.

Heaven (heaven.md Sect. 6, Fig. 2A, like the C-SPARQL engine): at each evaluation the
DSMS hands the snapshot of the active window to the reasoner, which materialises its ρDF
closure *from scratch* w.r.t. the TBox (``engines._rhodf.closure``); the query is then
evaluated over the fresh materialisation. When to evaluate follows the engine's
:class:`~workbench.core.semantics.EngineSemantics` exactly as ``secret`` does
(:class:`engines._schedule.ReportScheduler`: border, report policy, tick, t0, R2S, empty
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
from dataclasses import dataclass
from typing import Hashable, Iterable, Sequence

from engines._match import CompiledQuery, IncrementalBGP, RdflibMirror, Unsupported, compile_select
from engines._rhodf import SCHEMA_PREDICATES, Schema, Triple, closure, default_schema, load_schema
from engines._schedule import ReportScheduler, StreamBuffer, content_positions
from workbench.core.r2s import OPERATION_SYMBOL, r2s_step
from workbench.core.report import Evaluation
from workbench.core.windows import WindowSpec
from workbench.engine import Engine, EngineConfig, StaticGraphs, Stimulus
from workbench.errors import UserError
from workbench.query.model import ContinuousQuery, DatasetMode, QueryForm
from workbench.responses.model import EngineResponse
from workbench.streams.model import StreamElement
from workbench.streams.terms import canonical_term

MATCHERS = ("auto", "native", "rdflib")
GraphKey = str | None


@dataclass
class _Window:
    """One window of the query: spec, stream, graph key and the positions the reasoner holds."""

    spec: WindowSpec
    stream: str
    graph: GraphKey
    lo: int = 0
    hi: int = 0


class MaterialisingEngine(Engine):
    """Scheduling, window contents, query evaluation and R2S shared by the ρDF baselines.

    Subclasses implement :meth:`_relation`: given the content range of every window at an
    evaluation, return the bag of solution mappings over the materialised dataset.
    """

    def __init__(self, config: EngineConfig) -> None:
        super().__init__(config)
        if any(config.faults.values()):
            raise UserError(f"the {self.type_name} engine has no fault knobs", field="faults")
        self.semantics = config.semantics
        params = dict(config.parameters)
        self.matcher_choice = str(params.get("matcher", "auto"))
        if self.matcher_choice not in MATCHERS:
            raise UserError(f"matcher must be one of {', '.join(MATCHERS)}", field="parameters.matcher")
        self.tbox_path = params.get("tbox")
        self.report_window = int(params.get("report_window", 0))
        self.t0_param = params.get("t0", self.semantics.t0)
        self.query: ContinuousQuery | None = None
        self.windows: list[_Window] = []
        self.buffers: dict[str, StreamBuffer[StreamElement]] = {}
        self.scheduler: ReportScheduler | None = None
        self.started = False
        self.previous: Counter[Hashable] = Counter()
        self.evaluations = 0

    # --- registration ------------------------------------------------------------------

    def register(self, query: ContinuousQuery, static: StaticGraphs = StaticGraphs()) -> None:
        if query.form is not QueryForm.SELECT:
            raise UserError(f"the {self.type_name} engine runs SELECT queries; this is a {query.form.value} query", field="query")
        if not query.windows:
            raise UserError("the query has no window over a stream", field="query")
        if not 0 <= self.report_window < len(query.windows):
            raise UserError("report_window is not a window of the query", field="parameters.report_window")
        self.query = query
        self.r2s = query.r2s or self.semantics.r2s
        self.native: CompiledQuery | None = None
        if self.matcher_choice != "rdflib":
            try:
                self.native = compile_select(query.algebra, {w.name for w in query.windows})
            except Unsupported as error:
                if self.matcher_choice == "native":
                    raise UserError(f"the native matcher cannot run this query ({error})", field="parameters.matcher") from None
        self.static: dict[GraphKey, list[Triple]] = {None: [_canonical(t) for t in static.default]}
        for name, triples in static.named.items():
            self.static[name] = [_canonical(t) for t in triples]
        self.schema = self._load_schema(self.static[None])
        self._registered()

    def _load_schema(self, static_default: Sequence[Triple]) -> Schema:
        """The TBox: the ``tbox`` file (or univ-bench ρDF) plus schema triples of the static data."""
        try:
            base = load_schema(self.tbox_path) if self.tbox_path else default_schema()
        except Exception as error:  # unreadable or unparsable file: a user error, before the run
            raise UserError(f"cannot read the TBox {self.tbox_path}: {error}", field="parameters.tbox") from None
        extra = [t for t in static_default if t[1] in SCHEMA_PREDICATES]
        if not extra:
            return base
        return Schema.from_triples([*_schema_triples(base), *extra])

    def _registered(self) -> None:
        """Hook: the query, static data and schema are known."""

    def _start(self, t: int) -> None:
        """First input: fix t0 (hidden t0 = registration instant = first application time)."""
        assert self.query is not None
        count = len(self.query.windows)
        if self.t0_param is None:
            t0s = [t] * count
        elif isinstance(self.t0_param, (list, tuple)):
            if len(self.t0_param) != count:
                raise UserError(f"expected one t0 per window ({count})", field="parameters.t0")
            t0s = [int(x) for x in self.t0_param]
        else:
            t0s = [int(self.t0_param)] * count
        s = self.semantics
        for declaration, t0 in zip(self.query.windows, t0s):
            spec = WindowSpec(declaration.size_ms, declaration.slide_ms, t0, s.border, s.leading_partial)
            graph = None if self.query.dataset_mode is DatasetMode.MERGED else declaration.name
            self.windows.append(_Window(spec, declaration.stream, graph))
            self.buffers.setdefault(declaration.stream, StreamBuffer())
        reporting = self.windows[self.report_window]
        self.scheduler = ReportScheduler(
            self.buffers[reporting.stream], reporting.spec, s.report, tick=s.tick, choice=s.active_window,
            batch_size=s.batch_size,
        )
        self.started = True

    # --- input -------------------------------------------------------------------------

    def push(self, stimulus: Stimulus) -> list[EngineResponse]:
        if self.query is None:
            raise RuntimeError("register a query first")
        t = stimulus.application_time
        if not self.started:
            self._start(t)
        scheduler = self.scheduler
        assert scheduler is not None
        responses: list[EngineResponse] = []
        self._run(scheduler.before(t), responses)
        arrived_before = scheduler.buffer.size
        default_stream = self.windows[0].stream
        streams = stimulus.streams
        for index, element in enumerate(stimulus.elements):
            buffer = self.buffers.get(default_stream if streams is None else streams[index])
            if buffer is not None:
                buffer.append(t, element)
        self._run(scheduler.at(t, arrived_before), responses)
        self._trim()
        return responses

    def advance_time(self, t: int) -> list[EngineResponse]:
        if self.query is None:
            raise RuntimeError("register a query first")
        if not self.started:
            self._start(t)
        assert self.scheduler is not None
        responses: list[EngineResponse] = []
        self._run(self.scheduler.advance(t), responses)
        return responses

    def close(self) -> list[EngineResponse]:
        responses: list[EngineResponse] = []
        if self.scheduler is not None:
            self._run(self.scheduler.flush_partial_batch(), responses)
        return responses

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
                    evaluation.time, int(time.time() * 1000), OPERATION_SYMBOL[self.r2s], tuple(output.elements()),
                ))

    def _relation(self, ranges: list[tuple[int, int]]) -> Counter[Hashable]:
        raise NotImplementedError

    def _window_triples(self, window: _Window, lo: int, hi: int) -> Iterable[Triple]:
        buffer = self.buffers[window.stream]
        for position in range(lo, hi):
            element = buffer.element(position)
            yield (element.subject, element.predicate, element.object)

    def _clamp(self, relation: Counter[Hashable]) -> Counter[Hashable]:
        """DISTINCT of the native fragment: each mapping once."""
        if self.native is not None and self.native.distinct:
            return Counter(dict.fromkeys(relation, 1))
        return relation

    def _trim(self) -> None:
        """Forget buffered elements no future evaluation can read."""
        assert self.scheduler is not None
        horizon = self.scheduler.horizon()
        for window in self.windows:
            horizon = min(horizon, self.scheduler.now - window.spec.size - 2 * window.spec.slide)
            if window.hi > window.lo:
                horizon = min(horizon, self.buffers[window.stream].element(window.lo).t)
        for buffer in self.buffers.values():
            buffer.trim_before(horizon)


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


def _canonical(triple: Sequence[str]) -> Triple:
    s, p, o = triple
    return (canonical_term(s), canonical_term(p), canonical_term(o))
