"""Which path computes the expected answers: the ``--method`` rule shared by ``rspwb oracle``,
``rspwb check`` and ``rspwb run`` (docs/oracle.md).

``auto``: the Spark job (`workbench.pipeline.oracle_job`) for streams of more than
:data:`SPARK_THRESHOLD` elements when the query is inside the fast fragment; else the
pure-Python fast path (no JVM start for small streams); rdflib's reference path for queries
outside the fragment. ``spark``/``fast``/``reference`` force a path. The rule lives in the
pipeline layer because only this layer may start Spark; the oracle gets it as an
`workbench.oracle.judge.ExpectedFunction` (:func:`expected_function`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from workbench.oracle.reference import StaticData
    from workbench.core.semantics import EngineSemantics
    from workbench.oracle.judge import ExpectedFunction
    from workbench.oracle.run import OracleMethod
    from workbench.query.model import ContinuousQuery
    from workbench.streams.model import StreamElement

METHODS = ("auto", "fast", "spark", "reference")
SPARK_THRESHOLD = 200_000  # elements: above this, auto runs the Spark job (a JVM start costs ~10 s)


def inside_fast_fragment(query: "ContinuousQuery", static: "StaticData | None" = None) -> bool:
    """Whether the fast paths (Python or Spark) can compute the query without the reference path."""
    from workbench.oracle.annotated import FastPathUnsupported, compile_plan

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
    parquet_sources: Callable[[str], Mapping[str, str]],
    end: int,
    static: "StaticData | None" = None,
    report_window: int = 0,
    spark_master: str | None = None,
    allow_spark: bool = True,
    keep_results: bool = True,
) -> tuple[Mapping[tuple[int, ...], Any], "OracleMethod"]:
    """The expected answers per t0 vector and the `OracleMethod` that computed them.

    ``size()`` counts the streams' elements (a Parquet footer is enough); ``elements()``
    reads them for the Python paths; ``parquet_sources(folder)`` gives a Parquet file per
    stream IRI for Spark (writing the others into ``folder``). ``allow_spark=False`` (e.g.
    inside a Spark task) keeps ``auto`` on the Python path and says why.
    """
    from workbench.oracle.reference import StaticData
    from workbench.oracle.run import OracleMethod, expected_with_method

    static = static if static is not None else StaticData()
    note = None
    if method in ("auto", "spark"):
        big = inside_fast_fragment(query, static) and size() > SPARK_THRESHOLD
        if method == "spark" or big:
            if not allow_spark and method == "auto":
                note = "the run is a Spark task (no Spark job from an executor); the Python path ran"
            else:
                from workbench.pipeline.spark import SparkUnavailable

                try:
                    return _spark_expected(query, semantics, vectors, parquet_sources, end=end, static=static,
                                           report_window=report_window, spark_master=spark_master,
                                           keep_results=keep_results)
                except SparkUnavailable as error:
                    if method == "spark":
                        raise
                    note = f"Spark is unavailable ({error.message}); the Python path ran"
    answers, used = expected_with_method(
        query, elements(), semantics, vectors, static=static, end=end, report_window=report_window,
        method="auto" if method == "spark" else method,
    )
    if note:
        used = OracleMethod(used.path, used.engine, note if used.reason is None else f"{note}; {used.reason}")
    return answers, used


def _spark_expected(query: "ContinuousQuery", semantics: "EngineSemantics", vectors: Sequence[tuple[int, ...]],
                    parquet_sources: Callable[[str], Mapping[str, str]], *, end: int, static: "StaticData",
                    report_window: int, spark_master: str | None,
                    keep_results: bool) -> tuple[Mapping[tuple[int, ...], Any], "OracleMethod"]:
    import tempfile

    from workbench.oracle.run import OracleMethod
    from workbench.pipeline.oracle_job import expected_answers
    from workbench.pipeline.spark import get_spark

    spark = get_spark(spark_master)
    with tempfile.TemporaryDirectory(prefix="rspwb-oracle-") as folder:
        sources = parquet_sources(folder)
        answers = expected_answers(spark, query, dict(sources), semantics, list(vectors), static=static, end=end,
                                   report_window=report_window, keep_results=keep_results)
    return answers, OracleMethod(answers.mode, "spark", answers.reason)


ParquetFiles = Mapping[str, "tuple[str, Sequence[StreamElement]]"]


def write_parquet_sources(folder: str, streams: Mapping[str, Sequence["StreamElement"]],
                          files: ParquetFiles) -> dict[str, str]:
    """Per stream IRI, a Parquet stream file Spark can read: the file of ``files[iri] = (path,
    elements)`` when the stream is exactly the elements read from it, else the elements
    written into ``folder``."""
    from workbench.streams.parquet import ParquetStreamWriter

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
                      spark_master: str | None = None, allow_spark: bool = True) -> "ExpectedFunction":
    """The ``--method`` rule as the oracle's `ExpectedFunction` (for `workbench.oracle.judge.judge`).

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
            parquet_sources=lambda folder: write_parquet_sources(folder, streams, known), end=end, static=static,
            report_window=report_window, spark_master=spark_master, allow_spark=allow_spark,
        )

    return expected
