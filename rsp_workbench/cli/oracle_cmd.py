"""`rspwb oracle` (expected answers) and `rspwb check` (judge a recorded engine output).

Contracts (docs/design/CLI.md):
  rspwb oracle --stream s.stream --stream-format yabench --query q.rq --var TEMP=50.0 \
      --system yabench-window-close --json
  rspwb check --stream DIR --stream-format csrbench-dir --interval 1000 --query Q.rq \
      --system csparql --engine-output answer.json --engine-output-format csrbench-json \
      --match csrbench --json
`rspwb check` exits 0 when the answer is correct, 1 when it is incorrect (after printing the
verdict, so scripts can branch on it) and 2 on a user error.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from dataclasses import dataclass, replace
from typing import Any, Iterable, Iterator, Mapping

from rsp_workbench.core.semantics import PRESETS
from rsp_workbench.core.time import parse_duration
from rsp_workbench.errors import UserError
from rsp_workbench.pipeline.oracle_paths import COLUMNAR_THRESHOLD, METHODS, SPARK_THRESHOLD


MAX_LISTED_T0 = 20  # --json lists every t0's windows up to this many candidates (use --out for all)
#: `rspwb check` exit codes: 0 correct, 1 incorrect (the verdict is still printed), 2 user error
CHECK_INCORRECT = 1


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stream", action="append", required=True, metavar="[IRI=]PATH",
                        help="the stream file or directory; IRI=PATH binds one stream IRI of the query (repeatable)")
    parser.add_argument("--stream-format", default=None, help="yabench | csrbench-dir | nquads | parquet (default: detect)")
    parser.add_argument("--interval", default="1000", help="csrbench-dir: time between data_NN files (default 1000 ms)")
    parser.add_argument("--on-disorder", choices=("error", "warn"), default="error",
                        help="time going backwards in the stream: stop (default) or warn and count")
    parser.add_argument("--query", required=True, help="the continuous query (RSP-QL, C-SPARQL, CQELS-QL, SPARQLstream or plain SPARQL)")
    parser.add_argument("--syntax", default=None, help="force the query syntax (default: detect)")
    parser.add_argument("--var", action="append", default=[], metavar="NAME=VALUE", help="fill a ${NAME} template variable")
    parser.add_argument("--window-size", default=None, help="window size for a window-less query, or to override the query's")
    parser.add_argument("--window-slide", default=None, help="window slide (default: the size)")
    parser.add_argument("--system", choices=sorted(PRESETS), default=None,
                        help="preset semantics (CSRBench Table 1; YABench oracle conventions)")
    group = parser.add_argument_group("semantics parameters (override the preset)")
    group.add_argument("--border", default=None, help="closed-open | open-closed | closed")
    group.add_argument("--report", default=None, help="report policy, e.g. 'window-close & non-empty'")
    group.add_argument("--tick", default=None, help="tuple | time | batch")
    group.add_argument("--r2s", default=None, help="rstream | istream | dstream")
    group.add_argument("--empty-notification", dest="empty_notification", action="store_true", default=None)
    group.add_argument("--no-empty-notification", dest="empty_notification", action="store_false")
    group.add_argument("--time-unit", default=None, help="ms | 100ms | s | m | h (granularity of admissible t0)")
    group.add_argument("--leading-partial", dest="leading_partial", action="store_true", default=None)
    group.add_argument("--active-window", default=None, help="earliest (SECRET) | latest (RSP-QL present window)")
    parser.add_argument("--t0", default=None, help="VALUE (ms or with unit) or 'all' (default: the preset's)")
    parser.add_argument("--registration", default="0", help="query registration time a (default 0)")
    parser.add_argument("--end", default=None, help="last instant to evaluate (default: last element + window size)")
    parser.add_argument(
        "--method", choices=METHODS, default="auto",
        help="fast: mappings annotated once, windows derived from them (Python; streams over "
        f"{COLUMNAR_THRESHOLD:,} elements read as Arrow columns, joins in Arrow); spark: the same on Spark "
        "(joins as DataFrame jobs, all t0 vectorised; starts a JVM); reference: rdflib per evaluation; "
        f"auto (default): spark for streams over {SPARK_THRESHOLD:,} elements, else fast, and reference for "
        "queries outside the fast fragment. --json reports the path that ran (method, engine, method_reason)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def register(subparsers: Any) -> None:
    oracle = subparsers.add_parser(
        "oracle", help="compute the expected answers of a continuous query for an engine's semantics",
        description="Compute what an engine with the given semantics should answer, per admissible t0.",
    )
    _common(oracle)
    oracle.add_argument("--out", default=None, help="write the expected answers (and YABench files) into DIR "
                        "(built as DIR.partial and renamed when complete; a new, empty or earlier oracle folder)")
    oracle.add_argument("--yabench-files", action="store_true", help="with --out: also write ORACLE_/BOXPLOTS_ files")
    oracle.add_argument("--engine-output", action="append", default=[],
                        help="engine output(s) to measure per window (one per repeated run)")
    oracle.add_argument("--engine-output-format", default=None, help="csrbench-json | yabench-qr | jsonl (default: detect)")
    oracle.add_argument("--gracious", action="store_true", help="reconstruct the borders the engine really used")
    oracle.add_argument("--name", default="engine", help="engine name for YABench files")
    oracle.set_defaults(func=run_oracle)

    check = subparsers.add_parser(
        "check", help="judge a recorded engine output against the oracle (correct/incorrect, first divergence)",
        description="Decide whether an engine's answer is correct for some admissible t0 (RSP-QL Def. 25/26). "
        "Exit codes: 0 correct, 1 incorrect, 2 user error.",
    )
    _common(check)
    check.add_argument("--engine-output", required=True, help="the engine's recorded answer")
    check.add_argument("--engine-output-format", default=None, help="csrbench-json | yabench-qr | jsonl (default: detect)")
    check.add_argument("--match", choices=("strict", "csrbench"), default="strict", help="matching mode (default strict)")
    check.add_argument("--regroup", action="store_true", help="merge responses with the same evaluation time (CQELS)")
    check.add_argument("--tolerance", type=float, default=1e-9, help="relative tolerance for numeric literals")
    check.set_defaults(func=run_check)


@dataclass
class Prepared:
    """What `rspwb oracle` and `rspwb check` compute from: query, semantics, t0s, streams."""

    query: Any
    semantics: Any
    vectors: list[tuple[int, ...]]
    t_s: int
    end: int
    inputs: "StreamInputs"
    t0_option: str | int | None = None
    registration: int = 0


def _prepare(args: argparse.Namespace) -> Prepared:
    from rsp_workbench.cli.query_cmd import load_query, parse_variables
    from rsp_workbench.oracle.run import resolve_semantics, t0_vectors, with_window

    query = load_query(args.query, syntax=args.syntax, variables=parse_variables(args.var))
    size = parse_duration(args.window_size, field="--window-size") if args.window_size else None
    slide = parse_duration(args.window_slide, field="--window-slide") if args.window_slide else None
    for value, option in ((size, "--window-size"), (slide, "--window-slide")):
        if value == 0:  # blame the option given, not the slide the size defaults it to
            raise UserError("must be greater than 0", field=option)
    bindings = _stream_bindings(args.stream)
    default_stream = next((iri for iri in bindings if iri), None)
    query = with_window(query, size, slide, default_stream)
    overrides = {
        "border": args.border, "report": args.report, "tick": args.tick, "r2s": args.r2s,
        "empty_notification": args.empty_notification, "time_unit": args.time_unit,
        "leading_partial": args.leading_partial, "active_window": args.active_window,
    }
    try:
        semantics = resolve_semantics(args.system, overrides)
    except UserError as error:
        raise UserError(error.message, field=f"--{(error.field or '').replace('_', '-')}") from None
    registration = parse_duration(args.registration, field="--registration")
    option: str | int | None = None
    if args.t0 is not None:
        option = "all" if args.t0 == "all" else parse_duration(args.t0, field="--t0")
    vectors, t_s = t0_vectors(query, semantics, option, registration)
    inputs = StreamInputs(args, query, bindings)
    end = parse_duration(args.end, field="--end") if args.end is not None else inputs.default_end()
    return Prepared(query, semantics, vectors, t_s, end, inputs, option, registration)


def _stream_bindings(values: list[str]) -> dict[str | None, str]:
    bindings: dict[str | None, str] = {}
    for value in values:
        head, sep, tail = value.partition("=")
        if sep and ":" in head and not os.path.exists(value):
            bindings[head.strip("<>")] = tail
        else:
            if None in bindings:
                raise UserError("give one unnamed --stream, or bind each stream IRI with IRI=PATH", field="--stream")
            bindings[None] = value
    return bindings


def _estimated_elements(path: str) -> int:
    """About how many elements (lines) a text stream holds: its size over the mean length of
    its first lines (a directory: the sum over its files). Enough to choose a path."""
    if os.path.isdir(path):
        return sum(_estimated_elements(os.path.join(path, name)) for name in os.listdir(path)
                   if os.path.isfile(os.path.join(path, name)))
    size = os.path.getsize(path)
    with open(path, "rb") as handle:
        head = handle.read(1 << 16)
    if path.endswith(".gz"):
        return size * 10 // 150  # compressed: roughly 10:1, ~150 bytes a line
    lines = head.count(b"\n")
    return size if not lines else size * lines // len(head)


class StreamInputs:
    """The query's streams: their files and formats, elements read only when needed.

    The Spark path reads Parquet stream files itself, so a big Parquet stream is never
    loaded into Python objects unless a step needs them (engine-output quality).
    """

    def __init__(self, args: argparse.Namespace, query: Any, bindings: dict[str | None, str]) -> None:
        from rsp_workbench.streams.readers import detect_format

        self.args, self.query = args, query
        self.interval = parse_duration(args.interval, field="--interval")
        self.paths: dict[str, str] = {}
        self.formats: dict[str, str] = {}
        for stream_iri in query.streams:
            path = bindings.get(stream_iri) or bindings.get(None)
            if path is None:
                raise UserError(f"no --stream given for <{stream_iri}>", field="--stream")
            if not os.path.exists(path):
                raise UserError("no such file or directory", file=path, field="--stream")
            self.paths[stream_iri] = path
            self.formats[stream_iri] = args.stream_format or detect_format(path)
            if self.formats[stream_iri] == "parquet":  # footer and schema now: a clear error before Spark starts
                from rsp_workbench.streams.parquet import check_parquet_stream

                check_parquet_stream(path)
        self._elements: dict[str, list[Any]] | None = None
        self._parquet: dict[str, str] = {}  # path -> temporary Parquet copy (`_converted`)
        self._folder: Any = None
        self._warned: set[str] = set()  # stream files whose read summary was printed (read twice at most)
        self._columns: dict[str, Any] | None = None  # `columns`: the streams as Arrow columns
        self._predicates: frozenset[str] | None = None

    def elements(self) -> dict[str, list[Any]]:
        """Every stream's elements (read once; disorder per ``--on-disorder``)."""
        if self._elements is None:
            loaded: dict[str, list[Any]] = {}
            cache: dict[str, list[Any]] = {}
            for stream_iri, path in self.paths.items():
                if path not in cache:
                    cache[path] = list(self._read(path))
                loaded[stream_iri] = cache[path]
            self._elements = loaded
        return self._elements

    def _read(self, path: str) -> Iterator[Any]:
        """One stream file's elements, streaming; with ``--on-disorder warn`` sorted by time (stable: windows
        are defined on application time) and the disorder reported once on stderr."""
        from rsp_workbench.streams.readers import ReadReport, read_stream

        report = ReadReport(source=path)
        elements: Iterable[Any] = read_stream(path, self._format_of(path), interval_ms=self.interval,
                                              on_disorder=self.args.on_disorder, report=report)
        if self.args.on_disorder == "warn":
            elements = sorted(elements, key=lambda element: element.t)
        yield from elements
        self._warn(path, report)

    def _parquet_only(self) -> bool:
        return self._elements is None and all(fmt == "parquet" for fmt in self.formats.values())

    def size(self) -> int:
        """Elements over all distinct stream files, to choose the oracle's path: counted when
        already read or converted, from the footer for Parquet, else estimated from the
        file's size and its first lines (nothing is read in full)."""
        if self._elements is not None:
            return sum(len(elements) for elements in {id(e): e for e in self._elements.values()}.values())
        if self._columns is not None:
            return sum(len(c.times) for c in {id(c): c for c in self._columns.values()}.values())
        import pyarrow.parquet as pq

        total = 0
        for path in set(self.paths.values()):
            if path in self._parquet or self._format_of(path) == "parquet":
                total += pq.ParquetFile(self._parquet.get(path, path)).metadata.num_rows
            else:
                total += _estimated_elements(path)
        return total

    def columns(self, predicates: frozenset[str] | None) -> dict[str, Any]:
        """Every stream as `rsp_workbench.oracle.columnar.StreamColumns` (read once; only the
        elements with one of ``predicates`` keep their terms)."""
        if self._columns is None or self._predicates != predicates:
            from rsp_workbench.oracle.columnar import read_columns
            from rsp_workbench.streams.readers import ReadReport

            cache: dict[str, Any] = {}
            loaded: dict[str, Any] = {}
            for stream_iri, path in self.paths.items():
                if path not in cache:
                    report = ReadReport(source=path)
                    cache[path] = read_columns(path, self._format_of(path), predicates, interval_ms=self.interval,
                                               on_disorder=self.args.on_disorder, report=report)
                    self._warn(path, report)
                loaded[stream_iri] = cache[path]
            self._columns, self._predicates = loaded, predicates
        return self._columns

    def _warn(self, path: str, report: Any) -> None:
        summary = report.summary()
        if summary and path not in self._warned:
            self._warned.add(path)
            note = "; the oracle sorts them by time" if report.disorders else ""
            sys.stderr.write(f"rspwb: warning: {summary}{note}\n")

    def _format_of(self, path: str) -> str:
        return next(self.formats[iri] for iri, p in self.paths.items() if p == path)

    def _converted(self, path: str) -> str:
        """``path`` as a temporary workbench Parquet stream (written once, streaming)."""
        import tempfile

        from rsp_workbench.streams.parquet import ParquetStreamWriter

        if path not in self._parquet:
            if self._folder is None:
                self._folder = tempfile.TemporaryDirectory(prefix="rspwb-oracle-")
            target = os.path.join(self._folder.name, f"stream{len(self._parquet)}.parquet")
            with ParquetStreamWriter(target) as writer:
                writer.write_all(self._read(path))
            self._parquet[path] = target
        return self._parquet[path]

    def default_end(self) -> int:
        """`rsp_workbench.oracle.run.default_end` (Parquet: the last ``t`` read with pyarrow)."""
        from rsp_workbench.oracle.run import default_end, end_after

        if self._elements is None and self.args.method in ("auto", "spark", "fast"):  # no element list in memory
            if self._parquet_only() and self.args.on_disorder == "error" or self.args.method == "spark":
                from rsp_workbench.streams.parquet import parquet_stream_extent

                last = [parquet_stream_extent(path)[1] for path in set(self.parquet_sources().values())]
                return end_after(self.query, max((t for t in last if t is not None), default=0))
            from rsp_workbench.pipeline.oracle_paths import COLUMNAR_THRESHOLD

            if self.size() > COLUMNAR_THRESHOLD:  # read once, as columns (the columnar path's input)
                from rsp_workbench.oracle.columnar import query_predicates

                columns = self.columns(query_predicates(self.query))
                last = [c.last_time for c in columns.values()]
                return end_after(self.query, max((t for t in last if t is not None), default=0))
        return default_end(self.query, self.elements())

    def parquet_sources(self, folder: str | None = None) -> dict[str, str]:
        """Per stream IRI, a Parquet stream file Spark can read (others converted, streaming,
        into a temporary folder of this object's own: ``folder`` is not needed)."""
        return {
            stream_iri: path if self.formats[stream_iri] == "parquet" and self.args.on_disorder == "error"
            else self._converted(path)
            for stream_iri, path in self.paths.items()
        }


