"""The run manager's state without Qt: a queue of experiment runs, per-stage progress with ETA, live KPIs.

The worker (:func:`execute_request`) runs ``run_experiment`` and only *reports* progress
events; :meth:`ExperimentRun.apply` folds them into per-stage counts (generate → engines
→ oracle), per-engine-run KPI series, and log lines. The view drains the events on a
timer and draws this state, so everything here is testable without a display and with
an injected clock.
"""

from __future__ import annotations

import collections
import os
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from rsp_workbench.results.bundle import MANIFEST, Bundle
from rsp_workbench.results.reader import open_bundle
from rsp_workbench.errors import UserError
from rsp_workbench.experiment.model import Experiment
from rsp_workbench.gui.text import verdict_text

if TYPE_CHECKING:
    from rsp_workbench.gui.designer.model import DesignerModel
    from rsp_workbench.pipeline.run_task import ExperimentProgress

STAGES = ("generate", "engines", "oracle")
QUEUED, RUNNING, CANCELLING, OK, FAILED, CANCELLED = "queued", "running", "cancelling", "ok", "failed", "cancelled"
FINISHED = (OK, FAILED, CANCELLED)
SCHEDULERS = ("local", "spark")
LOG_LINES = 10_000
RESULTS_DIR_ENV = "RSPWB_RESULTS_DIR"


# --------------------------------------------------------------------------- where bundles go


