"""Running the probe battery on the test stand, then inferring (`rspwb probe`, the GUI's "Probe engine").

Each probe is one real engine run (`rsp_workbench.stand.host.run_engine`: its own process,
the JSON-lines protocol) in absolute-time mode — the probes judge *what* an engine
answers, not how fast, so they are not measured runs and two of them may run at once.
A probe that crashes, hangs (per-probe timeout) or is refused by the engine is reported
as failed with the stand's reason; the others go on.
"""

from __future__ import annotations

import concurrent.futures
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from rsp_workbench.engine import EXTERNAL_TYPE, EngineConfig
from rsp_workbench.engines import ENGINE_REGISTRY
from rsp_workbench.errors import UserError
from rsp_workbench.probe.battery import Probe, battery
from rsp_workbench.probe.infer import ProbeInference, ProbeObservation, infer

DEFAULT_TIMEOUT_S = 20.0
Progress = Callable[[int, int, str], None]  # (probes finished, probes in all, message)


@dataclass(frozen=True)
class ProbeTarget:
    """The engine to probe: its configuration, a label, and the command of an external one."""

    label: str
    config: EngineConfig
    command: tuple[str, ...] | None = None
    syntax: str | None = None
    description: str = ""

    @property
    def external(self) -> bool:
        return self.config.type == EXTERNAL_TYPE

    # what `rsp_workbench.stand.confirm.describe_command` shows before an external command runs
    @property
    def id(self) -> str:
        return self.label

    @property
    def type(self) -> str:
        return self.config.type

    @property
    def parameters(self) -> Mapping[str, Any]:
        return self.config.parameters


def builtin_target(name: str, *, preset: str | None = None, faults: Mapping[str, bool] | None = None,
                   semantics: Mapping[str, Any] | None = None, parameters: Mapping[str, Any] | None = None) -> ProbeTarget:
    """An engine type (``secret``, ``rspjs`` …) or a preset (``cqels``: the ``secret`` engine under it).

    A type wins over a preset of the same name: ``rspjs`` is the RSP-JS engine, not the
    secret engine imitating its preset (that is ``secret`` with ``preset="rspjs"``).
    ``preset`` and ``semantics`` overrides (and ``faults``, ``parameters``) configure the
    engine as an experiment file would; the probe is not told them.
    """
    from rsp_workbench.engine import PROGRAM_ENGINES
    from rsp_workbench.engines import create_engine, program_command
    from rsp_workbench.core.semantics import PRESETS, EngineSemantics
    from rsp_workbench.core.semantics import preset as preset_semantics

    programs = PROGRAM_ENGINES  # shipped non-Python engines
    if name in ENGINE_REGISTRY or name in programs:
        engine_type = name
        chosen = preset or (programs[name].preset_for(parameters or {}) if name in programs else None)
    elif name in PRESETS:
        if preset not in (None, name):
            raise UserError(f"{name!r} is a preset (the secret engine under it); --preset goes with an engine type, "
                            f"e.g. secret --preset {preset}", field="--preset")
        engine_type, chosen = "secret", name
    else:
        known = ", ".join([*sorted({*ENGINE_REGISTRY, *programs}), *(p for p in PRESETS if p not in programs)])
        hint = "; an external engine is probed from an experiment file: FILE:ENGINE" if name == EXTERNAL_TYPE else ""
        raise UserError(f"unknown engine {name!r}; expected an engine type or a preset ({known}), or "
                        f"FILE:ENGINE{hint}", field="ENGINE")
    if faults and any(faults.values()) and engine_type != "secret":
        raise UserError(f"fault knobs belong to the secret engine, not to {engine_type!r}", field="--fault")
    if parameters:
        from rsp_workbench.experiment.runs import check_engine_parameters

        parameters = check_engine_parameters(engine_type, parameters, Path.cwd())
        if engine_type in programs and not preset:
            chosen = programs[engine_type].preset_for(parameters)
    base = preset_semantics(chosen) if chosen else EngineSemantics()
    config = EngineConfig(engine_type, base.with_overrides(dict(semantics or {})), dict(faults or {}),
                          dict(parameters or {}), name=name)
    if engine_type in programs:
        from dataclasses import replace

        config = replace(config, dialect=programs[engine_type].dialect)
        program_command(config)  # not installed: one line saying how
    else:
        create_engine(config)  # unknown faults and bad parameters fail here, once, not in every probe
    parts = [f"type {engine_type}"] + ([f"preset {chosen}"] if chosen else [])
    if parameters:
        parts.append("parameters " + ", ".join(f"{k}={v}" for k, v in parameters.items()))
    if semantics:
        parts.append("semantics " + ", ".join(f"{k}={v}" for k, v in semantics.items()))
    if faults:
        parts.append("faults " + ", ".join(k for k, v in faults.items() if v))
    label = name + "".join(f" {key}={value}" for key, value in (parameters or {}).items())
    return ProbeTarget(label, config, description=", ".join(parts))


