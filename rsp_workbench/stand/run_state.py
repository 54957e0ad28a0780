"""What the host threads of one run share: its state, and the view of the engine's process tree they measure.

A module of its own so that the feeding of stimuli on the caller's thread
(`rsp_workbench.stand.feeding`) and the host threads (`rsp_workbench.stand.host`: writer,
receiver, stderr drain, probe) work on one :class:`RunState` without importing each other;
:func:`latency_start` and :func:`note_rss` are the bookkeeping both sides do. A run that
stops raises :class:`StopRun` (status and message for ``run.json``).
"""

from __future__ import annotations

import collections
import os
import sys
import threading
from typing import Any, Callable

import psutil

from rsp_workbench.stand.options import MIB, StandOptions
from rsp_workbench.stand.run_folder import RunFolder, TracedStimulus


class StopRun(Exception):
    """What stops a run: its status (``failed``, ``timeout`` or ``cancelled``) and why."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class ProcessTree:
    """psutil view of the engine's process tree (the root and all its descendants)."""

    def __init__(self, pid: int) -> None:
        self.root = psutil.Process(pid)
        self.members: dict[int, psutil.Process] = {pid: self.root}
        self.lock = threading.Lock()

    def refresh(self) -> list[psutil.Process]:
        try:
            children = self.root.children(recursive=True)
        except psutil.Error:
            children = []
        with self.lock:
            alive = {self.root.pid: self.root}
            for child in children:
                alive[child.pid] = self.members.get(child.pid, child)
            self.members = alive
            return list(alive.values())

    def processes(self) -> list[psutil.Process]:
        with self.lock:
            return list(self.members.values())

    def kpis(self) -> dict[str, float]:
        """Cheap per-stimulus KPIs: RSS (MiB) and CPU seconds (user+system) over the tree.

        Taken twice per stimulus, so on Linux one read of ``/proc/PID/stat`` per process
        gives both (psutil reads two files); psutil elsewhere or if that read fails.
        """
        rss = cpu = 0.0
        for process in self.processes():
            sample = _proc_stat(process.pid)
            if sample is not None:
                rss += sample[0]
                cpu += sample[1]
                continue
            try:
                rss += process.memory_info().rss
                times = process.cpu_times()
                cpu += times.user + times.system
            except psutil.Error:
                continue
        return {"rss_mb": round(rss / MIB, 3), "cpu_s": round(cpu, 4)}


try:
    _CLOCK_TICKS = float(os.sysconf("SC_CLK_TCK"))
    _PAGE_BYTES = float(os.sysconf("SC_PAGE_SIZE"))
except (AttributeError, ValueError, OSError):  # pragma: no cover - not a POSIX system
    _CLOCK_TICKS = _PAGE_BYTES = 0.0


def _proc_stat(pid: int) -> tuple[float, float] | None:
    """(RSS bytes, user+system CPU seconds) of one process from ``/proc/PID/stat``; None if unreadable.

    Fields after the command name (proc(5)): utime and stime are the 12th and 13th, rss
    (pages) the 22nd — the values psutil's ``memory_info().rss`` and ``cpu_times()`` report.
    """
    if not _CLOCK_TICKS:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
        fields = data[data.rindex(b")") + 2:].split()
        return int(fields[21]) * _PAGE_BYTES, (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
    except (OSError, ValueError, IndexError):
        return None


class RunState:
    """State shared by the host threads of one run."""

    def __init__(self, name: str, options: StandOptions, cancel: threading.Event | None,
                 on_sample: Callable[[dict[str, float]], None] | None = None) -> None:
        self.name = name
        self.on_sample = on_sample
        self.files: RunFolder | None = None  # opened once the query is known good
        self.options = options
        self.cancel = cancel or threading.Event()
        self.condition = threading.Condition()
        self.failure: StopRun | None = None
        self.ready: dict[str, Any] | None = None
        self.closed = False
        self.advanced: set[int] = set()
        self.last_sent: int | None = None  # id of the last stimulus sent (ids increase)
        self.pending: collections.OrderedDict[int, TracedStimulus] = collections.OrderedDict()
        self.stimuli_done = 0
        self.elements_done = 0
        self.latencies: list[float] = []
        self.lags: list[float] = []
        self.last_done_ms: float | None = None
        self.first_sent_ms: float | None = None
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=options.stderr_tail_lines)
        self.thread_cpu: dict[str, float] = {}
        self.samples = 0
        self.peak_rss_mb = 0.0  # over every measurement: the sampler and the per-stimulus KPIs
        self.rss_measured = False
        self._peak_lock = threading.Lock()
        self.tree: ProcessTree | None = None
        self.stopped = threading.Event()  # wakes the probe at the end of the run
        self.batching = False  # the engine accepts `batch` messages and options.batch > 1
        self.batches = 0  # `batch` messages sent
        self.wake_pending = sys.maxsize  # a `done` wakes the streamer only when pending ≤ this
        self.kpis_after: tuple[float, dict[str, float] | None] | None = None  # batching: (read at ms, KPIs)

    def fail(self, status: str, message: str) -> None:
        with self.condition:
            if self.failure is None:
                self.failure = StopRun(status, message)
            self.condition.notify_all()
        self.stopped.set()

    def check(self) -> None:
        if self.cancel.is_set():
            self.fail("cancelled", "cancelled")
        if self.failure is not None:
            raise self.failure


def latency_start(run: RunState, entry: TracedStimulus) -> float:
    """Where a stimulus's latency starts (caller holds the lock): when it was sent — or, for a
    stimulus of a batch in absolute time, when the engine could start it, i.e. sent and the
    stimulus before it done. Without batches in absolute time the previous one is always done
    before the next is sent, so both rules give the same number (docs/engine-protocol.md)."""
    if entry.started_ms is not None:
        return entry.started_ms
    if entry.batch is not None and run.options.mode == "absolute-time" and run.last_done_ms is not None:
        return max(entry.sent_ms, run.last_done_ms)
    return entry.sent_ms


def note_rss(run: RunState, kpis: dict[str, float] | None) -> None:
    """Fold one RSS measurement (a sampler tick or a stimulus's KPIs) into the run's peak."""
    if kpis is None or kpis.get("rss_mb") is None:
        return
    with run._peak_lock:
        run.peak_rss_mb = max(run.peak_rss_mb, float(kpis["rss_mb"]))
        run.rss_measured = True
