"""Operational-semantics parameters of an RSP engine (SECRET + CQL R2S), and presets.

Names follow docs/design/SEMANTICS.md. Every parameter an engine can hide is explicit here so that
the oracle, the reference engine and the teaching views can only diverge through a
named parameter (docs/design/ARCHITECTURE.md "One semantics implementation").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Mapping

from rsp_workbench.core.time import TimeUnit
from rsp_workbench.errors import UserError


class BorderConvention(Enum):
    """Which window borders are inclusive.

    SECRET/CSRBench: ``closed-open`` [o, c); RSP-QL Def. 12: ``open-closed`` (o, c];
    YABench's oracle: ``closed`` [o, c].
    """

    CLOSED_OPEN = "closed-open"
    OPEN_CLOSED = "open-closed"
    CLOSED = "closed"

    def contains(self, open_: int, close: int, t: int) -> bool:
        if self is BorderConvention.CLOSED_OPEN:
            return open_ <= t < close
        if self is BorderConvention.OPEN_CLOSED:
            return open_ < t <= close
        return open_ <= t <= close

    def brackets(self) -> tuple[str, str]:
        return {
            BorderConvention.CLOSED_OPEN: ("[", ")"),
            BorderConvention.OPEN_CLOSED: ("(", "]"),
            BorderConvention.CLOSED: ("[", "]"),
        }[self]


class ActiveWindowChoice(Enum):
    """Which open window a content-based evaluation reads at instant t.

    ``earliest``: SECRET's *active* window, the open window with the earliest opening time
    (also what RSP-QL Examples 7 and 10 compute). ``latest``: RSP-QL's *present* window as
    literally defined (most recent opening time), evaluated on the sub-window (o_p, t].
    """

    EARLIEST = "earliest"
    LATEST = "latest"


class Strategy(Enum):
    """SECRET reporting strategies (RSP-QL Def. 23)."""

    CONTENT_CHANGE = "content-change"
    WINDOW_CLOSE = "window-close"
    NON_EMPTY = "non-empty"
    PERIODIC = "periodic"
    #: with window-close: a closed window is reported when the next element after its close
    #: arrives (data-driven engines: rsp-js, C-SPARQL in practice), not at the close itself
    NEXT_ELEMENT = "next-element"


class Tick(Enum):
    """What drives elements into the window (SECRET Tick)."""

    TUPLE = "tuple"
    TIME = "time"
    BATCH = "batch"


class Anchor(Enum):
    """What a hidden t0 is: the registration instant (the engine's clock starts, CSRBench's
    C-SPARQL) or the first element's time (Esper's ``#time_batch`` without a reference point,
    rsp-rs since 0.3.4): they differ when time passes before the first element."""

    REGISTRATION = "registration"
    FIRST_ELEMENT = "first-element"


class Grouping(Enum):
    """How an engine's responses group (the probe's ``grouping``): one response per evaluation,
    or one per binding (an evaluation's responses share its instant and are merged to judge it)."""

    EVALUATION = "evaluation"
    BINDING = "binding"


class R2S(Enum):
    """CQL relation-to-stream operators (RSP-QL Def. 20-22)."""

    RSTREAM = "rstream"
    ISTREAM = "istream"
    DSTREAM = "dstream"


def parse_enum(enum_type: type[Enum], value: Any, field_name: str) -> Any:
    if isinstance(value, enum_type):
        return value
    text = str(value).strip().lower().replace("_", "-")
    for member in enum_type:
        if member.value == text:
            return member
    raise UserError(
        f"{value!r} is not one of {', '.join(m.value for m in enum_type)}", field=field_name
    )


@dataclass(frozen=True)
class ReportPolicy:
    """A conjunction of strategies (SECRET Report). ``period_ms`` is set iff PERIODIC is in it."""

    strategies: frozenset[Strategy]
    period_ms: int | None = None

    def __post_init__(self) -> None:
        if not self.strategies:
            raise UserError("a report policy needs at least one strategy", field="report")
        if (Strategy.PERIODIC in self.strategies) != (self.period_ms is not None):
            raise UserError("periodic(period) needs exactly one period", field="report")
        if self.period_ms is not None and self.period_ms <= 0:
            raise UserError("the period must be positive", field="report")
        if Strategy.NEXT_ELEMENT in self.strategies and Strategy.WINDOW_CLOSE not in self.strategies:
            raise UserError(
                "next-element delays a window-close report to the next element; combine it with window-close",
                field="report",
            )
        if not self.strategies & {Strategy.CONTENT_CHANGE, Strategy.WINDOW_CLOSE, Strategy.PERIODIC}:
            raise UserError(
                "non-empty alone never triggers an evaluation; combine it with "
                "content-change, window-close or periodic",
                field="report",
            )

    @classmethod
    def of(cls, *strategies: Strategy, period_ms: int | None = None) -> "ReportPolicy":
        return cls(frozenset(strategies), period_ms)

    @classmethod
    def parse(cls, text: str | list[str], field_name: str = "report") -> "ReportPolicy":
        """Parse ``window-close & non-empty``, ``cc``, ``periodic(5s)`` or a list of those."""
        from rsp_workbench.core.time import parse_duration

        items = text if isinstance(text, list) else str(text).replace("∧", "&").replace("+", "&").split("&")
        abbreviations = {"cc": "content-change", "wc": "window-close", "nc": "non-empty",
                         "non-empty-content": "non-empty", "p": "periodic"}
        strategies: set[Strategy] = set()
        period: int | None = None
        for raw in items:
            item = str(raw).strip().lower()
            if not item:
                continue
            if item.startswith(("periodic(", "p(")) and item.endswith(")"):
                period = parse_duration(item[item.index("(") + 1 : -1], field=field_name)
                strategies.add(Strategy.PERIODIC)
                continue
            strategies.add(parse_enum(Strategy, abbreviations.get(item, item), field_name))
        return cls(frozenset(strategies), period)

    def __str__(self) -> str:
        order = [Strategy.CONTENT_CHANGE, Strategy.WINDOW_CLOSE, Strategy.NEXT_ELEMENT, Strategy.NON_EMPTY,
                 Strategy.PERIODIC]
        parts = []
        for strategy in order:
            if strategy in self.strategies:
                if strategy is Strategy.PERIODIC:
                    from rsp_workbench.core.time import format_duration

                    parts.append(f"periodic({format_duration(self.period_ms or 0)})")
                else:
                    parts.append(strategy.value)
        return " & ".join(parts)


@dataclass(frozen=True)
class EngineSemantics:
    """Everything that decides *what* an engine answers and *when* (SECRET + R2S).

    ``t0`` is None when the engine hides it (then the admissible set of RSP-QL
    Theorem 1 applies). ``leading_partial`` adds YABench's first windows
    ``[max(t0, t0 + iβ − ω), t0 + iβ]`` that are shorter than ω.
    """

    border: BorderConvention = BorderConvention.CLOSED_OPEN
    report: ReportPolicy = field(default_factory=lambda: ReportPolicy.of(Strategy.WINDOW_CLOSE, Strategy.NON_EMPTY))
    tick: Tick = Tick.TUPLE
    r2s: R2S = R2S.RSTREAM
    empty_notification: bool = True
    time_unit: TimeUnit = TimeUnit.S
    t0: int | None = None
    leading_partial: bool = False
    active_window: ActiveWindowChoice = ActiveWindowChoice.EARLIEST
    batch_size: int = 1
    grouping: Grouping = Grouping.EVALUATION
    anchor: Anchor = Anchor.REGISTRATION  # what a hidden t0 (t0 None) is

    def with_overrides(self, overrides: Mapping[str, Any]) -> "EngineSemantics":
        """Return a copy with parameters given as text/YAML values; errors name the field."""
        from rsp_workbench.core.time import parse_duration

        changes: dict[str, Any] = {}
        for key, value in overrides.items():
            name = key.replace("-", "_")
            if name == "border":
                changes[name] = parse_enum(BorderConvention, value, key)
            elif name == "report":
                changes[name] = value if isinstance(value, ReportPolicy) else ReportPolicy.parse(value, key)
            elif name == "tick":
                changes[name] = parse_enum(Tick, value, key)
            elif name == "r2s":
                changes[name] = parse_enum(R2S, value, key)
            elif name == "empty_notification" or name == "leading_partial":
                if not isinstance(value, bool):
                    raise UserError(f"expected true or false, got {value!r}", field=key)
                changes[name] = value
            elif name == "time_unit":
                changes[name] = value if isinstance(value, TimeUnit) else TimeUnit.parse(str(value), key)
            elif name == "t0":
                changes[name] = None if value in (None, "auto", "hidden") else parse_duration(value, field=key)
            elif name == "active_window":
                changes[name] = parse_enum(ActiveWindowChoice, value, key)
            elif name == "grouping":
                changes[name] = parse_enum(Grouping, value, key)
            elif name == "anchor":
                changes[name] = parse_enum(Anchor, value, key)
            elif name == "batch_size":
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise UserError(f"expected a positive integer, got {value!r}", field=key)
                changes[name] = value
            else:
                raise UserError(
                    f"unknown semantics parameter; expected one of {', '.join(SEMANTICS_FIELDS)}", field=key
                )
        return replace(self, **changes)

    def describe(self) -> dict[str, Any]:
        return {
            "border": self.border.value,
            "report": str(self.report),
            "tick": self.tick.value,
            "r2s": self.r2s.value,
            "empty_notification": self.empty_notification,
            "time_unit": self.time_unit.value,
            "t0": self.t0,
            "leading_partial": self.leading_partial,
            "active_window": self.active_window.value,
            "grouping": self.grouping.value,
            "anchor": self.anchor.value,
        }


SEMANTICS_FIELDS = (
    "border", "report", "tick", "r2s", "empty_notification", "time_unit", "t0",
    "leading_partial", "active_window", "batch_size", "grouping", "anchor",
)

_WC_NC = ReportPolicy.of(Strategy.WINDOW_CLOSE, Strategy.NON_EMPTY)

# CSRBench Table 1 (and YABench's oracle conventions, docs/design/SEMANTICS.md).
PRESETS: dict[str, EngineSemantics] = {
    "csparql": EngineSemantics(
        border=BorderConvention.CLOSED_OPEN, report=_WC_NC, tick=Tick.TUPLE, r2s=R2S.RSTREAM,
        empty_notification=True, time_unit=TimeUnit.S,
    ),
    "cqels": EngineSemantics(
        border=BorderConvention.CLOSED_OPEN, report=ReportPolicy.of(Strategy.CONTENT_CHANGE),
        tick=Tick.TUPLE, r2s=R2S.ISTREAM, empty_notification=False, time_unit=TimeUnit.HUNDRED_MS,
    ),
    "sparqlstream": EngineSemantics(
        border=BorderConvention.CLOSED_OPEN, report=_WC_NC, tick=Tick.TUPLE, r2s=R2S.RSTREAM,
        empty_notification=False, time_unit=TimeUnit.HUNDRED_MS,
    ),
    # RSP-QL (Dell'Aglio et al.): windows (o, c] (Def. 9), the report policy of Example 9
    # (WC ∧ NC), Rstream, time-driven; an empty relation is not streamed. With the coupon
    # query's t0 vector this gives Example 10's rows at 8 and 16.
    "rspql": EngineSemantics(
        border=BorderConvention.OPEN_CLOSED, report=_WC_NC, tick=Tick.TIME, r2s=R2S.RSTREAM,
        empty_notification=False, time_unit=TimeUnit.MS,
    ),
    "yabench-window-close": EngineSemantics(
        border=BorderConvention.CLOSED, report=ReportPolicy.of(Strategy.WINDOW_CLOSE), tick=Tick.TIME,
        r2s=R2S.RSTREAM, empty_notification=True, time_unit=TimeUnit.MS, t0=0, leading_partial=True,
    ),
    "yabench-content-change": EngineSemantics(
        border=BorderConvention.CLOSED, report=ReportPolicy.of(Strategy.CONTENT_CHANGE), tick=Tick.TIME,
        r2s=R2S.ISTREAM, empty_notification=False, time_unit=TimeUnit.MS, t0=0, leading_partial=True,
    ),
    # RSP-JS 1.3.5 (npm rsp-js) as read from its code: rsp_workbench/engines/rspjs/README.md cites each
    # line. Closed-open windows [iβ − ω, iβ) aligned on multiples of β from 0 (the leading
    # ones shorter), a closed window evaluated when the first element after its close
    # arrives and only over non-empty content, every binding of the answer emitted
    # (Rstream) as one response each, nothing for an empty answer, timestamps taken as milliseconds. What no
    # parameter says (one window per element, the drifting window start) is in the README.
    "rspjs": EngineSemantics(
        border=BorderConvention.CLOSED_OPEN,
        report=ReportPolicy.of(Strategy.WINDOW_CLOSE, Strategy.NEXT_ELEMENT, Strategy.NON_EMPTY),
        tick=Tick.TIME, r2s=R2S.RSTREAM,
        empty_notification=False, time_unit=TimeUnit.MS, t0=0, leading_partial=True, grouping=Grouping.BINDING,
    ),
    # rsp-rs 0.3.5 (crates.io rsp-rs, a Rust port of RSP-JS's window operator) as read from its
    # code: rsp_workbench/engines/rsprs/README.md cites each line. RSP-JS's windows, but aligned on
    # the first element's time (a hidden t0; RSP-JS: 0), and a closed window is evaluated when the
    # next element arrives whatever its content (no non-empty condition), one response per binding
    # (as RSP-JS). What no parameter says (one window per element, a first element at time 0) is in
    # the README.
    "rsprs": EngineSemantics(
        border=BorderConvention.CLOSED_OPEN,
        report=ReportPolicy.of(Strategy.WINDOW_CLOSE, Strategy.NEXT_ELEMENT),
        tick=Tick.TIME, r2s=R2S.RSTREAM,
        empty_notification=False, time_unit=TimeUnit.MS, t0=None, leading_partial=True,
        anchor=Anchor.FIRST_ELEMENT, grouping=Grouping.BINDING,
    ),
    # C-SPARQL's architecture (Esper 9 windows, Jena ARQ per evaluation), one preset per EPL
    # combination of the plug-in (rsp_workbench/engines/esper/README.md cites Esper's documentation
    # and source for each parameter, and lists what no parameter says). #time_batch(ω): a batch
    # starts at the first event, is posted when Esper's clock reaches its end, an empty batch is
    # not posted, the evaluated relation always is (also when empty).
    "esper-time-batch": EngineSemantics(
        border=BorderConvention.CLOSED_OPEN, report=_WC_NC, tick=Tick.TIME, r2s=R2S.RSTREAM,
        empty_notification=True, time_unit=TimeUnit.MS, t0=None, anchor=Anchor.FIRST_ELEMENT,
    ),
    # #time_batch(ω, reference point): batches aligned on the reference point (t0 = 0 for a
    # reference point that is a multiple of ω; else semantics: {t0: REFERENCE_POINT})
    "esper-time-batch-ref": EngineSemantics(
        border=BorderConvention.CLOSED_OPEN, report=_WC_NC, tick=Tick.TIME, r2s=R2S.RSTREAM,
        empty_notification=True, time_unit=TimeUnit.MS, t0=0,
    ),
    # select rstream … #time_batch(ω): Esper's remove stream, the batch that leaves as the next one
    # is posted, evaluated then: closest to a Dstream (what no parameter says is in README.md)
    "esper-time-batch-rstream": EngineSemantics(
        border=BorderConvention.CLOSED_OPEN, report=ReportPolicy.of(Strategy.WINDOW_CLOSE), tick=Tick.TIME,
        r2s=R2S.DSTREAM, empty_notification=False, time_unit=TimeUnit.MS, t0=None, anchor=Anchor.FIRST_ELEMENT,
    ),
    # #time(ω) output snapshot every β (C-SPARQL 0.9's own EPL): the sliding window's whole content
    # every β of Esper's clock from the first event, empty or not; the leading windows shorter.
    # An element exactly ω before an output has already expired (README.md): no border says that.
    "esper-time-snapshot": EngineSemantics(
        border=BorderConvention.CLOSED_OPEN, report=ReportPolicy.of(Strategy.WINDOW_CLOSE), tick=Tick.TIME,
        r2s=R2S.RSTREAM, empty_notification=True, time_unit=TimeUnit.MS, t0=None, leading_partial=True,
        anchor=Anchor.FIRST_ELEMENT,
    ),
    # #time(ω) output all every β: the events that entered since the last output — β of them, not
    # ω: a sliding window's older part never reaches the query (README.md) — every β from the first event
    "esper-time-all": EngineSemantics(
        border=BorderConvention.CLOSED_OPEN, report=ReportPolicy.of(Strategy.WINDOW_CLOSE), tick=Tick.TIME,
        r2s=R2S.RSTREAM, empty_notification=True, time_unit=TimeUnit.MS, t0=None, leading_partial=True,
        anchor=Anchor.FIRST_ELEMENT,
    ),
    # Spark Structured Streaming (engine spark-streaming), one preset per output mode, as read from
    # Spark's documentation and source (rsp_workbench/engines/sparkstream/README.md cites each, and lists
    # what no parameter says). Windows are Spark's window(ts, ω, β, startTime): [o, c) on the grid of
    # startTime (0: t0 = 0), those that start before 0 the leading partial ones; one micro-batch per
    # stimulus. append on a BGP: each new join result leaves once, in the micro-batch of the stimulus
    # that completes it (a content change; the new rows only: Istream); nothing when nothing is new.
    "spark-append": EngineSemantics(
        border=BorderConvention.CLOSED_OPEN, report=ReportPolicy.of(Strategy.CONTENT_CHANGE), tick=Tick.TIME,
        r2s=R2S.ISTREAM, empty_notification=False, time_unit=TimeUnit.MS, t0=0, leading_partial=True,
    ),
    # append with GROUP BY + COUNT: a window's groups leave once, when the watermark (the latest event
    # time less the delay) has passed its close — in the no-data batch after the stimulus that moved
    # it there; a window without a group leaves nothing
    "spark-append-aggregate": EngineSemantics(
        border=BorderConvention.CLOSED_OPEN,
        report=ReportPolicy.of(Strategy.WINDOW_CLOSE, Strategy.NEXT_ELEMENT, Strategy.NON_EMPTY), tick=Tick.TIME,
        r2s=R2S.RSTREAM, empty_notification=False, time_unit=TimeUnit.MS, t0=0, leading_partial=True,
    ),
    # update: every micro-batch sends the result rows that changed in it (new join results; groups
    # whose count changed): a content change, Istream
    "spark-update": EngineSemantics(
        border=BorderConvention.CLOSED_OPEN, report=ReportPolicy.of(Strategy.CONTENT_CHANGE), tick=Tick.TIME,
        r2s=R2S.ISTREAM, empty_notification=False, time_unit=TimeUnit.MS, t0=0, leading_partial=True,
    ),
    # complete (aggregates only): every micro-batch sends the whole result table — every window's groups
    # so far, old windows included (README.md): Rstream at every content change
    "spark-complete": EngineSemantics(
        border=BorderConvention.CLOSED_OPEN, report=ReportPolicy.of(Strategy.CONTENT_CHANGE), tick=Tick.TIME,
        r2s=R2S.RSTREAM, empty_notification=False, time_unit=TimeUnit.MS, t0=0, leading_partial=True,
    ),
}


def preset(name: str) -> EngineSemantics:
    try:
        return PRESETS[name]
    except KeyError:
        raise UserError(f"unknown preset {name!r}; expected one of {', '.join(PRESETS)}", field="preset") from None