def parameter_combinations(name: str) -> list[dict[str, Any]]:
    """Every parameter combination the engine type ``name`` declares a preset for (a program
    engine's variants, `rsp_workbench.engine.ProgramEngine.combinations`); a type without
    variants, or a preset, has one: no parameters."""
    from rsp_workbench.engine import PROGRAM_ENGINES

    program = PROGRAM_ENGINES.get(name)
    return program.combinations() if program is not None and name not in ENGINE_REGISTRY else [{}]


def experiment_target(path: str | os.PathLike[str], engine_id: str | None) -> ProbeTarget:
    """An engine of an experiment file (its type, preset, semantics, faults and parameters)."""
    from rsp_workbench.experiment import load_experiment

    return engine_of(load_experiment(path), engine_id, source=str(path))


def engine_of(experiment: Any, engine_id: str | None, *, source: str | None = None) -> ProbeTarget:
    """An engine of a loaded experiment (``engine_id`` None: its only engine)."""
    from rsp_workbench.engine import engine_config_from_spec

    engines = list(experiment.engines)
    ids = [e.id for e in engines]
    where = source or experiment.name
    if engine_id is None:
        if len(engines) != 1:
            raise UserError(f"the experiment has {len(engines)} engines ({', '.join(ids)}); name one: "
                            f"{where}:ENGINE", file=source, field="engines")
        spec = engines[0]
    else:
        matches = [e for e in engines if e.id == engine_id]
        if not matches:
            raise UserError(f"no engine {engine_id!r} in the experiment; it has {', '.join(ids) or 'none'}",
                            file=source, field="engines")
        spec = matches[0]
    parameters = _resolved_parameters(experiment, spec)
    config = engine_config_from_spec(spec, parameters)
    command = tuple(str(part) for part in parameters["command"]) if spec.type == EXTERNAL_TYPE and parameters.get("command") else None
    if spec.type == EXTERNAL_TYPE and command is None:
        raise UserError("an external engine needs parameters.command", file=source,
                        field=f"engines.{spec.id}.parameters.command")
    label = f"{Path(source).name}:{spec.id}" if source else spec.id
    return ProbeTarget(label, config, command, description=f"engine {spec.id} ({spec.type}) of {where}")


def _resolved_parameters(experiment: Any, spec: Any) -> dict[str, Any]:
    """The engine's parameters with ``${NAME}`` filled in from its first run (as written otherwise)."""
    from rsp_workbench.experiment.runs import expand_runs

    try:
        runs = expand_runs(experiment)
    except UserError:  # an experiment whose runs cannot expand still names its engine
        runs = []
    for run in runs:
        if run.engine.id == spec.id:
            return dict(run.engine_parameters)
    return dict(spec.parameters)


def resolve_target(text: str, *, experiment: str | None = None, engine: str | None = None) -> ProbeTarget:
    """``ENGINE`` as `rspwb probe` reads it: a preset/type name, ``FILE:ENGINE``, or ``FILE``
    (an experiment with one engine); ``experiment``/``engine`` give the file and id apart."""
    if experiment is not None:
        return experiment_target(experiment, engine or (text or None))
    if text.endswith((".yaml", ".yml")) and Path(text).is_file():
        return experiment_target(text, engine)
    head, sep, tail = text.rpartition(":")
    if sep and head.endswith((".yaml", ".yml")):
        if not Path(head).is_file():
            raise UserError("no such experiment file", file=head)
        return experiment_target(head, tail or engine)
    return builtin_target(text)


