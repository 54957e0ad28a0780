"""The process host: one measured engine run in its own OS process (Heaven's test stand).

:func:`run_engine` starts the engine (``python -m rsp_workbench.stand.worker`` for built-in
engines, the user's command for ``external`` ones), speaks the JSON-lines protocol of
``docs/engine-protocol.md`` over its stdin/stdout, feeds stimuli (real-time or
absolute-time, `rsp_workbench.stand.streamer`) and records what it measures into a run folder
(``trace.jsonl``, ``responses.jsonl``, ``P_<name>.csv``, ``stderr.log``, ``run.json``: their
layout is `rsp_workbench.stand.run_folder`'s).

Threads of the host: the caller's thread streams (and waits), a writer thread writes to
the engine's stdin (so a stuck engine cannot block the streamer), a receiver thread reads
stdout, one thread drains stderr, and the probe thread samples psutil. Crashes (EOF or
exit before ``close`` is acknowledged), hangs (per-stimulus and overall timeouts) and
protocol errors (garbage on stdout, fatal ``error`` messages) stop the run; the engine's
process tree is killed and everything measured until then is written.
"""

from __future__ import annotations

import collections
import contextlib
import gc
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import psutil

from rsp_workbench.engine import EXTERNAL_TYPE, PROGRAM_ENGINES, EngineConfig, StaticGraphs, Stimulus
from rsp_workbench.engines import program_command
from rsp_workbench.errors import UserError
from rsp_workbench.stand.protocol import (
    ProtocolError,
    accepts_batches,
    batch_message,
    dumps,
    parse_engine_line,
    register_message,
    response_from_message,
    stimulus_message,
)
from rsp_workbench.engine import isolated_python_command
from rsp_workbench.stand.processes import EngineProcess, new_run_mark, reap, start_engine
from rsp_workbench.stand.run_folder import RunFolder, RunResult, TracedStimulus
from rsp_workbench.stand.streamer import MODES, RealTimeSchedule

STATUSES = ("ok", "failed", "timeout", "cancelled")
MIB = 1024 * 1024
# Bounds on what an engine can make the stand hold (docs/engine-protocol.md, "Limits"):
MAX_MESSAGE_BYTES = 64 * MIB  # one protocol line on stdout (StandOptions.max_message_bytes, stand.max_message_mb)
MAX_OUTPUT_BYTES = 1024 * MIB  # all of an engine's stdout in one run (StandOptions.max_output_bytes, stand.max_output_mb)
STDERR_TAIL_LINE_CHARS = 400  # each line of the stderr tail (run.json, the run's error) is cut here
_STDERR_PIECE = 64 * 1024  # stderr is read in pieces, so a line without a newline never fills memory
# Batches (docs/engine-protocol.md, "Batches"): one `batch` line carries at most StandOptions.batch
# stimuli and about this many elements (a stimulus is never split)
BATCH_ELEMENTS = 1024
_BATCH_KPI_PERIOD_MS = 1.0  # under batching, per-stimulus KPIs after `done` are read at most this often


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


class _Stop(Exception):
    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def engine_command(config: EngineConfig) -> list[str]:
    """The program to start: the built-in worker, a shipped program engine, or the external ``command``."""
    if config.type in PROGRAM_ENGINES:
        return program_command(config)
    if config.type == EXTERNAL_TYPE:
        command = config.parameters.get("command")
        if not command:
            raise UserError("an external engine needs parameters.command", field="parameters.command")
        return [str(part) for part in ([command] if isinstance(command, str) else command)]
    from rsp_workbench.engines import engine_class

    engine_class(config.type)  # unknown types fail here, before a process starts
    return isolated_python_command("rsp_workbench.stand.worker")