def _read_output(path: str, fmt: str | None) -> Any:
    from rsp_workbench.responses.readers import detect_response_format, read_responses

    if not os.path.exists(path):
        raise UserError("no such file", file=path, field="--engine-output")
    return read_responses(path, fmt or detect_response_format(path))


def expected(args: argparse.Namespace, prepared: Prepared) -> tuple[Mapping[tuple[int, ...], Any], Any]:
    """The expected answers per t0 vector and the `OracleMethod` that computed them
    (`rsp_workbench.pipeline.oracle_paths`: the ``--method`` rule shared with ``rspwb run``)."""
    from rsp_workbench.pipeline.oracle_paths import expected_by_method

    return expected_by_method(
        prepared.query, prepared.semantics, prepared.vectors, method=args.method, size=prepared.inputs.size,
        elements=prepared.inputs.elements, parquet_sources=prepared.inputs.parquet_sources, end=prepared.end,
        keep_results=len(prepared.vectors) <= MAX_LISTED_T0, columns=prepared.inputs.columns,
    )


def _method_fields(used: Any, json_mode: bool) -> dict[str, Any]:
    """``method``/``engine``/``method_reason`` for the JSON output; a note on stderr when a path fell back."""
    if used.reason and not json_mode:
        sys.stderr.write(f"rspwb: note: {used.reason} ({used.engine}, {used.path} path)\n")
    return {"method": used.path, "engine": used.engine, "method_reason": used.reason}