@dataclass
class ProbeRunOptions:
    """How the battery runs: per-probe timeout, parallel probes, where run folders go."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    workers: int = field(default_factory=lambda: max(1, min(2, os.cpu_count() or 1)))
    keep: str | None = None  # keep each probe's run folder under this directory
    probes: Sequence[str] | None = None  # a subset of the battery (by name)


def run_probe(target: ProbeTarget, probe: Probe, folder: Path, timeout_s: float,
              cancel: threading.Event | None = None) -> ProbeObservation:
    """One probe on the stand; never raises for engine misbehaviour (the status says it)."""
    from rsp_workbench.responses.readers import read_response_log
    from rsp_workbench.stand.host import run_engine
    from rsp_workbench.stand.options import StandOptions

    started = time.monotonic()
    options = StandOptions(mode="absolute-time", sampling_ms=max(1000, int(timeout_s * 1000)), trace_kpis=False,
                           stimulus_timeout_s=timeout_s, run_timeout_s=timeout_s, start_timeout_s=timeout_s,
                           close_timeout_s=timeout_s)
    try:
        result = run_engine(target.config, probe.query_text, probe.stimuli(), folder, syntax=target.syntax,
                            options=options, cancel=cancel, name=probe.name, query_id=probe.name,
                            command=list(target.command) if target.command else None)
    except UserError as error:
        return ProbeObservation(probe.name, "failed", error=str(error), seconds=time.monotonic() - started)
    seconds = time.monotonic() - started
    if not result.ok:
        return ProbeObservation(probe.name, result.status, error=_first_lines(result.error), seconds=seconds)
    try:
        log = read_response_log(folder / "responses.jsonl")
    except (OSError, UserError, ValueError) as error:
        return ProbeObservation(probe.name, "failed", error=f"unreadable responses: {error}", seconds=seconds)
    return ProbeObservation(probe.name, "ok", log, seconds=seconds)


def _first_lines(text: str | None, count: int = 6) -> str | None:
    if text is None:
        return None
    lines = text.splitlines()
    return "\n".join(lines[:count]) + ("\n…" if len(lines) > count else "")


def probe_engine(
    target: ProbeTarget,
    options: ProbeRunOptions = ProbeRunOptions(),
    *,
    cancel: threading.Event | None = None,
    progress: Progress | None = None,
) -> ProbeInference:
    """Run the battery against ``target`` and infer its semantics.

    ``progress(done, total, message)`` is called from worker threads after each probe and
    once before the inference; ``cancel`` stops the probes still running (they are
    reported as cancelled) and skips the ones not started.
    """
    probes = list(battery())
    if options.probes:
        unknown = sorted(set(options.probes) - {p.name for p in probes})
        if unknown:
            raise UserError(f"unknown probe {unknown[0]!r}; expected one of {', '.join(p.name for p in probes)}",
                            field="--only")
        probes = [p for p in probes if p.name in set(options.probes)]
    cancel = cancel or threading.Event()
    total = len(probes)
    report = progress or (lambda done, count, message: None)
    finished: dict[str, ProbeObservation] = {}
    lock = threading.Lock()
    with tempfile.TemporaryDirectory(prefix="rspwb-probe-") as scratch:
        root = Path(options.keep) if options.keep else Path(scratch)

        def one(probe: Probe) -> ProbeObservation:
            if cancel.is_set():
                observation = ProbeObservation(probe.name, "cancelled", error="cancelled before it started")
            else:
                observation = run_probe(target, probe, root / probe.name, options.timeout_s, cancel)
            with lock:
                finished[probe.name] = observation
                done = len(finished)
            report(done, total, f"{probe.name}: {observation.status}"
                   + (f" ({observation.responses} responses)" if observation.ok else f" — {observation.error}"))
            return observation

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, options.workers),
                                                   thread_name_prefix="rspwb-probe") as pool:
            list(pool.map(one, probes))
    observations = [finished[p.name] for p in probes]
    report(total, total, "inferring the parameters")
    return infer(target.label, probes, observations)
