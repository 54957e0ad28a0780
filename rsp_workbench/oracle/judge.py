"""Judging one engine run: its recorded responses against the oracle → verdict, quality, recall.

:func:`judge` is the one entry point that ``rspwb run`` (the pipeline, after each engine
run), ``rspwb check``, the GUI and ``rspwb probe`` share: an engine's responses, the
stream(s) it was fed, the semantics to judge it under (+ static data, the last instant,
the stand's timing) in; the verdict (RSP-QL Def. 25/26, :mod:`verdict`), the per-window
quality (YABench Sect. 3.4, :mod:`quality`) or, for bounded-memory joins, the recall
against the unbounded answer (eviction paper) out, as the payload of a run's
``oracle.json``. Where the expected answers are computed (Python fast path, rdflib
reference, or a Spark job the pipeline layer selects) is the caller's choice, passed in as
an :data:`ExpectedFunction`, so this module never imports Spark.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Iterator, Mapping, Sequence

from rsp_workbench.core.semantics import EngineSemantics, Grouping
from rsp_workbench.errors import UserError
from rsp_workbench.oracle.reference import ExpectedAnswer, StaticData
from rsp_workbench.query.model import ContinuousQuery
from rsp_workbench.responses.model import ResponseLog
from rsp_workbench.streams.model import StreamElement

if TYPE_CHECKING:  # pragma: no cover
    from rsp_workbench.oracle.quality import WindowQuality
    from rsp_workbench.oracle.run import OracleMethod
    from rsp_workbench.oracle.verdict import Relation

#: Engine types whose runs are judged by recall against the unbounded join (eviction paper).
EVICTION_ENGINE_TYPES = ("eviction",)
#: Engine types that reason under ρDF (Heaven baselines): judged over the entailed inputs.
RHODF_ENGINE_TYPES = ("naive", "incremental")

#: ``(query, streams, semantics, t0 vectors, static, end, report_window)`` → the expected answer per
#: t0 vector and the path that computed it (:func:`rsp_workbench.oracle.run.expected_with_method` by default).
ExpectedFunction = Callable[
    [ContinuousQuery, Mapping[str, Sequence[StreamElement]], EngineSemantics, Sequence[tuple[int, ...]],
     StaticData, int, int],
    "tuple[Mapping[tuple[int, ...], ExpectedAnswer], OracleMethod]",
]


def python_expected(query: ContinuousQuery, streams: Mapping[str, Sequence[StreamElement]],
                    semantics: EngineSemantics, vectors: Sequence[tuple[int, ...]], static: StaticData, end: int,
                    report_window: int) -> "tuple[Mapping[tuple[int, ...], ExpectedAnswer], OracleMethod]":
    """The in-process oracle: the fast path inside its fragment, rdflib's reference outside."""
    from rsp_workbench.oracle.run import expected_with_method

    return expected_with_method(query, streams, semantics, vectors, static=static, end=end,
                                report_window=report_window)


def oracle_semantics(settings: Mapping[str, Any], engine_semantics: EngineSemantics) -> EngineSemantics:
    """The oracle's semantics: the named system (preset) + overrides, or the engine's own (``system: engine``);
    the engine's declared grouping either way."""
    from rsp_workbench.oracle.run import resolve_semantics

    system = settings.get("system") or "engine"
    overrides = dict(settings.get("semantics_overrides") or {})
    if system == "engine":
        return engine_semantics.with_overrides(overrides) if overrides else engine_semantics
    resolved = resolve_semantics(system, overrides)
    # how the responses group is the engine's (its output), whatever semantics judge them
    return resolved if "grouping" in overrides else replace(resolved, grouping=engine_semantics.grouping)


def static_data(static: Mapping[str, Any]) -> StaticData:
    """Static data as the oracle takes it, from ``{"default": [(s, p, o)…], "named": {g: […]}}`` (N-Triples terms)."""
    return StaticData(tuple(map(tuple, static.get("default", ()))),
                      {g: tuple(map(tuple, rows)) for g, rows in (static.get("named") or {}).items()})


