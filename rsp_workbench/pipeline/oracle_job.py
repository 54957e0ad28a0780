"""The scalable oracle job: BGP joins on Spark, window assignment for every t0 vectorised.

Pipeline (docs/design/ARCHITECTURE.md "The oracle must scale"; docs/oracle.md):

1. Each stream is a DataFrame ``(s, p, o, t, pos)``; ``pos`` is the element's position in
   the time-ordered stream (the Parquet row index of a workbench stream file, else
   ``row_number`` over ``(t, monotonically_increasing_id)``).
2. The query's monotone part is compiled (`rsp_workbench.oracle.annotated.compile_plan`);
   every BGP runs as Spark DataFrame joins on 64-bit hashes of the shared terms, with the
   pattern constants and a FILTER's numeric bounds applied in the scan and the band
   condition (elements of one mapping lie at most ω apart per window) in the joins
   (`SparkBGP`). Each row is annotated with the positions ``[pmin, pmax]`` of the
   elements that built it; the driver reads the terms by position, checks the shared
   terms exactly, and runs FILTER/BIND/UNION/... above the BGPs over the annotated rows.
3. For each t0 the evaluations are computed on the *distinct timestamps* (numpy, exact
   when contents start and end at timestamp boundaries: time tick or window-close), and
   a row is present in evaluation j iff ``lo_j ≤ pmin`` and ``pmax < hi_j``: relation
   sizes come from prefix sums, Istream/Dstream from consecutive contents
   (`VectorisedAnswers`; no diffing of whole relations).
4. t0 values whose evaluations read identical contents form one *class*; answers are
   reported per class with the t0 values it covers.

Queries outside the fast fragment fall back to the rdflib reference path per t0. The
annotated rows are cached per (query, stream files, static data) for the next call.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections import OrderedDict, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from rsp_workbench.core.r2s import apply_r2s
from rsp_workbench.core.semantics import EngineSemantics, R2S
from rsp_workbench.errors import UserError
from rsp_workbench.oracle.annotated import (
    BIG,
    AnnotationContext,
    Annotator,
    FastPathUnsupported,
    NumericBound,
    Relation,
    RelationEvaluator,
    RowTable,
    Timeline,
    UpperOracle,
    WindowData,
    annotate,
    compile_plan,
    content_keys,
    evaluations_for,
)
from rsp_workbench.oracle.deltas import (  # noqa: F401 - vectorisable: this module's API too
    DeltaOracle,
    EvaluationArrays,
    evaluation_arrays,
    not_vectorisable,
    vectorisable,
)
from rsp_workbench.oracle.columnar import pattern_matches
from rsp_workbench.oracle.reference import ExpectedAnswer, StaticData, expected_answer, window_specs
from rsp_workbench.query.model import ContinuousQuery
from rsp_workbench.streams.terms import canonical_triple, from_rdflib

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

    from rsp_workbench.oracle.columnar import StreamColumns

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
        reader = spark.read
        if os.path.isfile(source):  # the footer's schema: Spark need not infer it (~1 s on a cold JVM)
            import pyarrow as pa
            import pyarrow.parquet as pq
            from pyspark.sql.pandas.types import from_arrow_schema

            try:
                reader = reader.schema(from_arrow_schema(pq.read_schema(source)))
            except (pa.ArrowException, OSError, TypeError):
                reader = spark.read
        frame = reader.parquet(source)
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
        backwards = np.flatnonzero(times[1:] < times[:-1])
        if len(backwards):  # positions must follow time: window contents are position ranges
            row = int(backwards[0]) + 1
            raise UserError(f"time goes backwards at row {row} ({int(times[row])} after {int(times[row - 1])}); "
                            "sort the stream by t", file=source, field="t")
        distinct, counts = np.unique(times, return_counts=True)
        return Timeline.from_counts(distinct.tolist(), counts.tolist())
    table = frame.groupBy("t").count().orderBy("t").toArrow()
    return Timeline.from_counts(table.column("t").to_pylist(), table.column("count").to_pylist())


# --- BGPs as DataFrame joins -------------------------------------------------------------------

_SLOTS = ("s", "p", "o")
_XSD_RE = r"http://www\.w3\.org/2001/XMLSchema#"
_DECIMAL_RE = r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)"
# numeric literals whose value Spark's cast to double reads as rdflib does (others are kept)
_NUMERIC_TERM_RE = (
    rf'^"[+-]?[0-9]+"\^\^<{_XSD_RE}(integer|int|long|short|byte|nonNegativeInteger|positiveInteger|'
    rf'nonPositiveInteger|negativeInteger|unsignedLong|unsignedInt|unsignedShort|unsignedByte)>$'
    rf'|^"{_DECIMAL_RE}"\^\^<{_XSD_RE}decimal>$'
    rf'|^"{_DECIMAL_RE}([eE][+-]?[0-9]+)?"\^\^<{_XSD_RE}(float|double)>$'
)


def certainly_fails(term: "Any", bound: NumericBound) -> "Any":
    """Spark condition: the term is a well-formed numeric literal that fails ``bound``.

    Conservative by a relative margin of 1e-6 (float32 rounding, decimal vs double), so
    that it never drops a row the exact FILTER (rdflib, on the driver) would keep.
    """
    from pyspark.sql import functions as F

    from rsp_workbench.oracle.columnar import fails_bound

    value = F.regexp_extract(term, r'^"([^"]*)"', 1).try_cast("double")  # ANSI mode: no error on non-numbers
    return term.rlike(_NUMERIC_TERM_RE) & value.isNotNull() & fails_bound(value, bound, F.abs)


class TermLookup:
    """The terms of a stream's elements by position (``pos``), for the driver.

    Spark's joins carry positions and 64-bit term hashes only; the driver reads the
    terms of the rows it keeps from here.
    """

    def terms(self, slot: str, positions: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        """The ``slot`` (s, p or o) terms at ``positions``, as an object array."""
        raise NotImplementedError

    def prefetch(self, slot: str) -> None:
        """Prepare `terms` for ``slot`` ahead of time (e.g. while Spark runs the joins)."""


class ParquetTermLookup(TermLookup):
    """Terms read by the driver from a local Parquet stream file (pyarrow, dictionary-decoded)."""

    _COLUMNS = {"s": "subject", "p": "predicate", "o": "object"}

    def __init__(self, path: str) -> None:
        self.path = path
        self._columns: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def terms(self, slot: str, positions: np.ndarray) -> np.ndarray:
        self.prefetch(slot)
        indices, distinct = self._columns[slot]
        return distinct[indices[positions]]

    def prefetch(self, slot: str) -> None:
        if slot not in self._columns:
            self._columns[slot] = self._read(self._COLUMNS[slot])

    def _read(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The column as indices into its distinct terms (one Python string per distinct term)."""
        import pyarrow.parquet as pq

        column = pq.read_table(self.path, columns=[name], read_dictionary=[name]).column(name).unify_dictionaries()
        if column.null_count:
            raise UserError(f"{column.null_count} null terms in column {name!r}", file=self.path, field=name)
        if column.num_chunks == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=object)
        indices = np.concatenate([chunk.indices.to_numpy(zero_copy_only=False) for chunk in column.chunks])
        distinct = np.asarray(column.chunk(0).dictionary.to_numpy(zero_copy_only=False), dtype=object)
        return indices, distinct


