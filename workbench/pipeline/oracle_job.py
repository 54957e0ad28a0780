"""The scalable oracle job: BGP joins on Spark, window assignment for every t0 vectorised.

Pipeline (issue 4 item 4, ARCHITECTURE.md "The oracle must scale"):

1. Each stream is a DataFrame ``(s, p, o, t, pos)``; ``pos`` is the element's position in
   the time-ordered stream (the Parquet row index of a workbench stream file, else
   ``row_number`` over ``(t, monotonically_increasing_id)``).
2. The query's monotone part is compiled (`workbench.oracle.annotated.compile_plan`);
   every BGP runs as Spark DataFrame joins with the band condition (elements of one
   mapping lie at most ω apart per window). Each row is annotated with the positions
   ``[pmin, pmax]`` of the elements that built it; FILTER/BIND/UNION/... above the BGPs
   run on the driver over the (small) annotated rows.
3. For each t0 the evaluations are computed on the *distinct timestamps* (numpy, exact
   when contents start and end at timestamp boundaries: time tick or window-close), and
   a row is present in evaluation j iff ``lo_j ≤ pmin`` and ``pmax < hi_j``. Because
   ``lo_j`` and ``hi_j`` never decrease along the evaluation sequence, each row is
   present on one interval of evaluations ``[enter, exit]`` found by binary search;
   Istream/Dstream are the entries/exits (no diffing of whole relations).
4. t0 values whose evaluations read identical contents form one *class*; answers are
   reported per class with the t0 values it covers.

Queries outside the fast fragment fall back to the rdflib reference path per t0.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from workbench.core.r2s import apply_r2s
from workbench.core.semantics import ActiveWindowChoice, BorderConvention, EngineSemantics, R2S, Strategy, Tick
from workbench.core.windows import WindowSpec
from workbench.errors import UserError
from workbench.oracle.annotated import (
    BIG,
    AnnotationContext,
    Annotator,
    FastPathUnsupported,
    Relation,
    RelationEvaluator,
    RowTable,
    Timeline,
    WindowData,
    annotate,
    compile_plan,
    content_keys,
    evaluations_for,
    minimal_requirements,
)
from workbench.oracle.reference import ExpectedAnswer, StaticData, expected_answer, window_specs
from workbench.query.model import ContinuousQuery
from workbench.streams.terms import canonical_triple, from_rdflib

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

Progress = Callable[[str, float], None]


# --- streams as DataFrames ----------------------------------------------------------------------


def stream_frame(spark: "SparkSession", source: "str | DataFrame") -> "DataFrame":
    """``(s, p, o, t, pos)`` for a workbench Parquet stream file or a DataFrame.

    A DataFrame may carry ``pos``; otherwise positions follow ``(t, monotonically_increasing_id)``,
    which is the original order only when the partitions are in stream order.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.window import Window

    if isinstance(source, str):
        frame = spark.read.parquet(source)
        return frame.select(
            F.col("subject").alias("s"), F.col("predicate").alias("p"), F.col("object").alias("o"),
            F.col("t"), F.col("_metadata.row_index").alias("pos"),
        )
    columns = set(source.columns)
    renamed = source
    for long, short in (("subject", "s"), ("predicate", "p"), ("object", "o")):
        if long in columns:
            renamed = renamed.withColumnRenamed(long, short)
    if "pos" in columns:
        return renamed.select("s", "p", "o", "t", "pos")
    order = Window.orderBy("t", "_mid")
    return (
        renamed.withColumn("_mid", F.monotonically_increasing_id())
        .withColumn("pos", F.row_number().over(order) - 1)
        .select("s", "p", "o", "t", "pos")
    )


def timeline_of(frame: "DataFrame", source: "str | DataFrame | None" = None) -> Timeline:
    """Distinct timestamps and their counts (the only per-element data the driver needs).

    For a Parquet file the driver can read, only its ``t`` column is read with pyarrow
    (a sorted column: one pass, well under a second for millions of elements); otherwise
    a Spark aggregation computes it.
    """
    if isinstance(source, str) and os.path.exists(source):
        import pyarrow.parquet as pq

        times = pq.read_table(source, columns=["t"]).column("t").to_numpy()
        distinct, counts = np.unique(times, return_counts=True)
        return Timeline.from_counts(distinct.tolist(), counts.tolist())
    table = frame.groupBy("t").count().orderBy("t").toArrow()
    return Timeline.from_counts(table.column("t").to_pylist(), table.column("count").to_pylist())


