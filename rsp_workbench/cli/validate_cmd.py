"""`rspwb validate FILE`: check an experiment file without running anything (docs/design/CLI.md).

Exit 0 with a one-line summary when valid; otherwise a UserError (``FILE:LINE: field:
message``, exit 2). Validation resolves every sweep combination and every size, so an
experiment that validates will not fail later on a malformed value.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rsp_workbench.errors import UserError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check an experiment file (every error names file, line and field)",
        description="Check an experiment YAML file: schema, referenced files, query template "
        "variables, semantics parameters, generator parameters, sweeps and sizes.",
    )
    parser.add_argument("file", metavar="FILE", help="experiment YAML file")
    from rsp_workbench.cli.terminal import add_max_runs

    add_max_runs(parser)
    parser.add_argument("--size", help="also report the runs of this size (smoke, full, …)")
    parser.add_argument("--json", action="store_true", help="print one JSON object with the summary")
    parser.set_defaults(func=run)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _read_static_data(experiment: Any) -> None:
    """Static data is read here as the run reads it: a file that does not parse fails validate, not the run."""
    if experiment.static:
        from rsp_workbench.experiment.static_data import load_static

        load_static(experiment)


def commands_to_confirm(experiment: Any, chosen: Any, size: str | None) -> list[dict[str, Any]]:
    """Every external command a run of the file may start: of the chosen ``size``, or, without one, of
    the experiment as written and of each of its sizes (a size may swap an engine for a command).

    Each entry names the engine and the command; one that only some of them run also names
    those in ``sizes`` (``null`` standing for a run without ``--size``)."""
    from rsp_workbench.experiment import apply_size

    variants = [(size, chosen)] if size else [(None, experiment), *((name, apply_size(experiment, name))
                                                                     for name in experiment.sizes)]
    found: dict[tuple[str, tuple[str, ...]], list[str | None]] = {}
    for name, variant in variants:
        for engine in variant.engines:
            if engine.requires_confirmation:
                found.setdefault((engine.id, tuple(str(part) for part in engine.command or ())), []).append(name)
    return [{"engine": engine, "command": list(command), **({"sizes": sizes} if len(sizes) < len(variants) else {})}
            for (engine, command), sizes in found.items()]


def check_program_engines(experiment: Any, runs: list[Any]) -> None:
    """Ask each program engine that can tell in advance (``PROGRAM_CHECKS``: spark-streaming, whose
    compiler and then Spark's planner judge the query) about every distinct query and parameters of
    the runs, all at once; the first refusal is a UserError at the engine's line."""
    import json

    from rsp_workbench.engine import StaticGraphs, engine_config_from_spec
    from rsp_workbench.engines import PROGRAM_CHECKS, program_checks
    from rsp_workbench.stand.host import query_for_engine
    from rsp_workbench.stand.protocol import register_message

    asked: dict[tuple[str, str, str], tuple[Any, dict[str, Any]]] = {}
    for run in runs:
        if run.engine.type not in PROGRAM_CHECKS:
            continue
        config = engine_config_from_spec(run.engine, run.engine_parameters)
        try:
            text, syntax = query_for_engine(config, run.query_text, run.query.syntax)
        except UserError as error:
            _refused(experiment, run, error.message)
        key = (config.type, text, json.dumps(dict(config.parameters), sort_keys=True, default=str))
        # static data travels as a flag: its size does not change the verdict
        static = StaticGraphs(default=(("<urn:rspwb:static>",) * 3,)) if experiment.static else StaticGraphs()
        asked.setdefault(key, (run, register_message(config, text, syntax=syntax, static=static, query_id=run.query.id)))
    for engine_type in PROGRAM_CHECKS:
        pairs = [pair for key, pair in asked.items() if key[0] == engine_type]
        for (run, _), reason in zip(pairs, program_checks(engine_type, [register for _, register in pairs])):
            if reason:
                _refused(experiment, run, reason)


def _refused(experiment: Any, run: Any, reason: str) -> None:
    path = f"engines[{next(i for i, e in enumerate(experiment.engines) if e.id == run.engine.id)}]"
    source = experiment.source
    raise UserError(f"query {run.query.id}: {reason}", file=str(experiment.file) if experiment.file else None,
                    line=source.line(path) if source else None, field=source.origin(path) if source else path)


def run(args: argparse.Namespace) -> int:
    from rsp_workbench.cli.terminal import print_json
    from rsp_workbench.experiment import apply_size, load_experiment
    from rsp_workbench.experiment.runs import count_runs, expand_runs, variable_combinations

    try:
        experiment = load_experiment(args.file)
        chosen = apply_size(experiment, args.size) if args.size else experiment
        expanded = expand_runs(chosen)
        runs = len(expanded)
        _read_static_data(chosen)
        check_program_engines(chosen, expanded)
    except UserError as error:
        if args.json:
            print_json({"valid": False, "error": {
                "file": error.file, "line": error.line, "field": error.field, "message": error.message,
            }})
        raise
    sizes = {name: count_runs(apply_size(experiment, name)) for name in experiment.sizes}
    confirm = commands_to_confirm(experiment, chosen, args.size)
    if args.json:
        print_json({
            "valid": True,
            "file": args.file,
            "name": chosen.name,
            "size": args.size,
            "engines": [engine.id for engine in chosen.engines],
            "queries": [query.id for query in chosen.queries],
            "combinations": len(variable_combinations(chosen)),
            "repetitions": chosen.repetitions,
            "runs": runs,
            "sizes": sizes,
            "requires_confirmation": confirm,
        })
        return 0
    size_text = f" (size {args.size})" if args.size else ""
    sizes_text = ", sizes: " + ", ".join(f"{name} {count}" for name, count in sizes.items()) if sizes else ""
    sys.stdout.write(
        f"{args.file}: valid: {chosen.name}{size_text}: {_plural(len(chosen.engines), 'engine')}, "
        f"{_plural(len(chosen.queries), 'query').replace('querys', 'queries')}, "
        f"{_plural(len(variable_combinations(chosen)), 'combination')} × {_plural(chosen.repetitions, 'repetition')}"
        f" → {_plural(runs, 'run')}{sizes_text}"
        + (f"; {len(confirm)} external command(s) need confirmation before running" if confirm else "")
        + "\n"
    )
    return 0
