"""Teaching mode, without Qt: small examples and what each policy does at each instant.

A teacher puts a tiny stream and a query on screen, picks a few policy columns (presets
such as C-SPARQL, CQELS, SPARQLstream, plus a custom one) and moves through time. For
every column and instant this module answers the SECRET questions (CSRBench Sect. 3):
the *scope* (active window), the *content*, whether the window *reports*, what the query
returns there and what the *R2S* operator emits. Everything is computed by the same core
functions the oracle uses (`rsp_workbench.core` + `rsp_workbench.oracle.reference.expected_answer`),
so teaching mode cannot disagree with the oracle. Results are cached per parameter set.

The query's own R2S keyword (``REGISTER RSTREAM``) is dropped so that the column's R2S
choice is what the students see change.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Hashable, Mapping, Sequence

from rsp_workbench.core.r2s import Emission
from rsp_workbench.core.report import Evaluation, content_at
from rsp_workbench.core.semantics import PRESETS, EngineSemantics
from rsp_workbench.core.windows import WindowInstance
from rsp_workbench.oracle.reference import ExpectedAnswer, StaticData, expected_answer, window_specs
from rsp_workbench.query.model import ContinuousQuery
from rsp_workbench.query.parser import parse_query
from rsp_workbench.streams.model import StreamElement

EX = "http://example.org/"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"


def _iri(name: str) -> str:
    return f"<{EX}{name}>"


@dataclass(frozen=True)
class TeachingExample:
    """A tiny stream + query to teach with. Times are ms; ``step`` is the slider step."""

    key: str
    title: str
    description: str
    query_text: str
    streams: Mapping[str, tuple[StreamElement, ...]]
    end: int
    default_t0: tuple[int, ...]
    step: int = 1000
    static: StaticData = field(default_factory=StaticData)
    report_window: int = 0
    #: the policy columns shown first: the example's own system beside the others
    default_columns: tuple[str, ...] = ("csparql", "cqels", "sparqlstream", "custom")

    def query(self) -> ContinuousQuery:
        """The parsed query with its R2S keyword dropped (the column decides R2S)."""
        return dataclasses.replace(parse_query(self.query_text, source=self.key), r2s=None)


def _rooms() -> TeachingExample:
    """CSRBench Fig. 1/2: m1 and m2 seen in r1 (1 s, 3 s), in r2 (11 s, 13 s), p3 alone in r3 (25 s)."""
    stream = "http://example.org/rooms"
    rows = [("m1", "r1", 1000), ("m2", "r1", 3000), ("m1", "r2", 11000), ("m2", "r2", 13000), ("p3", "r3", 25000)]
    elements = tuple(StreamElement(_iri(who), _iri("detectedAt"), _iri(room), t) for who, room, t in rows)
    return TeachingExample(
        key="rooms",
        title="CSRBench rooms (Fig. 1/2)",
        description=(
            "Which room are both m1 and m2 detected in? Tumbling window of 10 s. With t0 = 0 the "
            "answer is r1 then r2; with t0 = 2 s each pair is split by a window border and "
            "nothing is returned (CSRBench Fig. 1)."
        ),
        query_text=(
            "PREFIX : <http://example.org/>\n"
            "REGISTER QUERY rooms AS\n"
            "SELECT ?room\n"
            "FROM STREAM <http://example.org/rooms> [RANGE 10s STEP 10s]\n"
            "WHERE { :m1 :detectedAt ?room .\n"
            "        :m2 :detectedAt ?room }\n"
        ),
        streams={stream: elements},
        end=40_000,
        default_t0=(0,),
        step=1000,
    )


def _shops_at(t: int) -> list[tuple[str, str, str]]:
    """G_shops of RSP-QL Example 4 (times in s there, ms here): both shops in [2 s, 13 s], only B after."""
    both = [(_iri("a"), RDF_TYPE, _iri("Shop")), (_iri("b"), RDF_TYPE, _iri("Shop")),
            (_iri("alice"), _iri("owns"), _iri("a")), (_iri("bob"), _iri("owns"), _iri("b"))]
    if t < 2000:
        return []
    return both if t <= 13_000 else [both[1], both[3]]


def _coupon() -> TeachingExample:
    """RSP-QL Example 10 with the paper's time units read as seconds."""
    nearby = "http://example.org/nearby"
    coupons = "http://example.org/coupons"
    s_nearby = [("diana", "a", 2), ("eve", "b", 2), ("carl", "a", 5), ("eve", "a", 7), ("diana", "b", 12)]
    s_coupon = [("alice", '"10% discount on"', 8), ("bob", '"free coffee at"', 15)]
    return TeachingExample(
        key="coupon",
        title="RSP-QL coupons (Example 10)",
        description=(
            "Shoppers near a shop whose owner offers a coupon. W1 (5 s, slide 2 s, t0 = 1 s) over "
            "S_nearby, W2 (2 s, slide 2 s, t0 = 0) over S_coupon; the report policy is tied to W2. "
            "G_shops changes over time (a time-varying graph). RSP-QL's answer: evaluations at "
            "8 s and 16 s."
        ),
        query_text=(
            "PREFIX : <http://example.org/>\n"
            "REGISTER RSTREAM :out AS\n"
            "SELECT ?shopper ?shop ?shop_owner ?coupon\n"
            "FROM NAMED WINDOW :w1 ON :nearby [RANGE PT5S STEP PT2S]\n"
            "FROM NAMED WINDOW :w2 ON :coupons [RANGE PT2S STEP PT2S]\n"
            "WHERE {\n"
            "  WINDOW :w1 { ?shopper :isNearby ?shop }\n"
            "  WINDOW :w2 { ?shop_owner :offers ?coupon }\n"
            "  ?shop_owner :owns ?shop\n"
            "}\n"
        ),
        streams={
            nearby: tuple(StreamElement(_iri(w), _iri("isNearby"), _iri(s), t * 1000) for w, s, t in s_nearby),
            coupons: tuple(StreamElement(_iri(w), _iri("offers"), text, t * 1000) for w, text, t in s_coupon),
        },
        end=20_000,
        default_t0=(1000, 0),
        step=1000,
        static=StaticData(time_varying_default=_shops_at),
        report_window=1,
        default_columns=("rspql", "csparql", "cqels", "custom"),
    )


