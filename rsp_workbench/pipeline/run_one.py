"""One run of ``rspwb run``: the engine on the test stand, then the oracle on its responses,
written into ``runs/<run_id>/`` (:func:`execute_run`; :func:`judge_run` is the judging).

Split from `run_experiment`, which schedules the runs: the same function runs each of them,
in this process or as a Spark task on an executor.
"""

from __future__ import annotations

import itertools
import os
import shutil
import threading
from pathlib import Path
from typing import Any, Mapping, Sequence

from rsp_workbench.errors import UserError
from rsp_workbench.experiment.model import RunSpec
from rsp_workbench.files import JsonRows, PARTIAL, write_json_atomic, write_lines_atomic
from rsp_workbench.pipeline.run_checks import engine_config, static_graphs
from rsp_workbench.pipeline.run_streams import run_inputs
from rsp_workbench.pipeline.run_task import ExperimentProgress, ProgressCallback, RunTask, StreamRef
from rsp_workbench.results.bundle import ORACLE_FILE, RUN_FILE, WINDOWS_FILE, run_row
from rsp_workbench.results.json_files import read_json


def execute_run(task: RunTask, cancel: threading.Event | None = None,
                progress: ProgressCallback | None = None, live_kpis: bool = False,
                spark_oracle: bool = True) -> dict[str, Any]:
    """One engine run on the test stand, then the oracle; writes ``runs/<run_id>/``; returns its summary row.

    The run is written into ``runs/<run_id>.partial/`` and renamed when its files are
    complete. Engine misbehaviour and oracle errors are recorded, never raised.
    ``live_kpis`` reports the stand's probe samples as ``kpi`` events while the engine runs.
    ``spark_oracle=False`` (a run that is itself a Spark task) judges without starting a Spark job.
    If the run cannot be carried out at all (its stream cannot be read, the disk is full), its
    ``.partial`` folder is removed and the error raised.
    """
    spec = task.spec
    cancel = cancel or threading.Event()
    report = progress or (lambda event: None)
    runs_dir = Path(task.runs_dir)
    final = runs_dir / spec.run_id
    folder = runs_dir / (spec.run_id + PARTIAL)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    try:
        return _execute_into(task, folder, final, cancel, report, live_kpis, spark_oracle)
    except BaseException:  # a stream that cannot be read, a full disk, a second Ctrl-C: no half-written run stays
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _execute_into(task: RunTask, folder: Path, final: Path, cancel: threading.Event, report: ProgressCallback,
                  live_kpis: bool, spark_oracle: bool) -> dict[str, Any]:
    """`execute_run` once its ``.partial`` folder exists: run, judge, write, rename to ``final``."""
    from rsp_workbench.oracle.run import end_by_rule
    from rsp_workbench.query.parser import parse_query
    from rsp_workbench.stand.host import run_engine
    from rsp_workbench.stand.options import StandOptions

    spec = task.spec
    meta = run_meta(spec, task.stream, task.streams)
    query = parse_query(spec.query_text, syntax=spec.query.syntax)
    streams, stimuli = run_inputs(task, query)
    end = end_by_rule(task.oracle.get("end", "after-last-window"), query, streams)  # the oracle's and the stand's
    stand = dict(task.stand)
    _check_real_time_wall(task, streams, end)
    startup = spec.engine_parameters.get("startup_timeout")
    per_stimulus = spec.engine_parameters.get("stimulus_timeout")  # an engine whose stimuli may take long
    options = StandOptions(
        mode=stand["mode"], time_scale=stand["time_scale"], sampling_ms=stand["sampling_ms"],
        run_timeout_s=stand.get("run_timeout_s"), start_timeout_s=startup / 1000.0 if startup else 60.0, end=end,
        **({"batch": stand["batch"]} if stand.get("batch") is not None else {}),  # else the stand's default
        **({"stimulus_timeout_s": per_stimulus / 1000.0} if per_stimulus else {}),
        **({"max_output_bytes": stand["max_output_mb"] << 20} if stand.get("max_output_mb") else {}),
        **({"max_message_bytes": stand["max_message_mb"] << 20} if stand.get("max_message_mb") else {}),
    )
    config = engine_config(spec)
    command = [str(part) for part in spec.engine_parameters["command"]] if config.type == "external" else None
    report(ExperimentProgress("engine", f"{spec.run_id}: {spec.engine.id} on {spec.query.id}", run_id=spec.run_id,
                              data={"engine": spec.engine.id, "stimuli": len(stimuli)}))

    def on_sample(sample: dict[str, float]) -> None:
        report(ExperimentProgress("kpi", spec.run_id, run_id=spec.run_id, data=sample))

    result = run_engine(
        config, spec.query_text, stimuli, folder, syntax=spec.query.syntax, static=static_graphs(task.static),
        options=options, cancel=cancel, name=spec.engine.id, query_id=spec.query.id, command=command,
        on_sample=on_sample if live_kpis else None,
    )
    if live_kpis:
        report(ExperimentProgress("kpi", spec.run_id, run_id=spec.run_id, data={
            "final": True, "status": result.status, "responses": result.responses,
            "stimuli_done": result.stimuli_done, "peak_rss_mb": result.peak_rss_mb}))
    failure = None
    oracle: dict[str, Any] | None = None
    if result.ok and not cancel.is_set():
        report(ExperimentProgress("oracle", f"{spec.run_id}: oracle", run_id=spec.run_id))
        try:
            oracle = judge_run(task, query, streams, stimuli, end, folder, allow_spark=spark_oracle)
        except UserError as error:  # e.g. a malformed term in the engine's answers: the run failed
            failure = str(error).replace(str(folder), str(final))
            oracle = {"verdict": "error", "error": failure}
        except Exception as error:  # an oracle bug must not stop the other runs, nor pass for a result
            failure = f"oracle failed: {type(error).__name__}: {error}".replace(str(folder), str(final))
            oracle = {"verdict": "error", "error": failure}
        if not len(stimuli):  # a verdict over nothing must not read as a result
            empty = "the stream has no elements: nothing was judged"
            oracle["warning"] = f"{empty}; {oracle['warning']}" if oracle.get("warning") else empty
        write_json_atomic(folder / ORACLE_FILE, oracle)
    _record_outcome(folder / RUN_FILE, final, failure)
    write_json_atomic(folder / "run-spec.json", meta)
    if final.exists():
        shutil.rmtree(final)
    os.replace(folder, final)
    meta["status"] = "failed" if failure else result.status
    return run_row(final, meta, oracle=oracle)  # not read back: a long run's oracle.json is large