def default_results_dir() -> Path:
    """``$RSPWB_RESULTS_DIR``, else ``$XDG_DATA_HOME/rsp-workbench/results`` (``~/.local/share/…``)."""
    explicit = os.environ.get(RESULTS_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "rsp-workbench" / "results"


def bundle_folder(results_dir: Path, name: str, when: datetime) -> Path:
    """A new folder ``NAME-YYYYmmdd-HHMMSS`` under ``results_dir`` (``-2``, ``-3``… if taken)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "experiment"
    base = results_dir / f"{safe}-{when:%Y%m%d-%H%M%S}"
    candidate, n = base, 2
    while candidate.exists():
        candidate = base.with_name(f"{base.name}-{n}")
        n += 1
    return candidate


# --------------------------------------------------------------------------- what to run


def experiment_from_designer(model: "DesignerModel") -> Experiment:
    """The experiment as the designer shows it now (unsaved edits included); UserError if invalid.

    Built from the designer's YAML text rather than the saved file, so Run runs what the
    user sees; relative paths resolve from the file's folder (or the working directory).
    """
    from rsp_workbench.experiment import loads_experiment

    if model.validation.error is not None:
        raise model.validation.error
    return loads_experiment(model.shown_text(), file=model.file, base_dir=model.base_dir or Path.cwd())


def sized(experiment: Experiment, size: str | None) -> Experiment:
    """The experiment with ``size`` applied (as ``run_experiment`` will apply it)."""
    from rsp_workbench.experiment.loader import apply_size

    return apply_size(experiment, size) if size else experiment


def default_size(sizes: Sequence[str], previous: str | None) -> str | None:
    """Keep the previous choice if the experiment has it, else ``smoke`` (quick and interactive), else none."""
    if previous in sizes:
        return previous
    return "smoke" if "smoke" in sizes else None


def external_commands_text(experiment: Experiment, size: str | None) -> str | None:
    """What the user must confirm before the run starts (None: no external programs)."""
    from rsp_workbench.stand.confirm import commands_to_confirm

    descriptions = commands_to_confirm(sized(experiment, size))
    if not descriptions:
        return None
    return ("This experiment starts programs named in the experiment file:\n\n" + "\n\n".join(descriptions)
            + "\n\nRun them?")


@dataclass(frozen=True)
class RunRequest:
    """One queued experiment run: a snapshot of the experiment (later designer edits do not change it)."""

    experiment: Experiment
    out_dir: Path
    size: str | None = None
    scheduler: str = "local"
    source: str = ""  # "designer" or the file it came from, for the queue list
    confirmed: bool = False  # external commands were shown and accepted

    @property
    def name(self) -> str:
        return self.experiment.name

    @property
    def live_kpis(self) -> bool:
        """Probe samples reach the GUI only when engines run in this process (not on Spark executors)."""
        return self.scheduler == "local"


CHILD_STOP_GRACE_S = 30.0  # after Cancel, how long the run process may take to close its bundle


def execute_request(request: RunRequest, cancel: threading.Event,
                    report: Callable[["ExperimentProgress"], None]) -> Bundle:
    """The worker: run the experiment into its bundle folder (external commands were confirmed in the GUI).

    Local runs execute in a child process: the oracle and the stand are CPU-bound Python,
    and in the GUI's process they would hold the interpreter lock long enough to freeze the
    window. Spark runs stay here, on the SparkSession the
    window warmed up.
    """
    if request.scheduler != "local":
        return _run_request(request, cancel, report)
    import multiprocessing
    import queue

    context = multiprocessing.get_context("spawn")
    events = context.Queue()
    stop = context.Event()
    process = context.Process(target=_run_request_in_child, args=(request, stop, events), name="rspwb-run")
    process.start()
    cancelled_at: float | None = None
    try:
        while True:
            if cancel.is_set() and cancelled_at is None:
                stop.set()
                cancelled_at = time.monotonic()
            if cancelled_at is not None and time.monotonic() - cancelled_at > CHILD_STOP_GRACE_S:
                process.kill()  # the bundle then says "running": rspwb report rebuilds its rows
                raise RuntimeError(f"the run process did not stop within {CHILD_STOP_GRACE_S:g} s and was killed")
            try:
                kind, payload = events.get(timeout=0.05)
            except queue.Empty:
                if not process.is_alive() and events.empty():
                    raise RuntimeError(f"the run process ended unexpectedly (exit code {process.exitcode})") from None
                continue
            if kind == "progress":
                report(payload)
            elif kind == "error":
                raise payload
            else:
                return payload
    finally:
        process.join(timeout=5)
        if process.is_alive():
            process.kill()
            process.join()
        events.close()
        events.join_thread()


def _run_request(request: RunRequest, cancel: Any, report: Callable[["ExperimentProgress"], None]) -> Bundle:
    from rsp_workbench.pipeline.run_experiment import run_experiment

    return run_experiment(
        request.experiment, request.out_dir, size=request.size, assume_yes=request.confirmed, ask=None,
        cancel=cancel, progress=report, scheduler=request.scheduler, live_kpis=request.live_kpis,
    )


def _run_request_in_child(request: RunRequest, stop: Any, events: Any) -> None:
    """Child process: run, streaming ("progress", event) then ("done", summary) or ("error", exception)."""
    import pickle

    try:
        summary = _run_request(request, stop, lambda event: events.put(("progress", event)))
    except BaseException as error:  # noqa: BLE001 - every failure goes back to the GUI
        try:
            pickle.dumps(error)
        except Exception:  # an unpicklable exception: keep its text
            error = RuntimeError(f"{type(error).__name__}: {error}")
        events.put(("error", error))
    else:
        events.put(("done", summary))
    events.close()
    events.join_thread()


# --------------------------------------------------------------------------- progress


NOTIFY_AFTER_S = 10.0  # runs shorter than this end while the user is still looking


def finish_notice(entry: "ExperimentRun", *, window_active: bool, tray_available: bool) -> str:
    """How to tell that ``entry`` ended: "" (the window is in front, or the run was short), "tray"
    (a tray message) or "alert" (flash the taskbar entry where there is no system tray)."""
    took = (entry.finished - entry.started) if entry.finished is not None and entry.started is not None else 0.0
    if window_active or entry.status not in FINISHED or took < NOTIFY_AFTER_S:
        return ""
    return "tray" if tray_available else "alert"


def finish_message(entry: "ExperimentRun") -> tuple[str, str]:
    """(title, text) of the notification that ``entry`` ended."""
    took = (entry.finished - entry.started) if entry.finished is not None and entry.started is not None else 0.0
    title = {OK: "Run finished", FAILED: "Run failed", CANCELLED: "Run cancelled"}.get(entry.status, "Run ended")
    detail = entry.error if entry.status == FAILED and entry.error else (f"bundle {entry.bundle}" if entry.bundle else "")
    return f"{title}: {entry.name}", f"after {format_duration(took)}" + (f"; {detail}" if detail else "")


def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


MIN_SHARE_FOR_ETA = 0.05  # of the first item done before its pace is taken for an ETA


@dataclass
class StageProgress:
    """Counts of one stage and the time spent in it; ETA = remaining items × measured time per item.

    Time is *busy* time (only while an item of this stage runs), so that interleaved
    stages (engine, oracle, engine, …) each get their own rate.
    """

    name: str
    total: int | None = None
    done: int = 0
    skipped: int = 0  # items that will not happen (the oracle of a failed engine run)
    busy_s: float = 0.0
    active_since: float | None = None
    current: str = ""
    active_share: float = 0.0  # how much of the running item is done (an engine run's stimuli sent)

    @property
    def expected(self) -> int | None:
        return None if self.total is None else max(0, self.total - self.skipped)

    @property
    def remaining(self) -> int | None:
        return None if self.expected is None else max(0, self.expected - self.done)

    @property
    def active(self) -> bool:
        return self.active_since is not None

    def start(self, now: float, current: str = "") -> None:
        if self.active_since is None:
            self.active_since = now
            self.active_share = 0.0
        self.current = current

    def complete(self, now: float) -> None:
        """The active item is done (no-op if none is active)."""
        if self.active_since is None:
            return
        self.busy_s += max(0.0, now - self.active_since)
        self.active_since = None
        self.done += 1
        self.current = ""

    def skip_one(self) -> None:
        """One expected item will not happen (e.g. no oracle for a failed engine run)."""
        self.skipped += 1

    def stop(self, now: float) -> None:
        """The active item ended without completing (cancel, failure)."""
        if self.active_since is not None:
            self.busy_s += max(0.0, now - self.active_since)
        self.active_since = None
        self.current = ""

    def eta_s(self, now: float) -> float | None:
        """Seconds left: remaining × mean time per completed item, minus the running item's elapsed time."""
        remaining = self.remaining
        elapsed = now - self.active_since if self.active_since is not None else 0.0
        if remaining is not None and self.done == 0 and self.active_share >= MIN_SHARE_FOR_ETA:
            return max(0.0, remaining * elapsed / self.active_share - elapsed)  # the first item's pace so far
        if remaining is None or self.done == 0:
            return None
        if remaining == 0:
            return 0.0
        return max(0.0, remaining * self.busy_s / self.done - elapsed)

    def fraction(self) -> float | None:
        expected = self.expected
        if not expected:
            return None
        return min(1.0, self.done / expected)

    def text(self, now: float, outcome: str | None = None) -> str:
        """``n/N · ETA m:ss`` (what the progress bar says).

        ``outcome`` is the run's status once it no longer runs (``cancelling``, ``cancelled``,
        ``failed``…): an unfinished stage then says what happened first and how many items finished
        (``cancelled · 0 of 2 finished``), since "1/2 · cancelled" read as one of two done or running.
        """
        expected = self.expected
        if expected is None:
            if outcome is not None:
                return outcome if self.done == 0 else f"{outcome} · {self.done} finished"
            return "waiting" if not self.active else f"{self.done}/? · running"
        if expected == 0:
            return "nothing to do"
        if outcome is not None and self.done < expected:
            return f"{outcome} · {self.done} of {expected} finished"
        parts = [f"{self.done}/{expected}"]
        eta = self.eta_s(now)
        if self.done >= expected:
            parts.append("done")
        elif eta is not None:
            parts.append(f"ETA {format_duration(eta)}")
        elif self.active:
            parts.append("running")
        return " · ".join(parts)


@dataclass
class EngineRunTrace:
    """One engine run of the experiment as seen live: KPI series, counters, then its outcome."""

    run_id: str
    engine: str = ""
    stimuli: int | None = None
    stimuli_done: int = 0
    responses: int = 0
    status: str = RUNNING
    verdict: str | None = None
    recall: float | None = None  # a bounded-memory join's verdict is its recall
    error: str | None = None
    peak_rss_mb: float | None = None
    times: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    cpu_percent: list[float] = field(default_factory=list)

    def add_sample(self, sample: Mapping[str, Any]) -> None:
        if sample.get("final"):
            self.status = str(sample.get("status") or self.status)
            if sample.get("peak_rss_mb") is not None:
                self.peak_rss_mb = float(sample["peak_rss_mb"])
        else:
            self.times.append(float(sample["time"]))
            self.rss_mb.append(float(sample["rss_mb"]))
            self.cpu_percent.append(float(sample["cpu_percent"]))
            self.peak_rss_mb = max(self.peak_rss_mb or 0.0, float(sample["rss_mb"]))
        self.responses = int(sample.get("responses", self.responses) or 0)
        self.stimuli_done = int(sample.get("stimuli_done", self.stimuli_done) or 0)

    def set_row(self, row: Mapping[str, Any]) -> None:
        """The run's summary row (``rsp_workbench.results.bundle.run_row``): status, verdict, error, final counts."""
        self.engine = str(row.get("engine") or self.engine)
        self.status = str(row.get("status") or self.status)
        self.verdict = row.get("verdict")
        self.recall = row.get("recall")
        self.error = row.get("error")
        if row.get("responses") is not None:
            self.responses = int(row["responses"])
        if row.get("peak_rss_mb") is not None:
            self.peak_rss_mb = float(row["peak_rss_mb"])


@dataclass
class ExperimentRun:
    """One queue entry: the request, its status, stage progress, engine runs, log and outcome."""

    ident: int
    request: RunRequest = field(repr=False)
    status: str = QUEUED
    stages: dict[str, StageProgress] = field(default_factory=lambda: {name: StageProgress(name) for name in STAGES},
                                             repr=False)
    engine_runs: dict[str, EngineRunTrace] = field(default_factory=dict, repr=False)
    current_run: str | None = None
    log: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=LOG_LINES), repr=False)
    log_count: int = 0  # lines ever logged (the view appends only the new ones)
    error: str | None = None
    bundle: Path | None = None
    started: float | None = None
    finished: float | None = None
    version: int = 0  # bumped on every change: the view redraws only when it moved
    _oracle_for: str | None = None

    @property
    def name(self) -> str:
        return self.request.name

    @property
    def finished_ok(self) -> bool:
        return self.status == OK

    def note(self, now: float, message: str) -> None:
        elapsed = format_duration(now - self.started) if self.started is not None else "0:00"
        self.log.append(f"[{elapsed}] {message}")
        self.log_count += 1
        self.version += 1

    def start(self, now: float) -> None:
        self.status = RUNNING
        self.started = now
        where = "engines in this process" if self.request.live_kpis else "engines as Spark tasks (no live KPIs)"
        self.note(now, f"start {self.name}" + (f" (size {self.request.size})" if self.request.size else "")
                  + f" → {self.request.out_dir}; {where}")

    def request_cancel(self, now: float) -> None:
        if self.status == RUNNING:
            self.status = CANCELLING
            self.note(now, "cancelling: stopping the engine process / Spark jobs…")

    def stage_text(self, name: str, now: float) -> str:
        """What stage ``name``'s bar says: counts with an ETA while running, the outcome once stopped."""
        return self.stages[name].text(now, None if self.status == RUNNING else self.status)

    def eta_s(self, now: float) -> float | None:
        """Time left for the whole experiment: the stages' ETAs added (generation first, then engines + oracle)."""
        parts = []
        for stage in self.stages.values():
            if stage.remaining == 0:
                continue
            eta = stage.eta_s(now)
            if eta is None:
                return None
            parts.append(eta)
        return sum(parts)

    # ------------------------------------------------------------------ events
    def apply(self, event: "ExperimentProgress", now: float) -> None:
        """Fold one progress event from ``run_experiment`` into the state."""
        data = event.data or {}
        generate, engines, oracle = (self.stages[name] for name in STAGES)
        self.version += 1
        if event.stage == "kpi":
            if event.run_id is not None:
                trace = self._trace(event.run_id)
                trace.add_sample(data)
                if event.run_id == self.current_run and trace.stimuli:  # the first run's share: an ETA before it ends
                    engines.active_share = min(1.0, trace.stimuli_done / trace.stimuli)
            return
        if event.stage == "validate":
            engines.total = oracle.total = event.total
            generate.total = int(data.get("streams", 0))
        elif event.stage == "stream":
            generate.complete(now)
            if event.total:
                generate.total = event.total
            generate.start(now, event.message)
        elif event.stage == "engine":
            generate.complete(now)
            if generate.total is None:
                generate.total = generate.done
            if event.run_id is None:  # the Spark scheduler: all runs at once, no per-run events
                engines.total = oracle.total = event.total or engines.total
                engines.start(now, event.message)
                oracle.start(now, "on the executors")
            else:
                trace = self._trace(event.run_id)
                trace.engine = str(data.get("engine") or trace.engine)
                trace.stimuli = data.get("stimuli", trace.stimuli)
                self.current_run = event.run_id
                engines.start(now, event.run_id)
        elif event.stage == "oracle":
            engines.complete(now)
            oracle.start(now, event.run_id or "")
            self._oracle_for = event.run_id
        elif event.stage == "run-done":
            if engines.active and (self.status == CANCELLING or data.get("status") == CANCELLED):
                engines.stop(now)  # cancelled: neither done nor dropped from the totals (stays n/60)
            elif engines.active:  # no oracle event: the engine run failed
                engines.complete(now)
                oracle.skip_one()
            elif self._oracle_for == event.run_id:
                oracle.complete(now)
            self._oracle_for = None
            if event.run_id is not None and data:
                self._trace(event.run_id).set_row(data)
        if event.stage != "kpi":
            counter = f"[{event.done}/{event.total}] " if event.stage == "run-done" else ""
            self.note(now, counter + event.message)

    def _trace(self, run_id: str) -> EngineRunTrace:
        trace = self.engine_runs.get(run_id)
        if trace is None:
            trace = self.engine_runs[run_id] = EngineRunTrace(run_id)
        return trace

    # ------------------------------------------------------------------ outcome
    def finish(self, summary: Bundle, now: float) -> None:
        """The run returned: status and per-engine-run rows from the bundle (failed runs keep their error)."""
        self._end(now)
        self.bundle = Path(summary.folder)
        self.status = summary.status if summary.status in FINISHED else FAILED
        self._take_rows(summary.rows)
        failed = [row for row in summary.rows if row.get("status") not in ("ok", "cancelled", "not-run")]
        if failed:
            self.error = "\n".join(f"{row.get('run_id')}: {row.get('status')}: {row.get('error') or 'no message'}"
                                   for row in failed)
        self.note(now, f"finished: {self.status}; " + ", ".join(f"{n} {k}" for k, n in sorted(summary.counts().items()))
                  + f"; bundle {self.bundle}")

    def fail(self, error: BaseException, now: float) -> None:
        """The run raised: keep the message (a UserError names file/line/field) and what the bundle holds."""
        self._end(now)
        self.error = str(error) if isinstance(error, UserError) else f"{type(error).__name__}: {error}"
        self.status = FAILED
        out = self.request.out_dir
        if (out / MANIFEST).is_file():
            summary = open_bundle(out, partial=True)
            self.bundle = out
            if summary.status == CANCELLED:
                self.status = CANCELLED
            self._take_rows(summary.rows)
        self.note(now, f"{self.status}: {self.error}")

    def _end(self, now: float) -> None:
        self.finished = now
        for stage in self.stages.values():
            stage.stop(now)
        self.current_run = None

    def _take_rows(self, rows: Sequence[Mapping[str, Any]]) -> None:
        generate, engines, oracle = (self.stages[name] for name in STAGES)
        for row in rows:
            if row.get("run_id") is not None:
                self._trace(str(row["run_id"])).set_row(row)
        # the Spark scheduler reports no per-run events: take the counts from the bundle
        engines.total = engines.total if engines.total is not None else len(rows)
        engines.done = max(engines.done, sum(1 for row in rows if row.get("folder")))
        oracle.done = max(oracle.done, sum(1 for row in rows if row.get("windows") is not None))
        if generate.total is not None and generate.done < generate.total and self.status == OK:
            generate.done = generate.total

    def completed_runs(self) -> list[EngineRunTrace]:
        """Engine runs that produced results (kept in the bundle even when the experiment failed)."""
        return [trace for trace in self.engine_runs.values() if trace.status not in (RUNNING, "not-run", CANCELLED)]


