"""Oracle orchestration shared by `rspwb oracle`, `rspwb check` and the pipeline.

Resolves an engine's semantics (preset + explicit overrides), enumerates the admissible
t0 vectors (RSP-QL Theorem 1), computes the expected answer per t0 and turns engine
outputs into comparable relations.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterator, Mapping, Sequence

from rsp_workbench.core.semantics import EngineSemantics, preset
from rsp_workbench.core.t0 import admissible_t0_vectors, comparison_start
from rsp_workbench.errors import UserError
from rsp_workbench.oracle.compare import as_mapping
from rsp_workbench.oracle.reference import ExpectedAnswer, StaticData, expected_answer
from rsp_workbench.oracle.verdict import Relation
from rsp_workbench.query.model import ContinuousQuery, DatasetMode, WindowDeclaration
from rsp_workbench.responses.model import ResponseLog
from rsp_workbench.streams.model import StreamElement

if TYPE_CHECKING:  # pragma: no cover
    from rsp_workbench.oracle.annotated import GridAnswer
    from rsp_workbench.oracle.deltas import DeltaAnswer
    from rsp_workbench.oracle.quality import ExpectedWindow, QualityRows


def resolve_semantics(system: str | None, overrides: Mapping[str, Any]) -> EngineSemantics:
    """A preset (CSRBench Table 1, YABench conventions) with explicit parameters on top."""
    base = preset(system) if system else EngineSemantics()
    return base.with_overrides({k: v for k, v in overrides.items() if v is not None})


def with_window(query: ContinuousQuery, size_ms: int | None, slide_ms: int | None, stream: str | None) -> ContinuousQuery:
    """Give a window-less one-time query (e.g. YABench's oracle.query) one window, or
    override the size/slide of a single-window query."""
    if size_ms is None and slide_ms is None:
        return query
    if len(query.windows) > 1:
        raise UserError("--window-size/--window-slide apply to queries with at most one window", field="--window-size")
    if query.windows:
        window = query.windows[0]
        size = size_ms if size_ms is not None else window.size_ms
        slide = slide_ms if slide_ms is not None else (size if window.slide_ms == window.size_ms else window.slide_ms)
        return replace(query, windows=(replace(window, size_ms=size, slide_ms=slide),))
    if size_ms is None:
        raise UserError("the query has no window; give --window-size (and --window-slide)", field="--window-size")
    window = WindowDeclaration(
        name="urn:rspwb:window:0", stream=stream or "urn:rspwb:stream:0", size_ms=size_ms,
        slide_ms=slide_ms if slide_ms is not None else size_ms, position=(1, 1), generated_name=True,
    )
    return replace(query, windows=(window,), dataset_mode=DatasetMode.MERGED)


def t0_vectors(
    query: ContinuousQuery, semantics: EngineSemantics, option: str | int | None, registration: int = 0
) -> tuple[list[tuple[int, ...]], int]:
    """The t0 vectors to evaluate and the comparison start t_s (RSP-QL Def. 26).

    ``option``: an int (ms) fixes every window's t0; ``"all"`` enumerates the admissible
    set; None uses the semantics' own t0, or the admissible set when the engine hides it.
    """
    slides = [w.slide_ms for w in query.windows]
    unit = semantics.time_unit.millis
    if option is None and semantics.t0 is not None:
        option = semantics.t0
    if option is None or option == "all":
        vectors = list(admissible_t0_vectors(registration, slides, unit))
        return vectors, comparison_start(registration, slides, unit)
    value = int(option)
    return [tuple(value for _ in slides)], value


def default_end(query: ContinuousQuery, streams: Mapping[str, Sequence[StreamElement]]) -> int:
    """The last instant to evaluate when none is given: the last element plus the largest
    window, so every window that holds an element has closed."""
    return end_by_rule("after-last-window", query, streams)


def end_by_rule(rule: int | str, query: ContinuousQuery, streams: Mapping[str, Sequence[StreamElement]]) -> int:
    """The last instant judged, by an experiment's ``oracle.end``: ``after-last-window`` (the
    default, `default_end`), ``last-element`` (the stream ends with its last element: no
    window closing after it is expected) or an application time in ms."""
    if isinstance(rule, int):
        return rule
    from rsp_workbench.streams.readers import last_time

    last = max((t for t in map(last_time, streams.values()) if t is not None), default=0)
    if rule == "last-element":
        return last
    if rule == "after-last-window":
        return end_after(query, last)
    raise ValueError(f"unknown end rule {rule!r}")


def end_after(query: ContinuousQuery, last: int) -> int:
    """`default_end` given the last element's time (e.g. read from a Parquet column)."""
    return last + max((w.size_ms for w in query.windows), default=0)