@dataclass(frozen=True)
class Judgement:
    """What judging a run found: ``oracle.json``'s payload and the per-window quality behind it."""

    payload: dict[str, Any]
    quality: Sequence["WindowQuality"] | None = None  # None: not measured (`QualityRows` from `judge`)

    @property
    def verdict(self) -> str | None:
        return self.payload.get("verdict")

    @property
    def precision(self) -> float | None:
        return self.payload.get("precision")

    @property
    def recall(self) -> float | None:
        return self.payload.get("recall")

    def window_rows(self) -> Iterator[dict[str, Any]]:
        """``oracle.json``'s ``windows`` entries, one per window, made as they are read."""
        for w in self.quality or ():
            yield {"start": w.start, "end": w.end, "precision": w.precision, "recall": w.recall,
                   "actual_size": w.actual_size, "expected_size": w.expected_size, "window_triples": w.window_triples,
                   "delay": w.delay, "reconstructed_start": w.reconstructed_start,
                   "reconstructed_end": w.reconstructed_end}

    def window_batches(self, size: int) -> Iterator[dict[str, Any]]:
        """The same windows as columns, ``size`` at a time (`QualityRows.column_batches`): what
        ``windows.parquet`` is written from, one row group per batch."""
        from rsp_workbench.oracle.quality import QualityRows

        quality = self.quality or ()
        rows = quality if isinstance(quality, QualityRows) else QualityRows(quality)
        yield from rows.column_batches(size)

    def oracle_lines(self) -> str:
        """The YABench ``ORACLE_<engine>`` file of this run (one line per window)."""
        return "".join(w.oracle_line() + "\n" for w in self.quality or ())


@dataclass(frozen=True)
class RecordedRun:
    """Everything :func:`judge` needs about one engine run.

    ``streams``: the query's streams by IRI, as the engine was fed them; ``stimuli``: the
    stimuli themselves (needed for eviction runs only); ``engine_parameters``: the engine's
    (``tbox`` for ρDF engines); ``static``: static data as N-Triples term rows
    (``{"default": [...], "named": {...}}``); ``due_at``: when each report became due on
    the stand (:func:`report_due_at`), for YABench's delay; ``streams_key``: a hashable
    identity of the streams' content, which lets runs of one case share the expected answers;
    ``semantics_declared``: False when nobody said what the engine's semantics are (an
    external program without ``preset``/``semantics``), so ``semantics`` are assumed defaults;
    ``end_fixed``: ``end`` is a time the user fixed (``oracle.end: 30s``, ``--end``), where the
    comparison stops (later relations are counted as not judged); otherwise ``end`` follows
    the stream and the oracle goes on to the engine's last relation (`judged_until`).
    """

    query: ContinuousQuery
    streams: Mapping[str, Sequence[StreamElement]]
    log: ResponseLog
    semantics: EngineSemantics
    end: int
    engine_type: str = "external"
    engine_parameters: Mapping[str, Any] = field(default_factory=dict)
    static: Mapping[str, Any] = field(default_factory=lambda: {"default": [], "named": {}})
    stimuli: Sequence[Any] = ()
    due_at: Callable[[int], float] | None = None
    streams_key: Hashable | None = None
    semantics_declared: bool = True
    end_fixed: bool = False


@dataclass(frozen=True)
class JudgeOptions:
    """How to judge: the t0 to try, the matching mode, gracious quality, regrouping.

    ``t0``: None (the semantics' own t0, else the admissible set), ``"all"``, one instant
    (ms) or one t0 per window; ``registration``: the query's registration time (RSP-QL
    Theorem 1); ``regroup``: the engine emits one response per binding (or per part of an
    evaluation), so consecutive responses with the same time and operation are one
    evaluation's output, and the verdict compares both sides per instant; ``quality``:
    measure per-window precision/recall (needs the streams' elements). ``regroup`` None: as
    the semantics' ``grouping`` declares (``binding``: regroup); True/False override it.
    """

    t0: str | int | tuple[int, ...] | None = None
    registration: int = 0
    match: str = "strict"
    gracious: bool = False
    report_window: int = 0
    regroup: bool | None = None
    rel_tol: float = 1e-9  # numeric literals (rsp_workbench.oracle.compare.Tolerance)
    quality: bool = True
    window_rows: bool = True  # False: the payload's "windows" is None, for `Judgement.window_rows` to fill


