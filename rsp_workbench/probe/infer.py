"""Inferring an engine's hidden operational semantics from its answers to the probe battery.

Pure core (no Qt, no Spark, no processes): given what the engine answered to each probe
of :mod:`rsp_workbench.probe.battery`, judge the answers against the oracle for every
*candidate* parameter set, with the oracle's own functions (`rsp_workbench.oracle.run`
computes the expected answers, `rsp_workbench.oracle.verdict.judge` decides and explains):

* candidates = border (3) × report policy (content-change, window-close, each with or
  without non-empty) × tick (tuple, time) × R2S (3) × empty-relation notification ×
  leading partial windows × window alignment (t0 = the registration instant, i.e. a
  hidden t0, or a fixed t0 read off the engine's report times) × response grouping (one
  response per evaluation, or per binding = the responses of one instant regrouped);
* a candidate *explains* a probe when the engine's answer is correct for it (strict
  matching from the probe's registration instant to its horizon);
* the answer names the preset with the fewest overrides among the candidates that explain
  every probe. When none does, the candidates that explain the most probes are kept —
  counting a probe whose first divergence has the signature of a known fault (late
  purge, border drift, null aggregate) as explained by that fault — and the probes left
  are reported with their first divergence.

The time unit is not visible in an engine's answers: SECRET/CSRBench use it only for the
grid of admissible t0 (RSP-QL Theorem 1). The report gives the units under which the
observed alignment is admissible on every probe.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Hashable, Iterable, Mapping, Sequence

from rsp_workbench.core.r2s import apply_r2s
from rsp_workbench.core.semantics import (
    PRESETS,
    R2S,
    Anchor,
    BorderConvention,
    EngineSemantics,
    Grouping,
    ReportPolicy,
    Strategy,
    Tick,
)
from rsp_workbench.core.t0 import admissible_t0
from rsp_workbench.core.time import TimeUnit
from rsp_workbench.core.windows import WindowSpec
from rsp_workbench.oracle.compare import as_mapping, numeric_value
from rsp_workbench.oracle.verdict import Divergence, Relation, mappings_to_json, regroup_by_time
from rsp_workbench.responses.model import ResponseLog
from rsp_workbench.probe.battery import MATCH, SLIDE_MS, Probe

REPORTS: tuple[ReportPolicy, ...] = (
    ReportPolicy.of(Strategy.WINDOW_CLOSE, Strategy.NON_EMPTY),
    ReportPolicy.of(Strategy.WINDOW_CLOSE),
    ReportPolicy.of(Strategy.CONTENT_CHANGE),
    ReportPolicy.of(Strategy.CONTENT_CHANGE, Strategy.NON_EMPTY),
    # data-driven engines: a closed window is reported when the next element arrives
    ReportPolicy.of(Strategy.WINDOW_CLOSE, Strategy.NEXT_ELEMENT, Strategy.NON_EMPTY),
    ReportPolicy.of(Strategy.WINDOW_CLOSE, Strategy.NEXT_ELEMENT),
)
#: The batch sizes a batch (micro-batch) tick is tried with, under content-change policies only
#: (under window-close the tick is not visible).
BATCH_SIZES = (2, 3)
#: The alignment of a hidden t0 anchored on the first element (None: on the registration instant).
FIRST_ELEMENT = Anchor.FIRST_ELEMENT.value
Alignment = int | str | None  # a fixed t0 (mod β), FIRST_ELEMENT, or None (the registration instant)

#: The fault signatures a divergence can be attributed to (names of `rsp_workbench.engines.secret` knobs,
#: each a behaviour of a real engine: CSRBench Sect. 6, YABench Sect. 5).
FAULT_SIGNATURES = ("late_purge", "border_drift", "null_aggregate", "late_drop")
#: Inferred as ``leading_partial: true`` on a preset without leading partial windows.
MISALIGNED_FIRST_WINDOW = "misaligned_first_window"
FAULT_TEXT = {
    "late_purge": "expired elements stay one slide too long (CQELS, CSRBench Q6/Q7; YABench Exp. 4)",
    "border_drift": "windows are read later than declared (C-SPARQL under load, YABench Fig. 5)",
    "null_aggregate": "an aggregate over no matches is unbound instead of 0 (SPARQLstream, CSRBench Q4)",
    "late_drop": "an element that arrives after a later one is dropped, though its window is still open "
                 "(a watermark: Spark Structured Streaming)",
    MISALIGNED_FIRST_WINDOW: "partial windows are reported before the first full window closes "
                             "(C-SPARQL, CSRBench Q5)",
}


@dataclass(frozen=True)
class Candidate:
    """One parameter set: semantics, window alignment (None = t0 at registration, FIRST_ELEMENT =
    at the first element, else a fixed t0) and grouping."""

    semantics: EngineSemantics
    alignment: Alignment
    regroup: bool

    @property
    def fixed_t0(self) -> int | None:
        return self.alignment if isinstance(self.alignment, int) else None

    def parameters(self) -> dict[str, Any]:
        """The parameters in the preset vocabulary (``semantics:`` keys of experiment files)."""
        s = self.semantics
        return {
            "border": s.border.value,
            "report": str(s.report),
            "tick": s.tick.value,
            "batch_size": s.batch_size,
            "r2s": s.r2s.value,
            "empty_notification": s.empty_notification,
            "leading_partial": s.leading_partial,
            "t0": self.fixed_t0,
            "alignment": ("registration" if self.alignment is None else FIRST_ELEMENT
                          if self.alignment == FIRST_ELEMENT else "fixed"),
            "grouping": "binding" if self.regroup else "evaluation",
        }


@dataclass(frozen=True)
class ProbeObservation:
    """What the engine did on one probe: its response log, or why it failed."""

    probe: str
    status: str  # ok | failed | timeout | cancelled
    log: ResponseLog = ResponseLog((), ())
    error: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def responses(self) -> int:
        return len(self.log.responses)


@dataclass(frozen=True)
class FaultFinding:
    fault: str
    probes: tuple[str, ...]
    evidence: str

    def to_json(self) -> dict[str, Any]:
        return {"fault": self.fault, "probes": list(self.probes), "description": FAULT_TEXT[self.fault],
                "evidence": self.evidence}


@dataclass(frozen=True)
class Unexplained:
    """A probe that the chosen parameter set (and fault, if any) does not explain."""

    probe: str
    purpose: str
    divergence: Divergence
    description: str

    def to_json(self) -> dict[str, Any]:
        return {"probe": self.probe, "purpose": self.purpose, "first_divergence": self.divergence.to_json(),
                "description": self.description}


@dataclass(frozen=True)
class ProbeInference:
    """The answer of `rspwb probe`: the named preset, overrides, parameters and what is left."""

    engine: str
    preset: str | None
    overrides: Mapping[str, Any]
    parameters: Mapping[str, Any]
    undetermined: Mapping[str, list[Any]]
    explained: bool
    faults: tuple[FaultFinding, ...]
    unexplained: tuple[Unexplained, ...]
    observations: tuple[ProbeObservation, ...]
    probes: tuple[Probe, ...]
    explaining: Mapping[str, bool] = field(default_factory=dict)  # probe → explained by the answer
    candidates_explaining_all: int = 0

    def to_json(self) -> dict[str, Any]:
        by_name = {p.name: p for p in self.probes}
        return {
            "engine": self.engine,
            "preset": self.preset,
            "overrides": dict(self.overrides),
            "explained": self.explained,
            "parameters": dict(self.parameters),
            "undetermined": {key: list(values) for key, values in self.undetermined.items()},
            "faults": [finding.to_json() for finding in self.faults],
            "unexplained": [item.to_json() for item in self.unexplained],
            "failed": [
                {"probe": o.probe, "status": o.status, "error": o.error} for o in self.observations if not o.ok
            ],
            "probes": [
                {"name": o.probe, "purpose": by_name[o.probe].purpose if o.probe in by_name else "",
                 "status": o.status, "responses": o.responses, "seconds": round(o.seconds, 3),
                 "explained": self.explaining.get(o.probe) if o.ok else None}
                for o in self.observations
            ],
            "candidates_explaining_all": self.candidates_explaining_all,
        }


# --- the candidate grid -------------------------------------------------------------------------


def semantics_grid() -> list[EngineSemantics]:
    """Every combination of the inferred SECRET/R2S parameters (time unit ms: the oracle's
    t0 grid is not used here, the alignment is a candidate of its own)."""
    grid = []
    ticks = [(Tick.TUPLE, 1), (Tick.TIME, 1)]
    for border, report, (tick, batch), r2s, empty, partial in itertools.product(
        BorderConvention, REPORTS, [*ticks, *((Tick.BATCH, n) for n in BATCH_SIZES)], R2S, (True, False),
        (False, True)
    ):
        if tick is Tick.BATCH and not _ticks_matter(report):
            continue
        grid.append(EngineSemantics(border=border, report=report, tick=tick, r2s=r2s, empty_notification=empty,
                                    leading_partial=partial, time_unit=TimeUnit.MS, t0=None, batch_size=batch))
    return grid


def _ticks_matter(report: ReportPolicy) -> bool:
    return Strategy.WINDOW_CLOSE not in report.strategies and Strategy.PERIODIC not in report.strategies


def alignments(probes: Sequence[Probe], observations: Iterable[ProbeObservation]) -> list[Alignment]:
    """Registration (None), the first element, t0 = 0, and each fixed t0 (mod β) that the engine's report times
    share across probes. Only reports at instants without data count (an evaluation at an
    element's time says nothing about borders); the probes start at different instants
    mod β, so a grid that shows up in two of them is the engine's, not the data's."""
    by_name = {p.name: p for p in probes}
    seen: Counter[int] = Counter()
    for observation in observations:
        data = set(by_name[observation.probe].element_times.values())
        seen.update({r.application_time % SLIDE_MS for r in observation.log.responses
                     if r.application_time is not None and r.application_time not in data})
    return [None, FIRST_ELEMENT, *sorted({0} | {residue for residue, probes in seen.items() if probes >= 2})]


# --- judging every candidate ----------------------------------------------------------------------

Outcome = Divergence | None  # None: the candidate explains the probe


#: The oracle's answers to the battery do not depend on the engine probed: kept for the process
#: (bounded: probes × 48 parameter combinations × a few alignments, each a handful of relations).
_ORACLE_CACHE: dict[tuple[Any, ...], dict[tuple[int, ...], Any]] = {}


class ProbeJudge:
    """Judges one probe's engine answer against candidates with the oracle's judging entry
    point (`rsp_workbench.oracle.judge.judge`), its expected answers served from a cache.

    The oracle runs once per (border, report, tick, leading partial) for all alignments at
    once; R2S and empty-relation notification are applied to its relations here
    (`rsp_workbench.core.r2s.apply_r2s`, the oracle's own operator), since they do not change
    what is evaluated. A candidate whose evaluation times differ from the engine's is
    rejected before a full verdict. The engine is judged from the registration instant R
    to the horizon H: what it says outside is not part of the probe, and neither is what
    the oracle expects before R for a t0 fixed earlier.
    """

    def __init__(self, probe: Probe, observation: ProbeObservation, aligns: Sequence[Alignment]) -> None:
        from rsp_workbench.oracle.run import engine_relations
        from rsp_workbench.query.parser import parse_query

        self.probe = probe
        self.query = parse_query(probe.query_text)
        self.t0 = {a: _t0_of(probe, a) for a in aligns}
        log = observation.log
        inside = tuple(r for r in log.responses if r.application_time is None
                       or probe.registration <= r.application_time <= probe.horizon)
        self.log = replace(log, responses=inside)
        raw = engine_relations(self.log)
        self.engine_times = {False: [r.time for r in raw], True: [r.time for r in regroup_by_time(raw)]}
        self.timed = all(r.time is not None for r in raw)
        self._answers: dict[tuple[Any, ...], Any] = {}
        self._outcomes: dict[tuple[EngineSemantics, int, bool], Outcome] = {}
        self._times: dict[tuple[Any, ...], list[int | None]] = {}  # the candidate's evaluation times

    def answer(self, semantics: EngineSemantics, t0: int) -> Any:
        """The oracle's answer (an `ExpectedAnswer`) for these semantics with windows from ``t0``."""
        from rsp_workbench.oracle.reference import ExpectedAnswer
        from rsp_workbench.oracle.run import compute_expected

        key = _answer_key(semantics, t0)
        base_key = key[:4]
        if key not in self._answers:
            cached = _ORACLE_CACHE.setdefault((self.probe.name, self.probe.elements, base_key), {})
            if (t0,) not in cached:
                base = replace(semantics, r2s=R2S.RSTREAM, empty_notification=True)
                vectors = [(v,) for v in sorted(set(self.t0.values()) | {t0}) if (v,) not in cached]
                computed = compute_expected(self.query, self.probe.streams, base, vectors, end=self.probe.horizon)
                # the relations are read for every R2S × notification candidate: materialised once
                # (the oracle's may be computed lazily from its deltas on each read); the
                # emissions are made here, per candidate, from them
                cached.update({vector: ExpectedAnswer(answer.t0, tuple(answer.evaluations), tuple(answer.relations), ())
                               for vector, answer in computed.items()})
            plain = cached[(t0,)]
            emissions = apply_r2s(semantics.r2s, ((e.time, e.sequence, r) for e, r in zip(plain.evaluations, plain.relations)),
                                  empty_notification=semantics.empty_notification)
            # the probe is judged from R on (the engine started there): a t0 fixed before R
            # has windows closing before R, which no engine registered at R reports
            start = self.probe.registration
            kept = [i for i, e in enumerate(plain.evaluations) if e.time >= start]
            self._answers[key] = ExpectedAnswer(
                plain.t0, tuple(plain.evaluations[i] for i in kept), tuple(plain.relations[i] for i in kept),
                tuple(e for e in emissions if e.time >= start))
        return self._answers[key]

    def _expected(self, query: Any, streams: Any, semantics: EngineSemantics, vectors: Sequence[tuple[int, ...]],
                  static: Any, end: int, report_window: int) -> Any:
        """An `ExpectedFunction` for the judging entry point: the cached answers."""
        from rsp_workbench.oracle.run import OracleMethod

        return {vector: self.answer(semantics, vector[0]) for vector in vectors}, OracleMethod("fast")

    def times_agree(self, candidate: Candidate) -> bool:
        """Cheap necessary condition: the engine evaluated when the candidate says (if it says when)."""
        if not self.timed:
            return True
        t0 = self.t0[candidate.alignment]
        key = (*_answer_key(candidate.semantics, t0), candidate.regroup)
        times = self._times.get(key)
        if times is None:
            answer = self.answer(candidate.semantics, t0)
            if candidate.regroup:
                times = [r.time for r in regroup_by_time([Relation(e.time, e.operation, Counter())
                                                          for e in answer.emissions])]
            else:
                times = [e.time for e in answer.emissions]
            self._times[key] = times
        return self.engine_times[candidate.regroup] == times

    def outcome(self, candidate: Candidate) -> Outcome:
        """None when the candidate explains the probe; else the first divergence (RSP-QL Def. 26)."""
        from rsp_workbench.oracle.judge import JudgeOptions, RecordedRun
        from rsp_workbench.oracle.judge import judge as judge_run

        key = (candidate.semantics, self.t0[candidate.alignment], candidate.regroup)  # alignments may share a t0
        if key not in self._outcomes:
            run = RecordedRun(self.query, self.probe.streams, self.log, candidate.semantics, self.probe.horizon)
            options = JudgeOptions(t0=(self.t0[candidate.alignment],), regroup=candidate.regroup, quality=False)
            payload = judge_run(run, options, expected=self._expected).payload
            outcome: Outcome = None
            if payload.get("verdict") != "correct":
                divergence = payload.get("first_divergence")
                outcome = Divergence.from_json(divergence) if divergence else Divergence(
                    self.t0[candidate.alignment], 0, None, None, Counter(), Counter(),
                    str(payload.get("error") or payload.get("verdict")), 0)
            self._outcomes[key] = outcome
        return self._outcomes[key]

    def explains(self, candidate: Candidate) -> bool:
        return self.times_agree(candidate) and self.outcome(candidate) is None


def _answer_key(semantics: EngineSemantics, t0: int) -> tuple[Any, ...]:
    """What the oracle's answer to a probe depends on: (border, report, tick where it matters,
    leading partial windows) — one oracle run —, then R2S, notification and t0."""
    tick = (semantics.tick, semantics.batch_size) if _ticks_matter(semantics.report) else None
    return (semantics.border, semantics.report, tick, semantics.leading_partial, semantics.r2s,
            semantics.empty_notification, t0)


def _t0_of(probe: Probe, alignment: Alignment) -> int:
    """The t0 an alignment gives on a probe."""
    if alignment is None:
        return probe.registration
    return probe.first_element if alignment == FIRST_ELEMENT else int(alignment)


def all_candidates(aligns: Sequence[Alignment]) -> list[Candidate]:
    return [Candidate(s, a, g) for s in semantics_grid() for a in aligns for g in (False, True)]


# --- fault signatures ------------------------------------------------------------------------------


def _elements_of(probe: Probe, mapping: Hashable) -> list[int]:
    """The times of the elements a mapping can come from: its subjects, else its object values."""
    pairs = as_mapping(mapping)
    times = [probe.element_times[term] for _, term in pairs if term in probe.element_times]
    if times:
        return times
    values = {term for _, term in pairs}
    return [e.t for e in probe.elements if e.object in values and e.predicate == MATCH]


def _window_of(probe: Probe, candidate: Candidate, time: int | None) -> tuple[int, int] | None:
    """The window the candidate's evaluation at ``time`` reads (open, close)."""
    if time is None:
        return None
    s = candidate.semantics
    t0 = _t0_of(probe, candidate.alignment)
    spec = WindowSpec(probe.size_ms, SLIDE_MS, t0, s.border, s.leading_partial)
    window = spec.closing_at(time) if not _ticks_matter(s.report) else spec.active(time, s.active_window)
    return None if window is None else (window.open, window.close)


def fault_signature(probe: Probe, candidate: Candidate, divergence: Divergence) -> str | None:
    """The known fault whose signature a divergence has, or None.

    * ``late_purge``: nothing missing; every extra mapping reads an element of the slide
      before the window's opening [o − β, o);
    * ``border_drift`` (window-close only): what is missing lies just after the opening
      [o, o + β/2) and what is extra just after the close [c, c + β/2): the window was
      read shifted later;
    * ``null_aggregate``: each missing mapping binds a numeric 0 and the engine gave the
      same mapping without it (unbound);
    * ``late_drop``: nothing extra; every missing mapping reads only elements that arrived
      after a later one (a watermark dropped them).
    """
    missing, extra = divergence.missing, divergence.extra
    if not missing and not extra:
        return None
    late = probe.late_elements
    if late and missing and not extra and all(
        (times := _elements_of(probe, mapping)) and all(t in late for t in times) for mapping in missing
    ):
        return "late_drop"
    if missing and extra and all(
        any(numeric_value(term) == 0 for _, term in as_mapping(mapping)) for mapping in missing
    ):
        stripped = Counter(
            frozenset((var, term) for var, term in as_mapping(mapping) if numeric_value(term) != 0)
            for mapping in missing.elements()
        )
        if stripped == extra:
            return "null_aggregate"
    window = _window_of(probe, candidate, divergence.expected_time)
    if window is None:
        return None
    open_, close = window
    half = SLIDE_MS // 2
    if not missing and extra:
        stale = all(
            any(open_ - SLIDE_MS <= t < open_ for t in _elements_of(probe, mapping)) for mapping in extra
        )
        if stale:
            return "late_purge"
    if not _ticks_matter(candidate.semantics.report):
        early = all((times := _elements_of(probe, m)) and all(open_ <= t < open_ + half for t in times) for m in missing)
        kept = all((times := _elements_of(probe, m)) and all(close <= t < close + half for t in times) for m in extra)
        if early and kept and divergence.actual_time == divergence.expected_time:
            return "border_drift"
    return None


# --- naming ------------------------------------------------------------------------------------


def overrides_from(preset: EngineSemantics, candidate: Candidate) -> dict[str, Any]:
    """What to set on top of ``preset`` to get ``candidate`` (values as experiment files write them)."""
    s = candidate.semantics
    changes: dict[str, Any] = {}
    if s.border is not preset.border:
        changes["border"] = s.border.value
    if s.report != preset.report:
        changes["report"] = str(s.report)
    if s.tick is not preset.tick and _ticks_matter(s.report):
        changes["tick"] = s.tick.value
    if s.tick is Tick.BATCH and s.batch_size != preset.batch_size and _ticks_matter(s.report):
        changes["batch_size"] = s.batch_size
    if s.r2s is not preset.r2s:
        changes["r2s"] = s.r2s.value
    if s.empty_notification != preset.empty_notification:
        changes["empty_notification"] = s.empty_notification
    if s.leading_partial != preset.leading_partial:
        changes["leading_partial"] = s.leading_partial
    if candidate.regroup != (preset.grouping is Grouping.BINDING):  # what the judge must do with the responses
        changes["grouping"] = "binding" if candidate.regroup else "evaluation"
    preset_alignment: Alignment = preset.t0 % SLIDE_MS if preset.t0 is not None else (
        FIRST_ELEMENT if preset.anchor is Anchor.FIRST_ELEMENT else None)
    if candidate.alignment != preset_alignment:
        fixed = candidate.fixed_t0
        if fixed is not None or preset.t0 is not None:
            changes["t0"] = "hidden" if fixed is None else fixed
        if fixed is None:
            anchor = Anchor.FIRST_ELEMENT if candidate.alignment == FIRST_ELEMENT else Anchor.REGISTRATION
            if anchor is not preset.anchor:
                changes["anchor"] = anchor.value
    return changes


# Spark's append mode on an aggregate query (rsp_workbench/engines/sparkstream/README.md) declares what
# rspjs declares but for per-evaluation grouping, which the battery's one-binding evaluations cannot show:
# the earlier preset names both (the per-evaluation tie-break below would otherwise call RSP-JS "Spark").
NAMED_PRESETS: Mapping[str, EngineSemantics] = {
    name: semantics for name, semantics in PRESETS.items() if name != "spark-append-aggregate"
}


def name_candidate(
    candidates: Iterable[Candidate], presets: Mapping[str, EngineSemantics] = NAMED_PRESETS
) -> tuple[str, Candidate, dict[str, Any]]:
    """The (preset, candidate, overrides) with the fewest overrides; ties: per-evaluation
    grouping first, then the presets' order."""
    best: tuple[tuple[int, int, int, int], str, Candidate, dict[str, Any]] | None = None
    order = list(presets)
    for candidate in candidates:
        for name, semantics in presets.items():
            changes = overrides_from(semantics, candidate)
            unseen = int(candidate.semantics.tick is not semantics.tick)  # a tick the answers cannot show
            rank = (len(changes), int(candidate.regroup), unseen, order.index(name))
            if best is None or rank < best[0]:
                best = (rank, name, candidate, changes)
    if best is None:
        raise ValueError("no candidate to name")
    return best[1], best[2], best[3]


def consistent_time_units(candidate: Candidate, probes: Sequence[Probe]) -> list[str]:
    """Units under which the observed alignment is an admissible t0 on every probe (RSP-QL Thm. 1)."""
    if candidate.fixed_t0 is None:
        return [unit.value for unit in TimeUnit]
    units = []
    for unit in TimeUnit:
        if all(any((t0 - candidate.fixed_t0) % SLIDE_MS == 0 for t0 in admissible_t0(p.registration, SLIDE_MS, unit.millis))
               for p in probes):
            units.append(unit.value)
    return units


def describe_divergence(probe: Probe, divergence: Divergence) -> str:
    """One line a person reads: where and what differs, with element times."""
    def bag_text(bag: Counter[Hashable]) -> str:
        rows = []
        for row in mappings_to_json(bag):
            binding = ", ".join(f"{var}={probe.describe_element(term)}" for var, term in row["binding"].items())
            rows.append("{" + binding + "}" + (f"×{row['count']}" if "count" in row else ""))
        return " ".join(rows) or "nothing"

    parts = [f"at t={divergence.expected_time}" if divergence.expected_time is not None else "at the end",
             divergence.reason]
    if divergence.missing:
        parts.append("missing " + bag_text(divergence.missing))
    if divergence.extra:
        parts.append("extra " + bag_text(divergence.extra))
    return "; ".join(parts)


def infer(
    engine: str,
    probes: Sequence[Probe],
    observations: Sequence[ProbeObservation],
    presets: Mapping[str, EngineSemantics] = NAMED_PRESETS,
) -> ProbeInference:
    """Judge the candidates on every probe that ran and name the best explanation.

    First by elimination (probe by probe, keeping the candidates that explain all so far);
    only when nothing survives are all candidates scored, with fault signatures.
    """
    by_name = {p.name: p for p in probes}
    ran_observations = [o for o in observations if o.ok and o.probe in by_name]
    ran = [o.probe for o in ran_observations]
    if not ran:
        return ProbeInference(engine, None, {}, {}, {}, False, (), (), tuple(observations), tuple(probes))
    aligns = alignments(probes, ran_observations)
    judges = {o.probe: ProbeJudge(by_name[o.probe], o, aligns) for o in ran_observations}
    candidates = all_candidates(aligns)
    explaining_all = candidates
    for name in ran:
        explaining_all = [c for c in explaining_all if judges[name].explains(c)]
    fault: str | None = None
    if explaining_all:
        chosen_set = explaining_all
    else:
        # the most probes explained, a probe whose first divergence has a fault's signature
        # counting for that fault; fewer faults first
        scored: dict[tuple[int, int], list[tuple[Candidate, str | None]]] = {}
        for candidate in candidates:
            exact = 0
            signatures: Counter[str | None] = Counter()
            for name in ran:
                judge_ = judges[name]
                if not judge_.times_agree(candidate):
                    continue  # every known fault keeps the evaluation times
                divergence = judge_.outcome(candidate)
                if divergence is None:
                    exact += 1
                else:
                    signatures[fault_signature(judge_.probe, candidate, divergence)] += 1
            signatures.pop(None, None)
            options: list[tuple[int, str | None]] = [(exact, None)]
            options += [(exact + count, name) for name, count in signatures.items()]
            for score, fault_name in options:
                scored.setdefault((score, int(fault_name is None)), []).append((candidate, fault_name))
        best = scored[max(scored)]
        _, chosen, _ = name_candidate([c for c, _ in best], presets)
        fault = next(name for c, name in best if c == chosen)
        chosen_set = [c for c, name in best if name == fault]
    preset_name, chosen, changes = name_candidate(chosen_set, presets)
    result = {name: judges[name].outcome(chosen) for name in ran}
    parameters = chosen.parameters()
    units = consistent_time_units(chosen, [by_name[p] for p in ran])
    preset_unit = presets[preset_name].time_unit.value
    parameters["time_unit"] = preset_unit if preset_unit in units else (units[-1] if units else None)
    undetermined: dict[str, list[Any]] = {}
    compatible = [c for c in chosen_set if c.alignment == chosen.alignment]
    for key, value in parameters.items():
        if key in ("time_unit", "alignment", "grouping"):
            continue  # grouping: regrouping one response per evaluation changes nothing
        if key == "tick" and not _ticks_matter(chosen.semantics.report):
            others = [t.value for t in (Tick.TUPLE, Tick.TIME) if t.value != value]
        else:
            others = list({repr(v): v for c in compatible if (v := c.parameters()[key]) != value}.values())
        if others:
            undetermined[key] = others
    if len(units) > 1:
        undetermined["time_unit"] = [u for u in units if u != parameters["time_unit"]]
    findings: list[FaultFinding] = []
    unexplained: list[Unexplained] = []
    faulted: list[str] = []
    for name in ran:
        divergence = result[name]
        if divergence is None:
            continue
        probe = by_name[name]
        if fault is not None and fault_signature(probe, chosen, divergence) == fault:
            faulted.append(name)
        else:
            unexplained.append(Unexplained(name, probe.purpose, divergence, describe_divergence(probe, divergence)))
    if fault is not None and faulted:
        evidence = "; ".join(f"{name}: {describe_divergence(by_name[name], result[name])}" for name in faulted)  # type: ignore[arg-type]
        findings.append(FaultFinding(fault, tuple(faulted), evidence))
    if changes.get("leading_partial") is True:
        sliding = [p for p in ran if by_name[p].size_ms > SLIDE_MS]
        findings.append(FaultFinding(
            MISALIGNED_FIRST_WINDOW, tuple(sliding),
            f"explained as leading_partial: true on {preset_name}, which has no leading partial windows",
        ))
    explaining = {name: result[name] is None or name in faulted for name in ran}
    return ProbeInference(
        engine=engine, preset=preset_name, overrides=changes, parameters=parameters, undetermined=undetermined,
        explained=not unexplained, faults=tuple(findings), unexplained=tuple(unexplained),
        observations=tuple(observations), probes=tuple(probes), explaining=explaining,
        candidates_explaining_all=len(explaining_all),
    )


def format_value(value: Any) -> str:
    """A parameter value as an experiment file writes it (true/false, null)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def headline_verdict(inference: ProbeInference) -> str:
    """"explains every probe", "… but those listed below", ", given the fault below"."""
    verdict = "explains every probe" if inference.explained else "explains every probe but those listed below"
    return verdict + (", given the fault below" if inference.faults else "")


def format_inference(inference: ProbeInference) -> str:
    """The human-readable report `rspwb probe` prints."""
    lines = [f"engine: {inference.engine}"]
    ok = [o for o in inference.observations if o.ok]
    lines.append(f"probes: {len(ok)} of {len(inference.observations)} ran")
    if inference.preset is None:
        lines.append("no probe ran: nothing to infer")
    else:
        overrides = ", ".join(f"{key}: {format_value(value)}" for key, value in inference.overrides.items())
        verdict = headline_verdict(inference)
        lines.append(f"preset: {inference.preset}" + (f" + {{{overrides}}}" if overrides else " (no overrides)")
                     + f" — {verdict}")
        lines.append("parameters:")
        for key, value in inference.parameters.items():
            alternatives = inference.undetermined.get(key)
            note = f"   (probes cannot tell from: {', '.join(map(format_value, alternatives))})" if alternatives else ""
            lines.append(f"  {key}: {format_value(value)}{note}")
        for finding in inference.faults:
            lines.append(f"fault: {finding.fault} — {FAULT_TEXT[finding.fault]}")
            lines.append(f"  evidence: {finding.evidence}")
        for item in inference.unexplained:
            lines.append(f"unexplained probe {item.probe} ({item.purpose}):")
            lines.append(f"  first divergence (t0 {item.divergence.t0}): {item.description}")
    for observation in inference.observations:
        if not observation.ok:
            lines.append(f"probe {observation.probe} {observation.status}: {observation.error}")
    return "\n".join(lines)