def _windows(answers: Any, vector: tuple[int, ...]) -> Iterator[dict[str, Any]]:
    """Per evaluation of one t0: start, end, time, triples, expected, ... (streamed: a tuple
    tick gives one row per element)."""
    from rsp_workbench.oracle.run import windows_summary

    if hasattr(answers, "summary_rows"):  # the Spark job's answers: no need to materialise bindings
        return answers.summary_rows(vector)
    answer = answers[vector]
    if hasattr(answer, "summary_rows"):  # a `DeltaAnswer`: rows straight from its arrays
        return answer.summary_rows()
    return iter(windows_summary(answer))


# `rsp_workbench.oracle.deltas.SUMMARY_KEYS`, repeated so that the CLI's start does not import numpy
_ROW_KEYS = ("start", "end", "time", "triples", "expected", "relation_size", "emitted")
_ROW_TEMPLATE = ('{"start": %d, "end": %d, "time": %d, "triples": %d, "expected": %d, "relation_size": %d, '
                 '"emitted": %s}')


def _row_json(row: dict[str, Any]) -> str:
    """``json.dumps(row)`` for a window row of plain ints and bools (several times faster)."""
    import json

    values = list(row.values())
    if tuple(row) != _ROW_KEYS or not all(type(v) is int for v in values[:6]):
        return json.dumps(row)
    return _ROW_TEMPLATE % (*values[:6], "true" if row["emitted"] else "false")


