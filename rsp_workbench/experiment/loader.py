"""Loading, validating, sizing and saving experiment files (schema: docs/experiment-format.md).

Every problem is a :class:`UserError` naming FILE:LINE and the field path, e.g.
``exp.yaml:14: engines[0].semantics.report: 'windowclose' is not one of …``. Unknown
fields are rejected with a "did you mean" suggestion, because a misspelt optional field
would otherwise silently fall back to a default and change what the experiment measures.
The checks of single fields are ``field_checks``; the ``queries:`` section and the checks of
the filled queries are ``query_section``.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any, Mapping

import yaml

from rsp_workbench.core.semantics import PRESETS, EngineSemantics
from rsp_workbench.engine import PROGRAM_ENGINES
from rsp_workbench.errors import UserError
from rsp_workbench.experiment.field_checks import Checker, describe, is_scalar
from rsp_workbench.experiment.model import (
    END_RULES,
    ENGINE_TYPES,
    FAULTS,
    FLOW_SHAPES,
    KPI_NAMES,
    ORACLE_MATCHES,
    STAND_BATCH_MAX,
    STAND_MODES,
    STATIC_FORMATS,
    STREAM_FILE_FORMATS,
    EngineSpec,
    Experiment,
    FlowSpec,
    KpiSpec,
    OracleSpec,
    Scalar,
    StandSpec,
    StaticData,
    StreamSpec,
)
from rsp_workbench.experiment.query_section import check_stream_bindings, parse_filled_query, query_specs
from rsp_workbench.experiment.runs import VARIABLE_NAME, check_run_count, resolve_case, variable_combinations
from rsp_workbench.experiment.source import SourceMap, is_identifier, join_path, load_yaml
from rsp_workbench.query.writer import check_dialect

TOP_LEVEL_FIELDS = (
    "name", "description", "seed", "repetitions", "variables", "sweep", "cases", "sizes",
    "stream", "streams", "static", "queries", "engines", "kpis", "oracle", "stand", "spark",
)
REQUIRED_TOP_LEVEL = ("name", "queries", "engines")  # and exactly one of stream / streams
SIZE_FIELDS = tuple(f for f in TOP_LEVEL_FIELDS if f not in ("name", "description", "sizes"))

_STATIC_SUFFIXES = {
    ".ttl": "turtle", ".nt": "ntriples", ".n3": "n3", ".rdf": "xml", ".owl": "xml", ".xml": "xml",
    ".jsonld": "json-ld", ".json": "json-ld", ".trig": "trig", ".nq": "nquads",
}
_STREAM_SUFFIXES = {".stream": "yabench", ".nq": "nquads", ".nquads": "nquads", ".parquet": "parquet"}


# --------------------------------------------------------------------------- sections


def _variables(c: Checker, value: Any, path: str) -> dict[str, Scalar]:
    values = c.names(value, path)
    for name, item in values.items():
        _variable_name(c, name, join_path(path, name))
        if not is_scalar(item):
            raise c.error(join_path(path, name), f"a variable value must be text, a number or a boolean, got {describe(item)}")
    return dict(values)


def _variable_name(c: Checker, name: str, path: str) -> None:
    if not VARIABLE_NAME.match(name):
        raise c.error(path, f"{name!r} is not a variable name (letters, digits and '_', not starting with a digit)", key=True)


def _sweep(c: Checker, value: Any, path: str) -> dict[str, tuple[Scalar, ...]]:
    sweep: dict[str, tuple[Scalar, ...]] = {}
    for name, items in c.names(value, path).items():
        item_path = join_path(path, name)
        _variable_name(c, name, item_path)
        if not isinstance(items, list) or not items:
            raise c.error(item_path, f"sweep values must be a non-empty list, got {describe(items)}")
        seen: list[Scalar] = []
        for index, item in enumerate(items):
            if not is_scalar(item):
                raise c.error(join_path(item_path, index), f"a variable value must be text, a number or a boolean, got {describe(item)}")
            if any(type(item) is type(other) and item == other for other in seen):
                raise c.error(join_path(item_path, index), f"duplicate sweep value {item!r}")
            seen.append(item)
        sweep[name] = tuple(items)
    return sweep


def _cases(c: Checker, value: Any, path: str) -> tuple[dict[str, Scalar], ...]:
    if value is None:
        return ()
    cases: list[dict[str, Scalar]] = []
    for index, item in enumerate(c.sequence(value, path, nonempty=True)):
        case = _variables(c, item if item is not None else {}, join_path(path, index))
        if case in cases:
            raise c.error(join_path(path, index), f"same combination as cases[{cases.index(case)}]")
        cases.append(case)
    return tuple(cases)


def _sizes(c: Checker, value: Any, path: str) -> dict[str, dict[str, Any]]:
    sizes: dict[str, dict[str, Any]] = {}
    for name, item in c.names(value, path).items():
        item_path = join_path(path, name)
        if not is_identifier(name):
            raise c.error(item_path, f"{name!r} is not a size name (letters, digits, '_' and '-')", key=True)
        if item is None:
            item = {}
        if not isinstance(item, dict):
            raise c.error(item_path, f"expected a mapping of overrides, got {describe(item)}")
        for key in item:
            if key in ("name", "description", "sizes"):
                raise c.error(join_path(item_path, key), f"a size cannot override {key!r}", key=True)
        c.mapping(item, item_path, SIZE_FIELDS)
        sizes[name] = item
    return sizes


def _static(c: Checker, value: Any, path: str) -> tuple[StaticData, ...]:
    if value is None:
        return ()
    result = []
    for index, item in enumerate(c.sequence(value, path)):
        item_path = join_path(path, index)
        if isinstance(item, str):
            item = {"file": item}
            file_path = item_path
        else:
            c.mapping(item, item_path, ("file", "graph", "format"), ("file",))
            file_path = join_path(item_path, "file")
        file = c.existing(item["file"], file_path)
        if item.get("format") is not None:
            fmt = c.choice(item["format"], join_path(item_path, "format"), STATIC_FORMATS)
        else:
            fmt = _STATIC_SUFFIXES.get(file.suffix.lower(), "")
            if not fmt:
                raise c.error(file_path, f"cannot tell the RDF format of {item['file']!r} from its extension; set format: ({', '.join(STATIC_FORMATS)})")
        graph = c.string(item["graph"], join_path(item_path, "graph")) if item.get("graph") is not None else None
        result.append(StaticData(file=file, format=fmt, graph=graph))
    return tuple(result)


def _flow(c: Checker, value: Any, path: str) -> FlowSpec | None:
    if value is None:
        return None
    settings = dict(c.names(value, path))
    if "shape" not in settings:
        raise c.error(join_path(path, "shape"), "is required")
    shape = c.choice(settings.pop("shape"), join_path(path, "shape"), FLOW_SHAPES)
    return FlowSpec(shape=shape, settings=settings)


def _stream(c: Checker, value: Any, iri: str | None = None) -> StreamSpec:
    """One stream: ``stream:`` (``iri`` None) or the value of ``streams: {IRI: …}``."""
    path = StreamSpec(iri=iri).path  # "stream" or "streams.<iri>": where errors point

    def field(name: str) -> str:
        return join_path(path, name)

    stream = c.mapping(value, path, ("generator", "params", "file", "format", "interval", "flow"))
    has_generator = stream.get("generator") is not None
    has_file = stream.get("file") is not None
    if has_generator and has_file:
        raise c.error(field("file"), "set either 'file' (a recorded stream) or 'generator', not both", key=True)
    if not has_generator and not has_file:
        raise c.error(path, "needs 'file' (a recorded stream) or 'generator'")
    flow = _flow(c, stream.get("flow"), field("flow"))
    if has_generator:
        for key in ("format", "interval"):
            if key in stream:
                raise c.error(field(key), f"'{key}' applies to stream files, not to generators", key=True)
        generator = c.string(stream["generator"], field("generator"))
        params = dict(c.names(stream.get("params"), field("params")))
        return StreamSpec(generator=generator, params=params, flow=flow, iri=iri)
    if "params" in stream:
        raise c.error(field("params"), "'params' applies to generators, not to stream files", key=True)
    file = c.existing(stream["file"], field("file"), directory=None)
    if stream.get("format") is not None:
        fmt = c.choice(stream["format"], field("format"), STREAM_FILE_FORMATS)
    elif file.is_dir():
        fmt = "csrbench-dir"
    else:
        fmt = _STREAM_SUFFIXES.get(file.suffix.lower(), "")
        if not fmt:
            raise c.error(field("file"), f"cannot tell the stream format of {stream['file']!r} from its extension; set format: ({', '.join(STREAM_FILE_FORMATS)})")
    if (fmt == "csrbench-dir") != file.is_dir():
        raise c.error(field("file"), f"format {fmt} expects a {'directory' if fmt == 'csrbench-dir' else 'file'}: {stream['file']}")
    interval: int | None = None
    if fmt == "csrbench-dir":
        interval = c.duration(stream.get("interval", "1s"), field("interval"), positive=True)
    elif "interval" in stream:
        raise c.error(field("interval"), "'interval' applies to csrbench-dir streams only (time of data_NN.ttl = NN × interval)", key=True)
    return StreamSpec(file=file, format=fmt, interval_ms=interval, flow=flow, iri=iri)


def _streams(c: Checker, top: dict[str, Any]) -> tuple[StreamSpec, ...]:
    """``stream:`` (one stream every window reads) or ``streams:`` (stream IRI → stream, bound
    to the windows over that IRI); exactly one of the two."""
    if top.get("stream") is not None and top.get("streams") is not None:
        raise c.error("streams", "set either 'stream' (one stream) or 'streams' (several, by IRI), not both", key=True)
    if top.get("streams") is None:
        if top.get("stream") is None:
            raise c.error("stream", "is required (or 'streams': stream IRI → stream, for several streams)", key=True)
        return (_stream(c, top["stream"]),)
    named = c.names(top["streams"], "streams")
    if not named:
        raise c.error("streams", "must name at least one stream (stream IRI → file or generator)")
    streams = []
    for iri in named:
        if iri.startswith("<") or iri.endswith(">"):
            raise c.error(join_path("streams", iri), f"write the stream IRI without angle brackets: {iri.strip('<>')}", key=True)
        scheme, colon, rest = iri.partition(":")
        if not colon or not scheme or not rest or not scheme[0].isalpha() or any(ch.isspace() or ch in '<>"{}|\\^`' for ch in iri):
            raise c.error(join_path("streams", iri), f"{iri!r} is not an absolute IRI (e.g. http://example.org/S_nearby); "
                          "queries name streams by IRI in FROM STREAM <…> / ON <…>", key=True)
        streams.append(_stream(c, named[iri], iri))
    return tuple(streams)


def _engines(c: Checker, value: Any) -> tuple[EngineSpec, ...]:
    engines: list[EngineSpec] = []
    ids: dict[str, int] = {}
    for index, item in enumerate(c.sequence(value, "engines", nonempty=True)):
        path = f"engines[{index}]"
        c.mapping(item, path, ("id", "type", "preset", "semantics", "faults", "parameters", "dialect"), ("id", "type"),
                  what="engine field")
        engine_id = c.identifier(item["id"], join_path(path, "id"))
        if engine_id in ids:
            raise c.error(join_path(path, "id"), f"duplicate engine id {engine_id!r} (also engines[{ids[engine_id]}])")
        ids[engine_id] = index
        engine_type = c.choice(item["type"], join_path(path, "type"), ENGINE_TYPES)
        preset_name = None
        base = EngineSemantics()
        program = PROGRAM_ENGINES.get(engine_type)
        if item.get("preset") is not None:
            preset_name = c.choice(item["preset"], join_path(path, "preset"), tuple(PRESETS))
            base = PRESETS[preset_name]
        elif program is not None:  # a shipped program engine runs under its declared preset
            preset_name = program.preset_for(item.get("parameters") or {})
            base = PRESETS[preset_name]
        dialect = program.dialect if program is not None else None
        if item.get("dialect") is not None:
            try:
                dialect = check_dialect(c.string(item["dialect"], join_path(path, "dialect")))
            except UserError as error:
                raise c.error(join_path(path, "dialect"), error.message) from None
        semantics, overrides = c.semantics(item.get("semantics"), join_path(path, "semantics"), base)
        faults: dict[str, bool] = {}
        if item.get("faults"):
            if engine_type == "external" or program is not None:
                raise c.error(join_path(path, "faults"),
                              f"faults can only be injected into built-in engines, not {engine_type} ones", key=True)
            for key, flag in c.mapping(item["faults"], join_path(path, "faults"), FAULTS, what="fault").items():
                faults[key] = c.boolean(flag, join_path(path, f"faults.{key}"))
        parameters = dict(c.names(item.get("parameters"), join_path(path, "parameters")))
        engines.append(
            EngineSpec(
                id=engine_id, type=engine_type, semantics=semantics, preset=preset_name,
                semantics_overrides=overrides, faults=faults, parameters=parameters, dialect=dialect,
            )
        )
    return tuple(engines)


def _kpis(c: Checker, value: Any) -> KpiSpec:
    if value is None:
        return KpiSpec()
    sampling = 500
    names_path = "kpis"
    names = value
    if isinstance(value, dict):
        c.mapping(value, "kpis", ("collect", "sampling"))
        names_path = "kpis.collect"
        names = value.get("collect", list(KPI_NAMES))
        if value.get("sampling") is not None:
            sampling = c.duration(value["sampling"], "kpis.sampling", positive=True)
    chosen: list[str] = []
    for index, name in enumerate(c.sequence(names, names_path, nonempty=True)):
        c.choice(name, join_path(names_path, index), KPI_NAMES)
        if name in chosen:
            raise c.error(join_path(names_path, index), f"duplicate KPI {name!r}")
        chosen.append(name)
    return KpiSpec(names=tuple(chosen), sampling_ms=sampling)


def _oracle(c: Checker, value: Any) -> OracleSpec:
    if value is None:
        return OracleSpec()
    oracle = c.mapping(value, "oracle", ("system", "semantics", "match", "gracious", "t0", "end", "regroup"))
    system = c.choice(oracle.get("system", "engine"), "oracle.system", ("engine", *PRESETS))
    base = PRESETS.get(system, EngineSemantics())
    _, overrides = c.semantics(oracle.get("semantics"), "oracle.semantics", base)
    match = c.choice(oracle.get("match", "strict"), "oracle.match", ORACLE_MATCHES)
    gracious = c.boolean(oracle.get("gracious", False), "oracle.gracious")
    t0_raw = oracle.get("t0", "all")
    t0 = None if t0_raw == "all" else c.duration(t0_raw, "oracle.t0")
    end_raw = oracle.get("end", "after-last-window")
    end: int | str = end_raw if end_raw in END_RULES else c.duration(end_raw, "oracle.end")
    regroup = None if oracle.get("regroup") is None else c.boolean(oracle["regroup"], "oracle.regroup")
    return OracleSpec(system=system, semantics_overrides=overrides, match=match, gracious=gracious, t0=t0, end=end,
                      regroup=regroup)


def _stand(c: Checker, value: Any) -> StandSpec:
    if value is None:
        return StandSpec()
    stand = c.mapping(value, "stand", ("mode", "time_scale", "timeout", "batch", "max_output_mb", "max_message_mb"))
    return StandSpec(
        mode=c.choice(stand.get("mode", "real-time"), "stand.mode", STAND_MODES),
        time_scale=c.positive_number(stand.get("time_scale", 1.0), "stand.time_scale"),
        timeout_ms=c.duration(stand["timeout"], "stand.timeout", positive=True) if stand.get("timeout") is not None else None,
        batch=c.integer(stand["batch"], "stand.batch", minimum=1, maximum=STAND_BATCH_MAX,
                        why_maximum="a batch also stops at about that many elements")
        if stand.get("batch") is not None else None,
        max_output_mb=c.integer(stand["max_output_mb"], "stand.max_output_mb", minimum=1, maximum=1 << 20,
                                why_maximum="1 TiB of engine output")
        if stand.get("max_output_mb") is not None else None,
        max_message_mb=c.integer(stand["max_message_mb"], "stand.max_message_mb", minimum=1, maximum=4096,
                                 why_maximum="a message is held whole, several times its size once parsed")
        if stand.get("max_message_mb") is not None else None,
    )


def _spark_master(c: Checker, value: Any) -> str | None:
    """``spark: {master: URL}``: where this experiment's Spark jobs run (overrides settings)."""
    if value is None:
        return None
    spark = c.mapping(value, "spark", ("master",))
    return c.string(spark["master"], "spark.master") if spark.get("master") is not None else None