def query_for_engine(engine: EngineConfig, query_text: str, syntax: str | None) -> tuple[str, str | None]:
    """The query text (and the syntax that parses it) the engine is sent: its ``dialect``'s.

    UserError if the query cannot be written in that dialect.
    """
    if engine.dialect is None:
        return query_text, syntax
    from rsp_workbench.query.parser import parse_query
    from rsp_workbench.query.writer import parse_syntax_of, write_query

    return write_query(parse_query(query_text, syntax=syntax), engine.dialect), parse_syntax_of(engine.dialect)


class _ProcessTree:
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


class _Run:
    """State shared by the host threads of one run."""

    def __init__(self, name: str, options: StandOptions, cancel: threading.Event | None,
                 on_sample: Callable[[dict[str, float]], None] | None = None) -> None:
        self.name = name
        self.on_sample = on_sample
        self.files: RunFolder | None = None  # opened once the query is known good
        self.options = options
        self.cancel = cancel or threading.Event()
        self.condition = threading.Condition()
        self.failure: _Stop | None = None
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
        self.tree: _ProcessTree | None = None
        self.stopped = threading.Event()  # wakes the probe at the end of the run
        self.batching = False  # the engine accepts `batch` messages and options.batch > 1
        self.batches = 0  # `batch` messages sent
        self.wake_pending = sys.maxsize  # a `done` wakes the streamer only when pending ≤ this
        self.kpis_after: tuple[float, dict[str, float] | None] | None = None  # batching: (read at ms, KPIs)

    def fail(self, status: str, message: str) -> None:
        with self.condition:
            if self.failure is None:
                self.failure = _Stop(status, message)
            self.condition.notify_all()
        self.stopped.set()

    def check(self) -> None:
        if self.cancel.is_set():
            self.fail("cancelled", "cancelled")
        if self.failure is not None:
            raise self.failure