@dataclass(frozen=True)
class OracleMethod:
    """Which oracle path ran, so that users know (``"method"`` in ``--json`` output).

    ``path``: ``fast-vectorised`` (all t0 at once from prefix sums), ``fast`` (mappings
    annotated once, relations per window content) or ``reference`` (rdflib per
    evaluation); ``engine``: ``python`` or ``spark``; ``reason``: why a slower path than
    requested or possible ran (None when nothing fell back).
    """

    path: str
    engine: str = "python"
    reason: str | None = None


def compute_expected(
    query: ContinuousQuery,
    streams: Mapping[str, Sequence[StreamElement]],
    semantics: EngineSemantics,
    vectors: Sequence[tuple[int, ...]],
    *,
    static: StaticData = StaticData(),
    end: int | None = None,
    method: str = "auto",
    report_window: int = 0,
) -> Mapping[tuple[int, ...], ExpectedAnswer]:
    """The oracle's answer for each t0 vector (computed lazily, one t0 at a time).

    ``method``: ``fast`` annotates the solution mappings once and derives every window
    from them (:mod:`annotated`); ``reference`` evaluates each instant with rdflib;
    ``auto`` (default) takes the fast path when the query is inside its fragment.
    """
    return expected_with_method(query, streams, semantics, vectors, static=static, end=end, method=method,
                                report_window=report_window)[0]


def expected_with_method(
    query: ContinuousQuery,
    streams: Mapping[str, Sequence[StreamElement]],
    semantics: EngineSemantics,
    vectors: Sequence[tuple[int, ...]],
    *,
    static: StaticData = StaticData(),
    end: int | None = None,
    method: str = "auto",
    report_window: int = 0,
) -> tuple[Mapping[tuple[int, ...], ExpectedAnswer], OracleMethod]:
    """`compute_expected` and the path it took (``auto`` names why it used the reference)."""
    from rsp_workbench.oracle.annotated import FastPathUnsupported, compile_plan, fast_expected_answers

    if end is None:
        end = default_end(query, streams)
    reason = None
    if method in ("auto", "fast"):
        try:
            plan = compile_plan(query)
            if static.time_varying_default is not None:
                raise FastPathUnsupported("time-varying graphs are evaluated by the reference path")
        except FastPathUnsupported as error:
            if method == "fast":
                raise
            reason = str(error)
        else:
            answers = fast_expected_answers(query, streams, semantics, vectors, static=static, end=end, plan=plan,
                                            report_window=report_window)
            return answers, OracleMethod("fast")
    from rsp_workbench.core.report import evaluation_instants
    from rsp_workbench.oracle.deltas import LazyAnswers
    from rsp_workbench.oracle.reference import window_specs

    def reference(vector: tuple[int, ...]) -> ExpectedAnswer:
        return expected_answer(query, streams, semantics, vector, static=static, end=end, report_window=report_window)

    def times(vector: tuple[int, ...]) -> list[int]:
        spec = window_specs(query, semantics, vector)[report_window]
        elements = streams[query.windows[report_window].stream]
        return [e.time for e in evaluation_instants(
            [e.t for e in elements], spec, semantics.report, tick=semantics.tick, choice=semantics.active_window,
            batch_size=semantics.batch_size, start=spec.t0, end=end)]

    return LazyAnswers(vectors, reference, times), OracleMethod("reference", reason=reason)


MAX_HELD_BINDINGS = 20_000_000  # emitted bindings of one t0 held for comparison (~4 GB as Python objects)


def expected_relations(answer: "ExpectedAnswer | DeltaAnswer | GridAnswer") -> list[Relation]:
    """The emitted relations of one t0, for `verdict.judge`; refused up front (estimated from
    the presence runs) when they could not be held in memory."""
    from rsp_workbench.oracle.deltas import DeltaAnswer

    if isinstance(answer, DeltaAnswer):
        _, emitted = answer.sizes()
        total = int(emitted[answer.emitted()].sum())
        if total > MAX_HELD_BINDINGS:
            raise UserError(f"the expected answer for t0 = {list(answer.t0)} emits {total:,} bindings, about "
                            f"{total * 200 / 2**30:.0f} GB to compare in memory: ask for Istream (--r2s istream) or "
                            "a window-close report (--report window-close)", field="--r2s")
    return [Relation(e.time, e.operation, Counter(e.bindings)) for e in answer.emissions]