# --------------------------------------------------------------------------- public API


def build_experiment(
    raw: Any,
    *,
    file: str | Path | None = None,
    base_dir: str | Path | None = None,
    source: SourceMap | None = None,
    applied_size: str | None = None,
    check_sizes: bool = True,
) -> Experiment:
    """Validate a plain mapping (as YAML would give it) into an :class:`Experiment`.

    Every variable combination is resolved once, and every size applied once, so that a
    value that only breaks for one sweep value or one size is reported now, not mid-run.
    """
    file_text = str(file) if file is not None else None
    folder = Path(base_dir) if base_dir is not None else (Path(file).parent if file is not None else Path("."))
    source = source or SourceMap()
    c = Checker(file_text, source, folder)
    if raw is None:
        raise UserError("the experiment file is empty", file=file_text, line=1)
    top = c.mapping(raw, "", TOP_LEVEL_FIELDS, REQUIRED_TOP_LEVEL, what="top-level field")
    variables = _variables(c, top.get("variables"), "variables")
    sweep = _sweep(c, top.get("sweep"), "sweep")
    cases = _cases(c, top.get("cases"), "cases")
    for name in sweep:
        clash = next((i for i, case in enumerate(cases) if name in case), None)
        if clash is not None:
            raise c.error(join_path(f"cases[{clash}]", name), f"{name!r} is swept in sweep; a variable comes from sweep or from cases, not both", key=True)
    experiment = Experiment(
        name=c.string(top["name"], "name"),
        description=c.string(top.get("description") or "", "description", allow_empty=True),
        seed=c.integer(top.get("seed", 0), "seed", minimum=0),
        repetitions=c.integer(top.get("repetitions", 1), "repetitions", minimum=1),
        variables=variables,
        sweep=sweep,
        cases=cases,
        sizes=_sizes(c, top.get("sizes"), "sizes"),
        static=_static(c, top.get("static"), "static"),
        streams=_streams(c, top),
        queries=query_specs(c, top["queries"], variables, sweep, cases),
        engines=_engines(c, top["engines"]),
        kpis=_kpis(c, top.get("kpis")),
        oracle=_oracle(c, top.get("oracle")),
        stand=_stand(c, top.get("stand")),
        spark_master=_spark_master(c, top.get("spark")),
        applied_size=applied_size,
        file=Path(file) if file is not None else None,
        base_dir=folder,
        raw=raw,
        source=source,
    )
    check_run_count(experiment)  # before any combination is resolved
    query_texts: dict[tuple[int, str], Mapping[str, Scalar]] = {}
    for combination in variable_combinations(experiment):
        case = resolve_case(experiment, combination)
        for key in enumerate(case.query_texts):
            query_texts.setdefault(key, combination)
    parsed = {key: parse_filled_query(experiment, key[0], key[1], combination)
              for key, combination in query_texts.items()}
    if experiment.named_streams:
        check_stream_bindings(experiment, parsed.items())
    if check_sizes:
        for size in experiment.sizes:
            apply_size(experiment, size)
    return experiment


