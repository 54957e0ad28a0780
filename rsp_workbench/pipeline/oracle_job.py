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
3. The answers per t0 follow from the annotated rows as on the columnar path
   (`rsp_workbench.oracle.answers.answers_from_tables`: prefix sums over the distinct
   timestamps, presence runs, or one relation per distinct window content).

Queries outside the fast fragment fall back to the rdflib reference path per t0. The
annotated rows are cached per (query, stream files, static data) for the next call.
`spark_expected` is this job as the oracle's path choice (`rsp_workbench.oracle.paths`)
receives it.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections import OrderedDict, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from rsp_workbench.core.semantics import EngineSemantics
from rsp_workbench.errors import UserError
from rsp_workbench.oracle.annotated import (
    BIG,
    Annotator,
    AnnotationContext,
    FastPathUnsupported,
    NumericBound,
    Relation,
    RowTable,
    annotate,
    compile_plan,
)
from rsp_workbench.oracle.answers import ExpectedAnswers, Progress, annotation_context, answers_from_tables
from rsp_workbench.oracle.columnar import pattern_matches
from rsp_workbench.oracle.deltas import Timeline
from rsp_workbench.oracle.reference import ExpectedAnswer, StaticData, expected_answer
from rsp_workbench.query.model import ContinuousQuery
from rsp_workbench.streams.terms import from_rdflib

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

    from rsp_workbench.oracle.run import OracleMethod


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
        found: np.ndarray = distinct[indices[positions]]
        return found

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
class PatternSource:
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
        sources: list[PatternSource] = []
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
            def prefetch_all() -> None:
                for lookup, slot in needed:
                    lookup.prefetch(slot)

            prefetch = pool.submit(prefetch_all)
            table = joined.select(*refs, *reqs).toArrow()
            prefetch.result()
        return self._relation(ordered, variables, sources, table, reqs)

    def _relation(self, ordered: Sequence[tuple[Any, Any, Any]], variables: list[str],
                  sources: list[PatternSource], table: Any, reqs: list[str]) -> Relation:
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

    def _terms(self, source: PatternSource, slot: int, src: np.ndarray, ref: np.ndarray) -> np.ndarray:
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
                       annotator: Annotator) -> tuple["DataFrame", PatternSource]:
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
        return result, PatternSource(matched, list(windows))

    _matches = staticmethod(pattern_matches)


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
        context = annotation_context(query, {s: tl.times for s, tl in timelines_by_stream.items()}, static)
        report("joins", 0.1)
        key = _annotation_key(query, sources, static) if cache else None
        tables = _ANNOTATIONS.get(key) if key is not None else None
        reused = tables is not None
        if reused and key is not None:
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
    return answers_from_tables(query, semantics, vectors, plan, tables, timelines, end=end,
                               report_window=report_window, keep_results=keep_results, report=report,
                               reused=reused)


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

    return ExpectedAnswers.by_reference(query, semantics, vectors, reference, reason=reason, timelines=timelines,
                                        end=end, report_window=report_window)


def spark_expected(query: ContinuousQuery, semantics: EngineSemantics, vectors: Sequence[tuple[int, ...]],
                   parquet_sources: Callable[[str], Mapping[str, str]], *, end: int, static: StaticData,
                   report_window: int, spark_master: str | None,
                   keep_results: bool) -> "tuple[ExpectedAnswers, OracleMethod]":
    """`expected_answers` on the session for ``spark_master``, over the Parquet files
    ``parquet_sources(folder)`` gives (writing any it must into a temporary ``folder``):
    the `rsp_workbench.oracle.paths.SparkExpected` the CLI and ``rspwb run`` pass to the oracle."""
    import tempfile

    from rsp_workbench.oracle.paths import SparkJobUnavailable
    from rsp_workbench.oracle.run import OracleMethod
    from rsp_workbench.pipeline.spark import SparkUnavailable, get_spark

    try:
        spark = get_spark(spark_master)
    except SparkUnavailable as error:  # the oracle's own word for it: ``auto`` then stays in Python
        raise SparkJobUnavailable(error.message, error.file, error.line, error.column, error.field) from error
    with tempfile.TemporaryDirectory(prefix="rspwb-oracle-") as folder:
        sources = parquet_sources(folder)
        answers = expected_answers(spark, query, dict(sources), semantics, list(vectors), static=static, end=end,
                                   report_window=report_window, keep_results=keep_results)
    return answers, OracleMethod(answers.mode, "spark", answers.reason)