IMPLAUSIBLE_TRIED = 3  # candidates whose times cannot match, judged only for a closest divergence


def evaluation_times(answers: Mapping[tuple[int, ...], Any], vector: tuple[int, ...]) -> Any:
    """One t0's evaluation instants, from the answers' grid when they offer it (cheap)."""
    if hasattr(answers, "evaluation_times"):
        return answers.evaluation_times(vector)
    answer = answers[vector]
    return answer.evaluation_times() if hasattr(answer, "evaluation_times") else [e.time for e in answer.evaluations]


def plausible_order(
    answers: Mapping[tuple[int, ...], Any], vectors: Sequence[tuple[int, ...]], engine: Sequence[Relation],
    t_s: int,
) -> Iterator[tuple[int, ...]]:
    """The t0 vectors worth judging under strict matching, in order, found lazily (a judge
    that stops at the first match computes no further grid; no relation is computed here).

    With application times on every engine relation, a t0 whose evaluation instants do not
    include every engine time from t_s on cannot match: it is skipped. If none is left, the
    few with the most instants in common follow, for a closest divergence.
    """
    reported = {r.time for r in engine if r.time is not None and r.time >= t_s}
    if not engine or not reported or any(r.time is None for r in engine):
        yield from vectors
        return
    import numpy as np

    wanted = np.fromiter(sorted(reported), dtype=np.int64)
    overlap: dict[tuple[int, ...], int] = {}
    found = False
    for vector in vectors:  # the grid only
        times = np.asarray(evaluation_times(answers, vector), dtype=np.int64)
        common = int(np.isin(wanted, times).sum())
        if common == len(wanted):
            found = True
            yield vector
        else:
            overlap[vector] = common
    if not found:
        yield from sorted(overlap, key=lambda v: -overlap[v])[:IMPLAUSIBLE_TRIED]


def windows_summary(answer: ExpectedAnswer) -> list[dict[str, Any]]:
    """Per evaluation in time order: window borders, elements in it, expected result size."""
    if hasattr(answer, "summary_rows"):  # a `DeltaAnswer`: from its arrays, no relation built
        return list(answer.summary_rows())
    rows = []
    emitted = {(e.time, e.sequence): e for e in answer.emissions}
    for evaluation, relation in zip(answer.evaluations, answer.relations):
        emission = emitted.get((evaluation.time, evaluation.sequence))
        rows.append({
            "start": evaluation.window.open,
            "end": evaluation.window.close,
            "time": evaluation.time,
            "triples": evaluation.size,
            "expected": emission.size if emission is not None else 0,
            "relation_size": sum(relation.values()),
            "emitted": emission is not None,
        })
    return rows


def engine_relations(log: ResponseLog, *, regroup: bool = False) -> list[Relation]:
    """An engine's responses as relations (optionally regrouped by evaluation time)."""
    from rsp_workbench.oracle.verdict import regroup_by_time

    relations = [
        Relation(r.application_time, r.operation, Counter(r.bindings)) for r in log.responses
    ]
    return regroup_by_time(relations) if regroup else relations


def regroup_responses(log: ResponseLog) -> ResponseLog:
    """Consecutive responses with the same evaluation time and operation merged into one
    (an engine that emits one response per binding: CQELS, rsp-js). The merged response was
    complete when its last part arrived, so it keeps that part's system time."""
    from dataclasses import replace as copy_with

    from rsp_workbench.responses.model import EngineResponse

    merged: list[EngineResponse] = []
    for response in log.responses:
        last = merged[-1] if merged else None
        if (last is not None and response.application_time is not None
                and last.application_time == response.application_time and last.operation == response.operation):
            merged[-1] = EngineResponse(last.application_time, response.system_time or last.system_time,
                                        last.operation, last.bindings + response.bindings)
        else:
            merged.append(response)
    return copy_with(log, responses=tuple(merged))


def check_variables(log: ResponseLog, query: ContinuousQuery) -> None:
    """An output for a different query (none of its variables is the query's) is reported as
    such, not as 'incorrect'; an output that binds some unknown variable besides the query's
    is a wrong answer, named by the verdict (`rsp_workbench.oracle.verdict.malformed`)."""
    expected = set(query.variables)
    produced: set[str] = set(log.variables)
    for response in log.responses:
        for mapping in response.bindings:
            produced.update(var for var, _ in mapping)
    if expected and produced and not produced & expected:
        raise UserError(
            f"the engine output binds {', '.join(sorted(produced - expected))}, which the query does not "
            f"project ({', '.join(sorted(expected))}): it looks like the output of a different query",
            file=log.source or None,
        )


