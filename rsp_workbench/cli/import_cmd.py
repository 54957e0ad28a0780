"""`rspwb import yabench-config DIR --out exp.yaml`: a YABench test folder as an experiment file.

Contract (docs/design/CLI.md): the written file is one that ``rspwb validate`` accepts; the engine query is
copied next to it (``queries/<folder>.rq``, ``${…}`` placeholders kept: they are the experiment's
variables). What could not be mapped is listed in a comment at the top of the file and on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    command = subparsers.add_parser(
        "import", help="turn another tool's configuration into an experiment file",
        description="Import another tool's test configuration as a workbench experiment file.",
    )
    kinds = command.add_subparsers(dest="kind", metavar="KIND", required=True)
    yabench = kinds.add_parser(
        "yabench-config", help="a YABench test folder (config.json + engine.query) → experiment YAML",
        description="Write an experiment file for a YABench test folder: vars → variables, tests → cases, "
                    "enginename/WPOLICY → presets, graceful → gracious oracle; engine.query is copied to "
                    "queries/ next to the output.",
    )
    yabench.add_argument("dir", metavar="DIR", help="the YABench test folder (config.json, engine.query)")
    yabench.add_argument("--out", required=True, metavar="FILE", help="the experiment file to write (YAML)")
    yabench.add_argument("--force", action="store_true", help="replace FILE and the query file if they exist")
    yabench.set_defaults(func=import_yabench_command)


def import_yabench_command(args: argparse.Namespace) -> int:
    from rsp_workbench.experiment.yabench_config import import_targets, write_imported_experiment

    imported = write_imported_experiment(Path(args.dir), Path(args.out), force=args.force)
    out, query_path = import_targets(Path(args.dir), Path(args.out))
    for warning in imported.warnings:
        sys.stderr.write(f"rspwb: warning: {warning}\n")
    for note in imported.unmapped:
        sys.stderr.write(f"rspwb: not mapped: {note}\n")
    sys.stderr.write(f"rspwb: wrote {out} and {query_path}\n")
    return 0
