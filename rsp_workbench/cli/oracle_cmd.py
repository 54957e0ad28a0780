"""`rspwb oracle` (expected answers) and `rspwb check` (judge a recorded engine output).

Contracts (docs/design/CLI.md):
  rspwb oracle --stream s.stream --stream-format yabench --query q.rq --var TEMP=50.0 \
      --system yabench-window-close --json
  rspwb check --stream DIR --stream-format csrbench-dir --interval 1000 --query Q.rq \
      --system csparql --engine-output answer.json --engine-output-format csrbench-json \
      --match csrbench --json
`rspwb check` exits 0 when the answer is correct, 1 when it is incorrect (after printing the
verdict, so scripts can branch on it) and 2 on a user error. The work is
`rsp_workbench.oracle.commands` (`oracle_answers`, `check_answer`): here options become its
parameters, and its results lines or JSON.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from rsp_workbench.core.semantics import PRESETS
from rsp_workbench.errors import UserError
from rsp_workbench.oracle.paths import COLUMNAR_THRESHOLD, METHODS, SPARK_THRESHOLD

if TYPE_CHECKING:  # pragma: no cover
    from rsp_workbench.oracle.commands import ExpectedResult
    from rsp_workbench.oracle.run import OracleMethod

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


def _common_values(args: argparse.Namespace) -> dict[str, Any]:
    """The options both commands share, as `rsp_workbench.oracle.commands`' parameters."""
    from rsp_workbench.cli.query_cmd import parse_variables

    return {
        "streams": _stream_bindings(args.stream), "query": args.query, "stream_format": args.stream_format,
        "interval": args.interval, "on_disorder": args.on_disorder, "syntax": args.syntax,
        "variables": parse_variables(args.var), "window_size": args.window_size or None,
        "window_slide": args.window_slide or None, "system": args.system,
        "overrides": {
            "border": args.border, "report": args.report, "tick": args.tick, "r2s": args.r2s,
            "empty_notification": args.empty_notification, "time_unit": args.time_unit,
            "leading_partial": args.leading_partial, "active_window": args.active_window,
        },
        "t0": args.t0, "registration": args.registration, "end": args.end, "method": args.method,
        "spark": _spark_job,
    }


def _spark_job(*args: Any, **kwargs: Any) -> Any:
    """`rsp_workbench.pipeline.oracle_job.spark_expected`, imported only when a path needs Spark."""
    from rsp_workbench.pipeline.oracle_job import spark_expected

    return spark_expected(*args, **kwargs)


def _stream_bindings(values: list[str]) -> dict[str | None, str]:
    """``--stream [IRI=]PATH`` options: a path per stream IRI, the key None for the unnamed one."""
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


def _method_fields(used: "OracleMethod", json_mode: bool) -> dict[str, Any]:
    """``method``/``engine``/``method_reason`` for the JSON output; a note on stderr when a path fell back."""
    if used.reason and not json_mode:
        sys.stderr.write(f"rspwb: note: {used.reason} ({used.engine}, {used.path} path)\n")
    return {"method": used.path, "engine": used.engine, "method_reason": used.reason}


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
    from rsp_workbench.oracle.commands import MAX_LISTED_T0, oracle_answers

    result = oracle_answers(**_common_values(args), engine_outputs=args.engine_output,
                            engine_output_format=args.engine_output_format, gracious=args.gracious,
                            out=args.out, yabench_files=args.yabench_files, engine_name=args.name)
    setup = result.setup
    vectors = setup.vectors
    payload: dict[str, Any] = {
        "query": args.query,
        "semantics": setup.semantics.describe(),
        "t0": list(vectors[0]) if len(vectors[0]) > 1 else vectors[0][0],
        "t_s": setup.t_s,
        "end": setup.end,
        "windows": result.window_rows(vectors[0]),
    }
    payload["t0_candidates"] = len(vectors)
    payload.update(_method_fields(result.method, args.json))
    if 1 < len(vectors) <= MAX_LISTED_T0:  # one t0's rows at a time, when printed
        payload["by_t0"] = [{"t0": list(v) if len(v) > 1 else v[0], "windows": _LazyRows(result, v)} for v in vectors]
    if result.quality is not None:
        payload["quality"] = [
            [
                {"precision": w.precision, "recall": w.recall, "actual_size": w.actual_size,
                 "expected_size": w.expected_size, "window_triples": w.window_triples, "start": w.start,
                 "end": w.end, "delay": w.delay, "reconstructed_start": w.reconstructed_start,
                 "reconstructed_end": w.reconstructed_end}
                for w in run
            ]
            for run in result.quality
        ]
    if result.out:
        payload["out"] = args.out
    if args.json:
        _write_json(payload)
    else:
        _print_table(payload["windows"] if len(vectors) else [], payload["t0"], len(vectors), setup.t_s,
                     result.method, args.out)
    return 0


TABLE_ROWS = 40  # the plain-text table is for reading: a BIG stream has millions of evaluations


def _print_table(windows: Iterable[dict[str, Any]], t0: Any, candidates: int, t_s: int, used: "OracleMethod",
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

    def __init__(self, result: "ExpectedResult", vector: tuple[int, ...]) -> None:
        self.result, self.vector = result, vector
        self._rows: Iterator[dict[str, Any]] | None = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self

    def __next__(self) -> dict[str, Any]:
        return next(self.resolved())

    def resolved(self) -> Iterator[dict[str, Any]]:
        if self._rows is None:
            self._rows = self.result.window_rows(self.vector)
        return self._rows


def run_check(args: argparse.Namespace) -> int:
    from rsp_workbench.cli.terminal import print_json
    from rsp_workbench.oracle.commands import check_answer

    result = check_answer(**_common_values(args), engine_output=args.engine_output,
                          engine_output_format=args.engine_output_format, match=args.match, regroup=args.regroup,
                          tolerance=args.tolerance)
    payload = dict(result.payload)
    payload.update(_method_fields(result.method, args.json))
    if args.json:
        print_json(payload)
    else:
        print(f"{payload['verdict']} ({args.match} match)")
        if payload.get("relations_not_judged"):
            print(f"  {payload['relations_not_judged']} relations after --end {result.setup.end} ms not judged")
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
    return 0 if result.correct else CHECK_INCORRECT