def run_engine(
    engine: EngineConfig,
    query_text: str,
    stimuli: Iterable[Stimulus],
    folder: str | os.PathLike[str],
    *,
    syntax: str | None = None,
    static: StaticGraphs = StaticGraphs(),
    options: StandOptions = StandOptions(),
    cancel: threading.Event | None = None,
    name: str | None = None,
    query_id: str | None = None,
    command: Sequence[str] | None = None,
    progress: Callable[[int], None] | None = None,
    on_sample: Callable[[dict[str, float]], None] | None = None,
) -> RunResult:
    """Run one engine on one query over the stimuli, in a child process; write the run folder.

    Never raises for engine misbehaviour (the status says it); raises UserError for bad
    input detected before the process starts (unknown engine type, missing command).
    ``on_sample`` (optional, called on the probe thread, must be cheap) receives each KPI
    sample as it is written to ``P_*.csv`` plus the responses and stimuli counted so far,
    for live views (the GUI's run manager); it does not change what is recorded.
    """
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    name = name or engine.name or engine.type
    argv = list(command) if command is not None else engine_command(engine)
    run = _Run(name, options, cancel, on_sample)
    mark = new_run_mark()
    variables = _query_variables(query_text, syntax, strict=engine.type != EXTERNAL_TYPE)
    sent_text, sent_syntax = query_for_engine(engine, query_text, syntax)
    result = RunResult(name, "ok", None, str(out), engine=engine.to_json(), command=argv,
                       mode=options.mode, time_scale=options.time_scale)
    main_cpu_start = time.thread_time()
    wall_start = time.monotonic()
    start_epoch = time.time()
    files = run.files = RunFolder(out, name, variables=variables, query_id=query_id)
    engine_process: EngineProcess | None = None
    process: subprocess.Popen[bytes] | None = None  # what the stand talks to: the engine's keeper, or the engine
    threads: list[threading.Thread] = []
    inbox: queue.Queue[bytes | None] = queue.Queue()
    timings: dict[str, float] = {}
    try:
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        # built-in and shipped engines work in the run folder: whatever they write there stays in it,
        # and nothing in the user's working directory is on their path
        cwd: str | None = str(out)
        if engine.type == "external":
            # the experiment's `cwd` and `env` for external programs (docs/design/FORMATS.md: shown and confirmed first)
            env.update({str(k): str(v) for k, v in (engine.parameters.get("env") or {}).items()})
            cwd = engine.parameters.get("cwd") or None
        try:
            engine_process = start_engine(argv, env=env, cwd=cwd, mark=mark)
        except OSError as error:
            raise _Stop("failed", f"cannot start {argv[0]!r}: {error}") from None
        process = engine_process.popen
        started = time.monotonic()
        try:
            run.tree = _ProcessTree(engine_process.pid)
        except psutil.NoSuchProcess:  # it ended already and its keeper reaped it: the keeper's tree (a zombie)
            run.tree = _ProcessTree(process.pid)
        threads = [
            threading.Thread(target=_writer, args=(run, process, inbox), name="stand-writer", daemon=True),
            threading.Thread(target=_receiver, args=(run, process), name="stand-receiver", daemon=True),
            threading.Thread(target=_stderr_drain, args=(run, process, files), name="stand-stderr", daemon=True),
            threading.Thread(target=_probe, args=(run, started, files), name="stand-probe", daemon=True),
        ]
        for thread in threads:
            thread.start()
        inbox.put(dumps(register_message(engine, sent_text, syntax=sent_syntax, static=static, query_id=query_id)))
        _wait(run, lambda: run.ready is not None, options.start_timeout_s, "the engine did not become ready")
        timings["register_s"] = time.monotonic() - started
        run.batching = options.batch > 1 and accepts_batches(run.ready)
        result.batch = options.batch if run.batching else 1
        feed_start = time.monotonic()
        with _old_objects_frozen():
            _feed(run, stimuli, inbox, result, progress, wall_start)
        timings["feed_s"] = time.monotonic() - feed_start
        close_start = time.monotonic()
        if options.end is not None:
            inbox.put(dumps({"type": "advance", "t": options.end}))
            _wait(run, lambda: options.end in run.advanced, options.close_timeout_s, "advance was not acknowledged")
        inbox.put(dumps({"type": "close"}))
        _wait(run, lambda: run.closed, options.close_timeout_s, "close was not acknowledged")
        inbox.put(None)
        try:
            result.exit_code = process.wait(timeout=options.close_timeout_s)
        except subprocess.TimeoutExpired:
            raise _Stop("timeout", "the engine did not exit after close") from None
        timings["close_s"] = time.monotonic() - close_start
        if result.exit_code not in (0, None):
            raise _Stop("failed", f"the engine exited with code {result.exit_code} after close")
    except _Stop as stop:
        result.status, result.error = stop.status, stop.message
    finally:
        if run.failure is not None and result.status == "ok":
            result.status, result.error = run.failure.status, run.failure.message
        if engine_process is not None:
            # whatever happened, nothing of the engine outlives its run; run.json names what had to be killed
            result.killed = reap(engine_process, mark, run.tree.processes() if run.tree else ())
            result.exit_code = engine_process.popen.poll()
        inbox.put(None)
        with run.condition:
            run.closed = True
            run.condition.notify_all()
        run.stopped.set()
        for thread in threads:
            thread.join(timeout=5)
        timings["wall_s"] = time.monotonic() - wall_start
        main_cpu = time.thread_time() - main_cpu_start
        _finish(run, files, result, timings, main_cpu, start_epoch)
        files.close()
        files.write_result(result)
    return result


# --- the streamer (caller's thread) ------------------------------------------------------


