"""``rspwb run``: generate → engines on the test stand → oracle → result bundle.

:func:`run_experiment` validates every run first (unknown engine, a query an engine cannot
run, bad oracle settings: a :class:`UserError` before anything starts), asks for the
confirmation of external commands, generates each distinct stream once into the bundle,
then executes the runs. Each run is :func:`execute_run` (`run_one`): the engine in its own OS process
(`rsp_workbench.stand.host.run_engine`), then the judging of its responses (verdict,
per-window quality or recall: `rsp_workbench.oracle.judge`), written into ``runs/<run_id>/``.
This module only schedules, generates, runs and writes; the checks up front are `run_checks`,
the streams `run_streams`, what the stages pass on `run_task`. Failed runs are recorded and the
others continue; cancelling stops the current engine process and marks the bundle
``cancelled``. Layout of the bundle: docs/result-bundle.md.

Scheduling. ``scheduler="local"`` (default) runs at most one measured engine run at a time,
in order, so that measurements never share the CPU (docs/design/ARCHITECTURE.md, measurement
integrity). ``scheduler="spark"`` maps the runs over a Spark RDD with one partition per
run, each task calling the same :func:`execute_run` on an executor (for sweeps on a
cluster whose workers share the bundle folder, e.g. over NFS). Use it with one core per
executor so runs on one machine do not interfere; on ``local[*]`` it runs several engine
runs at once and the measurements are not comparable. Cancelling a Spark sweep cancels
the job group; runs already finished stay in the bundle.
"""

from __future__ import annotations

import os
import platform
import sys
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from rsp_workbench.results.bundle import BUNDLE_FORMAT, EXPERIMENT_COPY, MANIFEST, ORACLE_FILE, RUNS_DIR, SUMMARY, YABENCH_DIR, Bundle, run_row
from rsp_workbench.files import write_json_atomic, write_lines_atomic, write_text_atomic
from rsp_workbench.errors import UserError
from rsp_workbench.experiment.model import Experiment, RunSpec
from rsp_workbench.experiment.runs import expand_runs
from rsp_workbench.experiment.static_data import load_static
from rsp_workbench.pipeline.run_checks import oracle_settings, refuse_what_cannot_fit, validate_runs
from rsp_workbench.pipeline.run_one import execute_run, run_meta
from rsp_workbench.pipeline.run_streams import STREAM_FORMATS, generated_stream_count, on_cancel, prepare_streams, stream_key
from rsp_workbench.pipeline.run_task import ExperimentProgress, ProgressCallback, RunTask, StreamRef

SCHEDULERS = ("local", "spark")


# --- confirmation ----------------------------------------------------------------------


def _confirm(experiment: Experiment, assume_yes: bool, ask: Callable[[str], bool] | None) -> None:
    if not experiment.requires_confirmation:
        return
    from rsp_workbench.stand.confirm import confirm_commands

    confirm_commands(experiment, assume_yes=assume_yes, ask=ask)


# --- the experiment --------------------------------------------------------------------


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def machine_info() -> dict[str, Any]:
    import psutil

    return {
        "platform": platform.platform(), "machine": platform.machine(), "processor": platform.processor(),
        "hostname": platform.node(), "cpus": os.cpu_count(), "cpus_physical": psutil.cpu_count(logical=False),
        "memory_mb": round(psutil.virtual_memory().total / 1024 / 1024),
    }


