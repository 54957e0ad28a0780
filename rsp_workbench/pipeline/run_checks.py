"""What `run_experiment` checks before anything starts: every run is valid (:func:`validate_runs`)
and judging each one fits in memory (:func:`refuse_what_cannot_fit`).

Split from `run_experiment` so that the checks, and the engine config, static graphs and oracle
settings they build (reused when the runs execute), read on their own.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Mapping, Sequence

from rsp_workbench.errors import UserError
from rsp_workbench.experiment.model import Experiment, RunSpec, RunStream
from rsp_workbench.pipeline.run_streams import stream_key


def _json_parameters(parameters: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in parameters.items():
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        elif isinstance(value, tuple):
            value = list(value)
        out[key] = value
    return out


def engine_config(spec: RunSpec) -> Any:
    """The stand's EngineConfig for a run (preset + overrides + faults from the EngineSpec)."""
    from rsp_workbench.engine import engine_config_from_spec

    return engine_config_from_spec(spec.engine, _json_parameters(spec.engine_parameters))


def static_graphs(static: Mapping[str, Any]) -> Any:
    from rsp_workbench.engine import StaticGraphs

    return StaticGraphs(tuple(map(tuple, static.get("default", ()))),
                        {g: tuple(map(tuple, rows)) for g, rows in (static.get("named") or {}).items()})


def validate_runs(experiment: Experiment, runs: Sequence[RunSpec], static: Mapping[str, Any]) -> None:
    """Reject what would fail for every run, before anything starts (UserError naming engine and query).

    Checks: the engine type exists; its query parses; a built-in engine accepts the query
    (registered in-process, which builds its plan without any data); the external
    command's program exists; a shipped program engine is installed; the query can be
    written in the engine's dialect; the oracle's preset exists and can compute the query.
    """
    from rsp_workbench.engine import EXTERNAL_TYPE, PROGRAM_ENGINES
    from rsp_workbench.engines import create_engine
    from rsp_workbench.oracle.judge import oracle_semantics
    from rsp_workbench.query.parser import parse_query
    from rsp_workbench.query.writer import write_query
    from rsp_workbench.stand.host import engine_command

    seen: set[tuple[str, str, str]] = set()
    graphs = static_graphs(static)
    for spec in runs:
        key = (spec.engine.id, spec.query.id, spec.query_text)
        if key in seen:
            continue
        seen.add(key)
        where = f"engine {spec.engine.id}, query {spec.query.id}"
        config = engine_config(spec)
        try:
            argv = engine_command(config)
        except UserError as error:
            raise UserError(f"{where}: {error.message}", file=_file(experiment), field=f"engines.{spec.engine.id}") from None
        try:
            query = parse_query(spec.query_text, syntax=spec.query.syntax)
        except UserError as error:
            if spec.query.file is not None:  # the position is in the query file
                raise error.located(file=str(spec.query.file), field=f"queries.{spec.query.id}") from None
            inner = UserError(error.message, line=error.line, column=error.column)
            raise UserError(f"{where}: query text {inner}", file=_file(experiment),
                            field=f"queries.{spec.query.id}") from None
        _check_stream_bindings(experiment, spec, query)
        if config.dialect is not None:
            try:
                write_query(query, config.dialect)
            except UserError as error:
                raise UserError(f"{where}: {error.message}", file=_file(experiment),
                                field=f"engines.{spec.engine.id}.dialect") from None
        if config.type in PROGRAM_ENGINES:
            pass  # a shipped program: engine_command above checked that it is installed
        elif config.type == EXTERNAL_TYPE:
            program = argv[0]
            cwd = spec.engine_parameters.get("cwd") or experiment.base_dir
            if shutil.which(program) is None and not (Path(cwd) / program).is_file():
                raise UserError(f"{where}: external command {program!r} not found", file=_file(experiment),
                                field=f"engines.{spec.engine.id}.parameters.command")
        else:
            try:
                engine = create_engine(config)
                engine.register(query, graphs)
                engine.close()
            except UserError as error:
                raise UserError(f"{where}: the engine cannot run this query: {error.message}", file=_file(experiment),
                                field=f"engines.{spec.engine.id}") from None
        try:
            oracle_semantics(oracle_settings(experiment), spec.engine.semantics)
        except (UserError, KeyError, ValueError) as error:
            message = error.message if isinstance(error, UserError) else str(error)
            raise UserError(f"oracle: {message}", file=_file(experiment), field="oracle.system") from None