def _write_json(payload: dict[str, Any], out: Any = None) -> None:
    """`rsp_workbench.cli.main.print_json` for the oracle's payload, whose ``windows`` (and
    ``by_t0[].windows``) are iterators: rows are written as they come, never all held."""
    import json

    out = out or sys.stdout

    def rows(items: Any, indent: str) -> None:
        out.write("[")
        lead = f"\n{indent}  "
        if isinstance(items, _LazyRows):
            items = items.resolved()
        if hasattr(items, "chunks"):  # columns of many rows (`rsp_workbench.oracle.deltas.SummaryRows`)
            template = lead + _ROW_TEMPLATE
            first = True
            for chunk in items.chunks():
                flags = ["true" if flag else "false" for flag in chunk[6]]
                parts = list(map(template.__mod__, zip(*chunk[:6], flags)))
                if parts:
                    out.write(("" if first else ",") + ",".join(parts))
                    first = False
            out.write(f"\n{indent}]")
            return
        batch: list[str] = []
        for n, row in enumerate(items):
            batch.append(("," if n else "") + lead + _row_json(row))
            if len(batch) >= 4096:
                out.write("".join(batch))
                batch.clear()
        out.write("".join(batch) + f"\n{indent}]")

    out.write("{")
    for n, (key, value) in enumerate(payload.items()):
        out.write(("," if n else "") + "\n  " + json.dumps(key) + ": ")
        if key == "windows":
            rows(value, "  ")
        elif key == "by_t0":
            out.write("[")
            for i, entry in enumerate(value):
                out.write(("," if i else "") + '\n    {"t0": ' + json.dumps(entry["t0"]) + ', "windows": ')
                rows(entry["windows"], "    ")
                out.write("}")
            out.write("\n  ]")
        else:
            out.write(json.dumps(value))
    out.write("\n}\n")