_ANSWER_CACHE: dict[tuple[Any, ...], tuple[Any, Any, int, Any]] = {}


def judge(run: RecordedRun, options: JudgeOptions = JudgeOptions(),
          expected: ExpectedFunction = python_expected) -> Judgement:
    """Judge one run: verdict (RSP-QL Def. 25/26) + per-window quality, or recall for eviction engines.

    Never raises for what the engine did: an output for another query is "incorrect" with
    the reason, a semantics the oracle cannot judge is an "error" verdict with the reason.
    """
    if run.engine_type in EVICTION_ENGINE_TYPES:
        return judge_eviction(run.stimuli, run.query, run.log)
    from rsp_workbench.core.semantics import Strategy, Tick
    from rsp_workbench.oracle.compare import Tolerance
    import numpy as np

    from rsp_workbench.oracle.run import (
        check_variables,
        engine_relations,
        evaluation_times,
        measure_quality,
        plausible_order,
        regroup_responses,
    )
    from rsp_workbench.oracle.verdict import judge as verdict_of

    semantics = run.semantics
    streams: Mapping[str, Sequence[StreamElement]] = run.streams
    static = run.static
    if run.engine_type in RHODF_ENGINE_TYPES:
        if semantics.tick is Tick.TUPLE and Strategy.CONTENT_CHANGE in semantics.report.strategies:
            return Judgement({"verdict": "error", "precision": None, "recall": None, "windows": [],
                              "error": "the ρDF oracle cannot judge content change under a tuple tick (derived "
                                       "triples would count as ticks); use a time tick or a window-close policy"})
        from rsp_workbench.oracle.rhodf import rhodf_entailed

        streams, static = rhodf_entailed(streams, static, run.engine_parameters.get("tbox"))
    regroup = semantics.grouping is Grouping.BINDING if options.regroup is None else options.regroup
    log = regroup_responses(run.log) if regroup else run.log
    try:
        check_variables(log, run.query)
    except UserError as error:
        return Judgement({"verdict": "incorrect", "error": error.message, "precision": None, "recall": None,
                          "windows": []})
    emitted = engine_relations(log)
    if run.end_fixed:  # the user cut the comparison there: later relations are counted, not judged
        judged, horizon = [r for r in emitted if r.time is None or r.time <= run.end], run.end
    else:
        judged, horizon = emitted, judged_until(emitted, run.end)
    vectors, answers, t_s, used = _expected(run, options, streams, static, expected, horizon)
    label = {v: (v if len(v) > 1 else v[0]) for v in vectors}
    strict = options.match == "strict"
    # strict: t0 whose instants miss an engine time are never computed, and the first match ends the search
    order = plausible_order(answers, vectors, judged, t_s) if strict else vectors
    candidates = _Candidates(order, label, answers, regroup=regroup)
    verdict = verdict_of(judged, candidates, mode=options.match, comparison_start=t_s,
                         tolerance=Tolerance(rel_tol=options.rel_tol), stop_at_first=strict,
                         content_class=candidates.content_class, variables=frozenset(run.query.variables) or None)
    if verdict.correct:
        # several t0 can match (CSRBench matching ignores times): measure quality against the
        # one whose evaluation times the engine actually reported, so windows pair up by time
        reported = {r.application_time for r in log.responses if r.application_time is not None}
        by_label = {label[v]: v for v in vectors}
        chosen = max(  # from the evaluation instants only (the grid; no relation, no evaluation objects)
            verdict.matching_t0,
            key=lambda t0: len(reported.intersection(np.asarray(evaluation_times(answers, by_label[t0])).tolist())),
        )
    elif verdict.first_divergence is not None:
        chosen = verdict.first_divergence.t0
    else:
        chosen = label[vectors[0]]
    vector = next(v for v in vectors if label[v] == chosen)
    payload = verdict.to_json()
    if not run.semantics_declared:
        payload["warning"] = assumed_semantics_warning(semantics)
    payload.update({
        "semantics": semantics.describe(),
        "semantics_declared": run.semantics_declared,
        "admissible_t0": len(vectors),
        "quality_t0": list(vector) if len(vector) > 1 else vector[0],
        "end": horizon,  # the last instant judged: the run's end, or the engine's last relation after it
        "relations_after_end": sum(1 for r in emitted if r.time is not None and r.time > run.end),
        "relations_not_judged": len(emitted) - len(judged),  # only after a fixed end
        # which oracle path computed the expected answers, and why a slower one ran
        "method": used.path,
        "method_engine": used.engine,
        "method_reason": used.reason,
    })
    if not options.quality:
        return Judgement(payload)
    quality = measure_quality(run.query, semantics, streams, answers[vector], log, gracious=options.gracious,
                              by_time=True, report_window=options.report_window, due_at=run.due_at)
    judgement = Judgement(payload, quality)
    payload.update({
        "precision": _mean([w.precision for w in quality]),
        "recall": _mean([w.recall for w in quality]),
        "windows": list(judgement.window_rows()) if options.window_rows else None,
    })
    return judgement


