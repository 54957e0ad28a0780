"""The probe dialog without Qt: which engines can be probed, and an inference as texts and table rows.

The engine is chosen from the presets (the ``secret`` engine under each), the built-in
engine types and the engines of the designer's experiment; a fault knob applies to the
``secret`` engine only. What the dialog shows of a :class:`ProbeInference` — the headline,
every parameter, each probe, the faults and unexplained probes — is computed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

from rsp_workbench.errors import UserError
from rsp_workbench.probe.infer import FAULT_TEXT, ProbeInference, format_value, headline_verdict
from rsp_workbench.probe.runner import ProbeTarget, builtin_target, engine_of

NO_FAULT = "none"
PROBE_COLUMNS = ("probe", "status", "responses", "explained", "what it tells apart")
PARAMETER_COLUMNS = ("parameter", "inferred", "the probes cannot tell from")
STATUS_COLOURS = {"ok": "#2e7d32", "failed": "#c62828", "timeout": "#c62828", "cancelled": "#ef6c00"}
UNEXPLAINED_COLOUR = "#c62828"
PARTIAL_COLOUR = "#ef6c00"


def builtin_engines() -> list[tuple[str, str]]:
    """(label, key) of the presets (the ``secret`` engine under each) and the engine types."""
    from rsp_workbench.core.semantics import PRESETS
    from rsp_workbench.engines import engine_types

    types = [name for name in engine_types() if name != "external"]
    return [*((f"{name} (preset)", f"preset:{name}") for name in PRESETS),
            *((f"{name} (engine)", f"builtin:{name}") for name in types)]


def takes_fault_knob(key: str) -> bool:
    """Whether the engine of ``key`` (``preset:…``, ``builtin:…``, ``experiment:…``) is the secret engine."""
    kind, _, name = key.partition(":")
    return kind == "preset" or (kind == "builtin" and name == "secret")


def probe_target(key: str, fault: str | None, experiment: Any) -> ProbeTarget:
    """The engine to probe for a ``kind:name`` key; ``experiment`` is the designer's (None: not valid)."""
    kind, _, name = key.partition(":")
    faults = {fault: True} if fault else None
    if kind == "preset":
        return builtin_target("secret", preset=name, faults=faults)
    if kind == "builtin":
        return builtin_target(name, faults=faults)
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