def loads_experiment(text: str, *, file: str | Path | None = None, base_dir: str | Path | None = None) -> Experiment:
    """Parse and validate experiment YAML text (``file`` names it in errors; paths resolve from ``base_dir``)."""
    raw, source = load_yaml(text, str(file) if file is not None else None)
    return build_experiment(raw, file=file, base_dir=base_dir, source=source)


def load_experiment(path: str | os.PathLike[str]) -> Experiment:
    """Read, parse (``yaml.safe_load`` semantics) and validate an experiment file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError("file not found", file=str(path)) from None
    except UnicodeDecodeError as error:
        raise UserError(f"not UTF-8 text ({error.reason} at byte {error.start})", file=str(path)) from None
    except OSError as error:
        raise UserError(f"cannot read the file: {error.strerror}", file=str(path)) from None
    return loads_experiment(text, file=path, base_dir=path.parent)


def _merge(base: dict[str, Any], override: Mapping[str, Any], path: str, origin: str, aliases: dict[str, str]) -> dict[str, Any]:
    """Deep-merge ``override`` into ``base`` (mappings merge, anything else replaces, null removes)."""
    merged = dict(base)
    for key, value in override.items():
        child, child_origin = join_path(path, key), join_path(origin, key)
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value, child, child_origin, aliases)
        else:
            merged[key] = copy.deepcopy(value)
            aliases[child] = child_origin
    return merged


def _pin(merged: dict[str, Any], override: Mapping[str, Any]) -> None:
    """A size that sets a variable pins it: it leaves the sweep/cases of the base experiment."""
    def keys(name: str) -> set[str]:
        value = override.get(name)
        if isinstance(value, dict):
            return set(value)
        if isinstance(value, list):
            return {key for case in value if isinstance(case, dict) for key in case}
        return set()

    pinned_by_variables, by_sweep, by_cases = keys("variables"), keys("sweep"), keys("cases")
    sweep = merged.get("sweep")
    if isinstance(sweep, dict):
        for name in pinned_by_variables | (by_cases if "cases" in override else set()):
            if "sweep" not in override or name not in override["sweep"]:
                sweep.pop(name, None)
    cases = merged.get("cases")
    if isinstance(cases, list) and "cases" not in override:
        kept: list[Any] = []
        for case in cases:
            if isinstance(case, dict):
                case = {k: v for k, v in case.items() if k not in pinned_by_variables | by_sweep}
            if case not in kept:
                kept.append(case)
        merged["cases"] = kept


def apply_size(experiment: Experiment, size: str) -> Experiment:
    """The experiment with size ``size``'s overrides deep-merged in (``rspwb run --size``).

    Mappings merge key by key, lists and scalars replace, ``null`` removes a field. A
    variable set by the size's ``variables`` (or ``sweep``) is pinned: it is taken out of
    the base experiment's sweep and cases, so ``smoke: {variables: {STATIONS: 5}}`` runs
    STATIONS=5 only. The result has no sizes of its own.
    """
    if size not in experiment.sizes:
        defined = ", ".join(experiment.sizes) if experiment.sizes else "none"
        raise UserError(f"unknown size {size!r}; this experiment defines: {defined}",
                        file=str(experiment.file) if experiment.file else None, field="size")
    override = experiment.sizes[size]
    base = copy.deepcopy({key: value for key, value in experiment.raw.items() if key != "sizes"})
    aliases: dict[str, str] = {}
    merged = _merge(base, override, "", join_path("sizes", size), aliases)
    _pin(merged, override)
    source = (experiment.source or SourceMap()).with_aliases(aliases)
    return build_experiment(
        merged, file=experiment.file, base_dir=experiment.base_dir, source=source,
        applied_size=size, check_sizes=False,
    )


class _Dumper(yaml.SafeDumper):
    """Safe dumper that writes multi-line text (query templates) as literal blocks."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def raw_to_yaml(raw: Mapping[str, Any]) -> str:
    """YAML text of a raw experiment mapping (key order kept, multi-line text as literal blocks)."""
    return yaml.dump(dict(raw), Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False)


def experiment_to_yaml(experiment: Experiment) -> str:
    """YAML text of the experiment as written (key order kept; comments are not kept)."""
    return raw_to_yaml(experiment.raw)


def dump_experiment(experiment: Experiment, path: str | Path) -> None:
    """Write the experiment's YAML to ``path``."""
    Path(path).write_text(experiment_to_yaml(experiment), encoding="utf-8")