def run_oracle(args: argparse.Namespace) -> int:
    from rsp_workbench.oracle.output import StagedFolder

    if args.yabench_files and not args.engine_output:
        raise UserError("ORACLE_/BOXPLOTS_ files measure an engine: give --engine-output", field="--yabench-files")
    if args.out:
        StagedFolder(args.out).check_target()  # refuse a foreign folder before computing
    prepared = _prepare(args)
    vectors = prepared.vectors
    answers, used = expected(args, prepared)
    payload: dict[str, Any] = {
        "query": args.query,
        "semantics": prepared.semantics.describe(),
        "t0": list(vectors[0]) if len(vectors[0]) > 1 else vectors[0][0],
        "t_s": prepared.t_s,
        "end": prepared.end,
        "windows": _windows(answers, vectors[0]),
    }
    payload["t0_candidates"] = len(vectors)
    payload.update(_method_fields(used, args.json))
    if 1 < len(vectors) <= MAX_LISTED_T0:  # one t0's rows at a time, when printed
        payload["by_t0"] = [{"t0": list(v) if len(v) > 1 else v[0], "windows": _LazyRows(answers, v)} for v in vectors]
    quality = _quality(args, prepared, answers[vectors[0]]) if args.engine_output else None
    if quality is not None:
        payload["quality"] = [
            [
                {"precision": w.precision, "recall": w.recall, "actual_size": w.actual_size,
                 "expected_size": w.expected_size, "window_triples": w.window_triples, "start": w.start,
                 "end": w.end, "delay": w.delay, "reconstructed_start": w.reconstructed_start,
                 "reconstructed_end": w.reconstructed_end}
                for w in run
            ]
            for run in quality
        ]
    if args.out:
        write_oracle_dir(args.out, args, prepared, answers, used, quality)
        payload["out"] = args.out
    if args.json:
        _write_json(payload)
    else:
        _print_table(payload["windows"] if len(vectors) else [], payload["t0"], len(vectors), prepared.t_s, used,
                     args.out)
    return 0