EXAMPLES: dict[str, Callable[[], TeachingExample]] = {"rooms": _rooms, "coupon": _coupon}


@dataclass(frozen=True)
class PolicyColumn:
    """One column of the comparison: a label and the full semantics it evaluates with."""

    label: str
    semantics: EngineSemantics
    preset: str | None = None


def column_for(name: str) -> PolicyColumn:
    """A column for a preset name; ``custom`` starts as C-SPARQL's semantics."""
    if name == "custom":
        return PolicyColumn("custom", PRESETS["csparql"], None)
    return PolicyColumn(name, PRESETS[name], name)


@dataclass(frozen=True)
class WindowState:
    """Scope and content of one window of the query at an instant (SECRET Scope/Content)."""

    name: str
    scope: WindowInstance | None
    content: tuple[StreamElement, ...]


@dataclass(frozen=True)
class InstantView:
    """What one column shows at instant ``time``."""

    time: int
    windows: tuple[WindowState, ...]
    reports: bool
    evaluations: tuple[Evaluation, ...]
    returned: tuple[Counter[Hashable], ...]  # the query's relation per evaluation at this instant
    emitted: tuple[Emission[Hashable], ...]  # what R2S streams out at this instant

    @property
    def scope(self) -> WindowInstance | None:
        """The reporting window's scope (first window if only one)."""
        return self.windows[0].scope if self.windows else None


def format_mapping(mapping: Hashable) -> str:
    """``?room=:r2`` style text of one solution mapping (prefix ``ex:`` shortened to ``:``)."""
    items = sorted(dict(mapping).items()) if mapping else []  # type: ignore[call-overload]
    return ", ".join(f"?{name}={shorten(value)}" for name, value in items) or "{}"


def format_bag(bag: Counter[Hashable]) -> list[str]:
    """One line per mapping (repeated by multiplicity), sorted."""
    return sorted(format_mapping(m) for m in bag.elements())


