"""Stream generators: parameter specs and pure per-key generation logic.

Each generator module here is pure Python (no Spark) and defines ``SPEC`` (a
:class:`GeneratorSpec`) plus the functions that produce its elements; the Spark jobs in
``rsp_workbench.pipeline`` call those functions. Keeping specs pure lets the experiment
validator and the GUI forms know every generator's parameters without starting a JVM.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Mapping

from rsp_workbench.core.time import parse_duration
from rsp_workbench.errors import UserError

# name -> module (imported lazily, no import-time side effects)
GENERATOR_MODULES: dict[str, str] = {
    "sg1": "rsp_workbench.generators.sg1",
    "sg1-parallel": "rsp_workbench.generators.sg1_parallel",
    "lsd-weather": "rsp_workbench.generators.lsd_weather",
    "lubm": "rsp_workbench.generators.lubm",
    "chain-join": "rsp_workbench.generators.chain_join",
}

PARAM_KINDS = ("int", "float", "bool", "str", "duration", "choice")


@dataclass(frozen=True)
class ParamSpec:
    """One documented generator parameter. ``duration`` values are parsed to ms."""

    name: str
    kind: str
    doc: str
    default: Any = None
    required: bool = False
    choices: tuple[str, ...] = ()
    minimum: float | None = None

    def parse(self, raw: Any) -> Any:
        """Convert a raw value (CLI text or YAML scalar) to this parameter's type."""
        field_name = f"param {self.name}"
        try:
            if self.kind == "duration":
                value: Any = parse_duration(raw, field=field_name)
            elif self.kind == "int":
                if isinstance(raw, bool):
                    raise ValueError
                value = int(str(raw).strip()) if not isinstance(raw, int) else raw
            elif self.kind == "float":
                if isinstance(raw, bool):
                    raise ValueError
                value = float(raw)
            elif self.kind == "bool":
                if isinstance(raw, bool):
                    value = raw
                elif str(raw).strip().lower() in ("true", "yes", "1", "on"):
                    value = True
                elif str(raw).strip().lower() in ("false", "no", "0", "off"):
                    value = False
                else:
                    raise ValueError
            elif self.kind == "choice":
                value = str(raw)
                if value not in self.choices:
                    raise UserError(
                        f"{value!r} is not one of {', '.join(self.choices)}", field=field_name
                    )
            else:
                value = str(raw)
        except (TypeError, ValueError):
            raise UserError(f"expected a {self.kind}, got {raw!r}", field=field_name) from None
        if self.minimum is not None and isinstance(value, (int, float)) and value < self.minimum:
            raise UserError(f"must be at least {self.minimum:g}, got {raw!r}", field=field_name)
        return value


@dataclass(frozen=True)
class GeneratorSpec:
    """A generator's name, purpose and parameters (documentation and validation)."""

    name: str
    doc: str
    params: tuple[ParamSpec, ...] = field(default_factory=tuple)

    def param(self, name: str) -> ParamSpec:
        for spec in self.params:
            if spec.name == name:
                return spec
        raise UserError(
            f"unknown parameter {name!r} for generator {self.name}; "
            f"expected one of {', '.join(p.name for p in self.params)}",
            field=f"param {name}",
        )

    def resolve(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Validate raw parameters and fill defaults; errors name the parameter."""
        values: dict[str, Any] = {}
        for name, value in raw.items():
            values[name] = self.param(name).parse(value)
        for spec in self.params:
            if spec.name not in values:
                if spec.required:
                    raise UserError(f"is required for generator {self.name}", field=f"param {spec.name}")
                values[spec.name] = spec.default
        return values


# The most one stream may hold (docs/experiment-format.md, "Bounds"): a file asking for
# more (e.g. ``duration: 1e18``) is refused when it is validated, not after days of writing.
MAX_GENERATED_ELEMENTS = 10**10


def check_volume(count: int, what: str, field: str) -> None:
    """Refuse a stream of more than `MAX_GENERATED_ELEMENTS` (``what`` says how ``count`` was estimated)."""
    if count > MAX_GENERATED_ELEMENTS:
        raise UserError(
            f"asks for about {count:.3g} {what}; the limit is {MAX_GENERATED_ELEMENTS:.0e} per stream",
            field=field,
        )


def check_generator_params(name: str, params: Mapping[str, Any]) -> None:
    """The generator's own parameter checks (its ``check_params``: ranges, relations, volume), so that
    what validates also generates."""
    generator_spec(name)
    importlib.import_module(GENERATOR_MODULES[name]).check_params(params)


def generator_spec(name: str) -> GeneratorSpec:
    """The spec of a registered generator, or a UserError listing the known ones."""
    module_name = GENERATOR_MODULES.get(name)
    if module_name is None:
        raise UserError(
            f"unknown generator {name!r}; expected one of {', '.join(sorted(GENERATOR_MODULES))}",
            field="generator",
        )
    spec: GeneratorSpec = importlib.import_module(module_name).SPEC
    return spec
