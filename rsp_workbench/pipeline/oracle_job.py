"""The scalable oracle job: BGP joins on Spark, window assignment for every t0 vectorised.

Pipeline (docs/design/ARCHITECTURE.md "The oracle must scale"; docs/oracle.md):

1. Each stream is a DataFrame ``(s, p, o, t, pos)``; ``pos`` is the element's position in
   the time-ordered stream. Stream files in every format are read by the executors,
   partitioned by file ranges (`rsp_workbench.pipeline.stream_sources`); the driver gets
   the distinct timestamps and their counts, never the stream.
2. The query's monotone part is compiled (`rsp_workbench.oracle.annotated.compile_plan`);
   every BGP runs as Spark DataFrame joins on 64-bit hashes of the shared terms, with the
   pattern constants and a FILTER's numeric bounds applied in the scan and the band
   condition (elements of one mapping lie at most ω apart per window) in the joins
   (`SparkBGP`). Each row is annotated with the positions ``[pmin, pmax]`` of the
   elements that built it and the terms of its variables; the executors check the shared
   terms exactly, and the driver runs FILTER/BIND/UNION/... above the BGPs over the annotated rows.
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
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

from rsp_workbench.core.semantics import EngineSemantics
from rsp_workbench.errors import UserError
from rsp_workbench.oracle.annotated import (
    BIG,
    Annotator,
    CodedRelation,
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
from rsp_workbench.streams.model import StreamSource
from rsp_workbench.streams.terms import from_rdflib

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

    from rsp_workbench.pipeline.stream_sources import SparkStream

    from rsp_workbench.oracle.run import OracleMethod


# --- streams as DataFrames ----------------------------------------------------------------------


def stream_frame(spark: "SparkSession", source: "str | StreamSource | DataFrame") -> "DataFrame":
    """``(s, p, o, t, pos)`` for a stream file (a path: workbench Parquet; a `StreamSource`: any
    format), read by the executors (`rsp_workbench.pipeline.stream_sources`), or a DataFrame.

    A DataFrame may carry ``pos``; otherwise positions follow ``(t, monotonically_increasing_id)``,
    which is the original order only when the partitions are in stream order.
    """
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
    from pyspark.sql.window import Window

    if not isinstance(source, DataFrame):
        return read_stream(spark, source).frame
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


def read_stream(spark: "SparkSession", source: "str | StreamSource", predicates: frozenset[str] | None = None
                ) -> "SparkStream":
    """A stream file read by the executors (a path: a workbench Parquet stream); with ``predicates``
    the frame may hold only the elements with one of them (`spark_stream`)."""
    from rsp_workbench.pipeline.stream_sources import spark_stream

    return spark_stream(spark, source if isinstance(source, StreamSource) else StreamSource(source, "parquet"),
                        predicates)


def timeline_of(frame: "DataFrame") -> Timeline:
    """Distinct timestamps and their counts (the only per-element data the driver needs), by a
    Spark aggregation: the driver never reads the stream."""
    table = frame.groupBy("t").count().orderBy("t").toArrow()
    return Timeline.from_counts(table.column("t").to_pylist(), table.column("count").to_pylist())


#: Row groups of the joined rows' Parquet files, compressed (Spark's default: 128 MB): a column of terms is read
#: back a row group at a time, all of it decompressed at once (50x YABench BIG: about 200 MB more)
PART_ROW_GROUP_BYTES = 16 << 20


@contextmanager
def collected_parts(frame: "DataFrame") -> Iterator[Any]:
    """``frame``'s rows as Parquet files the executors write into a scratch folder (removed on
    leaving), opened as an Arrow dataset in this (Python) process, to be read a column at a
    time: the JVM driver never holds them. ``toArrow()`` gathers every task's result in the JVM
    driver's heap first (1 GiB by default, the executors' too on a local master): at 10×
    YABench BIG the joined rows of CSRBench Q1 killed it (OutOfMemoryError)."""
    import shutil

    import pyarrow.dataset as ds

    from rsp_workbench.pipeline.stream_sources import scratch_folder

    folder = scratch_folder()
    try:
        target = os.path.join(folder, "rows")
        frame.write.option("parquet.block.size", PART_ROW_GROUP_BYTES).parquet(target)
        yield ds.dataset(target, format="parquet", schema=_arrow_schema(frame))  # skips _SUCCESS
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def collected(frame: "DataFrame") -> Any:
    """``frame``'s rows as one Arrow table (`collected_parts`)."""
    with collected_parts(frame) as parts:
        return parts.to_table()