class FrameTermLookup(TermLookup):
    """Terms fetched with Spark from a stream DataFrame (sources the driver cannot read)."""

    def __init__(self, spark: "SparkSession", frame: "DataFrame") -> None:
        self.spark, self.frame = spark, frame

    def terms(self, slot: str, positions: np.ndarray) -> np.ndarray:
        import pyarrow as pa
        from pyspark.sql import functions as F

        wanted = np.unique(positions)
        if not len(wanted):
            return np.empty(0, dtype=object)
        keys = self.spark.createDataFrame(pa.table({"pos": pa.array(wanted, type=pa.int64())}))
        table = self.frame.join(F.broadcast(keys), "pos").select("pos", slot).orderBy("pos").toArrow()
        found = table.column("pos").to_numpy()
        values = np.asarray(table.column(slot).to_numpy(zero_copy_only=False), dtype=object)
        return values[np.searchsorted(found, positions)]


@dataclass
class _PatternSource:
    """Where one triple pattern's matches come from: static triples (driver) or windows."""

    static: list[tuple[str, str, str]]  # the matching static triples; ref = index here
    windows: list[int]


class SparkBGP:
    """Evaluates BGP leaves with DataFrame joins; returns annotated `Relation` rows.

    Each pattern's matches are read from the stream with its constants (and a FILTER's
    numeric bounds, `certainly_fails`) applied in the scan; joins are on 64-bit hashes of
    the shared variables' terms with the band condition (elements of one mapping lie at
    most ω apart per window) — no strings travel through the joins. Every joined row
    carries, per pattern, the source (window, or -1 for a static triple) and position of
    its element, and per window the requirement ``[pmin, pmax]``. The driver then reads
    the terms by position (`TermLookup`), keeps the rows whose shared variables have
    equal terms (exact: a hash collision only adds candidates, which are dropped here),
    and groups equal mappings (a snapshot is a set of triples).
    """

    def __init__(self, spark: "SparkSession", frames: Sequence["DataFrame"], context: AnnotationContext,
                 lookups: Sequence[TermLookup] | None = None) -> None:
        self.spark = spark
        self.frames = frames
        self.context = context
        self.lookups = list(lookups) if lookups is not None else [FrameTermLookup(spark, f) for f in frames]

    def __call__(self, patterns: Sequence[tuple[Any, Any, Any]], graph: str | None,
                 bounds: Sequence[NumericBound] = ()) -> Relation:
        from pyspark.sql import functions as F

        from rsp_workbench.oracle.annotated import is_variable, term_key
        from rsp_workbench.oracle.columnar import bgp_order

        width = self.context.width
        ordered, variables, trivial = bgp_order(self.context, patterns)
        if trivial is not None:
            return trivial
        uses: dict[str, int] = defaultdict(int)
        for pattern in ordered:
            for name in {term_key(t) for t in pattern if is_variable(t)}:
                uses[name] += 1
        shared = {name for name, count in uses.items() if count > 1}
        column = {v: f"h{i}" for i, v in enumerate(variables)}
        annotator = Annotator(self.context)
        sources: list[_PatternSource] = []
        joined: "DataFrame | None" = None
        bound: list[str] = []
        for k, pattern in enumerate(ordered):
            frame, source = self._pattern_frame(k, pattern, graph, column, shared, bounds, annotator)
            sources.append(source)
            names = list(dict.fromkeys(term_key(t) for t in pattern if is_variable(t)))
            if joined is None:
                joined = frame
            else:
                on = [column[n] for n in names if n in bound]
                joined = joined.join(frame, on=on, how="inner") if on else joined.crossJoin(frame)
                merged = []
                for w in range(width):
                    merged += [F.least(f"pmin{w}", f"pmin{w}_r").alias(f"pmin{w}"),
                               F.greatest(f"pmax{w}", f"pmax{w}_r").alias(f"pmax{w}"),
                               F.least(f"tmin{w}", f"tmin{w}_r").alias(f"tmin{w}"),
                               F.greatest(f"tmax{w}", f"tmax{w}_r").alias(f"tmax{w}")]
                keep = [c for c in joined.columns if not c.endswith("_r") and c[:4] not in ("pmin", "pmax", "tmin", "tmax")]
                joined = joined.select(*keep, *merged)
                band = [F.col(f"tmax{w}") - F.col(f"tmin{w}") <= self.context.windows[w].size for w in range(width)]
                condition = band[0]
                for other in band[1:]:
                    condition = condition & other
                joined = joined.where(condition)
            bound += [n for n in names if n not in bound]
        assert joined is not None
        refs = [c for k in range(len(ordered)) for c in (f"src{k}", f"ref{k}")]
        reqs = [f"{c}{w}" for w in range(width) for c in ("pmin", "pmax")]
        needed = {(self.lookups[w], _SLOTS[i]) for k, pattern in enumerate(ordered) for w in sources[k].windows
                  for i, term in enumerate(pattern) if is_variable(term)}
        with ThreadPoolExecutor(max_workers=1) as pool:  # the driver reads terms while Spark joins
            prefetch = pool.submit(lambda: [lookup.prefetch(slot) for lookup, slot in needed])
            table = joined.select(*refs, *reqs).toArrow()
            prefetch.result()
        return self._relation(ordered, variables, sources, table, reqs)

    def _relation(self, ordered: Sequence[tuple[Any, Any, Any]], variables: list[str],
                  sources: list[_PatternSource], table: Any, reqs: list[str]) -> Relation:
        """Terms by position, exact equality of shared variables, equal mappings grouped."""
        from rsp_workbench.oracle.annotated import is_variable, term_key

        n = table.num_rows
        src = [table.column(f"src{k}").to_numpy() for k in range(len(ordered))]
        ref = [table.column(f"ref{k}").to_numpy() for k in range(len(ordered))]
        keep = np.ones(n, dtype=bool)
        values: dict[str, np.ndarray] = {}
        for k, pattern in enumerate(ordered):
            for i, term in enumerate(pattern):
                if not is_variable(term):
                    continue
                name = term_key(term)
                terms = self._terms(sources[k], i, src[k], ref[k])
                if name in values:
                    keep &= values[name] == terms
                else:
                    values[name] = terms
        from rsp_workbench.oracle.columnar import grouped_relation

        columns = [values[v][keep].tolist() for v in variables]
        requirements = np.stack([table.column(c).to_numpy() for c in reqs], axis=1)[keep].tolist()
        return grouped_relation(variables, columns, requirements)

    def _terms(self, source: _PatternSource, slot: int, src: np.ndarray, ref: np.ndarray) -> np.ndarray:
        out = np.empty(len(src), dtype=object)
        for s in np.unique(src):
            mask = src == s
            if s < 0:
                out[mask] = [source.static[int(r)][slot] for r in ref[mask]]
            else:
                out[mask] = self.lookups[int(s)].terms(_SLOTS[slot], ref[mask])
        return out

    def _pattern_frame(self, k: int, pattern: tuple[Any, Any, Any], graph: str | None, column: Mapping[str, str],
                       shared: set[str], bounds: Sequence[NumericBound],
                       annotator: Annotator) -> tuple["DataFrame", _PatternSource]:
        """One pattern's matches: hashes of its shared variables, ``src{k}``/``ref{k}``, requirements."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import LongType, StringType, StructField, StructType

        from rsp_workbench.oracle.annotated import is_variable, term_key

        width = self.context.width
        names = [term_key(t) if is_variable(t) else None for t in pattern]
        keys = [n for n in dict.fromkeys(n for n in names if n is not None) if n in shared]
        first = {n: _SLOTS[names.index(n)] for n in keys}
        own_bounds = [(i, b) for i, n in enumerate(names) for b in bounds if n == b.variable]
        statics, windows = annotator.sources(graph)
        matched = [triple for triples in statics for triple in triples if self._matches(pattern, names, triple)]
        frames = []

        def requirement(w: int | None) -> list[Any]:
            out = []
            for v in range(width):
                if v == w:
                    out += [F.col("pos").alias(f"pmin{v}"), F.col("pos").alias(f"pmax{v}"),
                            F.col("t").alias(f"tmin{v}"), F.col("t").alias(f"tmax{v}")]
                else:
                    out += [F.lit(BIG).cast("long").alias(f"pmin{v}"), F.lit(-1).cast("long").alias(f"pmax{v}"),
                            F.lit(BIG).cast("long").alias(f"tmin{v}"), F.lit(-BIG).cast("long").alias(f"tmax{v}")]
            return out

        if matched:
            schema = StructType([StructField(c, StringType()) for c in _SLOTS] + [StructField("pos", LongType()),
                                                                                   StructField("t", LongType())])
            static = self.spark.createDataFrame([(*triple, i, 0) for i, triple in enumerate(matched)], schema)
            frames.append(static.select(*[F.xxhash64(first[n]).alias(column[n]) for n in keys],
                                        F.lit(-1).alias(f"src{k}"), F.col("pos").alias(f"ref{k}"), *requirement(None)))
        for w in windows:
            frame = self.frames[w]
            for i, (term, name) in enumerate(zip(pattern, names)):
                if name is None:
                    frame = frame.where(F.col(_SLOTS[i]) == from_rdflib(term))
            seen: dict[str, str] = {}
            for i, name in enumerate(names):
                if name is not None:
                    if name in seen:
                        frame = frame.where(F.col(_SLOTS[i]) == F.col(seen[name]))
                    seen.setdefault(name, _SLOTS[i])
            for i, b in own_bounds:
                frame = frame.where(~certainly_fails(F.col(_SLOTS[i]), b))
            frames.append(frame.select(*[F.xxhash64(first[n]).alias(column[n]) for n in keys],
                                       F.lit(w).alias(f"src{k}"), F.col("pos").alias(f"ref{k}"), *requirement(w)))
        if not frames:
            schema = StructType([StructField(column[n], LongType()) for n in keys]
                                + [StructField(f"src{k}", LongType()), StructField(f"ref{k}", LongType())]
                                + [StructField(f"{c}{v}", LongType()) for v in range(width)
                                   for c in ("pmin", "pmax", "tmin", "tmax")])
            frames.append(self.spark.createDataFrame([], schema))
        result = frames[0]
        for other in frames[1:]:
            result = result.unionByName(other)
        if k > 0:  # requirement columns of the right side of a join get a suffix
            result = result.select(*[F.col(c).alias(f"{c}_r") if c[:4] in ("pmin", "pmax", "tmin", "tmax") else F.col(c)
                                     for c in result.columns])
        return result, _PatternSource(matched, list(windows))

    _matches = staticmethod(pattern_matches)


# --- vectorised evaluations per t0 ------------------------------------------------------------------


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

    def as_row(self) -> dict[str, Any]:
        """The keys and order of `rsp_workbench.oracle.run.windows_summary` rows."""
        return {"start": self.start, "end": self.end, "time": self.time, "triples": self.triples,
                "expected": self.expected, "relation_size": self.relation_size, "emitted": self.emitted}


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
    _classes: list[AnswerClass] | None
    timelines: list[Timeline]
    end: int | None
    report_window: int
    _evaluator: RelationEvaluator | None = None
    _results: dict[tuple[int, ...], T0Result] = field(default_factory=dict)
    _reference: Callable[[tuple[int, ...]], ExpectedAnswer] | None = None
    _compute: Callable[[tuple[int, ...]], T0Result] | None = None
    annotations_reused: bool = False  # the annotated rows came from an earlier call's cache
    _known: set[tuple[int, ...]] | None = None
    _deltas: DeltaOracle | UpperOracle | None = None  # single-window plans: presence runs / present rows per t0

    @property
    def classes(self) -> list[AnswerClass]:
        """t0 values grouped by identical window contents (on the delta path: computed on
        first use, one evaluation grid at a time)."""
        if self._classes is None:
            by_digest: dict[str, list[tuple[int, ...]]] = defaultdict(list)
            for vector in self.t0_values:
                grid = self._delta_grid(vector)
                by_digest[_digest(grid.lo, grid.hi)].append(vector)
            self._classes = [AnswerClass(d, v) for d, v in by_digest.items()]
        return self._classes

    @classes.setter
    def classes(self, value: list[AnswerClass]) -> None:
        self._classes = value

    def evaluation_times(self, t0: Sequence[int] | int) -> np.ndarray:
        """The evaluation instants of one t0 (its grid; no relation is computed)."""
        vector = (t0,) if isinstance(t0, int) else tuple(t0)
        if self._reference is not None:
            return np.asarray([e.time for e in self._reference(vector).evaluations], dtype=np.int64)
        return self._delta_grid(vector).time

    def content_grid(self, t0: tuple[int, ...]) -> Any:
        """The evaluations' contents of one t0 when they alone decide its relations (a single
        window, presence runs); else None (`rsp_workbench.oracle.judge` groups t0 by them)."""
        return self._delta_grid(tuple(t0)) if self._deltas is not None else None

    def _delta_grid(self, vector: tuple[int, ...]) -> Any:
        from rsp_workbench.oracle.deltas import evaluation_grid

        spec = window_specs(self.query, self.semantics, vector)[self.report_window]
        return evaluation_grid(self.timelines[self.report_window], spec, self.semantics, self.end)

    # a read-only mapping t0 vector -> ExpectedAnswer, like `rsp_workbench.oracle.run.compute_expected`
    def __getitem__(self, t0: tuple[int, ...]) -> ExpectedAnswer:
        if self._known is None:
            self._known = set(self.t0_values)
        if tuple(t0) not in self._known:
            raise KeyError(t0)
        return self.answer(t0)

    def __iter__(self) -> Any:
        return iter(self.t0_values)

    def __len__(self) -> int:
        return len(self.t0_values)

    def items(self) -> Any:
        return ((vector, self.answer(vector)) for vector in self.t0_values)

    def answer(self, t0: Sequence[int] | int) -> ExpectedAnswer:
        """The same `ExpectedAnswer` the reference path computes for this t0 vector."""
        vector = (t0,) if isinstance(t0, int) else tuple(t0)
        if self._reference is not None:
            return self._reference(vector)
        if self._deltas is not None:
            answer = self._deltas.answer(vector)
            if answer is not None:
                return answer
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

    def summary_rows(self, t0: Sequence[int] | int) -> Iterator[dict[str, Any]]:
        """`WindowSummary.as_row` per evaluation, streamed (no objects per evaluation on the
        delta path)."""
        vector = (t0,) if isinstance(t0, int) else tuple(t0)
        if self._compute is None and self._deltas is not None:
            answer = self.answer(vector)
            if hasattr(answer, "summary_rows"):
                return answer.summary_rows()
        return (w.as_row() for w in self.summary(vector))

    def summary(self, t0: Sequence[int] | int) -> list[WindowSummary]:
        """Per evaluation: window borders, triples, expected and relation sizes."""
        vector = (t0,) if isinstance(t0, int) else tuple(t0)
        if self._compute is not None:
            result = self._results.get(vector) or self._compute(vector)
            return result.summary(self.timelines[self.report_window].starts)
        answer = self.answer(vector)
        if hasattr(answer, "summary_rows"):
            return [WindowSummary(r["time"], r["start"], r["end"], r["triples"], r["expected"], r["relation_size"],
                                  r["emitted"]) for r in answer.summary_rows()]
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
        if a.dtype == np.int64 and len(a) and -(1 << 31) <= a.min() and a.max() < (1 << 31):
            a = a.astype(np.int32)  # half the bytes to hash; the values are the same
        h.update(str(a.dtype).encode())
        h.update(np.ascontiguousarray(a).tobytes())
        h.update(b"|")
    return h.hexdigest()


class VectorisedAnswers:
    """Per-t0 answers from prefix sums over compressed (timestamp-index) rows.

    A row with support ``[dmin, dmax]`` (distinct-timestamp indices) is in an evaluation
    with content ``[lo, hi)`` iff ``lo ≤ dmin`` and ``dmax < hi``. For ``hi > lo`` the
    number of such rows is ``#(dmax < hi) − #(dmin < lo) + #(dmin < lo, dmax ≥ hi)``: two
    prefix-sum lookups plus the rows spanning the whole content (support longer than
    the content; rare, counted directly). Istream/Dstream sizes follow from the rows
    present in two consecutive evaluations (the intersection of their contents), so one
    t0 costs O(evaluations), not O(rows).
    """

    SPANNING_BUDGET = 4_000_000  # spanning rows × queries counted directly, else per-row intervals

    def __init__(self, table: RowTable, timeline: Timeline, query: ContinuousQuery, semantics: EngineSemantics,
                 end: int) -> None:
        self.timeline = timeline
        self.query, self.semantics, self.end = query, semantics, end
        self.distinct = np.asarray(timeline.distinct, dtype=np.int64)
        starts = np.asarray(timeline.starts, dtype=np.int64)
        size = len(self.distinct)
        # requirement positions -> distinct-timestamp indices; TRUE requirements stay open
        pmin, pmax = table.pmin[0], table.pmax[0]
        dmin = np.where(pmin >= BIG, size + 1, np.searchsorted(starts, np.minimum(pmin, starts[-1]), "right") - 1)
        dmax = np.where(pmax < 0, -1, np.searchsorted(starts, np.maximum(pmax, 0), "right") - 1)
        simple = len(np.unique(table.row_of)) == len(table.row_of) and len(np.unique(table.mapping_of)) == len(table.mapping_of)
        if not simple:
            raise FastPathUnsupported("rows with several supports or repeated mappings use the per-key path")
        pairs = np.stack([dmin, dmax], axis=1)
        unique, weights = np.unique(pairs, axis=0, return_counts=True) if len(pairs) else (np.empty((0, 2), np.int64), np.empty(0, np.int64))
        self.dmin, self.dmax, self.weights = unique[:, 0], unique[:, 1], weights
        self.r2s = query.r2s or semantics.r2s
        always = (self.dmin > size) & (self.dmax < 0)  # static-only rows: in every evaluation
        rmin, rmax, rw = self.dmin[~always], self.dmax[~always], self.weights[~always]
        if len(rmin) and (rmin.min() < 0 or rmax.max() >= size or np.any(rmin > rmax)):
            raise FastPathUnsupported("rows with open supports use the per-key path")
        self.always = int(self.weights[always].sum())
        self.below_max = np.concatenate([[0], np.cumsum(np.bincount(rmax, weights=rw, minlength=size))]).round().astype(np.int64)
        self.below_min = np.concatenate([[0], np.cumsum(np.bincount(rmin, weights=rw, minlength=size))]).round().astype(np.int64)
        span = rmax - rmin
        order = np.argsort(-span, kind="stable")
        longest = order[span[order] >= 2]  # only these can span a non-empty content
        self.span_min, self.span_max, self.span_w = rmin[longest], rmax[longest], rw[longest]
        self.negative_span = -span[longest]  # ascending

    def present(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray | None:
        """Rows in each content ``[lo, hi)``; None when too many rows span contents."""
        nonempty = hi > lo
        count = self.below_max[hi] - self.below_min[lo]
        if len(self.span_w) and nonempty.any():
            need = int((hi - lo)[nonempty].min()) + 1
            m = int(np.searchsorted(self.negative_span, -need, side="right"))
            if m:
                if m * len(lo) > self.SPANNING_BUDGET:
                    return None
                spanning = (self.span_min[None, :m] < lo[:, None]) & (self.span_max[None, :m] >= hi[:, None])
                count = count + spanning.astype(np.int64) @ self.span_w[:m]
        return self.always + np.where(nonempty, count, 0)

    def compute(self, t0: tuple[int, ...]) -> T0Result:
        spec = window_specs(self.query, self.semantics, t0)[0]
        arrays = evaluation_arrays(self.distinct, spec, self.semantics, self.end)
        lo, hi = arrays.lo, arrays.hi
        n = len(arrays.time)
        relation_size = self.present(lo, hi)
        both = self.present(np.maximum(lo[1:], lo[:-1]), np.minimum(hi[1:], hi[:-1])) if n > 1 else np.zeros(0, np.int64)
        if relation_size is None or both is None:
            relation_size, entered, left = self._by_intervals(arrays)
        else:
            kept = np.concatenate([[0], both])[:n]  # rows in evaluation j and j-1
            entered = relation_size - kept
            left = np.concatenate([[0], relation_size[:-1]])[:n] - kept
        emitted_size = {R2S.RSTREAM: relation_size, R2S.ISTREAM: entered, R2S.DSTREAM: left}[self.r2s]
        emitted = emitted_size > 0 if not self.semantics.empty_notification else np.ones(n, dtype=bool)
        digest = _digest(arrays.lo, arrays.hi)  # the sizes and flags follow from the contents
        return T0Result(t0, arrays, relation_size, emitted_size, emitted, digest)

    def _by_intervals(self, arrays: EvaluationArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per row, the interval of evaluations it is in (contents move forward monotonically)."""
        n = len(arrays.time)
        if n > 1 and (np.any(np.diff(arrays.lo) < 0) or np.any(np.diff(arrays.hi) < 0)):
            raise FastPathUnsupported("contents are not monotone along the evaluations")
        enter = np.searchsorted(arrays.hi, self.dmax, "right")
        exit_ = np.searchsorted(arrays.lo, self.dmin, "right") - 1
        ok = enter <= exit_
        w = self.weights[ok]
        entered = np.bincount(enter[ok], weights=w, minlength=n + 1)[:n].round().astype(np.int64)
        left = np.bincount(exit_[ok] + 1, weights=w, minlength=n + 1)[:n].round().astype(np.int64)
        return np.cumsum(entered - left), entered, left  # left[j]: rows last in evaluation j-1


