"""The workbench as a Python library (docs/api.md): the few calls a notebook needs, nothing else.

``load_experiment`` → ``run`` → ``open_bundle`` → tables (``Bundle.runs()``, ``windows(run)``,
``responses(run)``, ``stream(run)``, ``kpis(run)`` as Arrow tables) → ``report`` (one HTML file).
These are the calls ``rspwb run`` and ``rspwb report`` and the desktop views are built on; every
user error is one :class:`~rsp_workbench.errors.UserError` naming the file (and line or field).
Heavy dependencies (Spark, the engines) load only when a call needs them; ``import rsp_workbench``
re-exports this module's names lazily.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from rsp_workbench.errors import UserError
from rsp_workbench.results.bundle import Bundle
from rsp_workbench.results.reader import open_bundle as _open_bundle

if TYPE_CHECKING:
    from rsp_workbench.experiment.model import Experiment
    from rsp_workbench.oracle.commands import CheckResult, ExpectedResult, QuerySource, StreamPaths
    from rsp_workbench.pipeline.run_task import ExperimentProgress
    from rsp_workbench.probe.infer import ProbeInference

__all__ = ["Bundle", "UserError", "check", "load_experiment", "open_bundle", "oracle", "probe", "report", "run"]


def load_experiment(path: str | os.PathLike[str]) -> "Experiment":
    """Read and validate an experiment file (YAML; docs/experiment-format.md), as ``rspwb validate`` does."""
    from rsp_workbench.experiment import load_experiment as load

    return load(Path(path))


def run(experiment: "Experiment | str | os.PathLike[str]", out: str | os.PathLike[str], *, size: str | None = None,
        progress: "Callable[[ExperimentProgress], None] | None" = None, cancel: threading.Event | None = None,
        yes: bool = False, force: bool = False) -> Bundle:
    """Run an experiment into the bundle folder ``out`` (generate → engines → oracle), as ``rspwb run``.

    ``experiment``: a loaded experiment or its file. ``progress(event)`` is called with each
    :class:`~rsp_workbench.pipeline.run_task.ExperimentProgress` (``stage``, ``message``,
    ``done``/``total``, ``run_id``; keep it quick: the run waits for it). Setting ``cancel`` (from another thread) stops the
    current engine run and marks the bundle ``cancelled``. ``yes`` confirms the external engine
    commands the experiment would start (``--yes``); without it such an experiment is refused.
    ``out`` must be new, empty or an earlier bundle (``force``: any folder; other files are kept).
    """
    from rsp_workbench.pipeline.run_experiment import run_experiment

    loaded = experiment if not isinstance(experiment, (str, os.PathLike)) else load_experiment(experiment)
    return run_experiment(loaded, out, size=size, assume_yes=yes, cancel=cancel, progress=progress, force=force)


def open_bundle(path: str | os.PathLike[str]) -> Bundle:
    """Open a result bundle, or a published YABench test folder (or a folder of them) read as one.

    Not a bundle, a bundle another run is still writing, a bundle of a newer format: a `UserError`
    naming the file. Rows are read now; each run's tables when asked for."""
    return _open_bundle(path)


def report(bundle: Bundle | str | os.PathLike[str], html_path: str | os.PathLike[str]) -> Path:
    """Write the bundle's self-contained HTML report (as ``rspwb report DIR --html FILE``); its path."""
    from rsp_workbench.results.html_report import write_report

    opened = bundle if isinstance(bundle, Bundle) else open_bundle(bundle)
    write_report(opened, html_path)
    return Path(html_path)


def oracle(streams: "StreamPaths", query: "QuerySource", **options: Any) -> "ExpectedResult":
    """The expected answers of a continuous query over stream files, as ``rspwb oracle``.

    ``streams``: a stream file (or a mapping from stream IRI to file); ``query``: a query file, its
    text or a parsed query; ``options`` are those of
    :func:`rsp_workbench.oracle.commands.oracle_answers` — ``system`` (a preset or semantics),
    ``t0`` (a time, ``"all"``, or None: the semantics' own), ``method``, ``out`` … The Spark path
    is used where the method rule chooses it (docs/oracle.md). Per t0: ``window_rows(vector)``.
    """
    from rsp_workbench.oracle.commands import oracle_answers
    from rsp_workbench.pipeline.oracle_job import spark_expected

    return oracle_answers(streams, query, spark=spark_expected, **options)


def check(streams: "StreamPaths", query: "QuerySource", engine_output: str | os.PathLike[str],
          **options: Any) -> "CheckResult":
    """Judge a recorded engine answer (CSRBench JSON, YABench ``QR_``, JSON lines), as ``rspwb check``.

    ``options`` are those of :func:`rsp_workbench.oracle.commands.check_answer`: ``system``,
    ``match`` (``strict`` or ``csrbench``), ``regroup``, ``t0``, ``tolerance`` … The result says
    ``verdict`` (``correct``/``incorrect``) and holds what ``rspwb check --json`` prints (``payload``:
    the matching t0 or the first divergence).
    """
    from rsp_workbench.oracle.commands import check_answer
    from rsp_workbench.pipeline.oracle_job import spark_expected

    return check_answer(streams, query, engine_output, spark=spark_expected, **options)


def probe(engine: str, *, experiment: str | os.PathLike[str] | None = None, engine_id: str | None = None,
          preset: str | None = None, faults: Sequence[str] = (), semantics: Mapping[str, Any] | None = None,
          probes: Sequence[str] | None = None, timeout_s: float | None = None, yes: bool = False,
          progress: "Callable[[int, int, str], None] | None" = None,
          cancel: threading.Event | None = None) -> "ProbeInference":
    """Characterise an engine with the probe battery, as ``rspwb probe`` (docs/probe.md).

    ``engine``: a built-in preset or engine type (``preset``, ``faults`` and ``semantics`` configure
    a built-in one), or ``FILE:ENGINE`` / ``experiment`` + ``engine_id`` for an experiment's engine.
    An external command runs only with ``yes``. ``probes`` limits the battery; ``progress(done, total,
    message)`` reports each probe; setting ``cancel`` stops after the running probe. The result's
    ``explained``, ``preset`` and ``to_json()`` say which parameters explain every probe.
    """
    from rsp_workbench.probe.runner import (
        DEFAULT_TIMEOUT_S, ProbeRunOptions, builtin_target, probe_engine, resolve_target,
    )
    from rsp_workbench.stand.confirm import describe_command

    if preset or faults or semantics:
        if experiment is not None or ":" in engine:
            raise UserError("preset, faults and semantics configure a built-in engine; an experiment's engine "
                            "is configured in its file", field="preset")
        target = builtin_target(engine, preset=preset, faults={name: True for name in faults},
                                semantics=dict(semantics or {}))
    else:
        target = resolve_target(engine, experiment=os.fspath(experiment) if experiment is not None else None,
                                engine=engine_id)
    if target.external and not yes:
        raise UserError(f"{describe_command(target).splitlines()[0].removesuffix(':')}; an external command must "
                        "be confirmed before it runs: pass yes=True", field="engines")
    options = ProbeRunOptions(timeout_s=timeout_s or DEFAULT_TIMEOUT_S, keep=None,
                              probes=list(probes) if probes else None)
    return probe_engine(target, options, cancel=cancel, progress=progress)