def shorten(term: str) -> str:
    if term.startswith(f"<{EX}") and term.endswith(">"):
        return ":" + term[len(EX) + 1 : -1]
    return term


def format_element(element: StreamElement) -> str:
    return f"{shorten(element.subject)} {shorten(element.predicate)} {shorten(element.object)} @ {seconds(element.t)}"


def seconds(ms: int) -> str:
    """Teaching mode speaks seconds everywhere (panels, axis, t0 fields): ``2500`` → ``2.5 s``."""
    return f"{ms / 1000:g} s"


def format_scope(window: WindowInstance) -> str:
    """``[8 s, 10 s)``: a window's scope with its border brackets, in seconds."""
    left, right = window.border.brackets()
    return f"{left}{window.open / 1000:g} s, {window.close / 1000:g} s{right}"


class TeachingModel:
    """State of teaching mode: the example, the t0 vector, the columns, the current instant.

    Observers register with :meth:`subscribe` and are called with no arguments after every
    change (napari-style evented model, kept minimal).
    """

    def __init__(self, example: str = "rooms", columns: Sequence[str] | None = None) -> None:
        self._listeners: list[Callable[[], None]] = []
        self._cache: dict[tuple[object, ...], ExpectedAnswer] = {}
        self.example = EXAMPLES[example]()
        self._query = self.example.query()
        self.t0: tuple[int, ...] = self.example.default_t0
        self.columns: list[PolicyColumn] = [column_for(name) for name in columns or self.example.default_columns]
        self.time = 0

    # ------------------------------------------------------------------ observers
    def subscribe(self, callback: Callable[[], None]) -> None:
        self._listeners.append(callback)

    def unsubscribe(self, callback: Callable[[], None]) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def _changed(self) -> None:
        for callback in list(self._listeners):
            callback()

    # ------------------------------------------------------------------ commands
    @property
    def query(self) -> ContinuousQuery:
        return self._query

    def set_example(self, key: str) -> None:
        """Switch example; columns still at the old example's defaults take the new one's."""
        if self.columns == [column_for(name) for name in self.example.default_columns]:
            self.columns = [column_for(name) for name in EXAMPLES[key]().default_columns]
        self.example = EXAMPLES[key]()
        self._query = self.example.query()
        self.t0 = self.example.default_t0
        self.time = 0
        self._changed()

    def set_t0(self, t0: Sequence[int] | int) -> None:
        vector = (t0,) if isinstance(t0, int) else tuple(t0)
        if len(vector) == 1 and len(self._query.windows) > 1:
            vector = vector + self.t0[1:]
        self.t0 = tuple(int(v) for v in vector)
        self._changed()

    def set_window_t0(self, window: int, t0: int) -> None:
        vector = list(self.t0)
        vector[window] = int(t0)
        self.set_t0(vector)

    def set_time(self, time: int) -> None:
        self.time = int(time)
        self._changed()

    def set_column(self, index: int, column: PolicyColumn) -> None:
        self.columns[index] = column
        self._changed()

    def set_preset(self, index: int, preset: str) -> None:
        self.set_column(index, column_for(preset) if preset in PRESETS or preset == "custom" else self.columns[index])

    def override(self, index: int, **overrides: object) -> None:
        """Change SECRET parameters of a column (values as in experiment files, e.g. border='closed')."""
        column = self.columns[index]
        semantics = column.semantics.with_overrides(overrides)
        label = column.label if column.preset is None else f"{column.preset}*"
        if semantics == PRESETS.get(column.preset or "", None):
            label = column.preset or label
        self.set_column(index, PolicyColumn(label, semantics, column.preset))

    def t0_note(self, column: PolicyColumn | int) -> str | None:
        """Why a preset's own t0 is not what the column shows, if it is not.

        A preset that fixes t0 (the yabench-* ones start every window at 0) is overridden
        here by the t0 fields, as an experiment's ``oracle.t0`` overrides it for the oracle
        (`rsp_workbench.oracle.run.t0_vectors`); the column says so instead of staying silent.
        """
        if isinstance(column, int):
            column = self.columns[column]
        fixed = column.semantics.t0
        if fixed is None or all(value == fixed for value in self.t0):
            return None
        shown = ", ".join(seconds(value) for value in self.t0)
        return (f"{column.preset or column.label} fixes t0 = {seconds(fixed)}; shown with the t0 field(s) "
                f"({shown}), as an experiment's oracle.t0 would override it")

    # ------------------------------------------------------------------ answers
    def answer(self, column: PolicyColumn | int) -> ExpectedAnswer:
        """The oracle's answer for a column (cached per example, semantics and t0)."""
        if isinstance(column, int):
            column = self.columns[column]
        key = (self.example.key, column.semantics, self.t0)
        if key not in self._cache:
            self._cache[key] = expected_answer(
                self._query, self.example.streams, column.semantics, self.t0,
                static=self.example.static, end=self.example.end, report_window=self.example.report_window,
            )
        return self._cache[key]

    def emissions(self, column: PolicyColumn | int) -> list[tuple[int, str, list[str]]]:
        """``(time, operation, bindings text)`` per emission: the column's output stream."""
        return [(e.time, e.operation, format_bag(e.bindings)) for e in self.answer(column).emissions]

    def view(self, column: PolicyColumn | int, time: int | None = None) -> InstantView:
        """Scope, content, report, query result and R2S output of a column at an instant."""
        if isinstance(column, int):
            column = self.columns[column]
        time = self.time if time is None else time
        answer = self.answer(column)
        specs = window_specs(self._query, column.semantics, self.t0)
        states = []
        order = [self.example.report_window] + [i for i in range(len(specs)) if i != self.example.report_window]
        for index in order:
            declaration, spec = self._query.windows[index], specs[index]
            elements = self.example.streams[declaration.stream]
            times = [element.t for element in elements]
            scope, lo, hi = content_at(times, spec, time, column.semantics.active_window)
            evaluated = [e for e in answer.evaluations if e.time == time]
            if index == self.example.report_window and evaluated:
                # the window that reports now (e.g. the one closing at t), not the next one
                scope, lo, hi = evaluated[-1].window, evaluated[-1].lo, evaluated[-1].hi
            states.append(WindowState(shorten(f"<{declaration.name}>") if not declaration.generated_name else "window",
                                      scope, tuple(elements[lo:hi])))
        evaluations = tuple(e for e in answer.evaluations if e.time == time)
        returned = tuple(r for e, r in zip(answer.evaluations, answer.relations) if e.time == time)
        emitted = tuple(e for e in answer.emissions if e.time == time)
        return InstantView(time, tuple(states), bool(evaluations), evaluations, returned, emitted)

    def instant_reasons(self, time: int) -> list[str]:
        """What happens at ``time`` (what ◀ ▶ stopped at): elements arriving, windows opening or
        closing and evaluations, per column."""
        arriving = sum(1 for elements in self.example.streams.values() for element in elements if element.t == time)
        reasons = [f"{arriving} element{'s arrive' if arriving > 1 else ' arrives'}"] if arriving else []
        for column in self.columns:
            happens = []
            for spec in window_specs(self._query, column.semantics, self.t0):
                windows = spec.closing_within(0, self.example.end + spec.size)
                if any(window.open == time for window in windows):
                    happens.append("a window opens")
                if any(window.close == time for window in windows):
                    happens.append("a window closes")
            if any(e.time == time for e in self.answer(column).evaluations):
                happens.append("it evaluates")
            if happens:
                reasons.append(f"{column.label}: {', '.join(dict.fromkeys(happens))}")
        return reasons

    def interesting_instants(self) -> list[int]:
        """Element times, window borders and evaluation instants of every column (for ◀ ▶ stepping)."""
        instants: set[int] = {0, self.example.end}
        for elements in self.example.streams.values():
            instants.update(element.t for element in elements)
        for column in self.columns:
            specs = window_specs(self._query, column.semantics, self.t0)
            for spec in specs:
                for window in spec.closing_within(0, self.example.end + spec.size):
                    instants.update((window.open, window.close))
            instants.update(e.time for e in self.answer(column).evaluations)
        return sorted(t for t in instants if 0 <= t <= self.example.end)
