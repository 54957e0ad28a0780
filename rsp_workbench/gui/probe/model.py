"""The probe dialog without Qt: which engines can be probed, and an inference as texts and table rows.

The engine is chosen from the presets (the ``secret`` engine under each), the installed
engine types (a program engine that is not built is left out, by the stand's own check) and
the engines of the designer's experiment; a fault knob applies to the ``secret`` engine only;
a type that declares parameter combinations (Esper's EPL forms) is probed with one of them or
all. What the dialog shows of a :class:`ProbeInference` — the headline, every parameter, each
probe, the faults and unexplained probes, and one row of the side-by-side SECRET table — is
computed here.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any, Mapping, Sequence

from rsp_workbench.errors import UserError
from rsp_workbench.probe.infer import FAULT_TEXT, ProbeInference, format_value, headline_verdict
from rsp_workbench.probe.runner import ProbeTarget, builtin_target, engine_of

NO_FAULT = "none"
PROBE_COLUMNS = ("probe", "status", "responses", "explained", "what it tells apart")
PARAMETER_COLUMNS = ("parameter", "inferred", "the probes cannot tell from")
STATUS_COLOURS = {"ok": "#2e7d32", "failed": "#c62828", "timeout": "#c62828", "cancelled": "#ef6c00"}
UNEXPLAINED_COLOUR = "#c62828"
PARTIAL_COLOUR = "#ef6c00"


def installed(engine_type: str) -> bool:
    """Whether an engine type can run here: a program engine only once it is built, judged by
    the function the stand calls to start it (`rsp_workbench.engines.program_command`)."""
    from rsp_workbench.engine import PROGRAM_ENGINES, EngineConfig
    from rsp_workbench.engines import program_command

    if engine_type not in PROGRAM_ENGINES:
        return True
    try:
        program_command(EngineConfig(engine_type))
    except UserError:
        return False
    return True


def builtin_engines() -> list[tuple[str, str]]:
    """(label, key) of the presets (the ``secret`` engine under each) and the installed engine types."""
    from rsp_workbench.core.semantics import PRESETS
    from rsp_workbench.engines import engine_types

    types = [name for name in engine_types() if name != "external" and installed(name)]
    return [*((f"{name} (preset)", f"preset:{name}") for name in PRESETS),
            *((f"{name} (engine)", f"builtin:{name}") for name in types)]


#: The choice of the combination box that probes every combination the engine type declares.
EVERY_COMBINATION = "every combination"


def combination_choices(key: str) -> list[tuple[str, Mapping[str, Any] | None]]:
    """(label, parameters) of the parameter combinations an engine key can be probed with: one
    per declared combination and, when there are several, every one at once (parameters None)."""
    from rsp_workbench.probe.runner import parameter_combinations

    kind, _, name = key.partition(":")
    combinations = parameter_combinations(name) if kind == "builtin" else [{}]
    choices: list[tuple[str, Mapping[str, Any] | None]] = [
        (", ".join(f"{k}={v}" for k, v in c.items()) or "default", c) for c in combinations]
    return choices + [(EVERY_COMBINATION, None)] if len(choices) > 1 else choices


def takes_fault_knob(key: str) -> bool:
    """Whether the engine of ``key`` (``preset:…``, ``builtin:…``, ``experiment:…``) is the secret engine."""
    kind, _, name = key.partition(":")
    return kind == "preset" or (kind == "builtin" and name == "secret")


def probe_target(key: str, fault: str | None, experiment: Any,
                 parameters: Mapping[str, Any] | None = None) -> ProbeTarget:
    """The engine to probe for a ``kind:name`` key; ``experiment`` is the designer's (None: not valid)."""
    kind, _, name = key.partition(":")
    faults = {fault: True} if fault else None
    if kind == "preset":  # named as the preset (the side-by-side rows), not "secret"
        from dataclasses import replace

        target = builtin_target("secret", preset=name, faults=faults)
        return replace(target, label=f"{name} (preset)" + (f", fault {fault}" if fault else ""))
    if kind == "builtin":
        return builtin_target(name, faults=faults, parameters=parameters or None)
    if experiment is None:
        raise UserError("the designer's experiment is not valid any more; fix it or choose a built-in engine")
    return engine_of(experiment, name)


@dataclass(frozen=True)
class ParameterRow:
    """One inferred parameter: its name, value and the values the probes could not rule out."""

    cells: tuple[str, str, str]
    override: bool  # an override of the inferred preset


@dataclass(frozen=True)
class ProbeRow:
    """One probe as the dialog lists it (``PROBE_COLUMNS``)."""

    cells: tuple[str, str, str, str, str]
    status: str
    error: str | None
    explained: bool | None  # None: no candidate was judged on it


def probes_ran(inference: ProbeInference) -> tuple[int, int]:
    """(probes that ran, probes asked for): fewer ran when the probe was cancelled or some failed."""
    return sum(o.ok for o in inference.observations), max(len(inference.observations), len(inference.probes))