def mapping_rows(bag: Counter[Hashable]) -> list[dict[str, str]]:
    return [dict(sorted(as_mapping(mapping))) for mapping in bag.elements()]


def expected_windows(answer: ExpectedAnswer) -> Iterator["ExpectedWindow"]:
    """The oracle's evaluations as YABench windows (borders, expected bag, size, report time),
    one at a time."""
    from rsp_workbench.oracle.quality import ExpectedWindow

    emitted = {(e.time, e.sequence): e for e in answer.emissions}
    for ev in answer.evaluations:
        emission = emitted.get((ev.time, ev.sequence))
        yield ExpectedWindow(ev.window.open, ev.window.close,
                             Counter(emission.bindings) if emission is not None else Counter(), ev.size, ev.time)


def snapshot_expectation(
    query: ContinuousQuery, elements: Sequence[StreamElement], semantics: EngineSemantics
) -> "Callable[[int, int], Counter[Hashable]]":
    """``expected_for(start, end)``: the expected bag for other window borders (gracious mode)."""
    from rsp_workbench.core.windows import content_range
    from rsp_workbench.oracle.reference import evaluate_snapshot

    times = [e.t for e in elements]

    def expected_for(start: int, end: int) -> Counter[Hashable]:
        lo, hi = content_range(times, start, end, semantics.border)
        return evaluate_snapshot(query, [elements[lo:hi]] * len(query.windows), StaticData(), end)

    return expected_for


def responses_by_evaluation(answer: ExpectedAnswer, log: ResponseLog) -> list[Any]:
    """The engine response paired with each evaluation of ``answer`` by time (None: no response).

    The responses at one instant go to that instant's emitting evaluations first, then to
    the silent ones, so a window the engine rightly leaves unreported does not shift the
    pairing. Needs every response's application time (the stand records it). The window
    timeline pairs a clicked window's responses with this too.
    """
    at: dict[int | None, list[Any]] = {}
    for response in log.responses:
        at.setdefault(response.application_time, []).append(response)
    emitted = {(e.time, e.sequence) for e in answer.emissions}
    slots: dict[int, list[int]] = {}
    for index, evaluation in enumerate(answer.evaluations):
        slots.setdefault(evaluation.time, []).append(index)
    paired: list[Any] = [None] * len(answer.evaluations)
    for time, indices in slots.items():
        emitting = [(answer.evaluations[i].time, answer.evaluations[i].sequence) in emitted for i in indices]
        ordered = [i for i, emits in zip(indices, emitting) if emits]
        ordered += [i for i, emits in zip(indices, emitting) if not emits]
        for index, response in zip(ordered, at.get(time, ())):
            paired[index] = response
    return paired


def measure_quality(
    query: ContinuousQuery,
    semantics: EngineSemantics,
    streams: Mapping[str, Sequence[StreamElement]],
    answer: ExpectedAnswer,
    log: ResponseLog,
    *,
    gracious: bool = False,
    by_time: bool = False,
    report_window: int = 0,
    due_at: Callable[[int], float] | None = None,
) -> "QualityRows":
    """Per-window precision/recall/delay of one engine output (YABench Sect. 3.4), kept compactly.

    By default the i-th response is paired with the i-th expected window (YABench's
    pairing); ``by_time`` pairs each window with the responses at its evaluation time
    instead (when the engine reports application times), so that a window the engine
    rightly leaves unreported (``non-empty`` policies) does not shift the pairing.
    """
    from rsp_workbench.oracle.quality import QualityRows, iter_window_quality

    windows = expected_windows(answer)
    start = log.run_start or 0

    def entry(response: Any) -> tuple[int | None, Counter[Hashable]]:
        emitted = None if response.system_time is None else response.system_time - start
        return emitted, Counter(response.bindings)

    if by_time and all(r.application_time is not None for r in log.responses):
        actual = ((None, Counter()) if r is None else entry(r) for r in responses_by_evaluation(answer, log))
    else:
        actual = (entry(r) for r in log.responses)
    if not gracious:  # the stream itself is needed only to move window borders
        return QualityRows(iter_window_quality(windows, actual, due_at=due_at))
    elements = streams[query.windows[report_window].stream]  # the borders are the report window's
    return QualityRows(iter_window_quality(
        windows, actual, gracious=gracious, expected_for=snapshot_expectation(query, elements, semantics),
        timestamps=sorted({e.t for e in elements}), due_at=due_at,
    ))