def judged_until(relations: Sequence["Relation"], end: int) -> int:
    """The last instant judged: ``end``, or the engine's last relation when it answered after it.

    Every relation an engine emitted is judged: after ``end`` the oracle's evaluation simply
    continues (windows after the last element are empty, and the engine's report policy,
    tick and empty-relation rule say whether anything is expected there), so a relation
    there is compared with that, or reported as extra — never left out.
    """
    latest = max((r.time for r in relations if r.time is not None), default=end)
    return max(end, latest)


def _expected(run: RecordedRun, options: JudgeOptions, streams: Mapping[str, Sequence[StreamElement]],
              static: Mapping[str, Any], expected: ExpectedFunction, end: int) -> tuple[Any, Any, int, Any]:
    """The t0 vectors, their expected answers up to ``end``, t_s and the oracle path (shared by runs of one case)."""
    from rsp_workbench.oracle.run import t0_vectors

    key = None
    if run.streams_key is not None:
        key = (run.streams_key, run.engine_type, str(run.engine_parameters.get("tbox")), repr(run.query),
               repr(run.semantics), repr(options.t0), options.registration, options.report_window, end)
        if key in _ANSWER_CACHE:
            return _ANSWER_CACHE[key]
    if isinstance(options.t0, (tuple, list)):  # one t0 per window, fixed (e.g. the engine's own)
        vectors, t_s = [tuple(int(t) for t in options.t0)], max(int(t) for t in options.t0)
    else:
        vectors, t_s = t0_vectors(run.query, run.semantics, options.t0, options.registration)
    answers, used = expected(run.query, streams, run.semantics, vectors, static_data(static), end,
                             options.report_window)
    result = (vectors, answers, t_s, used)
    if key is not None:
        _ANSWER_CACHE.clear()  # one case at a time: runs of a case are consecutive
        _ANSWER_CACHE[key] = result
    return result


def assumed_semantics_warning(semantics: EngineSemantics) -> str:
    """What the oracle assumed for an engine that declares no semantics (shown with its verdict)."""
    described = ", ".join(f"{k} {v}" for k, v in semantics.describe().items() if v is not None)
    return ("the engine declares no preset or semantics, so the oracle assumed the defaults "
            f"({described}); declare them with preset:/semantics: (docs/experiment-format.md)")


