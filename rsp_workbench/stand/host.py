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

Its pieces: the options (`rsp_workbench.stand.options`), the state the host threads share
(`rsp_workbench.stand.run_state`) and the feeding of stimuli on the caller's thread
(`rsp_workbench.stand.feeding`).
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import psutil

from rsp_workbench.engine import EXTERNAL_TYPE, PROGRAM_ENGINES, EngineConfig, StaticGraphs, Stimulus
from rsp_workbench.engines import program_command
from rsp_workbench.errors import UserError
from rsp_workbench.stand.feeding import feed, old_objects_frozen, wait_for
from rsp_workbench.stand.options import MIB, StandOptions
from rsp_workbench.stand.protocol import (
    ProtocolError,
    accepts_batches,
    dumps,
    parse_engine_line,
    register_message,
    response_from_message,
)
from rsp_workbench.engine import isolated_python_command
from rsp_workbench.stand.processes import EngineProcess, new_run_mark, reap, start_engine
from rsp_workbench.stand.run_folder import RunFolder, RunResult, TracedStimulus
from rsp_workbench.stand.run_state import ProcessTree, RunState, StopRun, latency_start, note_rss

STATUSES = ("ok", "failed", "timeout", "cancelled")
STDERR_TAIL_LINE_CHARS = 400  # each line of the stderr tail (run.json, the run's error) is cut here
_STDERR_PIECE = 64 * 1024  # stderr is read in pieces, so a line without a newline never fills memory
_BATCH_KPI_PERIOD_MS = 1.0  # under batching, per-stimulus KPIs after `done` are read at most this often


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
    run = RunState(name, options, cancel, on_sample)
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
            raise StopRun("failed", f"cannot start {argv[0]!r}: {error}") from None
        process = engine_process.popen
        started = time.monotonic()
        try:
            run.tree = ProcessTree(engine_process.pid)
        except psutil.NoSuchProcess:  # it ended already and its keeper reaped it: the keeper's tree (a zombie)
            run.tree = ProcessTree(process.pid)
        threads = [
            threading.Thread(target=_writer, args=(run, process, inbox), name="stand-writer", daemon=True),
            threading.Thread(target=_receiver, args=(run, process), name="stand-receiver", daemon=True),
            threading.Thread(target=_stderr_drain, args=(run, process, files), name="stand-stderr", daemon=True),
            threading.Thread(target=_probe, args=(run, started, files), name="stand-probe", daemon=True),
        ]
        for thread in threads:
            thread.start()
        inbox.put(dumps(register_message(engine, sent_text, syntax=sent_syntax, static=static, query_id=query_id)))
        wait_for(run, lambda: run.ready is not None, options.start_timeout_s, "the engine did not become ready")
        timings["register_s"] = time.monotonic() - started
        run.batching = options.batch > 1 and accepts_batches(run.ready)
        result.batch = options.batch if run.batching else 1
        feed_start = time.monotonic()
        with old_objects_frozen():
            feed(run, stimuli, inbox, result, progress, wall_start)
        timings["feed_s"] = time.monotonic() - feed_start
        close_start = time.monotonic()
        if options.end is not None:
            inbox.put(dumps({"type": "advance", "t": options.end}))
            wait_for(run, lambda: options.end in run.advanced, options.close_timeout_s, "advance was not acknowledged")
        inbox.put(dumps({"type": "close"}))
        wait_for(run, lambda: run.closed, options.close_timeout_s, "close was not acknowledged")
        inbox.put(None)
        try:
            result.exit_code = process.wait(timeout=options.close_timeout_s)
        except subprocess.TimeoutExpired:
            raise StopRun("timeout", "the engine did not exit after close") from None
        timings["close_s"] = time.monotonic() - close_start
        if result.exit_code not in (0, None):
            raise StopRun("failed", f"the engine exited with code {result.exit_code} after close")
    except StopRun as stop:
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


# --- host threads ----------------------------------------------------------------------


def _writer(run: RunState, process: subprocess.Popen[bytes], inbox: queue.Queue[bytes | None]) -> None:
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