# --- annotated rows shared between calls ---------------------------------------------------------

_ANNOTATIONS: "OrderedDict[tuple[Any, ...], list[RowTable]]" = OrderedDict()
ANNOTATION_CACHE_SIZE = 2


def _file_fingerprint(path: str) -> tuple[str, int, int, str]:
    """Path, size, mtime and content digest: a rewritten stream file never hits the cache."""
    stat = os.stat(path)
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return os.path.abspath(path), stat.st_size, stat.st_mtime_ns, digest.hexdigest()


def _annotation_key(query: ContinuousQuery, sources: Mapping[str, Any], static: StaticData) -> tuple[Any, ...] | None:
    """What the annotated rows depend on: the query body, windows (the band uses ω), the
    stream files' contents and the static graphs — not the semantics or t0. None for
    sources that are DataFrames (no stable identity)."""
    files = []
    for stream in dict.fromkeys(w.stream for w in query.windows):
        source = sources.get(stream)
        if not isinstance(source, str) or not os.path.isfile(source):
            return None
        files.append((stream, _file_fingerprint(source)))
    statics = (tuple(sorted(static.default)), tuple(sorted((g, tuple(sorted(t))) for g, t in static.named.items())))
    windows = tuple((w.name, w.stream, w.size_ms) for w in query.windows)
    return query.sparql, query.dataset_mode.value, windows, tuple(files), statics


