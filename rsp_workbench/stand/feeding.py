"""The caller's thread of a run: stimuli fed to the engine one by one or in batches, in absolute or real time.

A module of its own because what is sent when — one stimulus in flight, or batches of up to
``StandOptions.batch`` stimuli and about :data:`BATCH_ELEMENTS` elements; real-time stimuli
when due, never early, with heartbeats between them — is apart from starting the engine and
the threads that talk to it (`rsp_workbench.stand.host`); real time's schedule itself is
`rsp_workbench.stand.streamer`'s. :func:`wait_for` is how the caller's thread waits for the
engine, watching for cancel, failure and timeouts.
"""

from __future__ import annotations

import contextlib
import gc
import queue
import time
from typing import Callable, Iterable, Iterator

from rsp_workbench.engine import Stimulus
from rsp_workbench.stand.protocol import batch_message, dumps, stimulus_message
from rsp_workbench.stand.run_folder import RunResult, TracedStimulus
from rsp_workbench.stand.run_state import RunState, latency_start, note_rss
from rsp_workbench.stand.streamer import RealTimeSchedule

# Batches (docs/engine-protocol.md, "Batches"): one `batch` line carries at most StandOptions.batch
# stimuli and about this many elements (a stimulus is never split)
BATCH_ELEMENTS = 1024


def feed(
    run: RunState, stimuli: Iterable[Stimulus], inbox: queue.Queue[bytes | None], result: RunResult,
    progress: Callable[[int], None] | None, wall_start: float,
) -> None:
    """Send the stimuli: in absolute time when the engine is ready for them, in real time when due.

    To an engine that accepts batches, several stimuli go in one ``batch`` message: in
    absolute time up to ``options.batch`` of them, with at most one batch in flight while the
    next is written; in real time only the stimuli already due (a stimulus is never sent
    early). Without batching every stimulus is its own message, as the protocol began.
    """
    options = run.options
    schedule = RealTimeSchedule(options.time_scale) if options.mode == "real-time" else None
    limit = options.batch if run.batching else 1
    last_heartbeat: int | None = None
    source = iter(stimuli)
    following = next(source, None)
    while following is not None:
        stimulus, following = following, next(source, None)
        run.check()
        chunk = [stimulus]
        size = len(stimulus.elements)
        if schedule is None:
            while following is not None and len(chunk) < limit and size < BATCH_ELEMENTS:
                chunk.append(following)
                size += len(following.elements)
                following = next(source, None)
            message = _encode(chunk)  # encoding is stand overhead, not engine latency
            # one stimulus in flight (Heaven); batching: the next batch waits for all but the last one
            in_flight = limit if run.batching else 0
            run.wake_pending = in_flight
            # the stimulus timeout is each stimulus's own (checked by run_deadline's _check_timeouts,
            # from when the engine could start it), not one for the whole wait: that waits for a batch
            wait_for(run, lambda: len(run.pending) <= in_flight, run_deadline=wall_start)
            lags: list[float | None] = [None] * len(chunk)
        else:
            due = schedule.due(stimulus.application_time)
            while True:
                now = time.monotonic()
                if now >= due:
                    break
                if options.heartbeat_ms:
                    reached = int(schedule.application_time_at(now))
                    beat = min(reached, stimulus.application_time - 1)
                    if last_heartbeat is None or beat - last_heartbeat >= options.heartbeat_ms:
                        last_heartbeat = beat
                        inbox.put(dumps({"type": "advance", "t": beat}))
                with run.condition:
                    run.condition.wait(min(due - now, 0.05))
                _check_timeouts(run, wall_start)
            now = time.monotonic()
            lags = [(now - due) * 1000.0]
            while (following is not None and len(chunk) < limit and size < BATCH_ELEMENTS
                   and schedule.due(following.application_time) <= now):  # only what is already due
                lags.append((now - schedule.due(following.application_time)) * 1000.0)
                chunk.append(following)
                size += len(following.elements)
                following = next(source, None)
            _check_timeouts(run, wall_start)
            message = _encode(chunk)
        _send(run, chunk, message, lags, inbox, result)
        if progress is not None:
            progress(result.stimuli_sent)
    run.wake_pending = 0
    wait_for(run, lambda: not run.pending, run_deadline=wall_start)  # as above


