"""The probe battery: tiny designed streams, each placed against window borders on purpose.

Every probe is one query over one stream with slide β = 1000 ms. Its elements are
placed so that the operational-semantics parameters give *different* answers:

* the first element of every probe is a non-matching ``:q`` element at the registration
  instant R (it starts the engine's clock and fixes a hidden t0 = R without producing a
  binding), and R differs from probe to probe (mod β and mod 100 ms), so windows aligned
  on R ("registration") and windows aligned on a fixed t0 (e.g. 0) fall apart — except in
  ``origin``, whose R is 0 on purpose (a stream that starts at time 0);
* matching ``:p`` elements sit at least 150 ms away from every border of both
  alignments — except in ``borders``, which puts them exactly *on* borders (to tell
  closed-open from open-closed from closed) and 50 ms after them;
* each subject IRI names one element, so a binding tells which element the engine had in
  its window (the probe keeps the element → time map for the diagnosis of divergences).

After the last element comes a ``:q`` sentinel far beyond the probe's horizon H: engines
that close a window only when a later element arrives (RSP-JS, C-SPARQL in practice)
report every window up to H, and everything the engine says after H is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from rsp_workbench.engine import Stimulus
from rsp_workbench.streams.model import StreamElement

NS = "urn:rspwb:probe:"
STREAM = NS + "stream"
MATCH = f"<{NS}p>"
FILLER = f"<{NS}q>"
SLIDE_MS = 1000
DRIFT_MARGIN_MS = 150  # every :p element but those of `borders` is this far from any border

_PROLOGUE = f"PREFIX : <{NS}>\n"


def _window(size_ms: int) -> str:
    return f"FROM NAMED WINDOW :w ON :stream [RANGE PT{size_ms / 1000:g}S STEP PT{SLIDE_MS / 1000:g}S]"


QUERIES: dict[str, str] = {
    "subjects": "SELECT ?s ?o\n{window}\nWHERE {{ WINDOW :w {{ ?s :p ?o }} }}",
    "objects": "SELECT ?o\n{window}\nWHERE {{ WINDOW :w {{ ?s :p ?o }} }}",
    "count": "SELECT (COUNT(?s) AS ?n)\n{window}\nWHERE {{ WINDOW :w {{ ?s :p ?o }} }}",
    "join": "SELECT ?a ?b\n{window}\nWHERE {{ WINDOW :w {{ ?a :p ?x . ?b :p ?x }} }}",
}


@dataclass(frozen=True)
class Probe:
    """One designed stimulus sequence: a query, a stream, what it is meant to tell apart.

    ``registration`` is the instant R the engine's clock starts (a hidden t0 anchored on the
    registration starts there); the first element comes at R too, except in a probe that
    sends an empty stimulus at R first (``first_element`` > R). ``horizon`` H is the last
    instant judged (the oracle's end; later responses are ignored). ``elements`` is the
    stream the oracle reads, in time order; ``arrivals``, when given, the order the stand
    sends them in with each element's own time — a late element comes after a later one,
    and the oracle reads it 1 ms after that one, where an engine that takes elements as they
    come sees it (the reference engines do: `rsp_workbench.engines._windowed`).
    """

    name: str
    purpose: str
    shape: str  # key of QUERIES
    size_ms: int
    elements: tuple[StreamElement, ...]
    registration: int
    horizon: int
    element_times: Mapping[str, int] = field(default_factory=dict)  # subject term → time
    arrivals: tuple[StreamElement, ...] = ()

    @property
    def slide_ms(self) -> int:
        return SLIDE_MS

    @property
    def first_element(self) -> int:
        """The first element's time (a hidden t0 anchored on the first element starts there)."""
        return self.elements[0].t

    @property
    def query_text(self) -> str:
        return _PROLOGUE + QUERIES[self.shape].format(window=_window(self.size_ms))

    @property
    def streams(self) -> dict[str, list[StreamElement]]:
        return {STREAM: list(self.elements)}

    def stimuli(self) -> list[Stimulus]:
        """What the stand sends: an empty stimulus at R when the first element comes later
        (the clock starts without data), then the elements in arrival order, one stimulus
        per run of elements sharing an instant."""
        stimuli: list[Stimulus] = []
        if self.registration < self.first_element:
            stimuli.append(Stimulus(0, self.registration, ()))
        run: list[StreamElement] = []
        for element in (*(self.arrivals or self.elements), None):
            if run and (element is None or element.t != run[0].t):
                stimuli.append(Stimulus(len(stimuli), run[0].t, tuple(run)))
                run = []
            if element is not None:
                run.append(element)
        return stimuli

    @property
    def late_elements(self) -> frozenset[int]:
        """The own times of the elements sent after a later one."""
        return frozenset(e.t for e, read in zip(self.arrivals, self.elements) if e.t != read.t)

    def describe_element(self, term: str) -> str:
        t = self.element_times.get(term)
        return term if t is None else f"{term.strip('<>').removeprefix(NS)}@{t}"


def _probe(name: str, purpose: str, shape: str, size_ms: int, registration: int,
           matching: list[tuple[int, str]], fillers: tuple[int, ...] = (), *, first: int | None = None,
           late: tuple[int, str, int] | None = None) -> Probe:
    """Build a probe from ``(time, object)`` matching elements and filler times.

    The filler at R comes first (at ``first`` > R when the clock starts at R without data);
    the sentinel goes after the horizon H = last element + size + 2β (every window holding
    an element has closed by then). ``late`` = (time, object, arrival): a matching element
    sent right after the elements at ``arrival`` (a later instant), read by the oracle 1 ms after.
    """
    start = registration if first is None else first
    rows: list[tuple[int, int, str, str]] = [(start, 0, FILLER, '"start"')]
    rows += [(t, 1, MATCH, f'"{value}"') for t, value in matching]
    rows += [(t, 1, FILLER, '"filler"') for t in fillers]
    if late is not None:
        rows.append((late[2] + 1, 3, MATCH, f'"{late[1]}"'))
    rows.sort(key=lambda row: (row[0], row[1]))
    last = max(row[0] for row in rows)
    horizon = last + size_ms + 2 * SLIDE_MS
    rows.append((horizon + size_ms + 2 * SLIDE_MS, 2, FILLER, '"sentinel"'))
    elements = []
    arrivals = []
    times: dict[str, int] = {}
    for index, (t, kind, predicate, obj) in enumerate(rows):
        subject = f"<{NS}{name}-e{index}>"
        own = late[0] if late is not None and kind == 3 else t
        times[subject] = own
        elements.append(StreamElement(subject, predicate, obj, t))
        arrivals.append(StreamElement(subject, predicate, obj, own))
    return Probe(name, purpose, shape, size_ms, tuple(elements), registration, horizon, times,
                 tuple(arrivals) if late is not None else ())


def battery() -> tuple[Probe, ...]:
    """The probes, in the order they are reported (each is cheap: < 10 elements)."""
    return (
        _probe("borders", "elements exactly on window borders and 50 ms after: closed-open vs open-closed vs "
               "closed; windows read later than declared (border drift)", "subjects", 1000, 2000,
               [(2000, "a"), (2500, "b"), (3000, "c"), (3050, "d"), (4000, "e"), (4500, "f")]),
        _probe("alignment", "the stream starts between two multiples of β: windows aligned on the registration "
               "instant (hidden t0) or on a fixed t0; content change vs window close", "subjects", 1000, 1300,
               [(1500, "a"), (2150, "b"), (2800, "c"), (3700, "d")]),
        _probe("empty", "a window holding only non-matching elements and a window holding nothing: "
               "empty-relation notification, non-empty content", "subjects", 1000, 1600,
               [(1800, "a"), (4800, "b")], fillers=(3250,)),
        _probe("r2s", "a value that stays, one that expires and one that arrives: Rstream vs Istream vs Dstream",
               "objects", 1000, 1400,
               [(1600, "a"), (1800, "b"), (2600, "a"), (2800, "c"), (3600, "c")]),
        _probe("contemporaneous", "two elements at one instant: tuple tick (one evaluation each) vs time tick; "
               "one response per evaluation or per binding", "subjects", 1000, 1250,
               [(1500, "a"), (1500, "b"), (1700, "c"), (2500, "d"), (2500, "e"), (3600, "f")]),
        _probe("sliding", "a sliding window (ω = 3β): the first full window vs leading partial windows "
               "(YABench; C-SPARQL's misaligned first window)", "subjects", 3000, 1350,
               [(1600, "a"), (2700, "b"), (3600, "c"), (4700, "d"), (5600, "e")]),
        _probe("gap", "a gap over several window closes on a sliding window: every window closed in the gap "
               "is reported when the next element comes (RSP-JS reports only the latest one due)", "subjects", 2000,
               1350, [(1600, "a"), (4600, "b")]),
        _probe("count", "COUNT over a window without matches: SPARQL 1.1 says 0 (an unbound count is "
               "SPARQLstream's null aggregate)", "count", 1000, 1450,
               [(1700, "a"), (1800, "b"), (3700, "c")], fillers=(2700,)),
        _probe("join", "a self-join over elements of consecutive windows: expired elements that stay "
               "(late purge) join with new ones", "join", 1000, 1150,
               [(1400, "k"), (2400, "k"), (2800, "k"), (3400, "k")]),
        _probe("origin", "the stream starts at time 0: a first element at 0 fixes a hidden t0 like any other "
               "(rsp-rs takes t0 = 0 for unset and anchors its windows on the next element)", "subjects", 1000, 0,
               [(1300, "a"), (2200, "b"), (3600, "c")]),
        _probe("first-element", "the clock starts at R without data, the first element comes 400 ms later: a "
               "hidden t0 at the registration instant vs at the first element (Esper's #time_batch, rsp-rs since "
               "0.3.4) vs a fixed t0", "subjects", 1000, 1200,
               [(1800, "a"), (2400, "b"), (3800, "c"), (4400, "d")], first=1600),
        _probe("reference", "registration, first element, 0 and half a window (a reference point off the grid: "
               "Esper's #time_batch(ω, R)) are four different alignments: each puts the windows' closes elsewhere",
               "subjects", 1000, 2300, [(3150, "a"), (3850, "b"), (5150, "c"), (5850, "d")], first=2700),
        _probe("micro-batch", "elements at seven instants 150 ms apart in two windows: a tuple or time tick "
               "evaluates a content change at each, a batch (micro-batch) tick once every n elements",
               "subjects", 1000, 1150,
               [(1300, "a"), (1450, "b"), (1600, "c"), (1750, "d"), (2400, "e"), (2550, "f"), (2700, "g")]),
        _probe("watermark", "an element 200 ms late (sent after one at 2650, its window still open under every "
               "alignment): taken into its window as it comes, or dropped behind a watermark (Spark)",
               "subjects", 1000, 1250, [(1600, "a"), (3700, "d")], fillers=(2650,), late=(2450, "c", 2650)),
    )


PROBE_NAMES: tuple[str, ...] = tuple(probe.name for probe in battery())