def headline_html(inference: ProbeInference) -> str:
    """The preset + overrides, whether they explain every probe, and each fault found."""
    if inference.preset is None:
        return "<b>No probe ran</b>: nothing to infer (see the probes below)."
    overrides = ", ".join(f"{key}: {format_value(value)}" for key, value in inference.overrides.items())
    colour = "#2e7d32" if inference.explained else "#c62828"
    verdict = headline_verdict(inference).replace("below", "in the details")
    ran, total = probes_ran(inference)
    if ran < total:  # cancelled or failed probes: the answer rests on the others only
        colour = PARTIAL_COLOUR
        verdict = f"partial: {ran} of {total} probes ran; " + verdict.replace("every probe", f"the {ran} that ran")
    return (f"<span style='font-size:14pt'><b>{escape(inference.preset)}</b>"
            + (f" + {{{escape(overrides)}}}" if overrides else " (no overrides)") + "</span> — "
            f"<span style='color:{colour}'>{verdict}</span>"
            + "".join(f"<br/><span style='color:#c62828'>fault: <b>{escape(f.fault)}</b></span> — "
                      f"{escape(FAULT_TEXT[f.fault])}" for f in inference.faults))


def parameter_rows(inference: ProbeInference) -> list[ParameterRow]:
    return [ParameterRow((key, format_value(value), ", ".join(map(format_value, inference.undetermined.get(key, [])))),
                         key in inference.overrides)
            for key, value in inference.parameters.items()]


def probe_rows(inference: ProbeInference) -> list[ProbeRow]:
    purposes = {p.name: p.purpose for p in inference.probes}
    rows = []
    for observation in inference.observations:
        explained = inference.explaining.get(observation.probe)
        cells = (observation.probe, observation.status,
                 str(observation.responses) if observation.ok else "",
                 "" if explained is None else ("yes" if explained else "no"),
                 purposes.get(observation.probe, ""))
        rows.append(ProbeRow(cells, observation.status, observation.error or None, explained))
    return rows


def details_text(inference: ProbeInference) -> str:
    """Faults with their evidence, unexplained probes with their first divergence, probes that did not run."""
    lines = []
    for finding in inference.faults:
        lines.append(f"fault {finding.fault}: {FAULT_TEXT[finding.fault]}\n  evidence: {finding.evidence}")
    for item in inference.unexplained:
        lines.append(f"unexplained probe {item.probe} ({item.purpose})\n  first divergence: {item.description}")
    for observation in inference.observations:
        if not observation.ok:
            said = observation.error and observation.error != observation.status
            lines.append(f"probe {observation.probe} {observation.status}" + (f": {observation.error}" if said else ""))
    return "\n\n".join(lines)


# --- the side-by-side SECRET table ----------------------------------------------------------------

SECRET_COLUMNS = ("engine", "border", "t0", "report", "tick", "R2S", "empty notification", "grouping",
                  "explained by")


@dataclass(frozen=True)
class SecretRow:
    """One probed engine (or parameter combination) as a row of the side-by-side table."""

    cells: tuple[str, ...]
    explained: bool  # the named preset + overrides explain every probe that ran (faults named)
    partial: bool  # some probes failed or were cancelled
    overridden: frozenset[str]  # the columns whose value is an override of the named preset


_COLUMN_KEYS = {"border": ("border",), "t0": ("t0", "anchor"), "report": ("report",), "tick": ("tick", "batch_size"),
                "R2S": ("r2s",), "empty notification": ("empty_notification",), "grouping": ("grouping",)}


def t0_text(parameters: Mapping[str, Any]) -> str:
    """Where the windows start: on the registration instant, on the first element, or a fixed t0."""
    alignment = parameters.get("alignment")
    if alignment == "registration":
        return "registration (hidden)"
    if alignment == "first-element":
        return "first element (hidden)"
    return f"fixed {parameters.get('t0')} ms" if parameters.get("t0") is not None else ""


def secret_row(inference: ProbeInference) -> SecretRow:
    """The engine's inferred SECRET parameters, and what explains its answers: the preset +
    overrides (with the faults), or the probes nothing explains."""
    p = inference.parameters
    ran, total = probes_ran(inference)
    if inference.preset is None:
        explained_by = "no probe ran"
    else:
        overrides = ", ".join(f"{key}: {format_value(value)}" for key, value in inference.overrides.items())
        explained_by = inference.preset + (f" + {{{overrides}}}" if overrides else "")
        explained_by += "".join(f", fault {f.fault}" for f in inference.faults)
        if inference.unexplained:
            explained_by += "; unexplained: " + ", ".join(item.probe for item in inference.unexplained)
        if ran < total:
            explained_by += f" ({ran} of {total} probes ran)"
    tick = format_value(p.get("tick", ""))
    if tick == "batch":
        tick = f"batch of {p.get('batch_size')}"
    cells = (inference.engine, format_value(p.get("border", "")), t0_text(p), format_value(p.get("report", "")),
             tick, format_value(p.get("r2s", "")), format_value(p.get("empty_notification", "")),
             format_value(p.get("grouping", "")), explained_by)
    overridden = frozenset(column for column, keys in _COLUMN_KEYS.items() if set(keys) & set(inference.overrides))
    return SecretRow(tuple("" if c == "null" else c for c in cells),
                     inference.preset is not None and inference.explained, ran < total, overridden)


def write_secret_csv(path: str | Path, rows: Sequence[SecretRow]) -> Path:
    """The side-by-side table as CSV, one row per probed engine."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(SECRET_COLUMNS)
        writer.writerows(row.cells for row in rows)
    return Path(path)