def _encode(chunk: list[Stimulus]) -> bytes:
    """One stimulus as its own message, several as one ``batch`` message."""
    return dumps(stimulus_message(chunk[0]) if len(chunk) == 1 else batch_message(chunk))


def _send(
    run: RunState, chunk: list[Stimulus], message: bytes, lags: list[float | None], inbox: queue.Queue[bytes | None],
    result: RunResult,
) -> None:
    """Register the chunk's stimuli as pending (their KPIs before and sent time), then write it."""
    batch = None
    if len(chunk) > 1:
        batch = run.batches
        run.batches += 1
    kpis = None
    if run.options.trace_kpis and run.tree is not None:
        kpis = run.tree.kpis()  # a batch's stimuli share the KPIs read before it was sent
        note_rss(run, kpis)
    sent_ms = time.time() * 1000.0
    entries = [TracedStimulus(stimulus.id, stimulus.application_time, len(stimulus.elements), sent_ms, lag, kpis,
                              batch=batch) for stimulus, lag in zip(chunk, lags)]
    with run.condition:
        for entry in entries:
            run.pending[entry.stimulus] = entry
        run.last_sent = chunk[-1].id
    if run.first_sent_ms is None:
        run.first_sent_ms = sent_ms
    inbox.put(message)
    result.stimuli_sent += len(entries)
    result.elements_sent += sum(entry.elements for entry in entries)
    run.lags.extend(lag for lag in lags if lag is not None)


@contextlib.contextmanager
def old_objects_frozen() -> Iterator[None]:
    """While feeding, the host's cyclic garbage collector leaves alone what existed before —
    the caller's stimuli (700 k elements at YABench BIG), the application's own objects:
    walking them took pauses of several hundred ms that delayed real-time stimuli and
    looked like engine latency. New objects are collected as usual."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _check_timeouts(run: RunState, wall_start: float) -> None:
    run.check()
    options = run.options
    if options.run_timeout_s is not None and time.monotonic() - wall_start > options.run_timeout_s:
        run.fail("timeout", f"run timeout ({options.run_timeout_s:g} s) exceeded")
        run.check()
    if options.stimulus_timeout_s is not None:
        with run.condition:
            oldest = next(iter(run.pending.values()), None)
            # batching: a stimulus waits in the engine behind the others of its batch; its time
            # starts when the engine could start it (sent, and the stimulus before it done)
            since = None if oldest is None else latency_start(run, oldest)
        if oldest is not None and since is not None and time.time() * 1000.0 - since > options.stimulus_timeout_s * 1000.0:
            run.fail("timeout", f"stimulus {oldest.stimulus} not finished within {options.stimulus_timeout_s:g} s")
            run.check()


def wait_for(
    run: RunState, predicate: Callable[[], bool], timeout_s: float | None = None, message: str = "", *,
    status: str = "timeout", run_deadline: float | None = None,
) -> None:
    """Wait for ``predicate`` (under the run's condition), waking every 50 ms for cancel/failure/timeouts:
    ``timeout_s`` bounds this wait (failing the run with ``message``); ``run_deadline`` (the run's
    start) checks the run's and each pending stimulus's own timeouts instead."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        with run.condition:
            if predicate():
                return
            run.condition.wait(0.05)
            if predicate():
                return
        run.check()
        if run_deadline is not None:
            _check_timeouts(run, run_deadline)
        if deadline is not None and time.monotonic() > deadline:
            run.fail(status, f"{message} ({timeout_s:g} s)")
            run.check()
