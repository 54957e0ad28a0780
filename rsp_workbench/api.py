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
from typing import TYPE_CHECKING, Callable

from rsp_workbench.errors import UserError
from rsp_workbench.results.bundle import Bundle
from rsp_workbench.results.reader import open_bundle as _open_bundle

if TYPE_CHECKING:
    from rsp_workbench.experiment.model import Experiment
    from rsp_workbench.pipeline.run_experiment import ExperimentProgress

__all__ = ["Bundle", "UserError", "load_experiment", "open_bundle", "report", "run"]


def load_experiment(path: str | os.PathLike[str]) -> "Experiment":
    """Read and validate an experiment file (YAML; docs/experiment-format.md), as ``rspwb validate`` does."""
    from rsp_workbench.experiment import load_experiment as load

    return load(Path(path))


def run(experiment: "Experiment | str | os.PathLike[str]", out: str | os.PathLike[str], *, size: str | None = None,
        progress: "Callable[[ExperimentProgress], None] | None" = None, cancel: threading.Event | None = None,
        yes: bool = False, force: bool = False) -> Bundle:
    """Run an experiment into the bundle folder ``out`` (generate → engines → oracle), as ``rspwb run``.

    ``experiment``: a loaded experiment or its file. ``progress(event)`` is called with each
    :class:`~rsp_workbench.pipeline.run_experiment.ExperimentProgress` (``stage``, ``message``,
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


# Judging recorded answers from Python values — ``oracle(...)`` (expected answers of a stream and a
# query under an engine's semantics) and ``check(...)`` (a recorded answer judged against them) —
# belong here too, as thin calls into ``rsp_workbench.oracle``'s value-taking functions once those
# exist (today they are reachable only through ``rspwb oracle`` / ``rspwb check``).