class RunQueue:
    """Experiment runs in order; one runs at a time (measurements never share the CPU)."""

    def __init__(self) -> None:
        self.entries: list[ExperimentRun] = []
        self._next = 1

    def enqueue(self, request: RunRequest) -> ExperimentRun:
        entry = ExperimentRun(self._next, request)
        self._next += 1
        self.entries.append(entry)
        return entry

    def get(self, ident: int) -> ExperimentRun | None:
        return next((entry for entry in self.entries if entry.ident == ident), None)

    def remove(self, ident: int) -> ExperimentRun:
        """Drop a queued or finished entry; a running one must be cancelled first."""
        entry = self.get(ident)
        if entry is None:
            raise KeyError(ident)
        if entry.status in (RUNNING, CANCELLING):
            raise ValueError(f"{entry.name} is running; cancel it first")
        self.entries.remove(entry)
        return entry

    def running(self) -> ExperimentRun | None:
        return next((entry for entry in self.entries if entry.status in (RUNNING, CANCELLING)), None)

    def next_to_start(self) -> ExperimentRun | None:
        """The first queued entry, if nothing runs."""
        if self.running() is not None:
            return None
        return next((entry for entry in self.entries if entry.status == QUEUED), None)

    def queued(self) -> list[ExperimentRun]:
        return [entry for entry in self.entries if entry.status == QUEUED]


