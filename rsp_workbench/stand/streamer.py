"""The streamer: stimuli from a stream, and when to send them (YABench real time, Heaven absolute time).

* :func:`iter_stimuli` groups contemporaneous elements into one stimulus (YABench: all
  elements with the same timestamp are sent together), lazily, so large streams are not
  held in memory twice.
* :class:`RealTimeSchedule` — real-time mode: stimulus k is due at
  ``start + (t_k − t_first) / time_scale`` on the monotonic clock. Due times are computed
  from the start, never accumulated, so scheduling does not drift; a stimulus that is due
  while the stand is still busy is sent at once and its lag is recorded.
* Absolute-time mode (Heaven Sect. 4) needs no schedule: the engine's clock follows the
  stimuli's application time and the next stimulus is sent when the engine has
  acknowledged the previous one, so latency is pure processing time.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Iterable, Iterator

from rsp_workbench.engine import Stimulus
from rsp_workbench.errors import UserError
from rsp_workbench.streams.model import StreamElement

MODES = ("real-time", "absolute-time")


def iter_stimuli(
    elements: Iterable[StreamElement], *, stream: str | None = None, first_id: int = 0
) -> Iterator[Stimulus]:
    """One stimulus per distinct application time of a time-ordered stream."""
    batch: list[StreamElement] = []
    current: int | None = None
    ident = first_id
    for element in elements:
        if current is not None and element.t != current:
            if element.t < current:
                raise UserError(f"the stream is not time-ordered: {element.t} after {current}", field="stream")
            yield _make(ident, current, batch, stream)
            ident += 1
            batch = []
        current = element.t
        batch.append(element)
    if batch and current is not None:
        yield _make(ident, current, batch, stream)


def _make(ident: int, t: int, batch: list[StreamElement], stream: str | None) -> Stimulus:
    return Stimulus(ident, t, tuple(batch), None if stream is None else (stream,) * len(batch))


@dataclass
class RealTimeSchedule:
    """Due times of stimuli in real-time mode, on ``time.monotonic`` (drift-free)."""

    time_scale: float = 1.0
    start: float | None = None  # monotonic seconds of the first stimulus
    first_time: int | None = None  # application time (ms) of the first stimulus

    def __post_init__(self) -> None:
        if not self.time_scale > 0:
            raise UserError(f"time_scale must be positive, got {self.time_scale}", field="time_scale")

    def due(self, application_time: int) -> float:
        """Monotonic instant at which the stimulus at ``application_time`` must be sent."""
        if self.start is None or self.first_time is None:
            self.start = time.monotonic()
            self.first_time = application_time
        return self.start + (application_time - self.first_time) / 1000.0 / self.time_scale

    def application_time_at(self, instant: float) -> float:
        """The application time (ms) that the wall clock has reached at a monotonic instant."""
        if self.start is None or self.first_time is None:
            raise ValueError("schedule not started")
        return self.first_time + (instant - self.start) * 1000.0 * self.time_scale


def wait_until(deadline: float, cancel: threading.Event | None, step: float = 0.05) -> bool:
    """Sleep until the monotonic ``deadline``; False if cancelled first. Wakes at least every ``step`` s."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return True
        if cancel is not None:
            if cancel.wait(min(remaining, step)):
                return False
        else:
            time.sleep(min(remaining, step))