def _receiver(run: RunState, process: subprocess.Popen[bytes]) -> None:
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


def _unfinished(run: RunState) -> str:
    """For a crash in a batch: which of the stimuli sent were not done (the rest were recorded)."""
    with run.condition:
        if not run.batching or not run.pending:
            return ""
        waiting = list(run.pending)
    span = f"{waiting[0]}" if len(waiting) == 1 else f"{waiting[0]}…{waiting[-1]}"
    return (f"; {len(waiting)} stimuli of its batches were sent and not done (ids {span}); the {run.stimuli_done} "
            f"done before are recorded")


def _handle(run: RunState, message: dict[str, Any], received: float) -> None:
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
                    "latency_ms": round(received - latency_start(run, entry), 3),
                })
            return  # a response changes nothing the streamer waits for
        elif kind == "done":
            if "stimulus" in message:
                entry = run.pending.pop(message["stimulus"], None)
                if entry is None:
                    _fail_unknown(run, "done", message["stimulus"])
                    return
                else:
                    entry.started_ms = latency_start(run, entry)
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
                    run.failure = StopRun("failed", f"engine error: {text}{_unfinished(run)}")
            else:
                run.stderr_tail.append(f"[engine error] {text}")
        run.condition.notify_all()


def _kpis_after(run: RunState, received: float) -> dict[str, float] | None:
    """KPIs after a ``done``: read each time, or under batching at most every millisecond
    (stimuli done within one share the reading — a batch's dones arrive together)."""
    if not run.options.trace_kpis or run.tree is None:
        return None
    if run.batching and run.kpis_after is not None and received - run.kpis_after[0] < _BATCH_KPI_PERIOD_MS:
        return run.kpis_after[1]
    after = run.tree.kpis()
    note_rss(run, after)
    if run.batching:
        run.kpis_after = (received, after)
    return after


def _fail_unknown(run: RunState, what: str, ident: Any) -> None:
    """An answer for a stimulus that is not waiting for one fails the run (caller holds the lock)."""
    sent = isinstance(ident, int) and not isinstance(ident, bool) and run.last_sent is not None and ident <= run.last_sent
    reason = (f"{what} for stimulus {ident!r}, which is already done" if sent
              else f"{what} for stimulus {ident!r}, which the stand never sent")
    if run.failure is None:
        run.failure = StopRun("failed", f"protocol error: {reason}")
    run.condition.notify_all()
    run.stopped.set()




def _write_trace(run: RunState, entry: TracedStimulus, done_ms: float | None, after: dict[str, float] | None) -> None:
    if run.files is not None:
        latency = None if done_ms is None else done_ms - latency_start(run, entry)
        run.files.write_trace(entry, done_ms, latency, after)


def _stderr_drain(run: RunState, process: subprocess.Popen[bytes], files: RunFolder) -> None:
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


def _probe(run: RunState, started: float, files: RunFolder) -> None:
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
            note_rss(run, {"rss_mb": rss_mb})
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


def _cannot_write(run: RunState, error: OSError, path: Path) -> None:
    """A run file could not be written (a full disk): the run fails at once, naming the file."""
    run.fail("failed", f"cannot write {error.filename or path}: {error.strerror or error}")


def _report_sample(run: RunState, elapsed: float, rss_mb: float, cpu: float, threads: int) -> None:
    """Hand one sample to the live hook; a failing hook is dropped so that sampling goes on."""
    assert run.on_sample is not None
    sample = {"time": round(elapsed, 3), "rss_mb": round(rss_mb, 3), "cpu_percent": round(cpu, 1), "threads": threads,
              "responses": run.files.responses.responses if run.files else 0, "stimuli_done": run.stimuli_done}
    try:
        run.on_sample(sample)
    except Exception:  # noqa: BLE001 - a live view must never stop the measurement
        run.on_sample = None


# --- results ---------------------------------------------------------------------------


def _finish(run: RunState, files: RunFolder, result: RunResult, timings: dict[str, float], main_cpu: float,
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