def _arrow_schema(frame: "DataFrame") -> Any:
    """The Arrow schema of ``frame`` (also when no part file holds a row)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(frame.schema)


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


class SparkBGP:
    """Evaluates BGP leaves with DataFrame joins; returns annotated `Relation` rows.

    Each pattern's matches are read from the stream with its constants (and a FILTER's
    numeric bounds, `certainly_fails`) applied in the scan; joins are on 64-bit hashes of
    the shared variables' terms with the band condition (elements of one mapping lie at
    most ω apart per window). Every joined row carries, per pattern, the terms of its
    variables and per window the requirement ``[pmin, pmax]``; the executors keep the rows
    whose shared variables have equal terms (exact: a hash collision only adds candidates,
    which are dropped there), so the driver receives the joined rows only (never a stream's
    column), with one term per variable, and groups equal mappings (a snapshot is a set of
    triples).
    """

    def __init__(self, spark: "SparkSession", frames: Sequence["DataFrame"], context: AnnotationContext) -> None:
        self.spark = spark
        self.frames = frames
        self.context = context

    def __call__(self, patterns: Sequence[tuple[Any, Any, Any]], graph: str | None,
                 bounds: Sequence[NumericBound] = ()) -> "Relation | CodedRelation":
        from pyspark.sql import functions as F

        from rsp_workbench.oracle.annotated import canonical_order, is_variable, term_key
        from rsp_workbench.oracle.coding import arrow_relation
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
        column = _columns(variables)
        annotator = Annotator(self.context)
        joined: "DataFrame | None" = None
        join_keys = _join_keys(ordered)
        for k, pattern in enumerate(ordered):
            on = [column[n] for n in join_keys[k]]
            frame = self._pattern_frame(k, pattern, graph, column, shared, bounds, annotator, on)
            if joined is None:
                joined = frame
            else:
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
        assert joined is not None
        # a shared variable's terms are equal (exact: a hash collision only joined candidates), checked by
        # the executors; then one term per variable goes to the driver
        first_term: dict[str, str] = {}
        for k, pattern in enumerate(ordered):
            for name in dict.fromkeys(term_key(t) for t in pattern if is_variable(t)):
                term = _term_column(k, column[name])
                if name in first_term:
                    joined = joined.where(exact_match(first_term[name], term))
                else:
                    first_term[name] = term
        reqs = [f"{c}{w}" for w in range(width) for c in ("pmin", "pmax")]
        rows = joined.select(*[F.col(first_term[v]).alias(column[v]) for v in variables],
                             *[term_hash(first_term[v]).alias(f"hash_{column[v]}") for v in variables], *reqs)
        hashes = [f"hash_{column[v]}" for v in variables]
        with collected_parts(rows) as parts:  # read back a column at a time; terms become codes, kept mapped
            def read(name: str) -> Any:
                return parts.to_table(columns=[name]).column(name)

            def numbers(name: str) -> Callable[[], Any]:  # a column read only if the order needs it
                return lambda: read(name).to_numpy()

            def batches(name: str) -> Iterator[Any]:  # a column of terms a batch at a time, in the rows' order
                return (batch.column(0) for batch in parts.to_batches(columns=[name], batch_readahead=2,
                                                                      fragment_readahead=1))

            # the rows in an order of their own, not the one the tasks and shuffles gave them (which
            # decides the codes and the mappings' order in written answers): one answer on any master
            order = canonical_order([numbers(c) for c in (*reqs, *hashes)])
            return arrow_relation(variables, read, [column[v] for v in variables], reqs, hashes=hashes,
                                  spill=os.path.dirname(parts.files[0]) if parts.files else None,  # beside the parts
                                  order=order, batches=batches)

    def _pattern_frame(self, k: int, pattern: tuple[Any, Any, Any], graph: str | None, column: Mapping[str, str],
                       shared: set[str], bounds: Sequence[NumericBound], annotator: Annotator,
                       partition_by: Sequence[str] = ()) -> "DataFrame":
        """One pattern's matches: hashes of its shared variables, its variables' terms, requirements.

        A pattern that reads one window and no static triple is shuffled by its join key
        (``partition_by``) with its elements' ``pos`` and ``t`` only, its requirement columns
        made after the shuffle: four per window would be shuffled otherwise, as Spark moves the
        projection below the join's own exchange (10x YABench BIG: about 2 s of 80, three pairs
        against the same code without it)."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import LongType, StringType, StructField, StructType

        from rsp_workbench.oracle.annotated import is_variable, term_key

        width = self.context.width
        names = [term_key(t) if is_variable(t) else None for t in pattern]
        unique = list(dict.fromkeys(n for n in names if n is not None))
        keys = [n for n in unique if n in shared]
        first = {n: _SLOTS[names.index(n)] for n in unique}
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

        def selected(frame: "DataFrame", w: int | None) -> "DataFrame":
            hashes = [term_hash(first[n]).alias(column[n]) for n in keys]
            terms = [F.col(first[n]).alias(_term_column(k, column[n])) for n in unique]
            if partition_by and w is not None and not matched and len(windows) == 1:
                ours = [column[n] for n in keys] + [_term_column(k, column[n]) for n in unique]
                return frame.select(*hashes, *terms, "pos", "t").repartition(*partition_by).select(*ours,
                                                                                                    *requirement(w))
            return frame.select(*hashes, *terms, *requirement(w))

        if matched:
            schema = StructType([StructField(c, StringType()) for c in _SLOTS] + [StructField("pos", LongType()),
                                                                                   StructField("t", LongType())])
            frames.append(selected(self.spark.createDataFrame([(*triple, 0, 0) for triple in matched], schema), None))
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
            frames.append(selected(frame, w))
        if not frames:
            schema = StructType([StructField(column[n], LongType()) for n in keys]
                                + [StructField(_term_column(k, column[n]), StringType()) for n in unique]
                                + [StructField(f"{c}{v}", LongType()) for v in range(width)
                                   for c in ("pmin", "pmax", "tmin", "tmax")])
            frames.append(self.spark.createDataFrame([], schema))
        result = frames[0]
        for other in frames[1:]:
            result = result.unionByName(other)
        if k > 0:  # requirement columns of the right side of a join get a suffix
            result = result.select(*[F.col(c).alias(f"{c}_r") if c[:4] in ("pmin", "pmax", "tmin", "tmax") else F.col(c)
                                     for c in result.columns])
        return result

    _matches = staticmethod(pattern_matches)


