"""`rspwb oracle` (expected answers) and `rspwb check` (judge a recorded engine output).

Contracts (CLI.md):
  rspwb oracle --stream s.stream --stream-format yabench --query q.rq --var TEMP=50.0 \
      --system yabench-window-close --json
  rspwb check --stream DIR --stream-format csrbench-dir --interval 1000 --query Q.rq \
      --system csparql --engine-output answer.json --engine-output-format csrbench-json \
      --match csrbench --json
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from workbench.core.semantics import PRESETS
from workbench.core.time import parse_duration
from workbench.errors import UserError


MAX_LISTED_T0 = 20  # --json lists every t0's windows up to this many candidates (use --out for all)


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
        "--method", choices=("auto", "fast", "reference"), default="auto",
        help="fast: mappings annotated once, windows derived from them; reference: rdflib per evaluation; "
        "auto (default): fast when the query is inside its fragment",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def register(subparsers: Any) -> None:
    oracle = subparsers.add_parser(
        "oracle", help="compute the expected answers of a continuous query for an engine's semantics",
        description="Compute what an engine with the given semantics should answer, per admissible t0.",
    )
    _common(oracle)
    oracle.add_argument("--out", default=None, help="write the expected answers (and YABench files) into DIR")
    oracle.add_argument("--yabench-files", action="store_true", help="with --out: also write ORACLE_/BOXPLOTS_ files")
    oracle.add_argument("--engine-output", action="append", default=[],
                        help="engine output(s) to measure per window (one per repeated run)")
    oracle.add_argument("--engine-output-format", default=None, help="csrbench-json | yabench-qr | jsonl (default: detect)")
    oracle.add_argument("--gracious", action="store_true", help="reconstruct the borders the engine really used")
    oracle.add_argument("--name", default="engine", help="engine name for YABench files")
    oracle.set_defaults(func=run_oracle)

    check = subparsers.add_parser(
        "check", help="judge a recorded engine output against the oracle (correct/incorrect, first divergence)",
        description="Decide whether an engine's answer is correct for some admissible t0 (RSP-QL Def. 25/26).",
    )
    _common(check)
    check.add_argument("--engine-output", required=True, help="the engine's recorded answer")
    check.add_argument("--engine-output-format", default=None, help="csrbench-json | yabench-qr | jsonl (default: detect)")
    check.add_argument("--match", choices=("strict", "csrbench"), default="strict", help="matching mode (default strict)")
    check.add_argument("--regroup", action="store_true", help="merge responses with the same evaluation time (CQELS)")
    check.add_argument("--tolerance", type=float, default=1e-9, help="relative tolerance for numeric literals")
    check.set_defaults(func=run_check)


def _prepare(args: argparse.Namespace) -> tuple[Any, Any, dict[str, list[Any]], list[tuple[int, ...]], int, int]:
    from workbench.cli.query_cmd import load_query, parse_variables
    from workbench.oracle.run import default_end, resolve_semantics, t0_vectors, with_window

    query = load_query(args.query, syntax=args.syntax, variables=parse_variables(args.var))
    size = parse_duration(args.window_size, field="--window-size") if args.window_size else None
    slide = parse_duration(args.window_slide, field="--window-slide") if args.window_slide else None
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
    streams = _load_streams(args, query, bindings)
    end = parse_duration(args.end, field="--end") if args.end is not None else default_end(query, streams)
    return query, semantics, streams, vectors, t_s, end


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


def _load_streams(args: argparse.Namespace, query: Any, bindings: dict[str | None, str]) -> dict[str, list[Any]]:
    from workbench.streams.readers import ReadReport, detect_format, read_stream

    interval = parse_duration(args.interval, field="--interval")
    loaded: dict[str, list[Any]] = {}
    cache: dict[str, list[Any]] = {}
    for stream_iri in query.streams:
        path = bindings.get(stream_iri) or bindings.get(None)
        if path is None:
            raise UserError(f"no --stream given for <{stream_iri}>", field="--stream")
        if path not in cache:
            if not os.path.exists(path):
                raise UserError("no such file or directory", file=path, field="--stream")
            fmt = args.stream_format or detect_format(path)
            report = ReadReport(source=path)
            cache[path] = list(read_stream(path, fmt, interval_ms=interval, on_disorder=args.on_disorder, report=report))
            summary = report.summary()
            if summary:
                import sys

                sys.stderr.write(f"rspwb: warning: {summary}\n")
        loaded[stream_iri] = cache[path]
    return loaded


def _read_output(path: str, fmt: str | None) -> Any:
    from workbench.responses.readers import detect_response_format, read_responses

    if not os.path.exists(path):
        raise UserError("no such file", file=path, field="--engine-output")
    return read_responses(path, fmt or detect_response_format(path))


def run_oracle(args: argparse.Namespace) -> int:
    from workbench.cli.main import print_json
    from workbench.oracle.run import compute_expected, windows_summary

    query, semantics, streams, vectors, t_s, end = _prepare(args)
    answers = compute_expected(query, streams, semantics, vectors, end=end, method=args.method)
    first = answers[vectors[0]]
    payload: dict[str, Any] = {
        "query": args.query,
        "semantics": semantics.describe(),
        "t0": list(vectors[0]) if len(vectors[0]) > 1 else vectors[0][0],
        "t_s": t_s,
        "end": end,
        "windows": windows_summary(first),
    }
    payload["t0_candidates"] = len(vectors)
    if 1 < len(vectors) <= MAX_LISTED_T0:
        payload["by_t0"] = [
            {"t0": list(v) if len(v) > 1 else v[0], "windows": windows_summary(answers[v])} for v in vectors
        ]
    quality = _quality(args, query, semantics, streams, first) if args.engine_output else None
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
        _write_oracle_dir(Path(args.out), args, answers, vectors, quality)
        payload["out"] = args.out
    if args.json:
        print_json(payload)
    else:
        print(f"{len(payload['windows'])} evaluations for t0 = {payload['t0']} ({len(vectors)} t0 candidates, t_s = {t_s})")
        print(f"  {'start':>10} {'end':>10} {'time':>10} {'triples':>8} {'expected':>8}")
        for row in payload["windows"]:
            print(f"  {row['start']:>10} {row['end']:>10} {row['time']:>10} {row['triples']:>8} {row['expected']:>8}")
    return 0


def _quality(args: argparse.Namespace, query: Any, semantics: Any, streams: dict[str, list[Any]], answer: Any) -> list[Any]:
    from workbench.oracle.run import measure_quality

    return [
        measure_quality(query, semantics, streams, answer, _read_output(path, args.engine_output_format),
                        gracious=args.gracious)
        for path in args.engine_output
    ]


def _write_oracle_dir(out: Path, args: argparse.Namespace, answers: dict[Any, Any], vectors: list[Any], quality: list[Any] | None) -> None:
    """Expected answers as JSON lines per t0 (+ YABench files), written atomically per file."""
    from workbench.oracle.quality import boxplots_text
    from workbench.oracle.run import windows_summary

    out.mkdir(parents=True, exist_ok=True)

    def write(name: str, text: str) -> None:
        partial = out / (name + ".partial")
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, out / name)

    for vector in vectors:
        label = "-".join(str(v) for v in vector)
        lines = []
        for emission in answers[vector].emissions:
            for mapping in emission.bindings.elements():
                lines.append(json.dumps({"time": emission.time, "operation": emission.operation, "binding": dict(sorted(mapping))}))
        write(f"expected_t0_{label}.jsonl", "".join(line + "\n" for line in lines))
        write(f"windows_t0_{label}.json", json.dumps(windows_summary(answers[vector]), indent=1) + "\n")
    if args.yabench_files and quality:
        for index, run in enumerate(quality, 1):
            write(f"ORACLE_{args.name}_{index}", "".join(w.oracle_line() + "\n" for w in run))
        write(f"BOXPLOTS_{args.name}", boxplots_text(args.name, quality))
    elif args.yabench_files:
        raise UserError("ORACLE_/BOXPLOTS_ files measure an engine: give --engine-output", field="--yabench-files")


def run_check(args: argparse.Namespace) -> int:
    from workbench.cli.main import print_json
    from workbench.oracle.compare import Tolerance
    from workbench.oracle.run import check_variables, compute_expected, engine_relations, expected_relations
    from workbench.oracle.verdict import judge

    query, semantics, streams, vectors, t_s, end = _prepare(args)
    log = _read_output(args.engine_output, args.engine_output_format)
    check_variables(log, query)
    answers = compute_expected(query, streams, semantics, vectors, end=end, method=args.method)
    candidates = {
        (v if len(v) > 1 else v[0]): expected_relations(answer) for v, answer in answers.items()
    }
    verdict = judge(
        engine_relations(log, regroup=args.regroup), candidates, mode=args.match,
        comparison_start=t_s, tolerance=Tolerance(rel_tol=args.tolerance),
    )
    payload = verdict.to_json()
    payload["semantics"] = semantics.describe()
    payload["admissible_t0"] = [list(v) if len(v) > 1 else v[0] for v in vectors]
    if args.json:
        print_json(payload)
    else:
        print(f"{payload['verdict']} ({args.match} match)")
        if verdict.correct:
            print(f"  matching t0: {', '.join(map(str, payload['t0']))}")
        elif verdict.first_divergence is not None:
            d = verdict.first_divergence
            print(f"  closest t0 {d.t0}: evaluation #{d.index} (expected at {d.expected_time}, engine at {d.actual_time}): {d.reason}")
            for label, bag in (("missing", d.missing), ("extra", d.extra)):
                for mapping, count in bag.items():
                    print(f"    {label}: {dict(sorted(mapping))}" + (f" ×{count}" if count > 1 else ""))
    return 0
