"""`rspwb report DIR`: a result bundle's summary again, as a table, one JSON object or a shareable HTML file.

Contract (docs/design/CLI.md):
  rspwb report DIR --json   → {"runs": [{"engine", "query", "verdict", "precision", "recall",
                                         "responses", "kpi_samples", "peak_rss_mb", …}, …]}
``--html FILE`` writes one self-contained HTML report (`rsp_workbench.results.html_report`); the
table (or the JSON object) is still printed. DIR that is not a bundle, a bundle another run is
still writing or one of a newer format: exit 2 with one line naming the file.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    report = subparsers.add_parser(
        "report", help="print the summary of a result bundle again (or write it as an HTML report)",
        description="Print a result bundle's summary table (or one JSON object with --json). A YABench test "
                    "folder reads as a read-only bundle: one run per results/oracle/ORACLE_<test><n> file. "
                    "--html FILE also writes one self-contained HTML report (inline SVG charts, no network).",
    )
    report.add_argument("dir", metavar="DIR",
                        help="the result bundle folder, or a published YABench test folder (config.json + results/) "
                             "or a folder of several engines' test folders")
    report.add_argument("--json", action="store_true", help="print one JSON object with a \"runs\" list")
    report.add_argument("--html", metavar="FILE", default=None,
                        help="also write the report as one self-contained HTML file (replaced if it exists)")
    report.set_defaults(func=report_command)


def report_command(args: argparse.Namespace) -> int:
    from rsp_workbench.cli.terminal import print_json
    from rsp_workbench.results.bundle import format_table
    from rsp_workbench.results.reader import open_bundle

    bundle = open_bundle(args.dir)
    if args.html:
        from rsp_workbench.results.html_report import write_report

        write_report(bundle, args.html)
    if args.json:
        print_json(bundle.to_json())
    else:
        print(format_table(bundle))
    damaged = [row for row in bundle.rows if row.get("status") in ("missing", "unreadable")]
    if damaged:  # what is there is shown; the exit code and one line say that something is not
        sys.stderr.write(f"rspwb: {args.dir}: {len(damaged)} of {len(bundle.rows)} runs missing or damaged; "
                         f"{damaged[0].get('run_id')}: {damaged[0].get('error')}\n")
        return 1
    return 0