def _join_keys(ordered: Sequence[tuple[Any, Any, Any]]) -> list[list[str]]:
    """Per pattern in join order, the variables it is joined on: those of the patterns before it
    that it shares (the first pattern: those of its join with the second; none: a cross join)."""
    from rsp_workbench.oracle.annotated import is_variable, term_key

    keys: list[list[str]] = []
    bound: list[str] = []
    for pattern in ordered:
        names = list(dict.fromkeys(term_key(t) for t in pattern if is_variable(t)))
        keys.append([n for n in names if n in bound])
        bound += [n for n in names if n not in bound]
    if len(keys) > 1:
        keys[0] = keys[1]
    return keys


def exact_match(left: str, right: str) -> Any:
    """The check that two terms the hash join matched are equal. Written as ``coalesce(l = r,
    false)`` (the same truth: terms are never null) so that Spark keeps it a condition on the
    matched pairs: a plain ``l = r`` the optimizer pushes into the join as one more key, and the
    sort-merge join then sorts both sides by the terms themselves, strings sharing their long
    IRI prefixes, not by the 64-bit hashes (10× YABench BIG: joins 42 s -> 34 s)."""
    from pyspark.sql import functions as F

    return F.coalesce(F.col(left) == F.col(right), F.lit(False))


def term_hash(column: str) -> Any:
    """The join key of a shared variable's term: a 64-bit hash, so equal terms always meet and
    a collision only adds candidates, which the exact check of the terms drops."""
    from pyspark.sql import functions as F

    return F.xxhash64(column)