# --- BGPs as DataFrame joins -------------------------------------------------------------------


class SparkBGP:
    """Evaluates BGP leaves with DataFrame joins; returns annotated `Relation` rows."""

    def __init__(self, spark: "SparkSession", frames: Sequence["DataFrame"], context: AnnotationContext) -> None:
        self.spark = spark
        self.frames = frames
        self.context = context

    def __call__(self, patterns: Sequence[tuple[Any, Any, Any]], graph: str | None) -> Relation:
        from pyspark.sql import functions as F

        from workbench.oracle.annotated import _connected_order, _is_var, _key

        width = self.context.width
        variables: list[str] = []
        for pattern in patterns:
            for term in pattern:
                if _is_var(term) and _key(term) not in variables:
                    variables.append(_key(term))
        column = {v: f"v{i}" for i, v in enumerate(variables)}
        annotator = Annotator(self.context)
        joined: "DataFrame | None" = None
        bound: list[str] = []
        for pattern in _connected_order(patterns):
            frame = self._pattern_frame(pattern, graph, column, annotator)
            names = list(dict.fromkeys(_key(t) for t in pattern if _is_var(t)))
            if joined is None:
                joined = frame
            else:
                shared = [column[n] for n in names if n in bound]
                right = frame
                for w in range(width):
                    for c in ("pmin", "pmax", "tmin", "tmax"):
                        right = right.withColumnRenamed(f"{c}{w}", f"{c}{w}_r")
                joined = joined.join(right, on=shared, how="inner") if shared else joined.crossJoin(right)
                for w in range(width):
                    joined = (
                        joined.withColumn(f"pmin{w}", F.least(f"pmin{w}", f"pmin{w}_r"))
                        .withColumn(f"pmax{w}", F.greatest(f"pmax{w}", f"pmax{w}_r"))
                        .withColumn(f"tmin{w}", F.least(f"tmin{w}", f"tmin{w}_r"))
                        .withColumn(f"tmax{w}", F.greatest(f"tmax{w}", f"tmax{w}_r"))
                        .drop(f"pmin{w}_r", f"pmax{w}_r", f"tmin{w}_r", f"tmax{w}_r")
                    )
                    joined = joined.where(F.col(f"tmax{w}") - F.col(f"tmin{w}") <= self.context.windows[w].size)
            bound += [n for n in names if n not in bound]
        assert joined is not None
        selected = joined.select(*[column[v] for v in variables], *[f"{c}{w}" for w in range(width) for c in ("pmin", "pmax")])
        table = selected.toArrow()
        value_columns = [table.column(column[v]).to_pylist() for v in variables]
        req_columns = [table.column(f"{c}{w}").to_numpy() for w in range(width) for c in ("pmin", "pmax")]
        reqs = np.stack(req_columns, axis=1) if req_columns else np.empty((table.num_rows, 0), np.int64)
        grouped: dict[tuple[str | None, ...], list[tuple[int, ...]]] = defaultdict(list)
        for i, values in enumerate(zip(*value_columns) if value_columns else [()] * table.num_rows):
            grouped[values].append(tuple(int(x) for x in reqs[i]))
        rows = [(v, tuple(r) if len(r) == 1 else minimal_requirements(r)) for v, r in grouped.items()]
        return Relation(tuple(variables), rows)

    def _pattern_frame(self, pattern: tuple[Any, Any, Any], graph: str | None, column: Mapping[str, str],
                       annotator: Annotator) -> "DataFrame":
        from pyspark.sql import functions as F
        from pyspark.sql.types import LongType, StringType, StructField, StructType

        from workbench.oracle.annotated import _is_var, _key

        width = self.context.width
        names = [_key(t) if _is_var(t) else None for t in pattern]
        unique = list(dict.fromkeys(n for n in names if n is not None))
        req_names = [f"{c}{w}" for w in range(width) for c in ("pmin", "pmax", "tmin", "tmax")]
        frames = []
        statics, windows = annotator.sources(graph)
        static_rows = []
        for triples in statics:
            for triple in triples:
                if self._matches(pattern, names, triple):
                    values = {n: triple[i] for i, n in enumerate(names) if n is not None}
                    static_rows.append(tuple(values[n] for n in unique) + (BIG, -1, BIG, -BIG) * width)
        if static_rows:
            schema = StructType([StructField(column[n], StringType()) for n in unique]
                                + [StructField(c, LongType()) for c in req_names])
            frames.append(self.spark.createDataFrame(static_rows, schema))
        for w in windows:
            frame = self.frames[w]
            for i, (term, name) in enumerate(zip(pattern, names)):
                if name is None:
                    frame = frame.where(F.col("spo"[i]) == from_rdflib(term))
            first: dict[str, str] = {}
            for i, name in enumerate(names):
                if name is None:
                    continue
                if name in first:
                    frame = frame.where(F.col("spo"[i]) == F.col(first[name]))
                else:
                    first[name] = "spo"[i]
            reqs = []
            for v in range(width):
                if v == w:
                    reqs += [F.col("pos").alias(f"pmin{v}"), F.col("pos").alias(f"pmax{v}"),
                             F.col("t").alias(f"tmin{v}"), F.col("t").alias(f"tmax{v}")]
                else:
                    reqs += [F.lit(BIG).cast("long").alias(f"pmin{v}"), F.lit(-1).cast("long").alias(f"pmax{v}"),
                             F.lit(BIG).cast("long").alias(f"tmin{v}"), F.lit(-BIG).cast("long").alias(f"tmax{v}")]
            frames.append(frame.select(*[F.col(first[n]).alias(column[n]) for n in unique], *reqs))
        if not frames:
            schema = StructType([StructField(column[n], StringType()) for n in unique]
                                + [StructField(c, LongType()) for c in req_names])
            return self.spark.createDataFrame([], schema)
        result = frames[0]
        for other in frames[1:]:
            result = result.unionByName(other)
        return result

    @staticmethod
    def _matches(pattern: tuple[Any, Any, Any], names: list[str | None], triple: tuple[str, str, str]) -> bool:
        seen: dict[str, str] = {}
        for term, name, value in zip(pattern, names, triple):
            if name is None:
                if from_rdflib(term) != value:
                    return False
            elif seen.setdefault(name, value) != value:
                return False
        return True