def versions() -> dict[str, Any]:
    from importlib import metadata

    from rsp_workbench import __version__

    found: dict[str, Any] = {"workbench": __version__, "python": platform.python_version()}
    for name in ("pyspark", "rdflib", "psutil", "pyarrow"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def run_experiment(
    experiment: Experiment,
    out_dir: str | os.PathLike[str],
    *,
    size: str | None = None,
    assume_yes: bool = False,
    ask: Callable[[str], bool] | None = None,
    cancel: threading.Event | None = None,
    progress: ProgressCallback | None = None,
    scheduler: str = "local",
    stream_format: str = "parquet",
    live_kpis: bool = False,
    force: bool = False,
) -> Bundle:
    """Run the whole experiment into the bundle folder ``out_dir``; return its summary.

    ``out_dir`` must be new, empty or a bundle of ours (``force``: any folder); only the
    previous bundle's own entries are replaced, and a second run into it at the same
    time is refused (`rsp_workbench.results.bundle_folder`).

    Raises UserError before anything is written for invalid runs or unconfirmed external
    commands (``assume_yes`` confirms; else ``ask(prompt)`` is asked). ``cancel`` stops
    the current engine process (or generation) and marks the bundle ``cancelled``.
    ``live_kpis`` adds ``kpi`` progress events while engines run (local scheduler only:
    Spark executors cannot report back).
    """
    if scheduler not in SCHEDULERS:
        raise UserError(f"unknown scheduler {scheduler!r}; expected one of {', '.join(SCHEDULERS)}", field="scheduler")
    if stream_format not in STREAM_FORMATS:
        raise UserError(f"streams are written as {' or '.join(STREAM_FORMATS)}", field="stream_format")
    from rsp_workbench.experiment.loader import apply_size

    cancel = cancel or threading.Event()
    report = progress or (lambda event: None)
    sizes = tuple(experiment.sizes)
    if size is not None:
        experiment = apply_size(experiment, size)
    runs = expand_runs(experiment)
    report(ExperimentProgress("validate", f"{experiment.name}: {len(runs)} runs", total=len(runs),
                              data={"streams": generated_stream_count(runs)}))
    static = load_static(experiment)
    validate_runs(experiment, runs, static)
    refuse_what_cannot_fit(experiment, runs, sizes=sizes)
    _warn_assumed_semantics(experiment, report)
    _confirm(experiment, assume_yes, ask)

    from rsp_workbench.results.bundle_folder import locked_bundle_folder

    with locked_bundle_folder(Path(out_dir), force=force) as out:
        return _write_bundle(experiment, runs, static, out, size=size, scheduler=scheduler,
                             stream_format=stream_format, cancel=cancel, report=report, live_kpis=live_kpis)


def _write_bundle(experiment: Experiment, runs: Sequence[RunSpec], static: Mapping[str, Any], out: Path, *,
                  size: str | None, scheduler: str, stream_format: str, cancel: threading.Event,
                  report: ProgressCallback, live_kpis: bool) -> Bundle:
    """Generate the streams, execute the runs and write the bundle into ``out`` (claimed and locked)."""
    from rsp_workbench.experiment.loader import experiment_to_yaml

    (out / RUNS_DIR).mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / EXPERIMENT_COPY, experiment_to_yaml(experiment))
    manifest: dict[str, Any] = {
        "format": BUNDLE_FORMAT,
        "name": experiment.name,
        "description": experiment.description,
        "experiment_file": str(experiment.file.resolve()) if experiment.file else None,
        "experiment": EXPERIMENT_COPY,
        "size": size,
        "seed": experiment.seed,
        "repetitions": experiment.repetitions,
        "scheduler": scheduler,
        "versions": versions(),
        "machine": machine_info(),
        "command_line": sys.argv,
        "started": _now(),
        "finished": None,
        "status": "running",
        "streams": [],
        "runs": [],
    }
    write_json_atomic(out / MANIFEST, manifest)

    rows: dict[int, dict[str, Any]] = {}
    status = "ok"
    try:
        refs = prepare_streams(experiment, runs, out, fmt=stream_format, cancel=cancel, progress=report)
        manifest["streams"] = [ref.to_json() for ref in refs.values()]
        tasks = []
        settings = oracle_settings(experiment)
        stand = {
            "mode": experiment.stand.mode, "time_scale": experiment.stand.time_scale,
            "sampling_ms": experiment.kpis.sampling_ms,
            "run_timeout_s": experiment.stand.timeout_ms / 1000.0 if experiment.stand.timeout_ms else None,
            "batch": experiment.stand.batch,
            "max_output_mb": experiment.stand.max_output_mb,
            "max_message_mb": experiment.stand.max_message_mb,
        }
        run_refs: dict[int, tuple[StreamRef, ...]] = {}
        for spec in runs:
            found = tuple(refs.get(stream_key(stream)) for stream in spec.streams)
            if any(ref is None for ref in found):  # cancelled while generating
                continue
            run_refs[spec.index] = found  # type: ignore[assignment]
            # absolute: Spark executors run in their own working directory
            tasks.append(RunTask(spec, run_refs[spec.index], str((out / RUNS_DIR).resolve()), stand, settings, static))
        manifest["runs"] = [
            {**(run_meta(spec, run_refs[spec.index][0], run_refs[spec.index]) if spec.index in run_refs else
                {"run_id": spec.run_id, "index": spec.index, "engine": spec.engine.id, "query": spec.query.id}),
             "status": "not-run"}
            for spec in runs
        ]
        write_json_atomic(out / MANIFEST, manifest)
        if scheduler == "local":
            for done, task in enumerate(tasks):
                if cancel.is_set():
                    break
                try:
                    row = execute_run(task, cancel, report, live_kpis)
                except UserError as error:  # the run could not be carried out: it failed, and the experiment stops
                    rows[task.spec.index] = _failed_row(out, task, error)
                    raise
                rows[task.spec.index] = row
                report(ExperimentProgress("run-done", f"{task.spec.run_id}: {row.get('verdict') or row.get('status')}",
                                          done=done + 1, total=len(tasks), run_id=task.spec.run_id, data=row))
        else:
            rows.update(_run_on_spark(experiment, tasks, cancel, report))
        if cancel.is_set():
            status = "cancelled"
        elif any(row.get("status") != "ok" for row in rows.values()):
            status = "failed"
    except BaseException as error:
        from rsp_workbench.pipeline.generate import GenerationCancelled

        status = "cancelled" if isinstance(error, (GenerationCancelled, KeyboardInterrupt)) or cancel.is_set() else "failed"
        manifest["error"] = f"{type(error).__name__}: {error}"
        if not isinstance(error, (GenerationCancelled,)):
            _finish(out, manifest, runs, rows, status)
            raise
    return _finish(out, manifest, runs, rows, status)