def _columns(variables: Sequence[str]) -> dict[str, str]:
    """Each variable's column name stem (variables' names are not valid column names)."""
    return {v: f"h{i}" for i, v in enumerate(variables)}


def _term_column(k: int, stem: str) -> str:
    """The column of pattern ``k``'s term for the variable of column stem ``stem``."""
    return f"term{k}_{stem}"


# --- annotated rows shared between calls ---------------------------------------------------------

_ANNOTATIONS: "OrderedDict[tuple[Any, ...], list[RowTable]]" = OrderedDict()
ANNOTATION_CACHE_SIZE = 2


def _file_fingerprint(path: str, digest: str | None = None) -> tuple[str, int, int, str]:
    """Path, size, mtime and content digest: a rewritten stream file never hits the cache. The
    digest is the one the executors computed while reading the file (`SparkStream.digest`), or,
    without one, read here (a 4 GB stream: ~25 s of the driver's time)."""
    stat = os.stat(path)
    if digest is None:
        hashed = hashlib.blake2b(digest_size=16)
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                hashed.update(block)
        digest = hashed.hexdigest()
    return os.path.abspath(path), stat.st_size, stat.st_mtime_ns, digest


def _annotation_key(query: ContinuousQuery, sources: Mapping[str, Any], static: StaticData,
                    read: Mapping[Any, "SparkStream"] | None = None) -> tuple[Any, ...] | None:
    """What the annotated rows depend on: the query body, windows (the band uses ω), the
    stream files' contents (and how they are read; ``read``: their digests where the executors
    computed them) and the static graphs — not the semantics or t0. None for sources that are
    DataFrames (no stable identity) or folders."""
    files = []
    for stream in dict.fromkeys(w.stream for w in query.windows):
        source = sources.get(stream)
        path = source.path if isinstance(source, StreamSource) else source
        if not isinstance(path, str) or not os.path.isfile(path):
            return None
        digest = read[source].digest if read is not None and source in read else None
        files.append((stream, source if isinstance(source, StreamSource) else None, _file_fingerprint(path, digest)))
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
    streams: "str | StreamSource | DataFrame | Mapping[str, str | StreamSource | DataFrame]",
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
    warn: Callable[[str], None] | None = None,
) -> ExpectedAnswers:
    """Expected answers of ``query`` for every t0 vector in ``t0_values`` (RSP-QL Def. 24-26).

    BGP joins run on Spark inside a cancellable job group (``group_id``); the window
    assignment per t0 is vectorised on the driver. ``progress(stage, fraction)`` is called
    as work advances. Queries outside the fast fragment use the reference path per t0.
    With ``cache``, the annotated rows of a (query, stream files, static data) are kept
    for the next call (e.g. another report policy or t0 set over the same stream).
    Stream files (a path: workbench Parquet; a `StreamSource`: any format) are read by the
    executors; ``warn`` receives a reader's summary line (``on_disorder="warn"``).
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
    from rsp_workbench.pipeline.stream_sources import release

    read: dict[Any, "SparkStream"] = {}  # stream files read by the executors: one frame per file
    with job_group(spark, group, "expected answers"):
        try:
            return _expected_answers(spark, query, sources, semantics, vectors, read, static=static, end=end,
                                     report_window=report_window, report=report, keep_results=keep_results,
                                     cache=cache, warn=warn)
        finally:
            for stream in read.values():
                release(stream)


def _expected_answers(spark: "SparkSession", query: ContinuousQuery, sources: Mapping[str, Any],
                      semantics: EngineSemantics, vectors: list[tuple[int, ...]], read: dict[Any, "SparkStream"], *,
                      static: StaticData, end: int | None, report_window: int, report: Progress, keep_results: bool,
                      cache: bool, warn: Callable[[str], None] | None) -> ExpectedAnswers:
    """`expected_answers` inside its job group; the stream files it reads are kept in ``read``."""
    from pyspark.sql import DataFrame

    from rsp_workbench.oracle.columnar import query_predicates

    outside = ""  # why the query is outside the fast fragment
    try:
        plan = compile_plan(query)
        if static.time_varying_default is not None:
            raise FastPathUnsupported("time-varying graphs are evaluated by the reference path")
    except FastPathUnsupported as error:
        plan, outside = None, str(error)
    # the joins read only the query's predicates (the reference path reads whole streams)
    predicates = query_predicates(query) if plan is not None else None
    frames_by_stream: dict[str, "DataFrame"] = {}
    timelines_by_stream: dict[str, Timeline] = {}
    for window in query.windows:
        if window.stream not in sources:
            raise UserError(f"no stream given for <{window.stream}>", field="stream")
        source = sources[window.stream]
        if window.stream in frames_by_stream:
            continue
        if isinstance(source, DataFrame):
            frames_by_stream[window.stream] = stream_frame(spark, source)
            continue
        if source not in read:
            read[source] = read_stream(spark, source, predicates)
            summary = read[source].report.summary()
            if summary and warn is not None:
                warn(summary)
        frames_by_stream[window.stream] = read[source].frame
        counted = read[source].time_counts
        if counted is not None:  # by the tasks that parsed the stream
            timelines_by_stream[window.stream] = Timeline.from_counts(*counted)
    report("timestamps", 0.0)
    for stream, frame in frames_by_stream.items():
        if stream not in timelines_by_stream:
            timelines_by_stream[stream] = timeline_of(frame)
    timelines = [timelines_by_stream[w.stream] for w in query.windows]
    if plan is None:
        return _reference_answers(query, frames_by_stream, semantics, vectors, static, end, report_window,
                                  timelines, outside)
    context = annotation_context(query, {s: tl.times for s, tl in timelines_by_stream.items()}, static)
    report("joins", 0.1)
    key = _annotation_key(query, sources, static, read) if cache else None
    tables = _ANNOTATIONS.get(key) if key is not None else None
    reused = tables is not None
    if reused and key is not None:
        _ANNOTATIONS.move_to_end(key)
    if tables is None:
        frames = [frames_by_stream[w.stream] for w in query.windows]
        tables = annotate(plan, context, SparkBGP(spark, frames, context))
        if key is not None:
            _remember(key, tables)
    return answers_from_tables(query, semantics, vectors, plan, tables, timelines, end=end,
                               report_window=report_window, keep_results=keep_results, report=report,
                               reused=reused, map_tasks=partial(mapped_on_executors, spark))


def _reference_answers(query: ContinuousQuery, frames: Mapping[str, "DataFrame"], semantics: EngineSemantics,
                       vectors: list[tuple[int, ...]], static: StaticData, end: int | None, report_window: int,
                       timelines: list[Timeline], reason: str) -> ExpectedAnswers:
    """Fallback: collect the streams and run the rdflib reference per t0 (on demand) — refused,
    with the estimate, when the streams would not fit in the driver's memory (`refuse_on_driver`)."""
    from rsp_workbench.streams.model import StreamElement

    refuse_on_driver(sum(len(timeline.times) for timeline in {id(t): t for t in timelines}.values()), reason)
    streams = {}
    for stream, frame in frames.items():
        table = collected(frame.select("s", "p", "o", "t", "pos")).sort_by("pos")
        streams[stream] = [StreamElement(s, p, o, t) for s, p, o, t in zip(
            table.column("s").to_pylist(), table.column("p").to_pylist(), table.column("o").to_pylist(),
            table.column("t").to_pylist())]
        frame.unpersist()

    def reference(vector: tuple[int, ...]) -> ExpectedAnswer:
        return expected_answer(query, streams, semantics, vector, static=static, end=end, report_window=report_window)

    return ExpectedAnswers.by_reference(query, semantics, vectors, reference, reason=reason, timelines=timelines,
                                        end=end, report_window=report_window)


