"""The oracle's two commands on plain Python values: `oracle_answers` (what an engine with given
semantics should answer, per admissible t0) and `check_answer` (judge a recorded answer).

``rspwb oracle`` and ``rspwb check`` are these functions behind argparse (docs/design/CLI.md);
a notebook or another tool calls them directly. Errors are `rsp_workbench.errors.UserError`
naming the file and the option (``--stream``, ``--t0``, …: the CLI's names for the parameters).
Streams are read only when a path needs their elements: a big Parquet stream goes to the Spark
job (`SparkExpected`, passed in by the caller allowed to start Spark) without ever becoming
Python objects.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Literal, Mapping, Sequence, TypeAlias

from rsp_workbench.core.semantics import EngineSemantics
from rsp_workbench.core.time import parse_duration
from rsp_workbench.errors import UserError
from rsp_workbench.oracle import paths as path_choice  # its thresholds read when used (tests move them)
from rsp_workbench.oracle.paths import SparkExpected
from rsp_workbench.oracle.run import OracleMethod
from rsp_workbench.query.model import ContinuousQuery

if TYPE_CHECKING:  # pragma: no cover
    from rsp_workbench.oracle.columnar import StreamColumns
    from rsp_workbench.oracle.quality import QualityRows
    from rsp_workbench.responses.model import ResponseLog
    from rsp_workbench.streams.model import StreamElement, StreamSource
    from rsp_workbench.streams.reader_common import ReadReport

#: t0 candidates up to which every t0's compact results are kept (``rspwb oracle --json`` lists them)
MAX_LISTED_T0 = 20
#: One stream file (or folder) for every stream of the query, or one per stream IRI (the key None: the others')
StreamPaths: TypeAlias = "str | os.PathLike[str] | Mapping[str | None, str | os.PathLike[str]]"
#: A query file, the query's text, or a parsed query
QuerySource: TypeAlias = "str | os.PathLike[str] | ContinuousQuery"
Warn: TypeAlias = Callable[[str], None]


def warn_on_stderr(message: str) -> None:
    """The default for ``warn``: a line on stderr, as the CLI prints it."""
    sys.stderr.write(f"rspwb: warning: {message}\n")


@dataclass(frozen=True)
class OracleSetup:
    """What both commands compute from: the query (windows applied), the semantics, the t0
    vectors to evaluate, the comparison start t_s, the last instant, and the streams."""

    query: ContinuousQuery
    semantics: EngineSemantics
    vectors: tuple[tuple[int, ...], ...]
    t_s: int
    end: int
    streams: "StreamFiles"
    t0: str | int | None  # as asked: a fixed t0, "all", or None (the semantics' own)
    registration: int
    end_given: bool
    method: str


@dataclass(frozen=True)
class ExpectedResult:
    """`oracle_answers`' result: the expected answers per t0 vector (computed lazily, one t0 at
    a time), the path that computed them, and per engine output its per-window quality."""

    setup: OracleSetup
    answers: Mapping[tuple[int, ...], Any]
    method: OracleMethod
    quality: "tuple[QualityRows, ...] | None" = None
    out: str | None = None  # the folder written (`write_expected_folder`), if any

    def window_rows(self, vector: tuple[int, ...]) -> Iterator[dict[str, Any]]:
        """Per evaluation of one t0: start, end, time, triples, expected, relation_size, emitted
        (streamed: a tuple tick gives one row per element)."""
        from rsp_workbench.oracle.run import windows_summary

        answers: Any = self.answers
        if hasattr(answers, "summary_rows"):  # the Spark job's answers: no need to materialise bindings
            return iter(answers.summary_rows(vector))
        answer = answers[vector]
        if hasattr(answer, "summary_rows"):  # a `DeltaAnswer`: rows straight from its arrays
            return iter(answer.summary_rows())
        return iter(windows_summary(answer))


@dataclass(frozen=True)
class CheckResult:
    """`check_answer`'s result: the verdict (``correct``/``incorrect``) and everything
    ``rspwb check --json`` prints (matching t0, first divergence, counts, the path that ran)."""

    verdict: str
    payload: Mapping[str, Any]
    method: OracleMethod
    setup: OracleSetup

    @property
    def correct(self) -> bool:
        return self.verdict == "correct"


def oracle_answers(
    streams: StreamPaths,
    query: QuerySource,
    *,
    stream_format: str | None = None,
    interval: int | str = 1000,
    on_disorder: Literal["error", "warn"] = "error",
    syntax: str | None = None,
    variables: Mapping[str, str] | None = None,
    window_size: int | str | None = None,
    window_slide: int | str | None = None,
    system: str | EngineSemantics | None = None,
    overrides: Mapping[str, Any] | None = None,
    t0: int | str | None = None,
    registration: int | str = 0,
    end: int | str | None = None,
    method: str = "auto",
    engine_outputs: Sequence[str | os.PathLike[str]] = (),
    engine_output_format: str | None = None,
    gracious: bool = False,
    out: str | os.PathLike[str] | None = None,
    yabench_files: bool = False,
    engine_name: str = "engine",
    spark: SparkExpected | None = None,
    warn: Warn = warn_on_stderr,
) -> ExpectedResult:
    """The expected answers of ``query`` over ``streams`` for an engine's semantics (``rspwb oracle``).

    ``streams``: a stream file or folder for every stream of the query, or a mapping from
    stream IRI to file (the key None for the others); ``stream_format`` (yabench,
    csrbench-dir, nquads, parquet; default: detected), ``interval`` (csrbench-dir: time
    between files) and ``on_disorder`` (``error`` or ``warn``: sort and warn) say how to read
    them. ``query``: a query file, its text (a string with a ``{`` that names no file), or a
    parsed query; ``syntax`` forces its dialect, ``variables`` fill its template; ``window_size``/
    ``window_slide`` give a window-less query its window or override a single window's.
    ``system``: a preset name (or semantics) with ``overrides`` (border, report, tick, r2s,
    empty_notification, time_unit, leading_partial, active_window) on top. ``t0``: a time,
    ``"all"`` (the admissible set) or None (the semantics' own); durations are ms or carry a
    unit. ``method``: auto, fast, spark or reference (docs/oracle.md); ``spark``, the Spark
    job, lets auto use it above the threshold. ``engine_outputs``: recorded answers measured
    per window (``gracious``: against the borders the engine really used). ``out``: a folder
    written complete or not at all (``yabench_files``: ORACLE_/BOXPLOTS_ files too, named
    after ``engine_name``).
    """
    if yabench_files and not engine_outputs:
        raise UserError("ORACLE_/BOXPLOTS_ files measure an engine: give --engine-output", field="--yabench-files")
    target = os.fspath(out) if out is not None else None
    if target:
        from rsp_workbench.oracle.output import StagedFolder

        StagedFolder(target).check_target()  # refuse a foreign folder before computing
    setup = _setup(streams, query, stream_format=stream_format, interval=interval, on_disorder=on_disorder,
                   syntax=syntax, variables=variables, window_size=window_size, window_slide=window_slide,
                   system=system, overrides=overrides, t0=t0, registration=registration, end=end, method=method,
                   warn=warn)
    answers, used = _expected(setup, spark, setup.vectors, setup.end)
    quality = None
    if engine_outputs:
        from rsp_workbench.oracle.run import measure_quality

        first = answers[setup.vectors[0]]
        quality = tuple(measure_quality(setup.query, setup.semantics, setup.streams.elements(), first,
                                        read_engine_output(path, engine_output_format), gracious=gracious)
                        for path in engine_outputs)
    result = ExpectedResult(setup, answers, used, quality)
    if target:
        write_expected_folder(target, result, query_label=_label(query), yabench_files=yabench_files,
                              engine_name=engine_name)
        result = replace(result, out=target)
    return result


def check_answer(
    streams: StreamPaths,
    query: QuerySource,
    engine_output: str | os.PathLike[str],
    *,
    engine_output_format: str | None = None,
    match: str = "strict",
    regroup: bool = False,
    tolerance: float = 1e-9,
    stream_format: str | None = None,
    interval: int | str = 1000,
    on_disorder: Literal["error", "warn"] = "error",
    syntax: str | None = None,
    variables: Mapping[str, str] | None = None,
    window_size: int | str | None = None,
    window_slide: int | str | None = None,
    system: str | EngineSemantics | None = None,
    overrides: Mapping[str, Any] | None = None,
    t0: int | str | None = None,
    registration: int | str = 0,
    end: int | str | None = None,
    method: str = "auto",
    spark: SparkExpected | None = None,
    warn: Warn = warn_on_stderr,
) -> CheckResult:
    """Whether a recorded engine answer is correct for some admissible t0 (RSP-QL Def. 25/26;
    ``rspwb check``), or its first divergence from the closest t0.

    ``engine_output``: the answer (csrbench-json, yabench-qr or jsonl: ``engine_output_format``,
    default detected); ``match``: ``strict`` or ``csrbench``; ``regroup``: merge responses
    with the same evaluation time (one response per binding, as CQELS emits); ``tolerance``:
    relative, for numeric literals. The other parameters are `oracle_answers`'.
    """
    from rsp_workbench.oracle.judge import JudgeOptions, RecordedRun, judge
    from rsp_workbench.oracle.run import check_variables

    setup = _setup(streams, query, stream_format=stream_format, interval=interval, on_disorder=on_disorder,
                   syntax=syntax, variables=variables, window_size=window_size, window_slide=window_slide,
                   system=system, overrides=overrides, t0=t0, registration=registration, end=end, method=method,
                   warn=warn)
    log = read_engine_output(engine_output, engine_output_format)
    check_variables(log, setup.query)  # an output for another query is a user error here

    def expected_here(query: ContinuousQuery, streams: Mapping[str, Sequence[StreamElement]],
                      semantics: EngineSemantics, vectors: Sequence[tuple[int, ...]], static: Any, end: int,
                      report_window: int) -> tuple[Mapping[tuple[int, ...], Any], OracleMethod]:
        """The ``method`` rule (Spark over the threshold) for the judge's t0 vectors."""
        return _expected(setup, spark, tuple(vectors), end)

    run = RecordedRun(query=setup.query, streams=_LazyStreams(setup.streams), log=log, semantics=setup.semantics,
                      end=setup.end, end_fixed=setup.end_given)
    options = JudgeOptions(t0=setup.t0, registration=setup.registration, match=match,
                           regroup=True if regroup else None, rel_tol=tolerance, quality=False)
    payload = dict(judge(run, options, expected_here).payload)
    used = OracleMethod(payload.pop("method"), payload.pop("method_engine"), payload.pop("method_reason"))
    for key in ("admissible_t0", "quality_t0", "end"):
        payload.pop(key, None)
    payload["admissible_t0"] = [list(v) if len(v) > 1 else v[0] for v in setup.vectors]
    return CheckResult(str(payload["verdict"]), payload, used, setup)


def read_engine_output(path: str | os.PathLike[str], fmt: str | None) -> "ResponseLog":
    """A recorded engine answer (format detected when None)."""
    from rsp_workbench.responses.readers import detect_response_format, read_responses

    name = os.fspath(path)
    if not os.path.exists(name):
        raise UserError("no such file", file=name, field="--engine-output")
    return read_responses(name, fmt or detect_response_format(name))


def write_expected_folder(out: str, result: ExpectedResult, *, query_label: str, yabench_files: bool = False,
                          engine_name: str = "engine", after_file: Callable[[str], None] | None = None) -> list[str]:
    """The expected answers per t0 (+ YABench files) in ``out``, complete or not at all
    (`rsp_workbench.oracle.output`: built in ``out.partial/``, renamed at the end)."""
    from rsp_workbench.oracle.output import write_expected_answers

    setup = result.setup
    manifest = {
        "query": query_label, "semantics": setup.semantics.describe(), "t_s": setup.t_s, "end": setup.end,
        "t0_candidates": len(setup.vectors), "method": result.method.path, "engine": result.method.engine,
    }
    return write_expected_answers(out, result.answers, list(setup.vectors), manifest=manifest,
                                  yabench_runs=list(result.quality) if yabench_files and result.quality else None,
                                  engine_name=engine_name, after_file=after_file, layout="grids",
                                  semantics=replace(setup.semantics, r2s=setup.query.r2s or setup.semantics.r2s))


# --- shared by both commands -------------------------------------------------------------------


def _label(query: QuerySource) -> str:
    """How the manifest names the query: its file, else its text."""
    return query.sparql if isinstance(query, ContinuousQuery) else os.fspath(query)


def _setup(streams: StreamPaths, query: QuerySource, *, stream_format: str | None,
           interval: int | str, on_disorder: Literal["error", "warn"], syntax: str | None, variables: Mapping[str, str] | None,
           window_size: int | str | None, window_slide: int | str | None, system: str | EngineSemantics | None,
           overrides: Mapping[str, Any] | None, t0: int | str | None, registration: int | str,
           end: int | str | None, method: str, warn: Warn) -> OracleSetup:
    from rsp_workbench.oracle.paths import METHODS
    from rsp_workbench.oracle.run import resolve_semantics, t0_vectors, with_window

    if method not in METHODS:
        raise UserError(f"unknown method {method!r}; one of {', '.join(METHODS)}", field="--method")
    if on_disorder not in ("error", "warn"):
        raise UserError(f"unknown choice {on_disorder!r}; error or warn", field="--on-disorder")
    parsed = _parse_query(query, syntax, variables)
    size = parse_duration(window_size, field="--window-size") if window_size is not None else None
    slide = parse_duration(window_slide, field="--window-slide") if window_slide is not None else None
    for value, name in ((size, "--window-size"), (slide, "--window-slide")):
        if value == 0:  # blame the option given, not the slide the size defaults it to
            raise UserError("must be greater than 0", field=name)
    bindings = _stream_bindings(streams)
    default_stream = next((iri for iri in bindings if iri), None)
    parsed = with_window(parsed, size, slide, default_stream)
    try:
        semantics = (system.with_overrides({k: v for k, v in (overrides or {}).items() if v is not None})
                     if isinstance(system, EngineSemantics) else resolve_semantics(system, overrides or {}))
    except UserError as error:
        raise UserError(error.message, field=f"--{(error.field or '').replace('_', '-')}") from None
    start = parse_duration(registration, field="--registration")
    option: str | int | None = None
    if t0 is not None:
        option = "all" if t0 == "all" else parse_duration(t0, field="--t0")
    vectors, t_s = t0_vectors(parsed, semantics, option, start)
    files = StreamFiles(parsed, bindings, stream_format=stream_format,
                        interval=parse_duration(interval, field="--interval"), on_disorder=on_disorder,
                        method=method, warn=warn)
    last = parse_duration(end, field="--end") if end is not None else files.default_end()
    return OracleSetup(parsed, semantics, tuple(vectors), t_s, last, files, option, start, end is not None, method)


def _parse_query(query: QuerySource, syntax: str | None,
                 variables: Mapping[str, str] | None) -> ContinuousQuery:
    from rsp_workbench.query.load import load_query

    if isinstance(query, ContinuousQuery):
        return query
    if isinstance(query, str) and "{" in query and not os.path.exists(query):  # a group pattern: its text
        return load_query("<query>", syntax=syntax, variables=variables, text=query)
    return load_query(query, syntax=syntax, variables=variables)


def _stream_bindings(streams: StreamPaths) -> dict[str | None, str]:
    """Stream IRI (None: any other) → path."""
    if isinstance(streams, Mapping):
        return {(iri.strip("<>") if iri else None): os.fspath(path) for iri, path in streams.items()}
    return {None: os.fspath(streams)}


def _expected(setup: OracleSetup, spark: SparkExpected | None, vectors: Sequence[tuple[int, ...]],
              end: int) -> tuple[Mapping[tuple[int, ...], Any], OracleMethod]:
    """The expected answers per t0 vector and the path that computed them (`rsp_workbench.oracle.paths`:
    the ``method`` rule shared with ``rspwb run``)."""
    from rsp_workbench.oracle.paths import expected_by_method

    files = setup.streams
    return expected_by_method(
        setup.query, setup.semantics, list(vectors), method=setup.method, size=files.size, elements=files.elements,
        stream_sources=files.stream_sources, end=end, keep_results=len(vectors) <= MAX_LISTED_T0,
        columns=files.columns, spark=spark, warn=files.report_summary,
    )


def estimated_elements(path: str) -> int:
    """About how many elements (lines) a text stream holds: its size over the mean length of
    its first lines (a directory: the sum over its files). Enough to choose a path."""
    if os.path.isdir(path):
        return sum(estimated_elements(os.path.join(path, name)) for name in os.listdir(path)
                   if os.path.isfile(os.path.join(path, name)))
    size = os.path.getsize(path)
    with open(path, "rb") as handle:
        head = handle.read(1 << 16)
    if path.endswith(".gz"):
        return size * 10 // 150  # compressed: roughly 10:1, ~150 bytes a line
    lines = head.count(b"\n")
    return size if not lines else size * lines // len(head)


class StreamFiles:
    """The query's streams: their files and formats, elements read only when needed.

    The Spark path reads the stream files on its executors (`stream_sources`), so a big
    stream is never loaded into this process unless a step needs it (engine-output quality).
    """

    def __init__(self, query: ContinuousQuery, bindings: Mapping[str | None, str], *, stream_format: str | None,
                 interval: int, on_disorder: Literal["error", "warn"], method: str, warn: Warn) -> None:
        from rsp_workbench.streams.readers import detect_format

        self.query, self.interval, self.on_disorder, self.method, self.warn = (
            query, interval, on_disorder, method, warn)
        self.paths: dict[str, str] = {}
        self.formats: dict[str, str] = {}
        for stream_iri in query.streams:
            path = bindings.get(stream_iri) or bindings.get(None)
            if path is None:
                raise UserError(f"no --stream given for <{stream_iri}>", field="--stream")
            if not os.path.exists(path):
                raise UserError("no such file or directory", file=path, field="--stream")
            self.paths[stream_iri] = path
            self.formats[stream_iri] = stream_format or detect_format(path)
            if self.formats[stream_iri] == "parquet":  # footer and schema now: a clear error before Spark starts
                from rsp_workbench.streams.parquet import check_parquet_stream

                check_parquet_stream(path)
        self._elements: dict[str, list[StreamElement]] | None = None
        self._warned: set[str] = set()  # stream files whose read summary was printed (read twice at most)
        self._columns: dict[str, StreamColumns] | None = None  # `columns`: the streams as Arrow columns
        self._predicates: frozenset[str] | None = None

    def elements(self) -> dict[str, list["StreamElement"]]:
        """Every stream's elements (read once; disorder per ``on_disorder``)."""
        if self._elements is None:
            loaded: dict[str, list[StreamElement]] = {}
            cache: dict[str, list[StreamElement]] = {}
            for stream_iri, path in self.paths.items():
                if path not in cache:
                    cache[path] = list(self._read(path))
                loaded[stream_iri] = cache[path]
            self._elements = loaded
        return self._elements

    def _read(self, path: str) -> Iterator["StreamElement"]:
        """One stream file's elements, streaming; with ``on_disorder="warn"`` sorted by time (stable: windows
        are defined on application time) and the disorder reported once."""
        from rsp_workbench.streams.reader_common import ReadReport
        from rsp_workbench.streams.readers import read_stream

        report = ReadReport(source=path)
        elements: Iterable[StreamElement] = read_stream(path, self._format_of(path), interval_ms=self.interval,
                                                        on_disorder=self.on_disorder, report=report)
        if self.on_disorder == "warn":
            elements = sorted(elements, key=lambda element: element.t)
        yield from elements
        self._report(path, report)

    def _parquet_only(self) -> bool:
        return self._elements is None and all(fmt == "parquet" for fmt in self.formats.values())

    def size(self) -> int:
        """Elements over all distinct stream files, to choose the oracle's path: counted when
        already read, from the footer for Parquet, else estimated from the file's size and
        its first lines (nothing is read in full)."""
        if self._elements is not None:
            return sum(len(elements) for elements in {id(e): e for e in self._elements.values()}.values())
        if self._columns is not None:
            return sum(len(c.times) for c in {id(c): c for c in self._columns.values()}.values())
        total = 0
        for path in set(self.paths.values()):
            if self._format_of(path) == "parquet":
                import pyarrow.parquet as pq  # only here: the Parquet reader is a tenth of a second to import

                total += int(pq.ParquetFile(path).metadata.num_rows)
            else:
                total += estimated_elements(path)
        return total

    def columns(self, predicates: frozenset[str] | None) -> dict[str, "StreamColumns"]:
        """Every stream as `rsp_workbench.oracle.columnar.StreamColumns` (read once; only the
        elements with one of ``predicates`` keep their terms)."""
        if self._columns is None or self._predicates != predicates:
            from rsp_workbench.oracle.columnar import read_columns
            from rsp_workbench.streams.reader_common import ReadReport

            cache: dict[str, StreamColumns] = {}
            loaded: dict[str, StreamColumns] = {}
            for stream_iri, path in self.paths.items():
                if path not in cache:
                    report = ReadReport(source=path)
                    cache[path] = read_columns(path, self._format_of(path), predicates, interval_ms=self.interval,
                                               on_disorder=self.on_disorder, report=report)
                    self._report(path, report)
                loaded[stream_iri] = cache[path]
            self._columns, self._predicates = loaded, predicates
        return self._columns

    def _report(self, path: str, report: "ReadReport") -> None:
        summary = report.summary()
        if summary and path not in self._warned:
            self._warned.add(path)
            self.report_summary(summary, disorders=bool(report.disorders))

    def report_summary(self, summary: str, disorders: bool = True) -> None:
        """A reader's summary line for the user (the Spark job's readers report through here too)."""
        self.warn(f"{summary}; the oracle sorts them by time" if disorders else summary)

    def _format_of(self, path: str) -> str:
        return next(self.formats[iri] for iri, p in self.paths.items() if p == path)

    def default_end(self) -> int:
        """`rsp_workbench.oracle.run.default_end` (Parquet: the last ``t`` read with pyarrow)."""
        from rsp_workbench.oracle.run import default_end, end_after

        if self._elements is None and self.method in ("auto", "spark", "fast"):  # no element list in memory
            if self._parquet_only() and self.on_disorder == "error" or self.method == "spark" or (
                    self.method == "auto" and self.size() > path_choice.SPARK_THRESHOLD):
                last = self._last_times()
                if last is not None:
                    return end_after(self.query, max((t for t in last if t is not None), default=0))
            if self.size() > path_choice.COLUMNAR_THRESHOLD:  # read once, as columns (the columnar path's input)
                from rsp_workbench.oracle.columnar import query_predicates

                columns = self.columns(query_predicates(self.query))
                times = [c.last_time for c in columns.values()]
                return end_after(self.query, max((t for t in times if t is not None), default=0))
        return default_end(self.query, self.elements())

    def _last_times(self) -> list[int | None] | None:
        """Each stream file's last time without reading it (Parquet: its last row group; text:
        its last element line), streams in time order; None when some file cannot tell
        (``on_disorder="warn"``, a CSRBench folder or N-Quads layout, compressed or empty text)."""
        from rsp_workbench.streams.parquet import parquet_stream_extent
        from rsp_workbench.streams.nquads_reader import nquads_layout
        from rsp_workbench.streams.readers import last_element_time

        if self.on_disorder != "error":
            return None
        found: list[int | None] = []
        for path in set(self.paths.values()):
            fmt = self._format_of(path)
            if fmt == "parquet":
                found.append(parquet_stream_extent(path)[1])
                continue
            readable = fmt == "yabench" or fmt == "nquads" and nquads_layout(path) == "time-graph"
            last = last_element_time(path, fmt) if readable else None
            if last is None:
                return None
            found.append(last)
        return found

    def stream_sources(self, folder: str | None = None) -> dict[str, "StreamSource"]:
        """Per stream IRI, the stream file and how to read it, for the Spark job's executors
        (``folder`` is not needed: nothing is converted)."""
        from rsp_workbench.streams.model import StreamSource

        return {stream_iri: StreamSource(path, self.formats[stream_iri], self.interval, self.on_disorder)
                for stream_iri, path in self.paths.items()}


class _LazyStreams(Mapping[str, Sequence["StreamElement"]]):
    """The query's streams by IRI, read only if the judge needs elements (the Spark path reads Parquet itself)."""

    def __init__(self, files: StreamFiles) -> None:
        self.files = files

    def __getitem__(self, iri: str) -> Sequence["StreamElement"]:
        return self.files.elements()[iri]

    def __iter__(self) -> Iterator[str]:
        return iter(self.files.paths)

    def __len__(self) -> int:
        return len(self.files.paths)