def _check_stream_bindings(experiment: Experiment, spec: RunSpec, query: Any) -> None:
    """In a ``streams:`` experiment every window must name a declared stream IRI (the loader checks it too)."""
    from rsp_workbench.experiment.query_section import undeclared_stream_error

    index = next(i for i, q in enumerate(experiment.queries) if q.id == spec.query.id)
    error = undeclared_stream_error(experiment, index, query)
    if error is not None:
        raise error


def _file(experiment: Experiment) -> str | None:
    return str(experiment.file) if experiment.file is not None else None


def oracle_settings(experiment: Experiment) -> dict[str, Any]:
    oracle = experiment.oracle
    raw_t0 = (experiment.raw.get("oracle") or {}).get("t0") if isinstance(experiment.raw.get("oracle"), Mapping) else None
    return {
        "system": oracle.system,
        "semantics_overrides": dict(oracle.semantics_overrides),
        "match": oracle.match,
        "gracious": oracle.gracious,
        # an explicit `t0: all` enumerates the admissible set; unset: the semantics' own t0 if it fixes one
        "t0": "all" if raw_t0 == "all" else oracle.t0,
        "end": oracle.end,
        "regroup": oracle.regroup,
        "method": "auto",  # where the expected answers are computed (rsp_workbench.oracle.paths)
        "spark_master": experiment.spark_master,
    }


#: Bytes the judging of one run holds per stream element, measured on YABench Exp. 1 at BIG
#: (2.1 M elements): under content change with a tuple tick every element is an evaluation
#: (its window's quality, its expected and actual relation); else the responses and the
#: expected answers of the windows only. Plus the Spark driver's JVM above the Spark threshold.
JUDGED_BYTES_PER_ELEMENT = {"per-element": 800, "per-window": 200}
SPARK_DRIVER_BYTES = 1 << 30


def judging_estimate(experiment: Experiment, spec: RunSpec, elements: int) -> int:
    """Bytes that judging one run over ``elements`` stream elements holds (the largest part of a run)."""
    from rsp_workbench.core.semantics import Strategy, Tick
    from rsp_workbench.oracle.judge import oracle_semantics
    from rsp_workbench.oracle.paths import SPARK_THRESHOLD

    semantics = oracle_semantics(oracle_settings(experiment), spec.engine.semantics)
    per_element = semantics.tick is Tick.TUPLE and Strategy.CONTENT_CHANGE in semantics.report.strategies
    held = elements * JUDGED_BYTES_PER_ELEMENT["per-element" if per_element else "per-window"]
    return held + (SPARK_DRIVER_BYTES if elements > SPARK_THRESHOLD else 0)


def refuse_what_cannot_fit(experiment: Experiment, runs: Sequence[RunSpec], *, sizes: Sequence[str] = (),
                           available: int | None = None) -> None:
    """A `UserError` before anything starts when judging a run would not fit in the memory this
    machine has available now (the stand streams the stimuli and writes the responses as they
    come, so judging is what grows with the stream); the message gives the estimate."""
    import psutil

    available = psutil.virtual_memory().available if available is None else available
    counted: dict[tuple[Any, ...], int | None] = {}
    for spec in runs:
        elements = 0
        for stream in spec.streams:
            key = stream_key(stream)
            if key not in counted:
                counted[key] = _stream_size(stream)
            elements += counted[key] or 0
        need = judging_estimate(experiment, spec, elements)
        if need > available:
            defined = ", ".join(sizes or experiment.sizes) or "none"
            raise UserError(
                f"run {spec.run_id}: judging {elements:,} stream elements ({spec.engine.id}, "
                f"{spec.engine.semantics.report}) would hold about {need / 2**30:.1f} GB and {available / 2**30:.1f} GB "
                f"are available: ask for a smaller size (this experiment defines: {defined}) or a shorter stream",
                file=_file(experiment), field="stream")


def _stream_size(stream: RunStream) -> int | None:
    """Elements of a run's stream, known without generating or reading it (None: unknown)."""
    from rsp_workbench.pipeline.generate import estimated_elements

    if stream.spec.generator is not None:
        return estimated_elements(stream.spec.generator, dict(stream.params))
    if (stream.spec.format or "") == "parquet" or str(stream.spec.file).endswith((".parquet", ".pq")):
        from rsp_workbench.streams.readers import StreamFile

        try:
            return len(StreamFile(str(stream.spec.file), "parquet"))
        except UserError:
            return None  # the stand reports the unreadable file
    return None