# --------------------------------------------------------------------------- what the view shows

STATUS_COLOURS = {QUEUED: "#616161", RUNNING: "#1565c0", CANCELLING: "#ef6c00", OK: "#2e7d32",
                  FAILED: "#c62828", CANCELLED: "#ef6c00"}
VERDICT_COLOURS = {"correct": "#2e7d32", "ok": "#2e7d32", "complete": "#2e7d32", "partial": "#ef6c00", "incorrect": "#c62828", "failed": "#c62828",
                   "timeout": "#c62828", "error": "#c62828", "cancelled": "#ef6c00", RUNNING: "#1565c0"}
KEPT_LISTED = 12  # finished engine runs named in a failed run's error


def verdict_colour(text: str) -> str:
    """The colour of an engine run's verdict (or status) in the run table ("partial · recall 0.83": partial's)."""
    return VERDICT_COLOURS.get(text.split(" · ")[0], "#000")


def queue_item_text(entry: ExperimentRun, now: float) -> str:
    """A run's line in the queue: name, size, and its status (with ETA while it runs)."""
    status = entry.status
    if status == RUNNING:  # cancelling: no ETA, the run stops
        eta = entry.eta_s(now)
        status += f" · ETA {format_duration(eta)}" if eta is not None else ""
    size = f" [{entry.request.size}]" if entry.request.size else ""
    return f"{entry.name}{size}\n  {status}"


def elapsed_text(entry: ExperimentRun, now: float) -> str:
    """Elapsed and remaining time while a run runs, its duration once it finished, else that it waits."""
    if entry.status in (RUNNING, CANCELLING):
        eta = entry.eta_s(now) if entry.status == RUNNING else None
        elapsed = format_duration(now - (entry.started or now))
        return f"elapsed {elapsed}" + (f" · remaining ≈ {format_duration(eta)}" if eta is not None else "")
    if entry.finished is not None and entry.started is not None:
        return f"took {format_duration(entry.finished - entry.started)}"
    return "waiting in the queue"


def engine_run_cells(trace: EngineRunTrace) -> tuple[str, str, str, str, str, str]:
    """An engine run's row: run id, verdict (or status), engine, responses, stimuli, peak RSS."""
    stimuli = f"{trace.stimuli_done}/{trace.stimuli}" if trace.stimuli is not None else str(trace.stimuli_done or "")
    verdict = verdict_text(trace.verdict, trace.recall) if trace.verdict else trace.status
    return (trace.run_id, verdict, trace.engine, str(trace.responses), stimuli,
            "" if trace.peak_rss_mb is None else f"{trace.peak_rss_mb:.1f}")