def _remember(key: tuple[Any, ...], tables: list[RowTable]) -> None:
    _ANNOTATIONS[key] = tables
    _ANNOTATIONS.move_to_end(key)
    while len(_ANNOTATIONS) > ANNOTATION_CACHE_SIZE:
        _ANNOTATIONS.popitem(last=False)


def clear_annotation_cache() -> None:
    """Forget the annotated rows kept by `expected_answers` (frees their memory)."""
    _ANNOTATIONS.clear()


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
    cache: bool = True,
) -> ExpectedAnswers:
    """Expected answers of ``query`` for every t0 vector in ``t0_values`` (RSP-QL Def. 24-26).

    BGP joins run on Spark inside a cancellable job group (``group_id``); the window
    assignment per t0 is vectorised on the driver. ``progress(stage, fraction)`` is called
    as work advances. Queries outside the fast fragment use the reference path per t0.
    With ``cache``, the annotated rows of a (query, stream files, static data) are kept
    for the next call (e.g. another report policy or t0 set over the same stream).
    """
    from rsp_workbench.pipeline.spark import job_group

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
        key = _annotation_key(query, sources, static) if cache else None
        tables = _ANNOTATIONS.get(key) if key is not None else None
        reused = tables is not None
        if reused:
            _ANNOTATIONS.move_to_end(key)
        if tables is None:
            frames = [frames_by_stream[w.stream] for w in query.windows]
            lookups_by_stream = {
                stream: ParquetTermLookup(source) if isinstance(source, str) and os.path.isfile(source)
                else FrameTermLookup(spark, frames_by_stream[stream])
                for stream, source in sources.items() if stream in frames_by_stream
            }
            lookups = [lookups_by_stream[w.stream] for w in query.windows]
            tables = annotate(plan, context, SparkBGP(spark, frames, context, lookups))
            if key is not None:
                _remember(key, tables)
    return _answers_from_tables(query, semantics, vectors, plan, tables, timelines, end=end,
                                report_window=report_window, keep_results=keep_results, report=report,
                                reused=reused)