TABLE_ROWS = 40  # the plain-text table is for reading: a BIG stream has millions of evaluations


def _print_table(windows: Iterable[dict[str, Any]], t0: Any, candidates: int, t_s: int, used: Any,
                 out: str | None) -> None:
    """The first t0's evaluations as a table, at most ``TABLE_ROWS`` rows, then how many were left."""
    length = getattr(windows, "length", None)  # `SummaryRows` know their count: no row made to count it
    rest = iter(windows)
    rows = list(itertools.islice(rest, TABLE_ROWS))
    left = length - len(rows) if length is not None else sum(1 for _ in rest)
    print(f"{len(rows) + left:,} evaluations for t0 = {t0} ({candidates} t0 candidates, "
          f"t_s = {t_s}; {used.engine} {used.path} path)")
    print(f"  {'start':>10} {'end':>10} {'time':>10} {'triples':>8} {'expected':>8}")
    for row in rows:
        print(f"  {row['start']:>10} {row['end']:>10} {row['time']:>10} {row['triples']:>8} {row['expected']:>8}")
    if left:
        where = f"{out} holds every t0's" if out else "--json prints them all, --out DIR writes every t0's"
        print(f"  … {left:,} more evaluations ({where})")


class _LazyRows:
    """One t0's window rows, computed when `_write_json` reaches them."""

    def __init__(self, answers: Any, vector: tuple[int, ...]) -> None:
        self.answers, self.vector = answers, vector
        self._rows: Iterator[dict[str, Any]] | None = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self

    def __next__(self) -> dict[str, Any]:
        return next(self.resolved())

    def resolved(self) -> Iterator[dict[str, Any]]:
        if self._rows is None:
            self._rows = _windows(self.answers, self.vector)
        return self._rows


def _quality(args: argparse.Namespace, prepared: Prepared, answer: Any) -> list[Any]:
    from rsp_workbench.oracle.run import measure_quality

    return [
        measure_quality(prepared.query, prepared.semantics, prepared.inputs.elements(), answer,
                        _read_output(path, args.engine_output_format), gracious=args.gracious)
        for path in args.engine_output
    ]