#: The longest real-time run (wall clock) that starts without ``stand.timeout`` saying so: a typo such as
#: ``time_scale: 0.000001`` must fail in a second, not start a run of months.
MAX_REAL_TIME_WALL_S = 24 * 3600


def _check_real_time_wall(task: RunTask, streams: Mapping[str, Sequence[Any]], end: int | None) -> None:
    """A `UserError` before a real-time run whose streams would take longer than :data:`MAX_REAL_TIME_WALL_S`
    of wall time, unless the experiment's ``stand.timeout`` allows at least that long."""
    stand = task.stand
    if stand.get("mode") != "real-time":
        return
    from rsp_workbench.streams.readers import last_time

    firsts = [element.t for stream in streams.values() for element in itertools.islice(iter(stream), 1)]
    lasts = [t for t in (last_time(stream) for stream in streams.values()) if t is not None]
    if not firsts or not lasts:
        return
    span_ms = max([*lasts, *([end] if end is not None else [])]) - min(firsts)
    wall_s = span_ms / float(stand.get("time_scale") or 1.0) / 1000.0
    allowed = max(MAX_REAL_TIME_WALL_S, stand.get("run_timeout_s") or 0)
    if wall_s > allowed:
        raise UserError(f"run {task.spec.run_id}: in real time at time_scale {stand.get('time_scale')} the stream's "
                        f"{span_ms:,} ms take {wall_s / 3600:,.1f} hours of wall time, more than the "
                        f"{MAX_REAL_TIME_WALL_S // 3600} hours a run may take unless stand.timeout allows it",
                        field="stand.time_scale")


def _record_outcome(run_file: Path, final: Path, failure: str | None) -> None:
    """``run.json`` names the run's final folder (not ``.partial``) and, if judging failed, says so.

    A run whose answers cannot be judged is a failed run (status ``failed``, exit 1), not a
    green one with a verdict nobody reads.
    """
    if not run_file.is_file():
        return
    record = read_json(run_file)
    record["folder"] = str(final)
    if failure:
        record["status"] = "failed"
        record["error"] = failure
    write_json_atomic(run_file, record)


