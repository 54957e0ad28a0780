"""``rspwb query explain FILE``: show how the workbench reads a continuous query;
``rspwb query translate FILE --to DIALECT``: write it in another engine's dialect.

A teaching aid: syntax, R2S, windows (stream, size, slide), dataset mode, static graphs,
query form, projected variables, the SPARQL 1.1 text one evaluation runs, and its algebra.
rdflib is imported only when the command runs (``rspwb --help`` stays fast).
"""

from __future__ import annotations

import argparse
from typing import Any

from rsp_workbench.errors import UserError

SYNTAX_CHOICES = ("auto", "rspql", "csparql", "sparqlstream", "cqels", "sparql")
DIALECTS = ("rspql", "csparql", "cqels", "rspjs")  # = rsp_workbench.query.writer.DIALECTS (kept import-free)


def register(subparsers: Any) -> None:
    query = subparsers.add_parser("query", help="inspect continuous queries (RSP-QL, C-SPARQL, CQELS-QL)")
    actions = query.add_subparsers(dest="query_command", metavar="ACTION")
    explain = actions.add_parser(
        "explain",
        help="parse a query file and show windows, dataset, R2S, rewritten SPARQL and algebra",
        description="Parse a continuous query (syntax auto-detected) and show the model the "
        "workbench evaluates. Template placeholders ${NAME} / %NAME% are filled from --var.",
    )
    _query_file_arguments(explain)
    explain.add_argument("--json", action="store_true", help="print exactly one JSON object")
    explain.set_defaults(func=run_explain)
    translate = actions.add_parser(
        "translate",
        help="write a query in another dialect (rspql, csparql, cqels, rspjs)",
        description="Parse a continuous query (syntax auto-detected) and print it in the dialect an "
        "engine reads: RSP-QL, C-SPARQL, CQELS-QL or RSP-JS's RSP-QL (ON STREAM, sizes in ms).",
    )
    _query_file_arguments(translate)
    translate.add_argument("--to", required=True, choices=DIALECTS, help="the dialect to write")
    translate.set_defaults(func=run_translate)
    query.set_defaults(func=lambda args: _missing_action(query))


def _query_file_arguments(parser: argparse.ArgumentParser) -> None:
    """FILE, --syntax and --var: how every query action reads its query."""
    parser.add_argument("file", metavar="FILE", help="query file (.rq)")
    parser.add_argument("--syntax", choices=SYNTAX_CHOICES, default="auto", help="query syntax (default: auto-detect)")
    parser.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                        help="template variable value (repeatable)")


def _missing_action(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def parse_variables(items: list[str], option: str = "--var") -> dict[str, str]:
    """``--var NAME=VALUE`` options to a mapping; a malformed one names the option."""
    variables: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UserError(f"expected NAME=VALUE, got {item!r}", field=option)
        variables[name.strip()] = value
    return variables


def _load_query_arguments(args: argparse.Namespace) -> Any:
    from rsp_workbench.query.load import load_query

    return load_query(args.file, syntax=None if args.syntax == "auto" else args.syntax,
                      variables=parse_variables(args.var))


def run_explain(args: argparse.Namespace) -> int:
    from rsp_workbench.cli.terminal import print_json

    query = _load_query_arguments(args)
    if args.json:
        print_json(query.describe())
    else:
        print(render_text(query.describe()))
    return 0


def run_translate(args: argparse.Namespace) -> int:
    from rsp_workbench.query.writer import write_query

    print(write_query(_load_query_arguments(args), args.to), end="")
    return 0


def render_text(payload: dict[str, Any]) -> str:
    """The human-readable form of `ContinuousQuery.describe()`."""
    r2s = payload["r2s"].upper() if payload["r2s"] else "not stated (engine default)"
    mode = {
        "named": "named: each window is a named graph (GRAPH <window> in the SPARQL below)",
        "merged": "merged: window contents and FROM graphs form the default graph",
    }[payload["dataset_mode"]]
    rows = [
        ("file", payload["source"] or "-"),
        ("syntax", f"{payload['syntax_label']} ({payload['syntax']})"),
        ("name", payload["name"] or "-"),
        ("output stream", payload["output_stream"] or "-"),
        ("R2S", r2s),
        ("dataset", mode),
        ("form", payload["form"]),
        ("variables", " ".join(f"?{v}" for v in payload["variables"]) or "-"),
    ]
    if payload["computed_every_ms"] is not None:
        rows.append(("computed every", f"{payload['computed_every_ms']} ms"))
    width = max(len(key) for key, _ in rows)
    lines = [f"{key.ljust(width)}  {value}" for key, value in rows]

    lines += ["", "windows"]
    header = ("#", "name", "stream", "size", "slide", "kind", "at")
    table = [header] + [
        (str(i), w["name"], w["stream"], w["size"], w["slide"] + ("" if w["slide_given"] else " (default)"),
         w["kind"], f"{w['line']}:{w['column']}")
        for i, w in enumerate(payload["windows"])
    ]
    widths = [max(len(row[c]) for row in table) for c in range(len(header))]
    if payload["windows"]:
        lines += ["  " + "  ".join(cell.ljust(widths[c]) for c, cell in enumerate(row)).rstrip() for row in table]
    else:
        lines.append("  (none)")

    lines += ["", "static graphs"]
    lines.append("  default: " + (" ".join(f"<{g}>" for g in payload["default_graphs"]) or "(none)"))
    lines.append("  named:   " + (" ".join(f"<{g}>" for g in payload["named_graphs"]) or "(none)"))
    if payload["warnings"]:
        lines += ["", "warnings"] + [f"  {w}" for w in payload["warnings"]]
    lines += ["", "SPARQL 1.1 evaluated on each window snapshot"]
    lines += ["  " + line for line in payload["sparql"].strip("\n").splitlines()]
    if "algebra" in payload:
        lines += ["", "algebra"] + ["  " + line for line in payload["algebra"].splitlines()]
    return "\n".join(lines)
