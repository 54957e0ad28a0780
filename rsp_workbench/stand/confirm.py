"""Show the commands of ``external`` engines and require confirmation before any runs.

An experiment file can name any program as an external engine (``parameters.command``),
so opening someone else's experiment must not run code unseen: the CLI asks (or needs
``--yes``), the GUI shows a dialog. Both call :func:`confirm_commands` with their own way
of asking; this module has no I/O of its own (pure functions, testable without a tty).
"""

from __future__ import annotations

import shlex
from typing import Any, Callable, Iterable, Mapping

from rsp_workbench.errors import UserError


def describe_command(engine_spec: Any, parameters: Mapping[str, Any] | None = None) -> str:
    """A human-readable description of what an external engine will run.

    ``engine_spec`` is an experiment ``EngineSpec`` (or anything with ``id``, ``type`` and
    ``parameters``); ``parameters`` are its resolved parameters for one run if known (the
    spec's own may still hold ``${NAME}`` templates). Shows the program and arguments
    exactly (shell-quoted, but run without a shell), the working directory and the
    environment additions.
    """
    params = dict(parameters if parameters is not None else getattr(engine_spec, "parameters", {}) or {})
    name = getattr(engine_spec, "id", None) or getattr(engine_spec, "name", None) or "?"
    command = params.get("command")
    if isinstance(command, str):
        argv = [command]
    elif command:
        argv = [str(part) for part in command]
    else:
        argv = []
    lines = [f"engine {name!r} ({getattr(engine_spec, 'type', 'external')}) runs an external program:"]
    lines.append(f"  command: {shlex.join(argv) if argv else '(none given)'}")
    if params.get("cwd") is not None:
        lines.append(f"  in directory: {params['cwd']}")
    env = params.get("env") or {}
    if env:
        lines.append("  with environment: " + " ".join(f"{key}={shlex.quote(str(value))}" for key, value in sorted(env.items())))
    if any("${" in part for part in argv):
        lines.append("  (the command uses ${…} variables: each run fills them in)")
    return "\n".join(lines)


def commands_to_confirm(experiment: Any) -> list[str]:
    """The distinct descriptions of every external command an experiment would run.

    Templated commands are resolved per run where the experiment's runs can be expanded;
    otherwise the commands are shown as written.
    """
    specs = [engine for engine in getattr(experiment, "engines", ()) if getattr(engine, "requires_confirmation", False)]
    if not specs:
        return []
    descriptions: dict[str, None] = {}
    runs: Iterable[Any] | None
    from rsp_workbench.experiment.runs import expand_runs

    try:
        runs = expand_runs(experiment)
    except Exception:  # noqa: BLE001 - an experiment that cannot expand still gets its commands shown
        runs = None
    if runs is not None:
        for run in runs:
            if getattr(run.engine, "requires_confirmation", False):
                descriptions.setdefault(describe_command(run.engine, run.engine_parameters), None)
    for spec in specs:  # engines without runs (no queries, failed expansion) are shown as written
        if not any(f"engine {spec.id!r} " in text for text in descriptions):
            descriptions.setdefault(describe_command(spec), None)
    return list(descriptions)


def confirm_commands(experiment: Any, *, assume_yes: bool, ask: Callable[[str], bool] | None) -> None:
    """Raise UserError unless every external command of ``experiment`` is confirmed.

    ``assume_yes`` (the CLI's ``--yes``) confirms all without asking. Otherwise ``ask`` is
    called once per distinct command with its description and returns True to allow it;
    None (no way to ask, e.g. not a terminal), a False answer or an interrupted prompt
    (EOFError/KeyboardInterrupt) refuse. Experiments without external engines pass.
    """
    descriptions = commands_to_confirm(experiment)
    if not descriptions or assume_yes:
        return
    for text in descriptions:
        allowed = False
        if ask is not None:
            try:
                allowed = bool(ask(text + "\nRun this command?"))
            except (EOFError, KeyboardInterrupt):
                allowed = False
        if not allowed:
            first = text.splitlines()[0].removesuffix(":")
            raise UserError(f"{first}; an external command must be confirmed before it runs; pass --yes to allow it",
                            field="engines")