def _feed(
    run: _Run, stimuli: Iterable[Stimulus], inbox: queue.Queue[bytes | None], result: RunResult,
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
            _wait(run, lambda: len(run.pending) <= in_flight, options.stimulus_timeout_s, "stimulus timeout",
                  status="timeout", run_deadline=wall_start)
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
    _wait(run, lambda: not run.pending, options.stimulus_timeout_s, "stimulus timeout", status="timeout",
          run_deadline=wall_start)


def _encode(chunk: list[Stimulus]) -> bytes:
    """One stimulus as its own message, several as one ``batch`` message."""
    return dumps(stimulus_message(chunk[0]) if len(chunk) == 1 else batch_message(chunk))


def _send(
    run: _Run, chunk: list[Stimulus], message: bytes, lags: list[float | None], inbox: queue.Queue[bytes | None],
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
        _note_rss(run, kpis)
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
def _old_objects_frozen() -> Iterator[None]:
    """While feeding, the host's cyclic garbage collector leaves alone what existed before —
    the caller's stimuli (700 k elements at YABench BIG), the application's own objects:
    walking them took pauses of several hundred ms that delayed real-time stimuli and
    looked like engine latency. New objects are collected as usual."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _check_timeouts(run: _Run, wall_start: float) -> None:
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
            since = None if oldest is None else _latency_start(run, oldest)
        if oldest is not None and since is not None and time.time() * 1000.0 - since > options.stimulus_timeout_s * 1000.0:
            run.fail("timeout", f"stimulus {oldest.stimulus} not finished within {options.stimulus_timeout_s:g} s")
            run.check()


def _wait(
    run: _Run, predicate: Callable[[], bool], timeout_s: float | None, message: str, *, status: str = "timeout",
    run_deadline: float | None = None,
) -> None:
    """Wait for ``predicate`` (under the run's condition), waking every 50 ms for cancel/failure/timeouts."""
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


# --- host threads ----------------------------------------------------------------------


def _writer(run: _Run, process: subprocess.Popen[bytes], inbox: queue.Queue[bytes | None]) -> None:
    start = time.thread_time()
    stdin = process.stdin
    assert stdin is not None
    try:
        while True:
            item = inbox.get()
            if item is None:
                break
            stdin.write(item)
            stdin.flush()
    except (BrokenPipeError, OSError, ValueError):
        pass  # the receiver reports the crash (EOF / exit code)
    finally:
        try:
            stdin.close()
        except (OSError, ValueError):
            pass
        run.thread_cpu["writer"] = time.thread_time() - start


def _receiver(run: _Run, process: subprocess.Popen[bytes]) -> None:
    start = time.thread_time()
    stdout = process.stdout
    assert stdout is not None
    number = 0  # of the line on the engine's stdout, for errors
    read = 0  # bytes of stdout so far
    try:
        limit = run.options.max_message_bytes
        # readline(limit + 1) reads in the buffer's pieces and stops there: a line never grows past the limit
        for line in iter(lambda: stdout.readline(limit + 1), b""):
            received = time.time() * 1000.0
            number += 1
            read += len(line)
            if read > run.options.max_output_bytes:
                run.fail("failed", f"the engine wrote more than {run.options.max_output_bytes // MIB} MiB on stdout "
                                   f"(by line {number}; the limit for one run, stand.max_output_mb); stopped reading")
                break
            if len(line) > limit:
                run.fail("failed", f"protocol error: the engine wrote a line of more than {_mib(limit)} MiB "
                                   f"on stdout (line {number}; the limit for one message, stand.max_message_mb); "
                                   "stopped reading")
                break
            if not line.strip():
                continue
            try:
                message = parse_engine_line(line)
            except ProtocolError as error:
                run.fail("failed", f"protocol error: line {number} of the engine's stdout: {error}")
                break
            try:
                _handle(run, message, received)
            except OSError as error:  # the responses or the trace could not be written (a full disk)
                _cannot_write(run, error, run.files.path if run.files else Path("."))
                break
            except Exception as error:  # noqa: BLE001 - the receiver never dies silently: the run fails at once
                run.fail("failed", f"the stand could not handle line {number} of the engine's stdout "
                                   f"({message['type']}): {type(error).__name__}: {error}")
                break
            if run.failure is not None:
                break
        else:
            with run.condition:
                finished = run.closed
            if not finished:
                try:
                    code: int | None = process.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    code = None
                time.sleep(0.05)  # let the stderr drain catch the last lines
                tail = "\n".join(run.stderr_tail)
                run.fail("failed", f"the engine exited unexpectedly (exit code {code}){_unfinished(run)}"
                                   + (f"; stderr:\n{tail}" if tail else ""))
    except (OSError, ValueError):
        pass
    except Exception as error:  # noqa: BLE001 - the receiver never dies silently: the run fails at once, saying why
        run.fail("failed", f"the stand could not handle line {number} of the engine's stdout: "
                           f"{type(error).__name__}: {error}")
    finally:
        run.thread_cpu["receiver"] = time.thread_time() - start


def _mib(size: int) -> str:
    """A byte count in MiB as a setting names it (``64``, or ``0.5`` for a limit below one MiB)."""
    return f"{size / MIB:g}"


def _unfinished(run: _Run) -> str:
    """For a crash in a batch: which of the stimuli sent were not done (the rest were recorded)."""
    with run.condition:
        if not run.batching or not run.pending:
            return ""
        waiting = list(run.pending)
    span = f"{waiting[0]}" if len(waiting) == 1 else f"{waiting[0]}…{waiting[-1]}"
    return (f"; {len(waiting)} stimuli of its batches were sent and not done (ids {span}); the {run.stimuli_done} "
            f"done before are recorded")


def _handle(run: _Run, message: dict[str, Any], received: float) -> None:
    kind = message["type"]
    with run.condition:
        if kind == "ready":
            run.ready = message
        elif kind == "response":
            ident = message.get("stimulus")
            if ident is not None and ident not in run.pending:
                _fail_unknown(run, "a response", ident)
                return
            response = response_from_message(message, int(received))
            assert run.files is not None
            run.files.responses.add(response)
            entry = run.pending.get(ident) if ident is not None else next(iter(run.pending.values()), None)
            if entry is not None:
                entry.responses.append({
                    "system_time": round(received, 3),
                    "engine_time": message.get("system_time"),
                    "application_time": response.application_time,
                    "operation": response.operation,
                    "bindings": len(response.bindings),
                    "latency_ms": round(received - _latency_start(run, entry), 3),
                })
            return  # a response changes nothing the streamer waits for
        elif kind == "done":
            if "stimulus" in message:
                entry = run.pending.pop(message["stimulus"], None)
                if entry is None:
                    _fail_unknown(run, "done", message["stimulus"])
                    return
                else:
                    entry.started_ms = _latency_start(run, entry)
                    run.stimuli_done += 1
                    run.elements_done += entry.elements
                    run.latencies.append(received - entry.started_ms)
                    run.last_done_ms = received
                    after = _kpis_after(run, received)
                    _write_trace(run, entry, received, after)
                    if len(run.pending) > run.wake_pending:
                        return  # the streamer waits for fewer stimuli in flight: no need to wake it
            elif "advance" in message:
                run.advanced.add(int(message["advance"]))
            elif message.get("closed"):
                run.closed = True
        elif kind == "error":
            text = str(message.get("message", "engine error"))
            if message.get("fatal", True):
                if run.failure is None:
                    run.failure = _Stop("failed", f"engine error: {text}{_unfinished(run)}")
            else:
                run.stderr_tail.append(f"[engine error] {text}")
        run.condition.notify_all()


def _latency_start(run: _Run, entry: TracedStimulus) -> float:
    """Where a stimulus's latency starts (caller holds the lock): when it was sent — or, for a
    stimulus of a batch in absolute time, when the engine could start it, i.e. sent and the
    stimulus before it done. Without batches in absolute time the previous one is always done
    before the next is sent, so both rules give the same number (docs/engine-protocol.md)."""
    if entry.started_ms is not None:
        return entry.started_ms
    if entry.batch is not None and run.options.mode == "absolute-time" and run.last_done_ms is not None:
        return max(entry.sent_ms, run.last_done_ms)
    return entry.sent_ms


def _kpis_after(run: _Run, received: float) -> dict[str, float] | None:
    """KPIs after a ``done``: read each time, or under batching at most every millisecond
    (stimuli done within one share the reading — a batch's dones arrive together)."""
    if not run.options.trace_kpis or run.tree is None:
        return None
    if run.batching and run.kpis_after is not None and received - run.kpis_after[0] < _BATCH_KPI_PERIOD_MS:
        return run.kpis_after[1]
    after = run.tree.kpis()
    _note_rss(run, after)
    if run.batching:
        run.kpis_after = (received, after)
    return after


def _fail_unknown(run: _Run, what: str, ident: Any) -> None:
    """An answer for a stimulus that is not waiting for one fails the run (caller holds the lock)."""
    sent = isinstance(ident, int) and not isinstance(ident, bool) and run.last_sent is not None and ident <= run.last_sent
    reason = (f"{what} for stimulus {ident!r}, which is already done" if sent
              else f"{what} for stimulus {ident!r}, which the stand never sent")
    if run.failure is None:
        run.failure = _Stop("failed", f"protocol error: {reason}")
    run.condition.notify_all()
    run.stopped.set()


def _note_rss(run: _Run, kpis: dict[str, float] | None) -> None:
    """Fold one RSS measurement (a sampler tick or a stimulus's KPIs) into the run's peak."""
    if kpis is None or kpis.get("rss_mb") is None:
        return
    with run._peak_lock:
        run.peak_rss_mb = max(run.peak_rss_mb, float(kpis["rss_mb"]))
        run.rss_measured = True


def _write_trace(run: _Run, entry: TracedStimulus, done_ms: float | None, after: dict[str, float] | None) -> None:
    if run.files is not None:
        latency = None if done_ms is None else done_ms - _latency_start(run, entry)
        run.files.write_trace(entry, done_ms, latency, after)


def _stderr_drain(run: _Run, process: subprocess.Popen[bytes], files: RunFolder) -> None:
    start = time.thread_time()
    stderr = process.stderr
    assert stderr is not None
    try:
        for piece in iter(lambda: stderr.readline(_STDERR_PIECE), b""):
            try:
                files.write_stderr(piece)
            except OSError as error:  # a full disk: the run stops at once, saying where
                _cannot_write(run, error, files.path / "stderr.log")
                break
            text = piece.decode("utf-8", "replace").rstrip("\n")
            if len(text) > STDERR_TAIL_LINE_CHARS:
                text = text[:STDERR_TAIL_LINE_CHARS] + f"… [{len(text) - STDERR_TAIL_LINE_CHARS} more characters]"
            run.stderr_tail.append(text)
        files.end_stderr()
    except (OSError, ValueError):
        pass
    finally:
        run.thread_cpu["stderr"] = time.thread_time() - start


def _probe(run: _Run, started: float, files: RunFolder) -> None:
    """Sample RSS/CPU%/mem%/threads of the engine's process tree every ``sampling_ms`` (YABench P_)."""
    start = time.thread_time()
    period = run.options.sampling_ms / 1000.0
    tree = run.tree
    assert tree is not None
    primed: set[int] = set()
    next_due = time.monotonic()
    try:
        while True:
            with run.condition:
                if run.closed or run.failure is not None:
                    break
            rss = cpu = mem = 0.0
            threads = 0
            alive = False
            for process in tree.refresh():
                try:
                    with process.oneshot():
                        rss += process.memory_info().rss
                        mem += process.memory_percent()
                        threads += process.num_threads()
                        percent = process.cpu_percent(None)
                        if process.pid in primed:
                            cpu += percent
                        else:
                            primed.add(process.pid)
                    alive = True
                except psutil.Error:
                    continue
            if not alive:
                break
            elapsed = time.monotonic() - started
            rss_mb = rss / MIB
            _note_rss(run, {"rss_mb": rss_mb})
            try:
                files.write_sample(elapsed, rss_mb, cpu, mem, threads)
            except OSError as error:
                _cannot_write(run, error, files.samples_path)
                break
            run.samples += 1
            if run.on_sample is not None:
                _report_sample(run, elapsed, rss_mb, cpu, threads)
            next_due += period  # drift-free sampling grid
            delay = next_due - time.monotonic()
            if delay < 0:
                next_due = time.monotonic()
                delay = 0
            if run.stopped.wait(delay) or run.cancel.is_set():
                break
    finally:
        with contextlib.suppress(OSError):
            files.samples.flush()
        run.thread_cpu["probe"] = time.thread_time() - start


def _cannot_write(run: _Run, error: OSError, path: Path) -> None:
    """A run file could not be written (a full disk): the run fails at once, naming the file."""
    run.fail("failed", f"cannot write {error.filename or path}: {error.strerror or error}")


def _report_sample(run: _Run, elapsed: float, rss_mb: float, cpu: float, threads: int) -> None:
    """Hand one sample to the live hook; a failing hook is dropped so that sampling goes on."""
    assert run.on_sample is not None
    sample = {"time": round(elapsed, 3), "rss_mb": round(rss_mb, 3), "cpu_percent": round(cpu, 1), "threads": threads,
              "responses": run.files.responses.responses if run.files else 0, "stimuli_done": run.stimuli_done}
    try:
        run.on_sample(sample)
    except Exception:  # noqa: BLE001 - a live view must never stop the measurement
        run.on_sample = None


# --- results ---------------------------------------------------------------------------


def _finish(run: _Run, files: RunFolder, result: RunResult, timings: dict[str, float], main_cpu: float,
            start_epoch: float) -> None:
    for entry in list(run.pending.values()):  # sent but never finished: keep them in the trace
        _write_trace(run, entry, None, None)
    result.stimuli_done = run.stimuli_done
    result.elements_done = run.elements_done
    result.responses = files.responses.responses
    result.bindings = files.responses.bindings
    result.samples = run.samples
    result.peak_rss_mb = round(run.peak_rss_mb, 3) if run.rss_measured else None
    timings["start_epoch_ms"] = round(start_epoch * 1000.0, 3)
    result.timings = {key: round(value, 6) for key, value in timings.items()}
    if run.first_sent_ms is not None and run.last_done_ms is not None and run.last_done_ms > run.first_sent_ms:
        result.throughput_triples_per_s = round(run.elements_done / ((run.last_done_ms - run.first_sent_ms) / 1000.0), 1)
    result.latency_ms = _summary(run.latencies)
    result.schedule_lag_ms = _summary(run.lags)
    cpu = dict(run.thread_cpu)
    cpu["streamer"] = main_cpu
    total = sum(cpu.values())
    wall = timings.get("wall_s", 0.0) or 1e-9
    result.stand_overhead = {f"{key}_cpu_s": round(value, 6) for key, value in sorted(cpu.items())}
    result.stand_overhead["total_cpu_s"] = round(total, 6)
    result.stand_overhead["cpu_percent_of_one_core"] = round(100.0 * total / wall, 3)
    result.stderr_tail = "\n".join(run.stderr_tail)
    if result.status != "ok" and result.error and result.stderr_tail and "stderr:" not in result.error:
        result.error += f"; stderr (last {run.options.stderr_tail_lines} lines, each cut at {STDERR_TAIL_LINE_CHARS} " \
                        f"characters):\n" + result.stderr_tail
    note = files.stderr_note()
    if note:
        result.error = f"{result.error}; {note}" if result.error else note


def _summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def quantile(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)

    return {"count": len(ordered), "mean": round(sum(ordered) / len(ordered), 3), "p50": quantile(0.5),
            "p95": quantile(0.95), "max": round(ordered[-1], 3)}


def _query_variables(text: str, syntax: str | None, *, strict: bool) -> tuple[str, ...]:
    """The projected variables; a query a built-in engine cannot parse is an error before the start."""
    from rsp_workbench.query.parser import parse_query

    try:
        return parse_query(text, syntax=syntax).variables
    except UserError:
        if strict:
            raise
        return ()