def write_oracle_dir(out: str, args: argparse.Namespace, prepared: Prepared, answers: Mapping[Any, Any], used: Any,
                     quality: list[Any] | None, *, after_file: Any = None) -> list[str]:
    """``--out DIR``: the expected answers per t0 (+ YABench files), complete or not at all
    (`rsp_workbench.oracle.output`: built in ``DIR.partial/``, renamed at the end)."""
    from rsp_workbench.oracle.output import write_expected_answers

    manifest = {
        "query": args.query, "semantics": prepared.semantics.describe(), "t_s": prepared.t_s, "end": prepared.end,
        "t0_candidates": len(prepared.vectors), "method": used.path, "engine": used.engine,
    }
    return write_expected_answers(out, answers, prepared.vectors, manifest=manifest,
                                  yabench_runs=quality if args.yabench_files else None, engine_name=args.name,
                                  after_file=after_file, layout="grids",
                                  semantics=replace(prepared.semantics, r2s=prepared.query.r2s or prepared.semantics.r2s))


def run_check(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from rsp_workbench.cli.terminal import print_json
    from rsp_workbench.oracle.judge import JudgeOptions, RecordedRun, judge
    from rsp_workbench.oracle.run import OracleMethod, check_variables

    prepared = _prepare(args)
    log = _read_output(args.engine_output, args.engine_output_format)
    check_variables(log, prepared.query)  # an output for another query is a user error here

    def expected_here(query: Any, streams: Any, semantics: Any, vectors: Any, static: Any, end: int,
                      report_window: int) -> tuple[Mapping[tuple[int, ...], Any], Any]:
        """`expected` (the CLI's ``--method`` rule, Spark over the threshold) for the judge's t0 vectors."""
        return expected(args, replace(prepared, vectors=list(vectors), end=end))

    run = RecordedRun(query=prepared.query, streams=_LazyStreams(prepared.inputs), log=log,
                      semantics=prepared.semantics, end=prepared.end, end_fixed=args.end is not None)
    options = JudgeOptions(t0=prepared.t0_option, registration=prepared.registration, match=args.match,
                           regroup=True if args.regroup else None, rel_tol=args.tolerance, quality=False)
    judgement = judge(run, options, expected_here)
    payload = dict(judgement.payload)
    used = OracleMethod(payload.pop("method"), payload.pop("method_engine"), payload.pop("method_reason"))
    for key in ("admissible_t0", "quality_t0", "end"):
        payload.pop(key, None)
    payload["admissible_t0"] = [list(v) if len(v) > 1 else v[0] for v in prepared.vectors]
    payload.update(_method_fields(used, args.json))
    if args.json:
        print_json(payload)
    else:
        print(f"{payload['verdict']} ({args.match} match)")
        if payload.get("relations_not_judged"):
            print(f"  {payload['relations_not_judged']} relations after --end {prepared.end} ms not judged")
        if payload["verdict"] == "correct":
            print(f"  matching t0: {', '.join(map(str, payload['t0']))}")
        elif payload.get("first_divergence") is not None:
            d = payload["first_divergence"]
            print(f"  closest t0 {d['t0']}: evaluation #{d['index']} (expected at {d['expected_time']}, "
                  f"engine at {d['actual_time']}): {d['reason']}")
            for label, rows in (("missing", d["missing"]), ("extra", d["extra"])):
                for row in rows:
                    count = row.get("count", 1)
                    print(f"    {label}: {row['binding']}" + (f" ×{count}" if count > 1 else ""))
    return 0 if payload["verdict"] == "correct" else CHECK_INCORRECT


class _LazyStreams(Mapping[str, Any]):
    """The query's streams by IRI, read only if the judge needs elements (the Spark path reads Parquet itself)."""

    def __init__(self, inputs: StreamInputs) -> None:
        self.inputs = inputs

    def __getitem__(self, iri: str) -> Any:
        return self.inputs.elements()[iri]

    def __iter__(self) -> Any:
        return iter(self.inputs.paths)

    def __len__(self) -> int:
        return len(self.inputs.paths)
