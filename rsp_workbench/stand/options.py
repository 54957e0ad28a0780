"""How the stand feeds and watches one run: :class:`StandOptions`, and the limits on what an engine can make it hold.

A module of its own because the options are set by the stand's callers (the pipeline,
`rspwb probe`, the benchmarks) and read by every part of the host: `rsp_workbench.stand.host`
(the engine's process and the host threads), `rsp_workbench.stand.run_state` (what those
threads share) and `rsp_workbench.stand.feeding` (the stimuli fed on the caller's thread).
"""

from __future__ import annotations

from dataclasses import dataclass

from rsp_workbench.errors import UserError
from rsp_workbench.stand.streamer import MODES

MIB = 1024 * 1024
# Bounds on what an engine can make the stand hold (docs/engine-protocol.md, "Limits"):
MAX_MESSAGE_BYTES = 64 * MIB  # one protocol line on stdout (StandOptions.max_message_bytes, stand.max_message_mb)
MAX_OUTPUT_BYTES = 1024 * MIB  # all of an engine's stdout in one run (StandOptions.max_output_bytes, stand.max_output_mb)


@dataclass(frozen=True)
class StandOptions:
    """How the stand feeds and watches one run (experiment ``stand`` + ``kpis`` sections)."""

    mode: str = "absolute-time"
    time_scale: float = 1.0
    sampling_ms: int = 500
    stimulus_timeout_s: float | None = 30.0
    run_timeout_s: float | None = None
    start_timeout_s: float = 60.0
    close_timeout_s: float = 30.0
    end: int | None = None  # advance the engine's clock to this application time before close
    heartbeat_ms: int | None = None  # real-time mode: send `advance` every this many ms of application time
    trace_kpis: bool = True
    stderr_tail_lines: int = 40
    # most stimuli per `batch` message to an engine that accepts batches; 1 = one stimulus per
    # message (and, in absolute time, one round trip per stimulus) whatever the engine accepts
    batch: int = 256
    # bytes the engine may write on stdout in one run (responses.jsonl grows with it); more fails the run
    max_output_bytes: int = MAX_OUTPUT_BYTES
    # bytes of one protocol line from the engine: it is read whole (in bounded pieces, never further) and
    # parsed, so a line costs the host several times this much memory; longer fails the run
    max_message_bytes: int = MAX_MESSAGE_BYTES

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise UserError(f"stand mode must be one of {', '.join(MODES)}", field="stand.mode")
        if not self.time_scale > 0:
            raise UserError("time_scale must be positive", field="stand.time_scale")
        if self.sampling_ms <= 0:
            raise UserError("sampling period must be positive", field="kpis.sampling")
        if self.batch < 1:
            raise UserError("batch must be at least 1 stimulus", field="stand.batch")
        if self.max_message_bytes < 1:
            raise UserError("the longest engine message must be at least 1 byte", field="stand.max_message_mb")
