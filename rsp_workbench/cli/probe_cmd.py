"""`rspwb probe ENGINE [--json]`: infer an engine's hidden operational semantics (docs/probe.md).

ENGINE is a preset (``cqels``: the ``secret`` engine under it), an engine type
(``secret``, ``rspjs`` …), ``FILE:ENGINE`` (an engine of an experiment file; ``FILE``
alone if it has one engine), or ``--experiment FILE --engine ID``. Exit codes: 0 when a
parameter set explains every probe that ran, 1 when some probe stays unexplained or
failed, 2 for bad input, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any


def register(subparsers: Any) -> None:
    probe = subparsers.add_parser(
        "probe", help="infer an engine's operational semantics (border, report, tick, R2S, t0, …) from designed probes",
        description="Run a battery of small designed streams against an engine on the test stand and infer its "
                    "SECRET parameters: the preset + overrides that explain every probe, or the probes no "
                    "parameter set explains with their first divergence (docs/probe.md).",
    )
    probe.add_argument("engine", metavar="ENGINE", nargs="?", default=None,
                       help="a preset (csparql, cqels, …), an engine type (secret, rspjs, …), FILE:ENGINE or FILE")
    probe.add_argument("--experiment", metavar="FILE", help="take the engine from this experiment file")
    probe.add_argument("--engine", dest="engine_id", metavar="ID", help="the engine's id in --experiment FILE")
    probe.add_argument("--preset", metavar="NAME",
                       help="run a built-in engine type under this preset (e.g. secret --preset rspjs)")
    probe.add_argument("--fault", action="append", default=[], metavar="NAME",
                       help="switch on a fault knob of the secret engine (repeatable): late_purge, border_drift, "
                            "null_aggregate, misaligned_first_window")
    probe.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="settings",
                       help="configure the probed built-in engine's semantics (e.g. border=open-closed); "
                            "the probe is not told")
    probe.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", dest="params",
                       help="an engine parameter of the probed engine type (repeatable, e.g. --param window=time "
                            "--param output=all), checked against the parameters the type takes")
    probe.add_argument("--all-combinations", action="store_true",
                       help="probe every parameter combination the engine type declares a preset for, one after "
                            "the other (with --json: one object per combination, in a list)")
    probe.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                       help="per-probe timeout (default 20 s): a probe that takes longer is reported as failed")
    probe.add_argument("--only", action="append", default=[], metavar="PROBE", help="run only this probe (repeatable)")
    probe.add_argument("--keep", metavar="DIR", help="keep each probe's run folder (trace, responses, stderr) here")
    probe.add_argument("--yes", action="store_true", help="confirm the command of an external engine")
    probe.add_argument("--json", action="store_true", help="print one JSON object")
    probe.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    probe.set_defaults(func=probe_command)


def _settings(pairs: list[str], option: str = "--set") -> dict[str, Any]:
    """``--set``/``--param KEY=VALUE`` options, values read as YAML (``false``, ``300``, ``open-closed``)."""
    import yaml

    from rsp_workbench.cli.query_cmd import parse_variables

    return {key: yaml.safe_load(value) for key, value in parse_variables(pairs, option).items()}


def probe_command(args: argparse.Namespace) -> int:
    from rsp_workbench.errors import UserError
    from rsp_workbench.probe.runner import builtin_target, parameter_combinations, resolve_target

    if args.engine is None and args.experiment is None:
        raise UserError("name the engine to probe: a preset, an engine type, FILE:ENGINE or --experiment FILE",
                        field="ENGINE")
    configured = bool(args.fault or args.settings or args.preset or args.params or args.all_combinations)
    targets: list[Any]
    if args.experiment is None and configured and args.engine and ":" not in args.engine \
            and not args.engine.endswith((".yaml", ".yml")):
        if args.params and args.all_combinations:
            raise UserError("--param names one combination, --all-combinations every one; give one of them",
                            field="--all-combinations")
        combinations = parameter_combinations(args.engine) if args.all_combinations else [_settings(args.params, "--param")]
        targets = [builtin_target(args.engine, preset=args.preset, faults={name: True for name in args.fault},
                                  semantics=_settings(args.settings), parameters=combination)
                   for combination in combinations]
    else:
        if configured:
            raise UserError("--preset, --fault, --set, --param and --all-combinations configure a built-in engine "
                            "named on the command line; an experiment's engine is configured in its file",
                            field="--param" if args.params or args.all_combinations else "--fault")
        targets = [resolve_target(args.engine or "", experiment=args.experiment, engine=args.engine_id)]
    if args.all_combinations:
        return _probe_all(args, targets)
    return _probe_one(args, targets[0])


def _probe_all(args: argparse.Namespace, targets: list[Any]) -> int:
    """Each combination in turn; the exit code is the worst of theirs (130 stops at once)."""
    from rsp_workbench.cli.terminal import print_json
    from rsp_workbench.probe.infer import format_inference

    payloads: list[Any] = []
    worst = 0
    for target in targets:
        code, inference = _run(args, target)
        if args.json:
            payloads.append(inference.to_json())
        else:
            print(format_inference(inference) + "\n", flush=True)
        worst = max(worst, code)
        if code == 130:
            break
    if args.json:
        print_json(payloads)
    return worst


def _probe_one(args: argparse.Namespace, target: Any) -> int:
    from rsp_workbench.cli.terminal import print_json
    from rsp_workbench.probe.infer import format_inference

    code, inference = _run(args, target)
    if args.json:
        print_json(inference.to_json())
    else:
        print(format_inference(inference))
    return code


def _run(args: argparse.Namespace, target: Any) -> tuple[int, Any]:
    """Probe one target with the command's options: (exit code, inference)."""
    from rsp_workbench.cli.run_cmd import ask_on_terminal
    from rsp_workbench.errors import UserError
    from rsp_workbench.probe.runner import DEFAULT_TIMEOUT_S, ProbeRunOptions, probe_engine
    from rsp_workbench.stand.confirm import describe_command

    if target.external and not args.yes:
        text = describe_command(target)
        allowed = False
        if sys.stdin.isatty():
            try:
                allowed = ask_on_terminal(text + "\nRun this command?")
            except (EOFError, KeyboardInterrupt):
                allowed = False
        if not allowed:
            raise UserError(f"{text.splitlines()[0].removesuffix(':')}; an external command must be confirmed "
                            "before it runs; pass --yes to allow it", field="engines")
    options = ProbeRunOptions(timeout_s=args.timeout or DEFAULT_TIMEOUT_S, keep=args.keep, probes=args.only or None)
    cancel = threading.Event()

    def progress(done: int, total: int, message: str) -> None:
        if not args.quiet:
            sys.stderr.write(f"rspwb: [{done}/{total}] {message}\n")
            sys.stderr.flush()

    def interrupted(signum: int, frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        sys.stderr.write("rspwb: cancelling the probes…\n")
        cancel.set()

    previous = signal.signal(signal.SIGINT, interrupted) if threading.current_thread() is threading.main_thread() else None
    try:
        if not args.quiet:
            sys.stderr.write(f"rspwb: probing {target.label} ({target.description})\n")
        inference = probe_engine(target, options, cancel=cancel, progress=progress)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if cancel.is_set():
        return 130, inference
    failed = any(not o.ok for o in inference.observations)
    return (0 if inference.explained and not failed else 1), inference