def columnar_expected_answers(
    query: ContinuousQuery,
    columns: "Mapping[str, StreamColumns]",
    semantics: EngineSemantics,
    t0_values: Sequence[Sequence[int] | int],
    *,
    static: StaticData = StaticData(),
    end: int | None = None,
    report_window: int = 0,
    keep_results: bool = True,
) -> ExpectedAnswers:
    """`expected_answers` without Spark: the BGPs as Arrow joins over `StreamColumns`
    (`rsp_workbench.oracle.columnar`), the same steps above them. Single-window monotone
    queries get presence runs computed lazily per t0 (a ``--json`` run computes only the
    t0 it prints); the others every t0 as `expected_answers` does."""
    from rsp_workbench.oracle.columnar import ArrowBGP, tables_for

    vectors = [(t,) if isinstance(t, int) else tuple(t) for t in t0_values]
    plan = compile_plan(query)  # the caller checked the fragment: FastPathUnsupported propagates
    if static.time_varying_default is not None:
        raise FastPathUnsupported("time-varying graphs are evaluated by the reference path")
    for window in query.windows:
        if window.stream not in columns:
            raise UserError(f"no stream given for <{window.stream}>", field="stream")
    timelines_by_stream = {}
    for stream in dict.fromkeys(w.stream for w in query.windows):
        distinct, counts = np.unique(columns[stream].times, return_counts=True)
        timelines_by_stream[stream] = Timeline.from_counts(distinct.tolist(), counts.tolist())
    timelines = [timelines_by_stream[w.stream] for w in query.windows]
    context = AnnotationContext(
        [WindowData(w.name, w.size_ms, [], columns[w.stream].times) for w in query.windows],
        query.dataset_mode,
        frozenset(map(canonical_triple, static.default)),
        {g: frozenset(map(canonical_triple, t)) for g, t in static.named.items()},
    )
    tables = annotate(plan, context, ArrowBGP(context, tables_for(query, columns)))
    return _answers_from_tables(query, semantics, vectors, plan, tables, timelines, end=end,
                                report_window=report_window, keep_results=keep_results, lazy=True)