# --- vectorised evaluations per t0 ------------------------------------------------------------------


@dataclass
class EvaluationArrays:
    """The evaluations of one t0 as arrays (distinct-timestamp indices for lo/hi)."""

    time: np.ndarray
    open: np.ndarray
    close: np.ndarray
    index: np.ndarray
    lo: np.ndarray  # content [lo, hi) in distinct-timestamp indices
    hi: np.ndarray


def vectorisable(query: ContinuousQuery, semantics: EngineSemantics) -> bool:
    """True if `evaluation_arrays` reproduces `evaluation_instants` for these semantics."""
    strategies = semantics.report.strategies
    if len(query.windows) != 1 or Strategy.PERIODIC in strategies:
        return False
    if Strategy.WINDOW_CLOSE in strategies:
        return True
    return semantics.tick is Tick.TIME and semantics.active_window is ActiveWindowChoice.EARLIEST


def evaluation_arrays(distinct: np.ndarray, spec: WindowSpec, semantics: EngineSemantics, end: int) -> EvaluationArrays:
    """`workbench.core.report.evaluation_instants` in numpy, on distinct timestamps.

    Window-close (with content-change / non-empty conjuncts), or content-change with the
    time tick and the earliest active window (`vectorisable`). Pinned against the scalar
    definition by tests/test_oracle_fast.py.
    """
    start, beta, omega, t0 = spec.t0, spec.slide, spec.size, spec.t0
    border = spec.border
    offset = 0 if spec.leading_partial else omega
    first_index = 1 if spec.leading_partial else 0
    strategies = semantics.report.strategies
    left_side = "right" if border is BorderConvention.OPEN_CLOSED else "left"
    right_side = "left" if border is BorderConvention.CLOSED_OPEN else "right"

    def opens(k: np.ndarray) -> np.ndarray:
        if spec.leading_partial:
            return np.maximum(t0, t0 + k * beta - omega)
        return t0 + k * beta

    if Strategy.WINDOW_CLOSE in strategies:
        first = max(first_index, -((-(start - t0 - offset)) // beta))
        last = (end - t0 - offset) // beta
        k = np.arange(first, last + 1, dtype=np.int64)
        close = t0 + k * beta + offset
        open_ = opens(k)
        times = close
        lo = np.searchsorted(distinct, open_, side=left_side)
        hi = np.maximum(lo, np.searchsorted(distinct, close, side=right_side))
        active = np.ones(len(k), dtype=bool)
    else:
        tick_lo, tick_hi = np.searchsorted(distinct, start, "left"), np.searchsorted(distinct, end, "right")
        tick_times = distinct[tick_lo:tick_hi]
        tick_arrived = np.arange(tick_lo + 1, tick_hi + 1, dtype=np.int64)
        include_open = border is not BorderConvention.OPEN_CLOSED
        include_close = border is not BorderConvention.CLOSED_OPEN
        kb = max(first_index, -((-(start - t0 - offset - 1)) // beta))
        kmax = max(kb, (end - t0 + omega) // beta + 2)
        k = np.arange(kb, kmax + 1, dtype=np.int64)
        enter = opens(k) + (0 if include_open else 1)
        leave = t0 + k * beta + offset + (1 if include_close else 0)
        k_ok = enter <= end
        instants = np.unique(np.concatenate([enter[k_ok], leave[k_ok]]))
        instants = instants[(instants >= start) & (instants <= end)]
        instants = instants[~np.isin(instants, tick_times)]
        boundary_arrived = np.searchsorted(distinct, instants, "left")
        times = np.concatenate([tick_times, instants])
        arrived = np.concatenate([tick_arrived, boundary_arrived])
        order = np.argsort(times, kind="stable")
        times, arrived = times[order], arrived[order]
        # earliest window containing t: smallest k >= first_index whose close is not before t
        if border is BorderConvention.CLOSED_OPEN:
            kk = (times - t0 - offset) // beta + 1
        else:
            kk = -((-(times - t0 - offset)) // beta)
        kk = np.maximum(kk, first_index)
        open_ = opens(kk)
        close = t0 + kk * beta + offset
        active = open_ < times if border is BorderConvention.OPEN_CLOSED else open_ <= times
        k = kk
        lo = np.searchsorted(distinct, open_, side=left_side)
        hi = np.minimum(np.searchsorted(distinct, close, side=right_side), arrived)
        hi = np.maximum(lo, hi)
    empty = hi <= lo
    key_lo = np.where(empty, 0, lo)
    key_hi = np.where(empty, 0, hi)
    prev_lo = np.concatenate([[0], np.where(active[:-1], key_lo[:-1], 0)])
    prev_hi = np.concatenate([[0], np.where(active[:-1], key_hi[:-1], 0)])
    holds = active.copy()
    if Strategy.CONTENT_CHANGE in strategies:
        holds &= (key_lo != prev_lo) | (key_hi != prev_hi)
    if Strategy.NON_EMPTY in strategies:
        holds &= ~empty
    return EvaluationArrays(times[holds], open_[holds], close[holds], k[holds], lo[holds], hi[holds])


# --- results ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowSummary:
    """One evaluation in compact form (what ``rspwb oracle --json`` prints per window)."""

    time: int
    start: int
    end: int
    triples: int  # elements in the evaluated content
    expected: int  # bindings the engine is expected to emit (after R2S)
    relation_size: int  # size of the instantaneous relation
    emitted: bool


@dataclass
class T0Result:
    """The compact answer for one t0: evaluation arrays and sizes."""

    t0: tuple[int, ...]
    arrays: EvaluationArrays
    relation_size: np.ndarray
    emitted_size: np.ndarray
    emitted: np.ndarray
    digest: str

    def summary(self, starts: Sequence[int]) -> list[WindowSummary]:
        a = self.arrays
        return [
            WindowSummary(int(a.time[j]), int(a.open[j]), int(a.close[j]), int(starts[a.hi[j]] - starts[a.lo[j]]),
                          int(self.emitted_size[j]), int(self.relation_size[j]), bool(self.emitted[j]))
            for j in range(len(a.time))
        ]


@dataclass
class AnswerClass:
    """t0 values whose evaluations read identical contents (answers differ only in times)."""

    digest: str
    t0_values: list[tuple[int, ...]]


@dataclass
class ExpectedAnswers:
    """Expected answers for many t0 values; full `ExpectedAnswer` objects on demand."""

    query: ContinuousQuery
    semantics: EngineSemantics
    t0_values: list[tuple[int, ...]]
    mode: str  # "fast-vectorised", "fast", or "reference" (fallback, with the reason)
    reason: str | None
    classes: list[AnswerClass]
    timelines: list[Timeline]
    end: int | None
    report_window: int
    _evaluator: RelationEvaluator | None = None
    _results: dict[tuple[int, ...], T0Result] = field(default_factory=dict)
    _reference: Callable[[tuple[int, ...]], ExpectedAnswer] | None = None
    _compute: Callable[[tuple[int, ...]], T0Result] | None = None

    def answer(self, t0: Sequence[int] | int) -> ExpectedAnswer:
        """The same `ExpectedAnswer` the reference path computes for this t0 vector."""
        vector = (t0,) if isinstance(t0, int) else tuple(t0)
        if self._reference is not None:
            return self._reference(vector)
        assert self._evaluator is not None
        specs = window_specs(self.query, self.semantics, vector)
        r = self.report_window
        evaluations = evaluations_for(self.timelines[r], specs[r], self.semantics, end=self.end)
        keys = content_keys(evaluations, self.timelines, specs, self.semantics.active_window, r)
        relations = [self._evaluator.relation(k) for k in keys]
        r2s = self.query.r2s or self.semantics.r2s
        emissions = apply_r2s(r2s, ((e.time, e.sequence, rel) for e, rel in zip(evaluations, relations)),
                              empty_notification=self.semantics.empty_notification)
        return ExpectedAnswer(vector, tuple(evaluations), tuple(relations), tuple(emissions))

    def summary(self, t0: Sequence[int] | int) -> list[WindowSummary]:
        """Per evaluation: window borders, triples, expected and relation sizes."""
        vector = (t0,) if isinstance(t0, int) else tuple(t0)
        if self._compute is not None:
            result = self._results.get(vector) or self._compute(vector)
            return result.summary(self.timelines[self.report_window].starts)
        answer = self.answer(vector)
        out = []
        emitted = {(e.time, e.sequence): e for e in answer.emissions}
        for evaluation, relation in zip(answer.evaluations, answer.relations):
            emission = emitted.get((evaluation.time, evaluation.sequence))
            out.append(WindowSummary(evaluation.time, evaluation.window.open, evaluation.window.close,
                                     evaluation.size, emission.size if emission else 0,
                                     sum(relation.values()), emission is not None))
        return out


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
        h.update(b"|")
    return h.hexdigest()


class VectorisedAnswers:
    """Per-t0 answers from presence intervals over compressed (timestamp-index) rows."""

    def __init__(self, table: RowTable, timeline: Timeline, query: ContinuousQuery, semantics: EngineSemantics,
                 end: int) -> None:
        self.timeline = timeline
        self.query, self.semantics, self.end = query, semantics, end
        self.distinct = np.asarray(timeline.distinct, dtype=np.int64)
        starts = np.asarray(timeline.starts, dtype=np.int64)
        # requirement positions -> distinct-timestamp indices; TRUE requirements stay open
        pmin, pmax = table.pmin[0], table.pmax[0]
        dmin = np.where(pmin >= BIG, len(self.distinct) + 1, np.searchsorted(starts, np.minimum(pmin, starts[-1]), "right") - 1)
        dmax = np.where(pmax < 0, -1, np.searchsorted(starts, np.maximum(pmax, 0), "right") - 1)
        simple = len(np.unique(table.row_of)) == len(table.row_of) and len(np.unique(table.mapping_of)) == len(table.mapping_of)
        if not simple:
            raise FastPathUnsupported("rows with several supports or repeated mappings use the per-key path")
        pairs = np.stack([dmin, dmax], axis=1)
        unique, weights = np.unique(pairs, axis=0, return_counts=True) if len(pairs) else (np.empty((0, 2), np.int64), np.empty(0, np.int64))
        self.dmin, self.dmax, self.weights = unique[:, 0], unique[:, 1], weights
        self.r2s = query.r2s or semantics.r2s

    def compute(self, t0: tuple[int, ...]) -> T0Result:
        spec = window_specs(self.query, self.semantics, t0)[0]
        arrays = evaluation_arrays(self.distinct, spec, self.semantics, self.end)
        n = len(arrays.time)
        if n > 1 and (np.any(np.diff(arrays.lo) < 0) or np.any(np.diff(arrays.hi) < 0)):
            raise FastPathUnsupported("contents are not monotone along the evaluations")
        enter = np.searchsorted(arrays.hi, self.dmax, "right")
        exit_ = np.searchsorted(arrays.lo, self.dmin, "right") - 1
        ok = enter <= exit_
        w = self.weights[ok]
        delta = np.zeros(n + 1, dtype=np.int64)
        np.add.at(delta, enter[ok], w)
        np.add.at(delta, exit_[ok] + 1, -w)
        relation_size = np.cumsum(delta)[:n]
        if self.r2s is R2S.RSTREAM:
            emitted_size = relation_size
        elif self.r2s is R2S.ISTREAM:
            emitted_size = np.bincount(enter[ok], weights=w, minlength=n)[:n].astype(np.int64)
        else:
            emitted_size = np.bincount(exit_[ok] + 1, weights=w, minlength=n + 1)[:n].astype(np.int64)
        emitted = emitted_size > 0 if not self.semantics.empty_notification else np.ones(n, dtype=bool)
        digest = _digest(arrays.lo, arrays.hi, emitted_size, emitted)
        return T0Result(t0, arrays, relation_size, emitted_size, emitted, digest)


def expected_answers(
    spark: "SparkSession",
    query: ContinuousQuery,
    streams: "str | DataFrame | Mapping[str, str | DataFrame]",
    semantics: EngineSemantics,
    t0_values: Sequence[Sequence[int] | int],
    *,
    static: StaticData = StaticData(),
    end: int | None = None,
    report_window: int = 0,
    progress: Progress | None = None,
    group_id: str | None = None,
    keep_results: bool = True,
) -> ExpectedAnswers:
    """Expected answers of ``query`` for every t0 vector in ``t0_values`` (RSP-QL Def. 24-26).

    BGP joins run on Spark inside a cancellable job group (``group_id``); the window
    assignment per t0 is vectorised on the driver. ``progress(stage, fraction)`` is called
    as work advances. Queries outside the fast fragment use the reference path per t0.
    """
    from workbench.pipeline.spark import job_group

    if not query.windows:
        raise UserError("the query has no window over a stream", field="query")
    vectors = [(t,) if isinstance(t, int) else tuple(t) for t in t0_values]
    if isinstance(streams, Mapping):
        sources = dict(streams)
    else:
        if len(query.streams) != 1:
            raise UserError("the query reads several streams; give one source per stream IRI", field="stream")
        sources = {query.streams[0]: streams}
    report = progress or (lambda stage, fraction: None)
    group = group_id or f"rspwb-oracle-{uuid.uuid4().hex[:8]}"
    with job_group(spark, group, "expected answers"):
        frames_by_stream = {}
        for window in query.windows:
            if window.stream not in sources:
                raise UserError(f"no stream given for <{window.stream}>", field="stream")
            if window.stream not in frames_by_stream:
                frames_by_stream[window.stream] = stream_frame(spark, sources[window.stream])
        report("timestamps", 0.0)
        timelines_by_stream = {s: timeline_of(f, sources.get(s)) for s, f in frames_by_stream.items()}
        timelines = [timelines_by_stream[w.stream] for w in query.windows]
        try:
            plan = compile_plan(query)
            if static.time_varying_default is not None:
                raise FastPathUnsupported("time-varying graphs are evaluated by the reference path")
        except FastPathUnsupported as error:
            return _reference_answers(query, frames_by_stream, semantics, vectors, static, end, report_window,
                                      timelines, str(error))
        context = AnnotationContext(
            [WindowData(w.name, w.size_ms, [], timelines_by_stream[w.stream].times) for w in query.windows],
            query.dataset_mode,
            frozenset(map(canonical_triple, static.default)),
            {g: frozenset(map(canonical_triple, t)) for g, t in static.named.items()},
        )
        report("joins", 0.1)
        frames = [frames_by_stream[w.stream] for w in query.windows]
        tables = annotate(plan, context, SparkBGP(spark, frames, context))
        for frame in frames_by_stream.values():
            frame.unpersist()
    report("windows", 0.5)
    evaluator = RelationEvaluator(plan, tables)
    r = report_window
    reporting_timeline = timelines[r]
    last = end if end is not None else (reporting_timeline.distinct[-1] if reporting_timeline.distinct else None)
    answers = ExpectedAnswers(query, semantics, vectors, "fast", None, [], timelines, end, report_window, evaluator)
    vectorised: VectorisedAnswers | None = None
    if plan.upper is None and vectorisable(query, semantics) and reporting_timeline.distinct:
        try:
            vectorised = VectorisedAnswers(tables[0], reporting_timeline, query, semantics, int(last))  # type: ignore[arg-type]
        except FastPathUnsupported as error:
            answers.reason = str(error)
    by_digest: dict[str, list[tuple[int, ...]]] = defaultdict(list)
    for i, vector in enumerate(vectors):
        if vectorised is not None:
            result = vectorised.compute(vector)
            if keep_results:
                answers._results[vector] = result
            digest = result.digest
        else:
            specs = window_specs(query, semantics, vector)
            evaluations = evaluations_for(timelines[r], specs[r], semantics, end=end)
            keys = content_keys(evaluations, timelines, specs, semantics.active_window, r)
            for key in keys:
                evaluator.relation(key)
            digest = _digest(np.asarray(keys, dtype=np.int64).reshape(-1))
        by_digest[digest].append(vector)
        if i % 100 == 0:
            report("windows", 0.5 + 0.5 * i / max(1, len(vectors)))
    if vectorised is not None:
        answers.mode = "fast-vectorised"
        answers._compute = vectorised.compute
    answers.classes = [AnswerClass(d, v) for d, v in by_digest.items()]
    report("done", 1.0)
    return answers


def _reference_answers(query: ContinuousQuery, frames: Mapping[str, "DataFrame"], semantics: EngineSemantics,
                       vectors: list[tuple[int, ...]], static: StaticData, end: int | None, report_window: int,
                       timelines: list[Timeline], reason: str) -> ExpectedAnswers:
    """Fallback: collect the streams and run the rdflib reference per t0 (on demand)."""
    from workbench.streams.model import StreamElement

    streams = {}
    for stream, frame in frames.items():
        table = frame.orderBy("pos").select("s", "p", "o", "t").toArrow()
        streams[stream] = [StreamElement(s, p, o, t) for s, p, o, t in zip(
            table.column("s").to_pylist(), table.column("p").to_pylist(), table.column("o").to_pylist(),
            table.column("t").to_pylist())]
        frame.unpersist()

    def reference(vector: tuple[int, ...]) -> ExpectedAnswer:
        return expected_answer(query, streams, semantics, vector, static=static, end=end, report_window=report_window)

    answers = ExpectedAnswers(query, semantics, vectors, "reference", reason, [AnswerClass("", list(vectors))],
                              timelines, end, report_window)
    answers._reference = reference
    return answers
