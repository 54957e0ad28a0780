"""Which path computes the expected answers: the ``--method`` rule shared by ``rspwb oracle``,
``rspwb check`` and ``rspwb run`` (docs/oracle.md "--method").

``auto`` (`choose_path`), for queries inside the fast fragment, by the streams' size in
elements (measured on YABench SMALL/MEDIUM/BIG, every preset; docs/oracle.md):

* up to :data:`COLUMNAR_THRESHOLD`: the Python fast path over element objects (nothing
  to set up);
* up to :data:`SPARK_THRESHOLD`: the *columnar* Python path (`rsp_workbench.oracle.columnar`:
  the stream read as Arrow columns, BGPs as Arrow hash joins, presence runs per t0) —
  faster than the Spark job at every size up to BIG and for every report policy, since
  the JVM start alone costs more than the whole columnar run;
* above it: the Spark job, whose driver holds no stream in memory.

Queries outside the fragment take rdflib's reference path. ``spark``/``fast``/``reference``
force a path (``fast``: the Python fast path, columnar above the same threshold). Only the
pipeline layer may start Spark, so its job comes in as a `SparkExpected` argument
(`rsp_workbench.pipeline.oracle_job.spark_expected`); without one, ``auto`` stays in Python
and ``spark`` is refused.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

from rsp_workbench.errors import UserError

if TYPE_CHECKING:  # pragma: no cover
    from rsp_workbench.core.semantics import EngineSemantics
    from rsp_workbench.oracle.columnar import StreamColumns
    from rsp_workbench.oracle.judge import ExpectedFunction
    from rsp_workbench.oracle.reference import StaticData
    from rsp_workbench.oracle.run import OracleMethod
    from rsp_workbench.query.model import ContinuousQuery
    from rsp_workbench.streams.model import StreamElement, StreamSource

METHODS = ("auto", "fast", "spark", "reference")
COLUMNAR_THRESHOLD = 10_000  # elements: above this, the Python path reads the streams as Arrow columns (faster from ~10 k on)
SPARK_THRESHOLD = 10_000_000  # elements: above this, auto runs the Spark job (the driver holds no stream)
PATHS = ("python", "columnar", "spark", "reference")


class SparkJobUnavailable(UserError):
    """Spark cannot start here (no Java, too old a Java): ``auto`` runs the Python path instead."""


StreamSources = Callable[[str], Mapping[str, "str | StreamSource"]]


class SparkExpected(Protocol):
    """The Spark oracle job as the pipeline layer passes it in: expected answers per t0 vector
    over the stream files ``stream_sources(folder)`` gives (a path: a workbench Parquet file;
    a `StreamSource`: any format; the executors read them); ``warn`` gets a reader's summary
    line; raises `SparkJobUnavailable` when Spark cannot start."""

    def __call__(self, query: "ContinuousQuery", semantics: "EngineSemantics", vectors: Sequence[tuple[int, ...]],
                 stream_sources: StreamSources, *, end: int, static: "StaticData",
                 report_window: int, spark_master: str | None, keep_results: bool,
                 warn: Callable[[str], None] | None = None) -> "tuple[Mapping[tuple[int, ...], Any], OracleMethod]": ...


def choose_path(method: str, *, inside_fragment: bool, elements: int, allow_spark: bool = True) -> str:
    """The path ``method`` takes for a query (inside the fast fragment or not) over streams of
    ``elements`` elements: ``python`` (element objects), ``columnar``, ``spark`` or ``reference``."""
    if method == "reference" or (not inside_fragment and method == "auto"):
        return "reference"
    if not inside_fragment and method == "fast":
        return "python"  # which names the construct that keeps the query out
    if method == "spark" or (method == "auto" and allow_spark and elements > SPARK_THRESHOLD):
        return "spark"
    return "columnar" if elements > COLUMNAR_THRESHOLD else "python"


def inside_fast_fragment(query: "ContinuousQuery", static: "StaticData | None" = None) -> bool:
    """Whether the fast paths (Python or Spark) can compute the query without the reference path."""
    from rsp_workbench.oracle.annotated import FastPathUnsupported, compile_plan

    try:
        compile_plan(query)
    except FastPathUnsupported:
        return False
    return static is None or static.time_varying_default is None


def expected_by_method(
    query: "ContinuousQuery",
    semantics: "EngineSemantics",
    vectors: Sequence[tuple[int, ...]],
    *,
    method: str,
    size: Callable[[], int],
    elements: Callable[[], Mapping[str, Sequence["StreamElement"]]],
    stream_sources: StreamSources,
    end: int,
    static: "StaticData | None" = None,
    report_window: int = 0,
    spark: SparkExpected | None = None,
    spark_master: str | None = None,
    allow_spark: bool = True,
    keep_results: bool = True,
    columns: "Callable[[frozenset[str] | None], Mapping[str, StreamColumns]] | None" = None,
    warn: Callable[[str], None] | None = None,
) -> tuple[Mapping[tuple[int, ...], Any], "OracleMethod"]:
    """The expected answers per t0 vector and the `OracleMethod` that computed them.

    ``size()`` counts (or estimates) the streams' elements; ``elements()`` reads them for
    the Python path; ``columns(predicates)`` reads them as `StreamColumns` for the columnar
    path (default: from ``elements()``); ``stream_sources(folder)`` gives a stream file per
    stream IRI for ``spark``, the Spark job, which its executors read (streams only in memory
    written to Parquet into ``folder``); without ``spark``, ``auto`` stays in Python and
    ``method="spark"`` is refused. ``warn`` gets the Spark readers' summary lines. ``allow_spark=False``
    (e.g. inside a Spark task) keeps ``auto`` off Spark and says why.
    """
    from rsp_workbench.oracle.reference import StaticData
    from rsp_workbench.oracle.run import OracleMethod, expected_with_method

    static = static if static is not None else StaticData()
    if method not in METHODS:
        raise ValueError(f"unknown oracle method {method!r}")
    inside = method != "reference" and inside_fast_fragment(query, static)
    count = size() if inside else 0
    path = choose_path(method, inside_fragment=inside, elements=count, allow_spark=allow_spark)
    note = None
    if not allow_spark and method == "auto" and count > SPARK_THRESHOLD:
        note = "the run is a Spark task (no Spark job from an executor); the Python path ran"
    if path == "spark" and spark is None:
        if method == "spark":
            raise UserError("the Spark oracle job is not available to this caller", field="--method")
        note, path = "no Spark job was passed to the oracle; the Python path ran", "columnar"
    if path == "spark":
        assert spark is not None
        try:
            return spark(query, semantics, vectors, stream_sources, end=end, static=static,
                         report_window=report_window, spark_master=spark_master, keep_results=keep_results,
                         warn=warn)
        except SparkJobUnavailable as error:
            if method == "spark":
                raise
            note = f"Spark is unavailable ({error.message}); the Python path ran"
            path = "columnar"
    if path == "columnar":
        from rsp_workbench.oracle.answers import columnar_expected_answers
        from rsp_workbench.oracle.columnar import StreamColumns, columns_from_elements, query_predicates

        predicates = query_predicates(query)
        if columns is not None:
            read = columns(predicates)
        else:
            built: dict[int, StreamColumns] = {}  # one stream's elements may serve several IRIs
            read = {}
            for iri, stream in elements().items():
                if id(stream) not in built:
                    built[id(stream)] = columns_from_elements(stream, predicates)
                read[iri] = built[id(stream)]
        answers = columnar_expected_answers(query, read, semantics, vectors, static=static, end=end,
                                            report_window=report_window, keep_results=keep_results)
        reason = "; ".join(r for r in (note, answers.reason) if r) or None
        return answers, OracleMethod(answers.mode, "arrow", reason)
    in_python, used = expected_with_method(
        query, elements(), semantics, vectors, static=static, end=end, report_window=report_window,
        method="auto" if method == "spark" else method,
    )
    if note:
        used = OracleMethod(used.path, used.engine, note if used.reason is None else f"{note}; {used.reason}")
    return in_python, used


ParquetFiles = Mapping[str, "tuple[str, Sequence[StreamElement]]"]


def write_parquet_sources(folder: str, streams: Mapping[str, Sequence["StreamElement"]],
                          files: ParquetFiles) -> dict[str, str]:
    """Per stream IRI, a Parquet stream file Spark can read: the file of ``files[iri] = (path,
    elements)`` when the stream is exactly the elements read from it, else the elements
    written into ``folder``."""
    from rsp_workbench.streams.parquet import ParquetStreamWriter

    sources: dict[str, str] = {}
    written: dict[int, str] = {}
    for iri, elements in streams.items():
        if iri in files and files[iri][1] is elements:
            sources[iri] = files[iri][0]
        elif id(elements) in written:
            sources[iri] = written[id(elements)]
        else:
            target = os.path.join(folder, f"stream{len(written)}.parquet")
            with ParquetStreamWriter(target) as writer:
                writer.write_all(elements)
            written[id(elements)] = sources[iri] = target
    return sources


def expected_function(method: str = "auto", *, parquet_files: ParquetFiles | None = None,
                      spark: SparkExpected | None = None, spark_master: str | None = None,
                      allow_spark: bool = True) -> "ExpectedFunction":
    """The ``--method`` rule as the oracle's `ExpectedFunction` (for `rsp_workbench.oracle.judge.judge`).

    ``parquet_files``: per stream IRI, the Parquet file and the elements read from it (Spark
    reads the file directly); streams not in it, or replaced by the judge (ρDF entailment),
    are written to a temporary Parquet file when Spark runs.
    """
    known = dict(parquet_files or {})

    def expected(query: "ContinuousQuery", streams: Mapping[str, Sequence["StreamElement"]],
                 semantics: "EngineSemantics", vectors: Sequence[tuple[int, ...]], static: "StaticData", end: int,
                 report_window: int) -> tuple[Mapping[tuple[int, ...], Any], "OracleMethod"]:
        def size() -> int:
            return sum(len(elements) for elements in {id(e): e for e in streams.values()}.values())

        return expected_by_method(
            query, semantics, vectors, method=method, size=size, elements=lambda: streams,
            stream_sources=lambda folder: write_parquet_sources(folder, streams, known), end=end, static=static,
            report_window=report_window, spark=spark, spark_master=spark_master, allow_spark=allow_spark,
        )

    return expected
