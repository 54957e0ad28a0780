"""What one run of ``rspwb run`` is made of, as the stages of `run_experiment` hand it on.

:class:`RunTask` (picklable: it travels to Spark executors) with a :class:`StreamRef` per stream,
and :class:`ExperimentProgress`, the events every stage reports. A module of its own so that the
stages (`run_checks`, `run_streams`, `run_one`, `run_experiment`) share these types without
importing each other in a circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from rsp_workbench.experiment.model import RunSpec


@dataclass(frozen=True)
class ExperimentProgress:
    """One progress event: ``stage`` is validate | warning | stream | engine | kpi | oracle | run-done | done.

    ``data`` carries extras for live views: ``validate`` → ``{"streams": n}`` (streams to
    generate); ``engine`` → ``{"engine", "stimuli"}``; ``run-done`` → the run's summary
    row (``rsp_workbench.results.bundle.run_row``); ``kpi`` (only with ``live_kpis``) →
    one probe sample ``{"time", "rss_mb", "cpu_percent", "threads", "responses",
    "stimuli_done"}`` while the engine runs, and a last one with ``"final": True``.
    """

    stage: str
    message: str
    done: int = 0
    total: int = 0
    run_id: str | None = None
    data: Mapping[str, Any] | None = None


ProgressCallback = Callable[[ExperimentProgress], None]


@dataclass(frozen=True)
class StreamRef:
    """A stream the runs read: generated into the bundle, or the experiment's own file.

    ``iri`` is the stream IRI the queries' windows bind to (``streams:`` experiments);
    None for the single ``stream:`` that every window reads.
    """

    key: str
    path: str
    format: str
    generator: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    flow: Mapping[str, Any] | None = None
    interval_ms: int = 1000
    elements: int | None = None
    iri: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.key, "iri": self.iri, "path": self.path, "format": self.format, "generator": self.generator,
            "params": dict(self.params), "flow": self.flow, "interval_ms": self.interval_ms, "elements": self.elements,
        }


@dataclass(frozen=True)
class RunTask:
    """Everything :func:`execute_run` needs for one run; picklable (it travels to Spark executors).

    ``streams`` holds one ref per stream of the experiment, in its order.
    """

    spec: RunSpec
    streams: tuple[StreamRef, ...]
    runs_dir: str
    stand: Mapping[str, Any]
    oracle: Mapping[str, Any]
    static: Mapping[str, Any]

    @property
    def stream(self) -> StreamRef:
        """The first (in a ``stream:`` experiment, the only) stream."""
        return self.streams[0]