def run_meta(spec: RunSpec, stream: StreamRef, streams: Sequence[StreamRef] = ()) -> dict[str, Any]:
    named = {ref.iri: ref.key for ref in streams if ref.iri is not None}
    return {**({"streams": named} if named else {}), 
        "run_id": spec.run_id, "index": spec.index, "case": spec.case_index, "repetition": spec.repetition,
        "variables": dict(spec.variables), "engine": spec.engine.id, "engine_type": spec.engine.type,
        "preset": spec.engine.preset, "faults": {k: v for k, v in spec.engine.faults.items() if v},
        "semantics": spec.engine.semantics.describe(), "query": spec.query.id, "query_text": spec.query_text,
        "syntax": spec.query.syntax, "seed": spec.seed, "stream": stream.key,
    }


def _streams_identity(task: RunTask) -> tuple[Any, ...]:
    """What identifies the content of a run's streams across bundles: absolute path, size, mtime."""
    bundle = Path(task.runs_dir).parent
    identity: list[tuple[str | None, str, int | None, int | None, int]] = []
    for ref in task.streams:
        path = Path(ref.path) if os.path.isabs(ref.path) else bundle / ref.path
        try:
            stat = path.stat()
            identity.append((ref.iri, str(path.resolve()), stat.st_size, stat.st_mtime_ns, ref.interval_ms))
        except OSError:
            identity.append((ref.iri, str(path), None, None, ref.interval_ms))
    return tuple(identity)


def judge_run(task: RunTask, query: Any, streams: Mapping[str, Sequence[Any]], stimuli: Sequence[Any], end: int,
              folder: Path, *, allow_spark: bool = True) -> dict[str, Any]:
    """The oracle on one finished run (`rsp_workbench.oracle.judge`); writes ``ORACLE_<engine>`` and
    ``windows.parquet``, returns ``oracle.json``.

    The expected answers come from the path the ``auto`` rule picks (`rsp_workbench.oracle.paths`:
    the Spark job for big streams, as ``rspwb oracle``/``check`` do); ``oracle.json`` records it.
    """
    from rsp_workbench.oracle.judge import JudgeOptions, RecordedRun, judge, oracle_semantics, report_due_at
    from rsp_workbench.oracle.paths import expected_function
    from rsp_workbench.pipeline.oracle_job import spark_expected
    from rsp_workbench.responses.readers import read_response_log
    from rsp_workbench.results.windows_file import ROW_GROUP_WINDOWS, write_windows

    spec = task.spec
    settings = task.oracle
    log = read_response_log(folder / "responses.jsonl")
    engine_t0 = spec.engine_parameters.get("t0") if (settings.get("system") or "engine") == "engine" else None
    t0 = settings.get("t0")
    if t0 is None and engine_t0 is not None:  # the engine's own t0 (one per window if a list)
        t0 = tuple(engine_t0) if isinstance(engine_t0, list) else tuple(engine_t0 for _ in query.windows)
    run = RecordedRun(
        query=query, streams=streams, log=log, semantics=oracle_semantics(settings, spec.engine.semantics), end=end,
        engine_type=spec.engine.type, engine_parameters=spec.engine_parameters, static=task.static, stimuli=stimuli,
        due_at=report_due_at(folder / "trace.jsonl", task.stand, log.run_start),
        streams_key=(_streams_identity(task), spec.query_text, spec.query.syntax),
        semantics_declared=spec.engine.declares_semantics or (settings.get("system") or "engine") != "engine",
        end_fixed=isinstance(settings.get("end"), int),
    )
    options = JudgeOptions(
        t0=t0, match=settings.get("match", "strict"), gracious=bool(settings.get("gracious")),
        regroup=None if settings.get("regroup") is None else bool(settings["regroup"]),
        report_window=int(spec.engine_parameters.get("report_window", 0)),  # part of the policy (RSP-QL Example 9)
        window_rows=False,  # written row by row into oracle.json (a content-change run has one per element)
    )
    bundle = Path(task.runs_dir).parent
    parquet_files = {
        iri: (ref.path if os.path.isabs(ref.path) else str(bundle / ref.path), streams[iri])
        for iri in streams for ref in task.streams
        if ref.format == "parquet" and (ref.iri == iri or ref.iri is None)
    }
    expected = expected_function(settings.get("method") or "auto", parquet_files=parquet_files, spark=spark_expected,
                                 spark_master=settings.get("spark_master"), allow_spark=allow_spark)
    judgement = judge(run, options, expected)
    if judgement.quality is not None:
        write_lines_atomic(folder / f"ORACLE_{spec.engine.id}", (w.oracle_line() + "\n" for w in judgement.quality))
        write_windows(folder / WINDOWS_FILE, judgement.window_batches(ROW_GROUP_WINDOWS))  # a row group at a time
        judgement.payload["windows"] = JsonRows(judgement.window_rows, len(judgement.quality))
    return judgement.payload