class _Candidates(Mapping[Any, Any]):
    """The oracle's relations per t0 label, built when the verdict asks for them (one t0 at a
    time), over t0 vectors that may themselves be found lazily (`run.plausible_order`)."""

    def __init__(self, order: Iterable[tuple[int, ...]], label: Mapping[tuple[int, ...], Any],
                 answers: Mapping[tuple[int, ...], ExpectedAnswer], *, regroup: bool = False) -> None:
        self.order, self.label, self.answers, self.regroup = iter(order), label, answers, regroup
        self.vectors: dict[Any, tuple[int, ...]] = {}  # label -> vector, as the order is read

    def __getitem__(self, t0: Any) -> Any:
        from rsp_workbench.oracle.run import expected_relations
        from rsp_workbench.oracle.verdict import regroup_by_time

        if t0 not in self.vectors:
            raise KeyError(t0)
        relations = expected_relations(self.answers[self.vectors[t0]])
        return regroup_by_time(relations) if self.regroup else relations  # both sides compared per instant

    def content_class(self, t0: Any) -> Hashable | None:
        """A key shared by the t0 whose evaluations read the same window contents in the same
        order (then the same relations and emissions, at other instants); None when unknown.
        Not with ``regroup``: merging relations by instant depends on the instants."""
        if self.regroup or t0 not in self.vectors:
            return None
        vector = self.vectors[t0]
        if hasattr(self.answers, "content_grid"):  # the pipeline's answers: the grid, no relation
            grid = self.answers.content_grid(vector)
        else:  # a `DeltaAnswer` (kept by `LazyAnswers` for the verdict's next request) has its grid
            grid = getattr(self.answers[vector], "grid", None)
        return None if grid is None else (grid.lo.tobytes(), grid.hi.tobytes())

    def __iter__(self) -> Any:
        yield from list(self.vectors)
        for vector in self.order:
            self.vectors[self.label[vector]] = vector
            yield self.label[vector]

    def __len__(self) -> int:  # at most the admissible t0 (the order may skip some)
        return len(self.label)


def _mean(values: Sequence[float]) -> float | None:
    """The mean over windows as oracle.json has always stored it (6 decimals)."""
    return round(sum(values) / len(values), 6) if values else None


def judge_eviction(stimuli: Sequence[Any], query: ContinuousQuery, log: ResponseLog) -> Judgement:
    """Bounded-memory joins are judged by recall against the unbounded answer (eviction paper,
    Sect. 1): the RSP-QL oracle does not apply to an engine that drops bindings on purpose."""
    from rsp_workbench.oracle.unbounded_join import found_mappings, recall, unbounded_answer

    truth = unbounded_answer(stimuli, query)  # the oracle's own evaluation, not the engine's join
    found = found_mappings(log.responses)
    return Judgement({
        "verdict": "recall",
        "precision": len(found & truth) / len(found) if found else 1.0,
        "recall": recall(found, truth),
        "ground_truth_results": len(truth),
        "windows": [],
    })


def report_due_at(trace: Path, stand: Mapping[str, Any], run_start: int | None) -> Callable[[int], float] | None:
    """When a window's report became due on the stand, in ms since the run start (YABench's delay
    is the emission time minus this).

    Real time: the stand sent the stream's first stimulus at ``first_sent`` and application
    time runs ``time_scale`` times faster than the wall clock from there. Absolute time: the
    engine's clock only moves with the stimuli, so a report at ``T`` is due when the first
    stimulus with application time ≥ ``T`` was sent (the last one for reports after it).
    None when the trace is missing (the identity then applies).
    """
    import bisect

    sent: list[tuple[int, float]] = []
    try:
        with open(trace, encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                if record.get("sent") is not None:
                    sent.append((int(record["application_time"]), float(record["sent"])))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not sent or run_start is None:
        return None
    sent.sort()
    origin = float(run_start)
    if stand.get("mode") == "absolute-time":
        times = [t for t, _ in sent]

        def absolute(report_time: int) -> float:
            index = min(bisect.bisect_left(times, report_time), len(sent) - 1)
            return sent[index][1] - origin

        return absolute
    first_t, first_sent = sent[0]
    scale = float(stand.get("time_scale") or 1.0)
    return lambda report_time: first_sent - origin + (report_time - first_t) / scale