def _answers_from_tables(query: ContinuousQuery, semantics: EngineSemantics, vectors: list[tuple[int, ...]],
                         plan: Any, tables: list[RowTable], timelines: list[Timeline], *, end: int | None,
                         report_window: int, keep_results: bool, report: Progress | None = None,
                         reused: bool = False, lazy: bool = False) -> ExpectedAnswers:
    """The answers per t0 from the annotated rows (shared by the Spark job and the columnar
    path). ``lazy``: presence runs per t0 on demand wherever they apply, instead of the
    prefix sums over every t0 up front."""
    report = report or (lambda stage, fraction: None)
    report("windows", 0.5)
    evaluator = RelationEvaluator(plan, tables)
    r = report_window
    reporting_timeline = timelines[r]
    last = end if end is not None else (reporting_timeline.distinct[-1] if reporting_timeline.distinct else None)
    answers = ExpectedAnswers(query, semantics, vectors, "fast", None, [], timelines, end, report_window, evaluator)
    answers.annotations_reused = reused
    vectorised: VectorisedAnswers | None = None
    problem = not_vectorisable(query, semantics)
    if plan.upper is not None:
        problem = "operators above the pattern (aggregates, OPTIONAL, MINUS, ...) are evaluated per window content"
    chosen = lazy and DeltaOracle.applies(plan, query)  # not a fallback: no reason to give
    if problem is None and reporting_timeline.distinct and not chosen:
        try:
            vectorised = VectorisedAnswers(tables[0], reporting_timeline, query, semantics, int(last))  # type: ignore[arg-type]
        except FastPathUnsupported as error:
            problem = str(error)
    if vectorised is None and DeltaOracle.applies(plan, query) and reporting_timeline.distinct:
        # presence runs per t0 (`rsp_workbench.oracle.deltas`), computed when a t0 is asked for
        answers._deltas = DeltaOracle(query, semantics, tables[0], reporting_timeline, end)
        answers._classes = None
        answers.reason = (f"presence runs per t0 instead of the vectorised prefix sums: {problem}"
                          if problem and not chosen else None)
        report("done", 1.0)
        return answers
    if UpperOracle.applies(plan, query) and reporting_timeline.distinct:
        # operators above the pattern: one evaluation per distinct set of present rows, per t0 when asked for
        answers._deltas = UpperOracle(query, semantics, evaluator, reporting_timeline, end)
        answers._classes = None
        answers.reason = f"per-t0 window contents instead of the vectorised path: {problem}"
        report("done", 1.0)
        return answers
    answers.reason = None if vectorised is not None else (
        f"per-t0 window contents instead of the vectorised path: {problem}" if problem else None)
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
        if DeltaOracle.applies(plan, query):  # a t0's full answer (``--out``, the judge) as presence runs,
            answers._deltas = DeltaOracle(query, semantics, tables[0], reporting_timeline, end)  # not relations
    answers.classes = [AnswerClass(d, v) for d, v in by_digest.items()]
    report("done", 1.0)
    return answers


def _reference_answers(query: ContinuousQuery, frames: Mapping[str, "DataFrame"], semantics: EngineSemantics,
                       vectors: list[tuple[int, ...]], static: StaticData, end: int | None, report_window: int,
                       timelines: list[Timeline], reason: str) -> ExpectedAnswers:
    """Fallback: collect the streams and run the rdflib reference per t0 (on demand)."""
    from rsp_workbench.streams.model import StreamElement

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
