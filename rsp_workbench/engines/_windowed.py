"""What the built-in window engines share: t0, stream buffers, the report scheduler, input.

`secret`, `naive` and `incremental` differ only in how they evaluate a report (and in
secret's fault knobs); when they evaluate is decided once, here, by the incremental
`ReportScheduler` over the same window definitions as the oracle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rsp_workbench.engines._compiled_query import CompiledQuery, Unsupported, compile_select
from rsp_workbench.engines._schedule import ReportScheduler, StreamBuffer
from rsp_workbench.core.report import Evaluation
from rsp_workbench.core.semantics import Anchor
from rsp_workbench.core.windows import WindowSpec
from rsp_workbench.engine import MATCHERS, Engine, EngineConfig, Stimulus
from rsp_workbench.errors import UserError
from rsp_workbench.query.model import ContinuousQuery, DatasetMode, QueryForm
from rsp_workbench.responses.model import EngineResponse
from rsp_workbench.streams.model import StreamElement



@dataclass
class WindowState:
    """One window of the query: spec, stream, graph key (None: the default graph) and the
    positions [lo, hi) of its stream buffer that the engine's store currently holds."""

    spec: WindowSpec
    stream: str
    graph: str | None
    lo: int = 0
    hi: int = 0


class WindowedEngine(Engine):
    """Input plumbing and scheduling; subclasses evaluate in :meth:`_run` (and may hold output
    back in :meth:`_release_pending`, naming what it still needs in :meth:`_held_back_from`)."""

    def __init__(self, config: EngineConfig) -> None:
        super().__init__(config)
        self.semantics = config.semantics
        params = dict(config.parameters)
        self.matcher_choice = str(params.get("matcher", "auto"))
        if self.matcher_choice not in MATCHERS:
            raise UserError(f"matcher must be one of {', '.join(MATCHERS)}", field="parameters.matcher")
        self.report_window = int(params.get("report_window", 0))
        self.t0_param = params.get("t0", self.semantics.t0)
        self.query: ContinuousQuery | None = None
        self.windows: list[WindowState] = []
        self.buffers: dict[str, StreamBuffer[StreamElement]] = {}
        self.scheduler: ReportScheduler | None = None
        self.started = False
        self.clock: int | None = None  # the latest application time pushed or advanced to

    # --- registration ------------------------------------------------------------------

    def _accept_query(self, query: ContinuousQuery) -> None:
        """Check the query, remember it and its R2S, and compile the native incremental
        matcher where the query allows (``native``: required; ``rdflib``: never)."""
        if query.form is not QueryForm.SELECT:
            raise UserError(
                f"the {self.type_name} engine runs SELECT queries; this is a {query.form.value} query", field="query"
            )
        if not query.windows:
            raise UserError("the query has no window over a stream", field="query")
        if not 0 <= self.report_window < len(query.windows):
            raise UserError(
                f"report_window {self.report_window} is not a window of the query (it has {len(query.windows)}: "
                f"0 … {len(query.windows) - 1})", field="parameters.report_window",
            )
        if isinstance(self.t0_param, (list, tuple)) and len(self.t0_param) != len(query.windows):
            raise UserError(
                f"t0 lists {len(self.t0_param)} values; the query has {len(query.windows)} windows (one t0 each)",
                field="parameters.t0",
            )
        self.query = query
        self.r2s = query.r2s or self.semantics.r2s
        self.native: CompiledQuery | None = None
        if self.matcher_choice != "rdflib":
            try:
                self.native = compile_select(query.algebra, {w.name for w in query.windows})
            except Unsupported as error:
                if self.matcher_choice == "native":
                    raise UserError(
                        f"the native matcher cannot run this query ({error})", field="parameters.matcher"
                    ) from None

    # --- hooks -------------------------------------------------------------------------

    def _run(self, evaluations: list[Evaluation], out: list[EngineResponse]) -> None:
        raise NotImplementedError

    def _trim(self) -> None:
        """Forget buffered elements no future evaluation can read: only those inside a window
        that is still open (or waits to be reported), those the store holds and those output
        held back needs stay, so memory follows the window, not the stream."""
        assert self.scheduler is not None
        reporting = self.windows[self.report_window].spec
        horizon = self.scheduler.horizon() - self._reads_before(reporting)
        since = self.scheduler.now  # the other windows are read at evaluation instants from here on
        held = self._held_back_from()
        if held is not None:  # ... or at the instant of an evaluation held back (which reads its
            horizon = min(horizon, held[0])  # report window from where it says)
        for index, window in enumerate(self.windows):
            read_from = since if held is None or index == self.report_window else min(since, held[1])
            horizon = min(horizon, window.spec.earliest_open_from(read_from) - self._reads_before(window.spec))
            if window.hi > window.lo:
                horizon = min(horizon, self.buffers[window.stream].element(window.lo).t)
        for buffer in self.buffers.values():
            buffer.trim_before(horizon)

    def _held_back_from(self) -> tuple[int, int] | None:
        """Output held back: the earliest application time it reads on the report window's
        stream and the earliest instant it is evaluated at (None: nothing held)."""
        return None

    def _reads_before(self, spec: WindowSpec) -> int:
        """How long before a window's opening the engine reads (ms; 0: it reads the window only)."""
        return 0

    def _release_pending(self, now: int, out: list[EngineResponse]) -> None:
        """Emit output held back until application time ``now`` (none by default)."""

    def _prefill(self, arrived: int) -> None:
        """Between evaluations, after ``arrived`` new elements: prepare the next evaluation
        (secret fills its store with the next window's elements as they arrive; none by default)."""

    def _scheduler_options(self) -> dict[str, Any]:
        """Extra `ReportScheduler` options (secret's misaligned-first-window fault)."""
        return {}

    # --- time and input ----------------------------------------------------------------

    def _start(self, t: int) -> None:
        """First input: fix t0 (hidden t0 = registration instant = first application time)."""
        assert self.query is not None
        count = len(self.query.windows)
        if self.t0_param is None:
            t0s = [t] * count
        elif isinstance(self.t0_param, (list, tuple)):
            t0s = [int(x) for x in self.t0_param]  # length checked in _accept_query
        else:
            t0s = [int(self.t0_param)] * count
        s = self.semantics
        for declaration, t0 in zip(self.query.windows, t0s):
            spec = WindowSpec(declaration.size_ms, declaration.slide_ms, t0, s.border, s.leading_partial)
            graph = None if self.query.dataset_mode is DatasetMode.MERGED else declaration.name
            self.windows.append(WindowState(spec, declaration.stream, graph))
            self.buffers.setdefault(declaration.stream, StreamBuffer())
        reporting = self.windows[self.report_window]
        self.scheduler = ReportScheduler(
            self.buffers[reporting.stream], reporting.spec, s.report, tick=s.tick, choice=s.active_window,
            batch_size=s.batch_size, **self._scheduler_options(),
        )
        self.started = True

    def _waits_for_first_element(self, stimulus: Stimulus | None) -> bool:
        """A hidden t0 anchored on the first element: nothing starts before an element of a
        window's stream arrives (an empty stimulus or an ``advance`` only moves the clock)."""
        if self.started or self.t0_param is not None or self.semantics.anchor is not Anchor.FIRST_ELEMENT:
            return False
        if stimulus is None or not stimulus.elements:
            return True
        assert self.query is not None
        streams = {window.stream for window in self.query.windows}
        first = self.query.windows[0].stream
        return not any((first if stimulus.streams is None else stream) in streams
                       for stream in (stimulus.streams or [None] * len(stimulus.elements)))

    def push(self, stimulus: Stimulus) -> list[EngineResponse]:
        if self.query is None:
            raise RuntimeError("register a query first")
        if self._waits_for_first_element(stimulus):
            return []
        t = stimulus.application_time
        if not self.started:
            self._start(t)
        scheduler = self.scheduler
        assert scheduler is not None
        if self.clock is not None and t < self.clock:
            # an element behind the engine's clock (outside the engine contract; the probe
            # battery's watermark probe leaves it on purpose) is taken as it arrives, as a
            # data-driven engine sees it: at the next instant, after all of the clock's time
            t = self.clock + 1
        self.clock = t
        responses: list[EngineResponse] = []
        self._run(scheduler.before(t), responses)
        self._release_pending(t - 1, responses)
        arrived_before = scheduler.buffer.size
        default_stream = self.windows[0].stream
        streams = stimulus.streams
        for index, element in enumerate(stimulus.elements):
            buffer = self.buffers.get(default_stream if streams is None else streams[index])
            if buffer is not None:
                buffer.append(t, element)
        self._run(scheduler.at(t, arrived_before), responses)
        self._release_pending(t, responses)
        self._prefill(scheduler.buffer.size - arrived_before)
        self._trim()
        return responses

    def advance_time(self, t: int) -> list[EngineResponse]:
        if self.query is None:
            raise RuntimeError("register a query first")
        if self._waits_for_first_element(None):
            return []
        if not self.started:
            self._start(t)
        assert self.scheduler is not None
        self.clock = max(t, self.clock if self.clock is not None else t)
        responses: list[EngineResponse] = []
        self._run(self.scheduler.advance(t), responses)
        self._release_pending(t, responses)
        self._prefill(0)
        return responses

    def close(self) -> list[EngineResponse]:
        responses: list[EngineResponse] = []
        if self.scheduler is not None:
            self._run(self.scheduler.flush_partial_batch(), responses)
        return responses
