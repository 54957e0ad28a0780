"""`rspwb`: the workbench's operations, headless, for scripts, clusters and CI.

Each subcommand lives in its own module with ``register(subparsers)``; the module is
imported when the parser is built, but heavy dependencies (rdflib, pyspark) are imported
only inside the command functions, so ``rspwb --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from rsp_workbench import __version__
from rsp_workbench.cli.terminal import forget_stray_interrupt, stop_signals_as_interrupt
from rsp_workbench.errors import UserError

# Subcommand modules in the order ``--help`` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "rsp_workbench.cli.validate_cmd",
    "rsp_workbench.cli.windows_cmd",
    "rsp_workbench.cli.query_cmd",
    "rsp_workbench.cli.generate_cmd",
    "rsp_workbench.cli.oracle_cmd",
    "rsp_workbench.cli.run_cmd",
    "rsp_workbench.cli.report_cmd",
    "rsp_workbench.cli.import_cmd",
    "rsp_workbench.cli.probe_cmd",
)


class _ArgumentParser(argparse.ArgumentParser):
    """Option errors exit 2 with one line naming the option (argparse's own behaviour, kept short)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="rspwb",
        description="RSP Workbench command line: validate experiments, explore windows and queries, "
        "generate streams, compute expected answers, judge engines, run experiments.",
    )
    parser.add_argument("--version", action="version", version=f"rspwb {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_ArgumentParser)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        from rsp_workbench.experiment.runs import allowing_runs

        with stop_signals_as_interrupt(), allowing_runs(getattr(args, "max_runs", None)):
            return int(args.func(args) or 0)
    except UserError as error:
        # FILE:LINE: … lines start with the location (as compilers print them) so that
        # editors and CI annotators can jump there; other errors name the program.
        sys.stderr.write(f"{error}\n" if error.file else f"rspwb: {error}\n")
        return 2
    except OSError as error:
        # files the user named: unreadable input, unwritable output, a full disk
        where = f"{error.filename}: " if error.filename else ""
        sys.stderr.write(f"rspwb: {where}{error.strerror or error}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("rspwb: interrupted\n")
        return 130
    finally:
        forget_stray_interrupt()  # commands that handle an interrupt themselves return through here too


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