REFERENCE_BYTES_PER_ELEMENT = 1000  # a stream element on the driver: ~460 B as an object, ~2× while built from Arrow


def refuse_on_driver(elements: int, reason: str, available: int | None = None) -> None:
    """A `UserError` before the streams are collected when a query outside the fast fragment (its
    answers by rdflib's reference path, on the driver, over the whole stream) would hold more than
    the memory available now: the message gives the estimate and why the stream must be there."""
    import psutil

    need = elements * REFERENCE_BYTES_PER_ELEMENT
    available = psutil.virtual_memory().available if available is None else available
    if need > available:
        raise UserError(
            f"the query is outside the fast fragment ({reason}), so rdflib's reference path computes its answers "
            f"on the driver over the whole stream: {elements:,} elements would hold about {need / 2**30:.1f} GB and "
            f"{available / 2**30:.1f} GB are available; give a shorter stream, or a query inside the fragment "
            "(docs/oracle.md)", field="query")


def spark_expected(query: ContinuousQuery, semantics: EngineSemantics, vectors: Sequence[tuple[int, ...]],
                   stream_sources: Callable[[str], Mapping[str, "str | StreamSource"]], *, end: int,
                   static: StaticData, report_window: int, spark_master: str | None, keep_results: bool,
                   warn: Callable[[str], None] | None = None) -> "tuple[ExpectedAnswers, OracleMethod]":
    """`expected_answers` on the session for ``spark_master``, over the stream files
    ``stream_sources(folder)`` gives (read by the executors; streams held in memory are written
    to Parquet in the temporary ``folder``): the `rsp_workbench.oracle.paths.SparkExpected` the
    CLI and ``rspwb run`` pass to the oracle."""
    import tempfile

    from rsp_workbench.oracle.paths import SparkJobUnavailable
    from rsp_workbench.oracle.run import OracleMethod
    from rsp_workbench.pipeline.spark import SparkUnavailable, get_spark

    try:
        spark = get_spark(spark_master)
    except SparkUnavailable as error:  # the oracle's own word for it: ``auto`` then stays in Python
        raise SparkJobUnavailable(error.message, error.file, error.line, error.column, error.field) from error
    with tempfile.TemporaryDirectory(prefix="rspwb-oracle-") as folder:
        sources = stream_sources(folder)
        answers = expected_answers(spark, query, dict(sources), semantics, list(vectors), static=static, end=end,
                                   report_window=report_window, keep_results=keep_results, warn=warn)
    answers.map_tasks = partial(on_executors, spark)
    return answers, OracleMethod(answers.mode, "spark", answers.reason)


