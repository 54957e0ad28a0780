"""The run folder of one measured engine run: every file the stand writes, and their layout.

A module of its own because the host (`rsp_workbench.stand.host`) is about running an engine —
its process, the host threads, feeding and timing — while what a run leaves behind is a
file format that others read: the judge (``responses.jsonl``, ``trace.jsonl``), the
Results views and ``rspwb report`` (``run.json``, ``P_*.csv``), YABench's tools
(``P_*.csv``); docs/result-bundle.md describes them. Here the format lives in one place.

``trace.jsonl``
    The Heaven trace (Heaven Sect. 3, R.1): one record per stimulus — id, application
    time, number of elements, system time sent, KPIs before, the responses with their
    system time, the system time the engine finished it (``done``), latency, KPIs after.
``responses.jsonl``
    The workbench response log, written as responses arrive
    (`rsp_workbench.responses.readers.ResponseLogWriter`, never all held); a
    response's ``system_time`` is the stand's receive time (epoch ms).
``P_<name>.csv``
    YABench performance samples every ``sampling_ms``: ``time,rss_mem,cpu_percent,
    mem_percent,threads`` (s since engine start, MiB over the process tree, % of one core).
``stderr.log``
    The engine's stderr (the first :data:`STDERR_LOG_BYTES`).
``run.json``
    `RunResult`: status (``ok`` | ``failed`` | ``timeout`` | ``cancelled``), error (with
    the stderr tail), timings, throughput, latency summary, and the stand's own overhead
    (CPU time of its streamer, writer, receiver, stderr and probe threads).

Each file is written by one host thread: the trace by the receiver (and at the end by the
caller), the samples by the probe, stderr.log by the stderr drain.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from rsp_workbench.responses.readers import ResponseLogWriter
from rsp_workbench.stand.protocol import dumps

P_HEADER = "time,rss_mem,cpu_percent,mem_percent,threads"
STDERR_LOG_BYTES = 16 << 20  # stderr.log keeps the first 16 MiB; the rest is read and dropped


@dataclass
class RunResult:
    """What `rsp_workbench.stand.host.run_engine` returns (also written as ``run.json``)."""

    name: str
    status: str
    error: str | None
    folder: str
    stimuli_sent: int = 0
    stimuli_done: int = 0
    elements_sent: int = 0
    elements_done: int = 0
    responses: int = 0
    bindings: int = 0
    samples: int = 0
    exit_code: int | None = None
    timings: dict[str, float] = field(default_factory=dict)
    throughput_triples_per_s: float | None = None
    latency_ms: dict[str, float] = field(default_factory=dict)
    schedule_lag_ms: dict[str, float] = field(default_factory=dict)
    stand_overhead: dict[str, float] = field(default_factory=dict)
    peak_rss_mb: float | None = None
    engine: dict[str, Any] = field(default_factory=dict)
    command: list[str] = field(default_factory=list)
    mode: str = ""
    time_scale: float = 1.0
    batch: int = 1  # the most stimuli the stand put in one message (1: the engine got one per message)
    stderr_tail: str = ""
    # processes of the engine's tree still alive at the end of the run, killed by the stand
    # (pid, name, command): a daemon or child it left behind, or the engine itself if it had to be stopped
    killed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class TracedStimulus:
    """A stimulus sent and not yet ``done``: what its trace record needs."""

    stimulus: int
    application_time: int
    elements: int
    sent_ms: float = 0.0
    due_lag_ms: float | None = None
    kpis_before: dict[str, float] | None = None
    responses: list[dict[str, Any]] = field(default_factory=list)
    batch: int | None = None  # number of the `batch` message that carried it (None: its own message)
    started_ms: float | None = None  # latency is measured from here (the host's _latency_start)


class RunFolder:
    """The files of one run while it goes on, opened at the start; `write_result` ends them."""

    def __init__(self, folder: Path, name: str, *, variables: Sequence[str], query_id: str | None) -> None:
        self.path = folder
        self.stderr_log = open(folder / "stderr.log", "wb")
        self.responses = ResponseLogWriter(folder / "responses.jsonl", variables=variables, engine=name,
                                           query=query_id, source="stand")
        self.trace = open(folder / "trace.jsonl", "wb")
        self.samples_path = folder / f"P_{_safe(name)}.csv"
        self.samples = open(self.samples_path, "w", encoding="utf-8", newline="\n")
        self.samples.write(P_HEADER + "\n")
        self.stderr_bytes = 0  # of the engine's stderr, kept or not
        self.stderr_dropped = 0  # bytes beyond STDERR_LOG_BYTES, read and not kept (known at the end of stderr)

    def write_trace(self, entry: TracedStimulus, done_ms: float | None, latency_ms: float | None,
                    kpis_after: dict[str, float] | None) -> None:
        """One trace record; ``done_ms`` and ``latency_ms`` None for a stimulus sent and never done.
        Dropped once the folder is closed."""
        if self.trace.closed:
            return
        record = {
            "stimulus": entry.stimulus,
            "application_time": entry.application_time,
            "elements": entry.elements,
            "sent": round(entry.sent_ms, 3),
            "schedule_lag_ms": None if entry.due_lag_ms is None else round(entry.due_lag_ms, 3),
            "kpis_before": entry.kpis_before,
            "responses": entry.responses,
            "done": None if done_ms is None else round(done_ms, 3),
            "latency_ms": None if latency_ms is None else round(latency_ms, 3),
            "kpis_after": kpis_after,
        }
        if entry.batch is not None:
            record["batch"] = entry.batch
        self.trace.write(dumps(record))

    def write_sample(self, elapsed_s: float, rss_mb: float, cpu_percent: float, mem_percent: float,
                     threads: int) -> None:
        """One ``P_<name>.csv`` line (YABench's columns)."""
        self.samples.write(f"{elapsed_s:.3f},{rss_mb:.3f},{cpu_percent:.1f},{mem_percent:.3f},{threads}\n")

    def write_stderr(self, piece: bytes) -> None:
        """A piece of the engine's stderr: kept while stderr.log is under its limit."""
        if self.stderr_bytes < STDERR_LOG_BYTES:
            self.stderr_log.write(piece[: STDERR_LOG_BYTES - self.stderr_bytes])
        self.stderr_bytes += len(piece)

    def end_stderr(self) -> None:
        """At the end of stderr: say in stderr.log what was dropped, if anything."""
        self.stderr_dropped = max(0, self.stderr_bytes - STDERR_LOG_BYTES)
        if self.stderr_dropped:
            self.stderr_log.write(f"\n[rspwb: stderr.log keeps the first {STDERR_LOG_BYTES >> 20} MiB; "
                                  f"{self.stderr_dropped} more bytes were read and dropped]\n".encode())
        self.stderr_log.flush()

    def stderr_note(self) -> str | None:
        """For run.json's error: how much stderr there was when stderr.log could not keep it all."""
        if not self.stderr_dropped:
            return None
        return (f"stderr was {STDERR_LOG_BYTES + self.stderr_dropped} bytes; stderr.log keeps the first "
                f"{STDERR_LOG_BYTES >> 20} MiB")

    def close(self) -> None:
        for handle in (self.stderr_log, self.trace, self.samples):
            try:
                handle.close()
            except OSError:
                pass

    def write_result(self, result: RunResult) -> None:
        """End the response log and write ``run.json``."""
        self.responses.finish(int(result.timings.get("start_epoch_ms", 0)))
        (self.path / "run.json").write_text(json.dumps(asdict(result), indent=2) + "\n", encoding="utf-8")


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
