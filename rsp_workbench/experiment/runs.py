"""Expanding an experiment into concrete runs, and the ``${NAME}`` templates they fill.

Runs are the Cartesian product *combinations × repetitions × engines × queries*, where the
combinations are the explicit ``cases`` × the ``sweep`` product laid over ``variables``
(YABench's ``tests``: the same query templates with varying parameters). Everything that
may hold a template (query text, generator parameters, flow settings, engine parameters)
is resolved and validated here, once per combination, so that ``load_experiment`` can
reject a bad value for any combination before anything runs.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from rsp_workbench.core.time import parse_duration
from rsp_workbench.engine import MATCHERS
from rsp_workbench.errors import UserError, quoted, unknown_key_message
from rsp_workbench.experiment.model import (
    EVICTION_STRATEGIES,
    EngineSpec,
    Experiment,
    FlowSpec,
    RunSpec,
    RunStream,
    Scalar,
    StreamSpec,
)
from rsp_workbench.experiment.source import join_path
from rsp_workbench.query.template import MissingTemplateVariable, fill_template, fill_typed, find_placeholders

if TYPE_CHECKING:
    from rsp_workbench.generators import GeneratorSpec

VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# What every window engine (secret, naive, incremental: rsp_workbench.engines._windowed) takes.
_WINDOWED_PARAMETERS: dict[str, tuple[str, bool]] = {
    "t0": ("t0", False),  # a duration, or a list with one per window (overrides semantics.t0)
    "report_window": ("index", False),  # the window the report policy is tied to (RSP-QL Example 9)
    "matcher": ("matcher", False),
}
# Engine parameters per engine type: name -> (kind, required). Kinds are checked in
# ``_engine_parameter``; the engines themselves interpret the values.
ENGINE_PARAMETERS: dict[str, dict[str, tuple[str, bool]]] = {
    "secret": {
        **_WINDOWED_PARAMETERS,
        "drift_ms": ("non-negative-number", False),  # faults.border_drift: constant shift
        "drift_per_element_ms": ("non-negative-number", False),  # … plus this much per window element
    },
    "naive": {"tbox": ("file", False), **_WINDOWED_PARAMETERS},
    "incremental": {"tbox": ("file", False), **_WINDOWED_PARAMETERS},
    "eviction": {
        "strategy": ("strategy", True),
        "cache_size": ("positive-int", True),
        "seed": ("int", False),  # random eviction
        "likelihoods": ("file", False),  # likelihood: estimates saved from an unbounded run
        "training": ("file", False),  # likelihood: a stream to estimate them from
        "training_format": ("string", False),
    },
    "null": {},  # answers `done` only: the test stand's own ceiling (rsp_workbench/engines/null.py)
    "rspjs": {
        "log": ("string", False),  # `stderr`: keep RSP-JS's console output in stderr.log (default: dropped)
        "startup_timeout": ("duration", False),
    },
    "rsprs": {
        "close_stream": ("bool", False),  # on close, rsp-rs's own close_stream sentinel (engines/rsprs/README.md)
        "startup_timeout": ("duration", False),
    },
    "esper": {  # the EPL combination (engines/esper/README.md; each picks its preset, engine.PROGRAM_ENGINES)
        "window": ("choice:time_batch|time", False),  # #time_batch(ω[, reference point]) or #time(ω) + output every β
        "reference_point": ("duration", False),  # time_batch's reference point (application time)
        "output": ("choice:snapshot|all", False),  # window time: output snapshot|all every β
        "stream": ("choice:istream|rstream", False),  # the EPL select's stream keyword
        "heap": ("string", False),  # the JVM's -Xmx, e.g. 512m
        "startup_timeout": ("duration", False),
    },
    "spark-streaming": {  # Structured Streaming's own settings (engines/sparkstream/README.md; output picks the preset)
        "output": ("choice:append|update|complete", False),  # the output mode
        "watermark": ("duration-or-none", False),  # withWatermark's delay; `none`: no watermark
        "trigger": ("choice:stimulus|available-now", False),  # processAllAvailable per stimulus, or AvailableNow
        "window_start": ("duration", False),  # window()'s startTime: the windows' offset from 0
        "master": ("string", False),  # the Spark master (else RSPWB_SPARK_MASTER, the settings file, local[*])
        "partitions": ("positive-int", False),  # spark.sql.shuffle.partitions (the state stores): 1
        "checkpoint": ("string", False),  # the checkpoint folder (a shared one on a cluster); else a temporary one
        "heap": ("string", False),  # spark.driver.memory: the driver's -Xmx, e.g. 2g (Spark's default: 1g)
        "startup_timeout": ("duration", False),
        "stimulus_timeout": ("duration", False),  # a micro-batch per stimulus: more than the stand's 30 s on a loaded machine
    },
    "external": {
        "command": ("command", True),
        "cwd": ("directory", False),
        "env": ("env", False),
        "startup_timeout": ("duration", False),
        # declarations for the oracle (the program may read them from `register` too):
        # the t0 the engine uses and the window its report policy is tied to
        "t0": ("t0", False),
        "report_window": ("index", False),
    },
}


def template_variables(text: str) -> tuple[str, ...]:
    """The distinct variable names referenced by ``text``, in order of first use (the rule of
    `rsp_workbench.query.template`: ``${NAME}`` and ``%NAME%``; malformed ``${`` is a UserError)."""
    return tuple(dict.fromkeys(p.name for p in find_placeholders(text) if p.style != "escape"))


def fill_value(value: Any, variables: Mapping[str, Scalar]) -> Any:
    """Fill templates inside a YAML value; a string that is exactly one placeholder takes the value's type."""
    if isinstance(value, str):
        return fill_typed(value, variables)
    if isinstance(value, list):
        return [fill_value(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: fill_value(item, variables) for key, item in value.items()}
    return value


def value_variables(value: Any) -> tuple[str, ...]:
    """Variable names referenced anywhere inside a YAML value."""
    if isinstance(value, str):
        return template_variables(value)
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    names: dict[str, None] = {}
    for item in items:
        for name in value_variables(item):
            names.setdefault(name, None)
    return tuple(names)


def derive_seed(seed: int, repetition: int) -> int:
    """The seed of repetition ``repetition`` (0-based): the experiment seed itself for the first,
    then the first 8 bytes of ``sha256("rspwb-seed:{seed}:{repetition}")`` as a big-endian
    integer shifted right by one bit (non-negative, fits a Java ``long``).

    The seed does not depend on the engine, the query or the variables, so all engines and
    queries of a repetition see the same stream (Heaven's comparability, R.1), and a
    one-repetition experiment reproduces a generator run with the experiment seed.
    """
    if repetition == 0:
        return seed
    digest = hashlib.sha256(f"rspwb-seed:{seed}:{repetition}".encode("ascii")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def derive_stream_seed(seed: int, iri: str) -> int:
    """The seed of stream ``iri`` of a ``streams:`` experiment in a run with seed ``seed``:
    the first 8 bytes of ``sha256("rspwb-stream-seed:{seed}:{iri}")`` big-endian, shifted
    right by one bit. Two generated streams of one run thus differ even with the same
    generator and parameters, and a stream keeps its data when others are added or reordered.
    """
    digest = hashlib.sha256(f"rspwb-stream-seed:{seed}:{iri}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def variable_combinations(experiment: Experiment) -> list[dict[str, Scalar]]:
    """cases (or one empty case) × the sweep product (first sweep variable varies slowest),
    each laid over ``variables``; cases and sweep values override same-named variables."""
    names = list(experiment.sweep)
    combos = []
    for case in experiment.cases or ({},):
        for values in itertools.product(*(experiment.sweep[name] for name in names)):
            combo: dict[str, Scalar] = dict(experiment.variables)
            combo.update(case)
            combo.update(zip(names, values))
            combos.append(combo)
    return combos


def _error(experiment: Experiment, path: str, message: str, *, key: bool = False) -> UserError:
    source = experiment.source
    return UserError(
        message,
        file=str(experiment.file) if experiment.file is not None else None,
        line=source.line(path, key=key) if source else None,
        field=source.origin(path) if source else path,
    )


def _context(raw: Any, variables: Mapping[str, Scalar]) -> str:
    used = [name for name in value_variables(raw) if name in variables]
    if not used:
        return ""
    return " (with " + ", ".join(f"{name}={variables[name]!r}" for name in used) + ")"


def _fill(experiment: Experiment, raw: Any, variables: Mapping[str, Scalar], path: str) -> Any:
    try:
        return fill_value(raw, variables)
    except MissingTemplateVariable as missing:
        raise _error(experiment, path, f"uses ${{{missing.name}}}, which is not defined in variables, sweep or cases") from None
    except UserError as error:
        raise _error(experiment, path, error.message) from None


def _generator_spec(experiment: Experiment, name: str, path: str = "stream") -> "GeneratorSpec | None":
    """The generator's spec, or None while its module is not written yet (params then unchecked)."""
    from rsp_workbench.generators import GENERATOR_MODULES, generator_spec

    try:
        return generator_spec(name)
    except UserError as error:
        raise _error(experiment, join_path(path, "generator"), error.message) from None
    except ModuleNotFoundError as error:
        if error.name == GENERATOR_MODULES.get(name):
            return None
        raise


def resolve_stream_params(
    experiment: Experiment, variables: Mapping[str, Scalar], stream: StreamSpec | None = None
) -> tuple[dict[str, Any], bool]:
    """Generator parameters of ``stream`` (default: the first) for one combination, typed
    and defaulted by the generator's spec.

    Returns ``(params, takes_seed)``; ``takes_seed`` is True when the generator has a
    ``seed`` parameter the experiment leaves unset (the run's seed fills it).
    """
    stream = stream or experiment.stream
    if stream.generator is None:
        return {}, False
    base = join_path(stream.path, "params")
    filled = _fill(experiment, dict(stream.params), variables, base)
    spec = _generator_spec(experiment, stream.generator, stream.path)
    if spec is None:
        return filled, False
    for name, raw in stream.params.items():
        path = join_path(base, name)
        try:
            spec.param(name).parse(filled[name])
        except UserError as error:
            raise _error(experiment, path, error.message + _context(raw, variables), key=error.message.startswith("unknown")) from None
    try:
        resolved = spec.resolve(filled)
        from rsp_workbench.generators import check_generator_params

        check_generator_params(stream.generator, resolved)  # ranges and volume, as generation will check them
    except UserError as error:
        field = (error.field or "").removeprefix("param ")
        raw = stream.params.get(field) if field else None
        raise _error(experiment, join_path(base, field) if field else base, error.message + _context(raw, variables)) from None
    takes_seed = "seed" not in stream.params and any(p.name == "seed" for p in spec.params)
    return resolved, takes_seed


def resolve_flow(
    experiment: Experiment, variables: Mapping[str, Scalar], stream: StreamSpec | None = None
) -> tuple[FlowSpec | None, bool]:
    """The flow shape of ``stream`` (default: the first) with its settings filled for one
    combination, checked by the flow module.

    Returns ``(flow, takes_seed)``; ``takes_seed`` is True for a random shape whose ``seed``
    the experiment leaves unset (the run's seed fills it).
    """
    stream = stream or experiment.stream
    flow = stream.flow
    if flow is None:
        return None, False
    base = join_path(stream.path, "flow")
    settings = _fill(experiment, dict(flow.settings), variables, base)
    try:
        from rsp_workbench.generators.flows import FLOW_SHAPES, FlowShape
    except ModuleNotFoundError as error:  # the flow module is not written yet: shape name checked only
        if error.name != "rsp_workbench.generators.flows":
            raise
        return FlowSpec(flow.shape, settings), False
    try:
        FlowShape.from_settings(flow.shape, settings, field=base)
    except UserError as error:
        path = error.field or base
        name = path.removeprefix(base + ".")
        raw = flow.settings.get(name)
        unknown = error.message.startswith("unknown setting")
        raise _error(experiment, path, error.message + _context(raw, variables), key=unknown) from None
    takes_seed = "seed" not in settings and any(spec.name == "seed" for spec in FLOW_SHAPES.get(flow.shape, ()))
    return FlowSpec(flow.shape, settings), takes_seed


def resolve_engine_parameters(
    experiment: Experiment, index: int, engine: EngineSpec, variables: Mapping[str, Scalar]
) -> dict[str, Any]:
    """Typed engine parameters for one combination; errors name ``engines[i].parameters.KEY``."""
    base = f"engines[{index}].parameters"
    allowed = ENGINE_PARAMETERS[engine.type]
    resolved: dict[str, Any] = {}
    for name, raw in engine.parameters.items():
        path = join_path(base, name)
        if name not in allowed:
            raise _error(experiment, path, unknown_key_message(str(name), allowed, f"{engine.type} engine parameter"), key=True)
        value = _fill(experiment, raw, variables, path)
        kind = allowed[name][0]
        try:
            resolved[name] = _engine_parameter(experiment.base_dir, kind, value)
        except _BadValue as bad:
            raise _error(experiment, path, str(bad) + _context(raw, variables)) from None
    for name, (_, required) in allowed.items():
        if required and name not in resolved:
            raise _error(experiment, join_path(base, name), f"is required for {engine.type} engines", key=True)
    _check_contradictions(experiment, index, engine, resolved)
    if engine.type == "external":
        resolved.setdefault("cwd", str(experiment.base_dir))  # parameters travel as JSON
    return resolved


def _check_contradictions(experiment: Experiment, index: int, engine: EngineSpec, resolved: Mapping[str, Any]) -> None:
    """Parameters that would silently do nothing, or say the opposite of the semantics, are errors."""
    base = f"engines[{index}].parameters"
    for name in ("drift_ms", "drift_per_element_ms"):
        if name in resolved and not engine.faults.get("border_drift"):
            raise _error(experiment, join_path(base, name),
                         f"{name} only applies with the border_drift fault; add faults: {{border_drift: true}}", key=True)
    if "t0" in resolved and "t0" in engine.semantics_overrides:
        raise _error(experiment, join_path(base, "t0"),
                     "t0 is set both here and in semantics.t0; keep one (a list here sets one t0 per window)", key=True)


class _BadValue(Exception):
    pass


def choice_values(kind: str) -> tuple[str, ...] | None:
    """The values of a closed-set parameter kind written ``choice:a|b|c``; None for other kinds."""
    return tuple(kind.removeprefix("choice:").split("|")) if kind.startswith("choice:") else None


def check_engine_parameters(engine_type: str, parameters: Mapping[str, Any], base_dir: Path,
                            option: str = "--param") -> dict[str, Any]:
    """Engine parameters given outside an experiment file (``rspwb probe --param``), typed and
    checked as an experiment's are; the error names the option and the parameter."""
    allowed = ENGINE_PARAMETERS.get(engine_type, {})
    resolved: dict[str, Any] = {}
    for name, value in parameters.items():
        if name not in allowed:
            raise UserError(unknown_key_message(name, allowed, f"{engine_type} engine parameter"),
                            field=f"{option} {name}")
        try:
            resolved[name] = _engine_parameter(base_dir, allowed[name][0], value)
        except _BadValue as bad:
            raise UserError(str(bad), field=f"{option} {name}") from None
    for name, (_, required) in allowed.items():
        if required and name not in resolved:
            raise UserError(f"is required for {engine_type} engines", field=f"{option} {name}")
    return resolved


def _engine_parameter(base_dir: Path, kind: str, value: Any) -> Any:
    if kind == "positive-int":
        if isinstance(value, str) and value.strip().lstrip("+").isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise _BadValue(f"expected a positive integer, got {quoted(value)}")
        return value
    if kind == "int":
        if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise _BadValue(f"expected an integer, got {quoted(value)}")
        return value
    if kind == "index":
        if isinstance(value, str) and value.strip().lstrip("+").isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _BadValue(f"expected a window index (0 = the query's first window), got {quoted(value)}")
        return value
    if kind == "non-negative-number":
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or value == float("inf"):
            raise _BadValue(f"expected a number ≥ 0 (milliseconds), got {quoted(value)}")
        return value
    if kind == "t0":
        try:
            if isinstance(value, list):
                if not value:
                    raise _BadValue("expected a duration or a non-empty list with one duration per window, got []")
                return [parse_duration(item) for item in value]
            return parse_duration(value)
        except UserError as error:
            raise _BadValue(f"{error.message} (t0 is a duration, or a list with one per window)") from None
    if kind == "matcher":
        if value not in MATCHERS:
            raise _BadValue(f"{quoted(value)} is not one of {', '.join(MATCHERS)}")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise _BadValue(f"expected true or false, got {quoted(value)}")
        return value
    if kind == "string":
        if not isinstance(value, str) or not value.strip():
            raise _BadValue(f"expected a non-empty string, got {quoted(value)}")
        return value
    choices = choice_values(kind)
    if choices is not None:
        if value not in choices:
            raise _BadValue(f"{value!r} is not one of {', '.join(choices)}")
        return value
    if kind == "strategy":
        if value not in EVICTION_STRATEGIES:
            raise _BadValue(f"{quoted(value)} is not one of {', '.join(EVICTION_STRATEGIES)}")
        return value
    if kind in ("file", "directory"):
        if not isinstance(value, str) or not value.strip():
            raise _BadValue(f"expected a path, got {quoted(value)}")
        path = base_dir / value
        ok = path.is_dir() if kind == "directory" else path.is_file()
        if not ok:
            raise _BadValue(f"{kind} not found: {value} (paths are relative to the experiment file)")
        return str(path)  # parameters travel to engine processes as JSON
    if kind == "command":
        if not isinstance(value, list) or not value or not all(isinstance(item, str) and item for item in value):
            raise _BadValue(
                f"expected a non-empty list of strings (program and arguments, no shell), got {quoted(value)}"
            )
        return tuple(value)
    if kind == "env":
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, (str, int, float)) and not isinstance(v, bool) for k, v in value.items()
        ):
            raise _BadValue(f"expected a mapping of names to strings, got {quoted(value)}")
        return {k: str(v) for k, v in value.items()}
    if kind == "duration-or-none":  # e.g. a watermark delay, or `none` for no watermark at all
        if value == "none":
            return value
        kind = "duration"
    if kind == "duration":
        try:
            return parse_duration(value)
        except UserError as error:
            raise _BadValue(error.message) from None
    raise AssertionError(kind)  # pragma: no cover


def resolve_query_text(experiment: Experiment, index: int, variables: Mapping[str, Scalar]) -> str:
    query = experiment.queries[index]
    path = f"queries[{index}].file" if query.file is not None else f"queries[{index}].text"
    try:
        return fill_template(query.template, variables)
    except MissingTemplateVariable as missing:
        raise _error(experiment, path, f"query {query.id} uses ${{{missing.name}}}, which is not defined in variables, sweep or cases") from None
    except UserError as error:
        raise _error(experiment, path, f"query {query.id}: {error.message}") from None


@dataclass(frozen=True)
class ResolvedStream:
    """One stream of one combination: parameters and flow filled; whether the run seed fills their seeds."""

    spec: StreamSpec
    params: Mapping[str, Any]
    takes_seed: bool
    flow: FlowSpec | None
    flow_takes_seed: bool

    def for_seed(self, seed: int) -> RunStream:
        """The run's stream: an unset generator or random-flow ``seed`` is ``seed``."""
        params = dict(self.params)
        if self.takes_seed:
            params["seed"] = seed
        flow = self.flow
        if flow is not None and self.flow_takes_seed:
            flow = FlowSpec(flow.shape, {**flow.settings, "seed": seed})
        return RunStream(self.spec, params, flow)


@dataclass(frozen=True)
class ResolvedCase:
    """Everything of one variable combination that does not depend on the repetition."""

    variables: Mapping[str, Scalar]
    streams: tuple[ResolvedStream, ...]
    engine_parameters: tuple[Mapping[str, Any], ...]
    query_texts: tuple[str, ...]


def resolve_case(experiment: Experiment, variables: Mapping[str, Scalar]) -> ResolvedCase:
    """Fill and validate every template of the experiment for one combination."""
    streams = []
    for stream in experiment.streams:
        params, takes_seed = resolve_stream_params(experiment, variables, stream)
        flow, flow_takes_seed = resolve_flow(experiment, variables, stream)
        streams.append(ResolvedStream(stream, params, takes_seed, flow, flow_takes_seed))
    return ResolvedCase(
        variables=dict(variables),
        streams=tuple(streams),
        engine_parameters=tuple(
            resolve_engine_parameters(experiment, i, engine, variables) for i, engine in enumerate(experiment.engines)
        ),
        query_texts=tuple(resolve_query_text(experiment, i, variables) for i in range(len(experiment.queries))),
    )


def expand_runs(experiment: Experiment) -> list[RunSpec]:
    """Concrete runs in order combinations × repetitions × engines × queries.

    For a named size, expand ``apply_size(experiment, size)`` (loader). Run ids are
    ``case{c}-rep{r}-{engine}-{query}`` (0-based), safe as folder names.
    """
    runs: list[RunSpec] = []
    for case_index, variables in enumerate(variable_combinations(experiment)):
        case = resolve_case(experiment, variables)
        for repetition in range(experiment.repetitions):
            seed = derive_seed(experiment.seed, repetition)
            streams = tuple(
                resolved.for_seed(seed if resolved.spec.iri is None else derive_stream_seed(seed, resolved.spec.iri))
                for resolved in case.streams
            )
            for engine_index, engine in enumerate(experiment.engines):
                for query_index, query in enumerate(experiment.queries):
                    runs.append(
                        RunSpec(
                            index=len(runs),
                            run_id=f"case{case_index}-rep{repetition}-{engine.id}-{query.id}",
                            case_index=case_index,
                            repetition=repetition,
                            variables=case.variables,
                            engine=engine,
                            engine_parameters=case.engine_parameters[engine_index],
                            query=query,
                            query_text=case.query_texts[query_index],
                            streams=streams,
                            seed=seed,
                        )
                    )
    return runs


def combination_count(experiment: Experiment) -> int:
    """Number of variable combinations, counted without listing them (a sweep may be huge)."""
    count = len(experiment.cases) or 1
    for values in experiment.sweep.values():
        count *= len(values)
    return count


def count_runs(experiment: Experiment) -> int:
    """Number of runs ``expand_runs`` would produce, without resolving (or listing) anything."""
    return combination_count(experiment) * experiment.repetitions * len(experiment.engines) * len(experiment.queries)


#: Runs one experiment may have unless the user allows more (``--max-runs``): a typo such as
#: ``repetitions: 1000000000`` or a 1000 × 1000 sweep fails in a second instead of running for months.
MAX_RUNS = 10_000
_max_runs: contextvars.ContextVar[int] = contextvars.ContextVar("max_runs", default=MAX_RUNS)


@contextlib.contextmanager
def allowing_runs(limit: int | None) -> Iterator[None]:
    """Within the block, experiments may have up to ``limit`` runs (None: the default :data:`MAX_RUNS`)."""
    token = _max_runs.set(MAX_RUNS if limit is None else limit)
    try:
        yield
    finally:
        _max_runs.reset(token)


def check_run_count(experiment: Experiment) -> None:
    """A `UserError` at the field that multiplies the most when the experiment has more runs than allowed."""
    limit = _max_runs.get()
    runs = count_runs(experiment)
    if runs <= limit:
        return
    factors = {"repetitions": experiment.repetitions, "sweep": combination_count(experiment) // (len(experiment.cases) or 1),
               "cases": len(experiment.cases), "engines": len(experiment.engines), "queries": len(experiment.queries)}
    field = max((name for name in factors if name in experiment.raw), key=lambda name: factors[name], default="repetitions")
    raise _error(experiment, field,
                 f"{runs:,} runs ({combination_count(experiment):,} variable combinations × {experiment.repetitions:,} "
                 f"repetitions × {len(experiment.engines)} engines × {len(experiment.queries)} queries): more than the "
                 f"{limit:,} runs an experiment may have; pass --max-runs {runs} to allow them")