def _failed_row(out: Path, task: RunTask, error: UserError) -> dict[str, Any]:
    """The summary row of a run that could not be carried out (no run folder): failed, with the error."""
    meta = run_meta(task.spec, task.stream, task.streams)
    row = run_row(out / RUNS_DIR / task.spec.run_id, {**meta, "status": "not-run"})
    return {**row, "status": "failed", "verdict": "failed", "error": str(error)}


def _warn_assumed_semantics(experiment: Experiment, report: ProgressCallback) -> None:
    """Say up front when the oracle will judge an engine under semantics nobody declared."""
    from rsp_workbench.oracle.judge import assumed_semantics_warning

    if experiment.oracle.system != "engine":
        return
    for engine in experiment.engines:
        if not engine.declares_semantics:
            report(ExperimentProgress("warning", f"warning: engine {engine.id}: "
                                      + assumed_semantics_warning(engine.semantics)))


def _finish(out: Path, manifest: dict[str, Any], runs: Sequence[RunSpec], rows: Mapping[int, dict[str, Any]],
            status: str) -> Bundle:
    """summary.json, the YABench files across repetitions, then the manifest's final status (last)."""
    ordered = []
    for spec, meta in zip(runs, manifest.get("runs") or [{} for _ in runs]):
        row = rows.get(spec.index)
        if row is None:
            row = run_row(out / RUNS_DIR / spec.run_id, {**meta, "status": "cancelled" if status == "cancelled" else "not-run"})
            if row["verdict"] is None:
                row["verdict"] = row["status"]
        if meta:
            meta["status"] = row.get("status")
        ordered.append(row)
    _write_yabench_files(out, runs, ordered)
    write_json_atomic(out / SUMMARY, {"name": manifest["name"], "status": status, "runs": ordered})
    manifest["finished"] = _now()
    manifest["status"] = status
    write_json_atomic(out / MANIFEST, manifest)
    return Bundle(out, manifest["name"], status, tuple(ordered), manifest)


def _write_yabench_files(out: Path, runs: Sequence[RunSpec], rows: Sequence[Mapping[str, Any]]) -> None:
    """``yabench/case<c>-<query>/ORACLE_<engine>_<n>`` per repetition and ``BOXPLOTS_<engine>`` (YABench layout).

    Both come from the runs' own ``ORACLE_<engine>`` files (one line per window), read line by
    line, so that runs over long streams are never held whole."""
    from rsp_workbench.oracle.quality import boxplots_lines

    groups: dict[tuple[int, str, str], list[Path | None]] = {}
    for spec, row in zip(runs, rows):
        run_folder = out / RUNS_DIR / spec.run_id
        if row.get("status") != "ok" or not (run_folder / ORACLE_FILE).is_file():
            continue
        lines = run_folder / f"ORACLE_{spec.engine.id}"
        groups.setdefault((spec.case_index, spec.query.id, spec.engine.id), []).append(
            lines if lines.is_file() else None)  # judged without windows (e.g. an error verdict)
    for (case, query, engine), files in groups.items():
        folder = out / YABENCH_DIR / f"case{case}-{query}"
        folder.mkdir(parents=True, exist_ok=True)
        for n, oracle_lines in enumerate(files, 1):
            write_lines_atomic(folder / f"ORACLE_{engine}_{n}", _lines_of(oracle_lines))
        write_lines_atomic(folder / f"BOXPLOTS_{engine}", boxplots_lines(engine, [_lines_of(f) for f in files]))


def _lines_of(path: Path | None) -> Iterator[str]:
    """The lines of a text file, read lazily (none for None)."""
    if path is None:
        return
    with open(path, encoding="utf-8") as handle:
        yield from handle


def _run_on_spark(experiment: Experiment, tasks: Sequence[RunTask], cancel: threading.Event,
                  report: ProgressCallback) -> dict[int, dict[str, Any]]:
    """One Spark task per run (an RDD with one partition per run), each calling :func:`execute_run`."""
    import uuid

    from rsp_workbench.pipeline.spark import cancel_job_group, get_spark, job_group

    if not tasks:
        return {}
    spark = get_spark(experiment.spark_master)
    group = f"rspwb-run-{uuid.uuid4().hex[:8]}"
    report(ExperimentProgress("engine", f"{len(tasks)} runs as Spark tasks on {spark.sparkContext.master}",
                              total=len(tasks)))
    try:
        with on_cancel(cancel, lambda: cancel_job_group(group), "rspwb-run-cancel"), \
                job_group(spark, group, f"rspwb run {experiment.name}"):
            rdd = spark.sparkContext.parallelize(list(enumerate(tasks)), len(tasks))
            results = rdd.map(_execute_task_in_spark).collect()
    except Exception:
        if cancel.is_set():
            return {}
        raise
    return {tasks[index].spec.index: row for index, row in results}


def _execute_task_in_spark(item: tuple[int, RunTask]) -> tuple[int, dict[str, Any]]:
    index, task = item
    return index, execute_run(task, spark_oracle=False)