def on_executors(spark: "SparkSession", function: Callable[[Any, Any], Any], shared: Any, items: Sequence[Any]
                 ) -> list[Any]:
    """``[function(shared, item) for item in items]``, a task per item on the executors, ``shared``
    sent once (a broadcast), in a cancellable job group: how ``--out`` of the Spark path has its
    files written by the executors (`rsp_workbench.oracle.output`; on a cluster the folder must be
    one every executor writes to, as ``RSPWB_SPARK_SCRATCH``)."""
    from rsp_workbench.pipeline.spark import job_group

    group = f"rspwb-output-{uuid.uuid4().hex[:8]}"
    with job_group(spark, group, "writing the expected answers"):
        try:
            return mapped_on_executors(spark, function, shared, items)
        except BaseException:  # Ctrl-C: no task goes on writing into a folder about to be removed
            spark.sparkContext.cancelJobGroup(group)
            raise


def mapped_on_executors(spark: "SparkSession", function: Callable[[Any, Any], Any], shared: Any,
                        items: Sequence[Any]) -> list[Any]:
    """`on_executors` inside the caller's job group (the expected answers' own): `run_tasks`, a
    task per item, ``shared`` a broadcast."""
    from rsp_workbench.pipeline.stream_parts import run_tasks

    broadcast = spark.sparkContext.broadcast(shared)
    try:
        return run_tasks(spark, items, partial(_shared_task, function, broadcast))
    finally:
        broadcast.unpersist()


def _shared_task(function: Callable[[Any, Any], Any], shared: Any, item: Any) -> Any:
    """One task of `on_executors`: ``function`` on the broadcast's value and the item."""
    return function(shared.value, item)
