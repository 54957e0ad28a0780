"""Built-in RSP engines (plug-ins behind the engine interface, `rsp_workbench.engine`) and their registry.

Engines are found by type name: a class engine through :data:`ENGINE_REGISTRY`
(``"module:Class"``), a shipped program engine through :data:`PROGRAM_COMMANDS`
(``"module:function"`` returning its command line). Both are imported lazily on first use, so
importing the workbench never imports an engine. The registry lives here, beside the plug-ins,
so that the interface below does not name what implements it.
"""

from __future__ import annotations

import importlib
from typing import Any

from rsp_workbench.engine import PROGRAM_ENGINES, Engine, EngineConfig, EXTERNAL_TYPE
from rsp_workbench.errors import UserError

#: Engine type → ``"module:Class"``; imported on first use (no import-time discovery).
ENGINE_REGISTRY: dict[str, str] = {
    "secret": "rsp_workbench.engines.secret:SecretEngine",
    "naive": "rsp_workbench.engines.naive:NaiveEngine",
    "incremental": "rsp_workbench.engines.incremental:IncrementalEngine",
    "eviction": "rsp_workbench.engines.eviction:EvictionEngine",
    "null": "rsp_workbench.engines.null:NullEngine",
}
#: Program engine type (`rsp_workbench.engine.PROGRAM_ENGINES`) → ``"module:function"``: the
#: function takes the EngineConfig and returns the command line, raising UserError with how to
#: install the engine when it is not installed.
PROGRAM_COMMANDS: dict[str, str] = {
    "rspjs": "rsp_workbench.engines.rspjs:command",
    "rsprs": "rsp_workbench.engines.rsprs:command",
    "esper": "rsp_workbench.engines.esper:command",
    "spark-streaming": "rsp_workbench.engines.sparkstream:command",
}


#: Program engine type → ``"module:function"`` that says, before anything runs, whether the engine can
#: run a query: the function takes the protocol's register messages and returns for each None, or the
#: reason in one line (``rspwb validate`` asks it, once for all of an experiment's).
PROGRAM_CHECKS: dict[str, str] = {
    "spark-streaming": "rsp_workbench.engines.sparkstream:check",
}


def program_checks(engine_type: str, registers: list[dict[str, Any]]) -> list[str | None]:
    """Whether the program engine ``engine_type`` refuses each register message (the reason), or None."""
    target = PROGRAM_CHECKS.get(engine_type)
    if target is None or not registers:
        return [None] * len(registers)
    module_name, _, function = target.partition(":")
    return [None if verdict is None else str(verdict)
            for verdict in getattr(importlib.import_module(module_name), function)(registers)]


def program_command(config: EngineConfig) -> list[str]:
    """The command line of a shipped program engine (UserError saying how to install it)."""
    module_name, _, function = PROGRAM_COMMANDS[config.type].partition(":")
    return list(getattr(importlib.import_module(module_name), function)(config))


def register_engine(type_name: str, target: str) -> None:
    """Add or replace a plug-in: ``target`` is ``"package.module:ClassName"``."""
    if ":" not in target:
        raise ValueError("target must look like 'package.module:ClassName'")
    ENGINE_REGISTRY[type_name] = target


def engine_types() -> list[str]:
    """Every engine type an experiment may name: class engines, program engines, ``external``."""
    return sorted([*ENGINE_REGISTRY, *PROGRAM_ENGINES, EXTERNAL_TYPE])


def engine_class(type_name: str) -> type[Engine]:
    """The Engine subclass registered under ``type_name`` (imports its module now)."""
    try:
        target = ENGINE_REGISTRY[type_name]
    except KeyError:
        known = ", ".join(engine_types())
        raise UserError(f"unknown engine type {type_name!r}; expected one of {known}", field="type") from None
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and module_name.startswith(error.name):
            raise UserError(f"engine type {type_name!r} is not available (no module {module_name})", field="type") from None
        raise
    cls = getattr(module, class_name)
    if not (isinstance(cls, type) and issubclass(cls, Engine)):
        raise TypeError(f"{target} is not an Engine subclass")
    return cls


def create_engine(config: EngineConfig) -> Engine:
    """Instantiate the engine ``config.type`` (not registered yet: call ``register_engine``)."""
    return engine_class(config.type)(config)
