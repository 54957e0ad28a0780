"""The test stand: real engine processes, the Heaven trace, P_ samples, failures, cancel, real time.

Misbehaving engines are small inline Python programs run as ``external`` engines.
"""

from __future__ import annotations

import json
import sys
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from rsp_workbench.core.semantics import PRESETS
from rsp_workbench.engine import EngineConfig, Stimulus, group_contemporaneous
from rsp_workbench.engines import create_engine
from rsp_workbench.errors import UserError
from rsp_workbench.query.parser import parse_query
from rsp_workbench.responses.readers import read_response_log
from rsp_workbench.stand.host import run_engine
from rsp_workbench.stand.options import StandOptions
from rsp_workbench.stand.run_folder import P_HEADER
from rsp_workbench.stand.streamer import RealTimeSchedule, iter_stimuli
from rsp_workbench.streams.model import StreamElement
from tests.stand.support import EX, QUERY, elements  # noqa: F401


def fake_engine(body: str) -> EngineConfig:
    """An external engine: a Python script whose loop ``body`` sees ``msg`` and may ``send``."""
    script = textwrap.dedent("""
        import json, sys, time
        def send(m):
            sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["type"] == "register":
                send({"type": "ready"}); continue
            if msg["type"] == "close":
                send({"type": "done", "closed": True}); break
        """) + textwrap.indent(textwrap.dedent(body), " " * 4)
    return EngineConfig("external", parameters={"command": [sys.executable, "-c", script]}, name="fake")


def test_secret_run_writes_the_run_folder(tmp_path: Path) -> None:
    stream = elements([0, 0, 500, 1500, 2500, 2500, 4100])
    config = EngineConfig("secret", PRESETS["csparql"], parameters={"t0": 0}, name="secret-csparql")
    result = run_engine(config, QUERY, iter_stimuli(stream), tmp_path,
                        options=StandOptions(mode="absolute-time", sampling_ms=50, end=6000))
    assert result.status == "ok", result.error
    assert result.stimuli_sent == result.stimuli_done == 5 and result.elements_done == 7
    assert {p.name for p in tmp_path.iterdir()} >= {
        "trace.jsonl", "responses.jsonl", "P_secret-csparql.csv", "stderr.log", "run.json",
    }
    trace = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert [r["stimulus"] for r in trace] == [0, 1, 2, 3, 4]
    assert [r["elements"] for r in trace] == [2, 1, 1, 2, 1]
    first = trace[0]
    assert first["done"] >= first["sent"] and first["latency_ms"] >= 0
    assert first["kpis_before"]["rss_mb"] > 0 and first["kpis_after"]["rss_mb"] > 0
    # the stimulus at 2500 closes [0, 2000): a response traced on it
    assert trace[3]["responses"][0]["application_time"] == 2000
    # same answer as the engine in-process
    engine = create_engine(config)
    engine.register(parse_query(QUERY))
    expected = engine.run(group_contemporaneous(stream), end=6000)
    log = read_response_log(tmp_path / "responses.jsonl")
    assert [(r.application_time, Counter(r.bindings)) for r in log.responses] == \
        [(r.application_time, Counter(r.bindings)) for r in expected]
    assert log.variables == ("who", "room")
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["status"] == "ok" and run["exit_code"] == 0
    assert run["stand_overhead"]["total_cpu_s"] > 0
    assert run["latency_ms"]["count"] == 5
    lines = (tmp_path / "P_secret-csparql.csv").read_text().splitlines()
    assert lines[0] == P_HEADER and len(lines) >= 2


def test_crashing_engine_is_reported_with_stderr(tmp_path: Path) -> None:
    config = fake_engine("""
        if msg["type"] == "stimulus" and msg["id"] == 1:
            sys.stderr.write("boom: engine exploded\\n"); sys.stderr.flush(); sys.exit(3)
        if msg["type"] == "stimulus":
            send({"type": "response", "t": msg["t"], "operation": "=", "bindings": [{"x": "<http://e/1>"}]})
            send({"type": "done", "stimulus": msg["id"]})
        """)
    result = run_engine(config, QUERY, iter_stimuli(elements([0, 1000, 2000])), tmp_path,
                        options=StandOptions(stimulus_timeout_s=10))
    assert result.status == "failed"
    assert "exit code 3" in (result.error or "") and "boom" in (result.error or "")
    assert "boom" in (tmp_path / "stderr.log").read_text()
    trace = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert trace[0]["done"] is not None and trace[1]["done"] is None  # kept what was measured
    assert result.responses == 1
    assert json.loads((tmp_path / "run.json").read_text())["status"] == "failed"


def test_hanging_engine_times_out_and_is_killed(tmp_path: Path) -> None:
    config = fake_engine("""
        if msg["type"] == "stimulus":
            time.sleep(600)
        """)
    started = time.monotonic()
    result = run_engine(config, QUERY, iter_stimuli(elements([0, 1000])), tmp_path,
                        options=StandOptions(stimulus_timeout_s=0.5))
    assert result.status == "timeout"
    assert "stimulus 0" in (result.error or "")
    assert time.monotonic() - started < 10
    assert result.exit_code is not None  # the process was killed and reaped


def test_engine_printing_garbage_is_a_protocol_error(tmp_path: Path) -> None:
    config = fake_engine("""
        if msg["type"] == "stimulus":
            print("hello, I am not JSON", flush=True)
        """)
    result = run_engine(config, QUERY, iter_stimuli(elements([0])), tmp_path, options=StandOptions(stimulus_timeout_s=5))
    assert result.status == "failed"
    assert "protocol error" in (result.error or "") and "hello" in (result.error or "")


def test_fatal_engine_error_message(tmp_path: Path) -> None:
    bad_query = QUERY.replace("?who :detectedAt", "?who :detectedAt ?x . OPTIONAL { ?x :p ?y } ?who :q")
    config = EngineConfig("secret", PRESETS["csparql"], parameters={"matcher": "native"})
    result = run_engine(config, bad_query, iter_stimuli(elements([0])), tmp_path)
    assert result.status == "failed" and "native matcher" in (result.error or "")


def test_probe_samples_a_slow_engine(tmp_path: Path) -> None:
    config = fake_engine("""
        if msg["type"] == "stimulus":
            time.sleep(0.15)
            send({"type": "done", "stimulus": msg["id"]})
        """)
    result = run_engine(config, QUERY, iter_stimuli(elements([0, 1, 2])), tmp_path,
                        options=StandOptions(sampling_ms=50))
    assert result.status == "ok", result.error
    rows = (tmp_path / "P_fake.csv").read_text().splitlines()
    assert rows[0] == "time,rss_mem,cpu_percent,mem_percent,threads"
    assert len(rows) - 1 >= 5
    times = [float(row.split(",")[0]) for row in rows[1:]]
    assert times == sorted(times)
    assert all(float(row.split(",")[1]) > 0 and int(row.split(",")[4]) >= 1 for row in rows[1:])
    assert result.latency_ms["min" if "min" in result.latency_ms else "p50"] >= 140


def test_cancel_stops_the_run_quickly(tmp_path: Path) -> None:
    cancel = threading.Event()
    stream = elements([0, 60_000, 120_000])  # a minute between stimuli in real time
    config = EngineConfig("secret", PRESETS["cqels"], parameters={"t0": 0})
    cancelled_at: list[float] = []

    def cancel_soon() -> None:
        cancelled_at.append(time.monotonic())
        cancel.set()

    # Cancel 0.5 s after the first stimulus went out (engine start-up time varies with load).
    timer = threading.Timer(0.5, cancel_soon)
    armed = threading.Event()

    def progress(sent: int) -> None:
        if sent >= 1 and not armed.is_set():
            armed.set()
            timer.start()

    try:
        result = run_engine(config, QUERY, iter_stimuli(stream), tmp_path, cancel=cancel,
                            options=StandOptions(mode="real-time"), progress=progress)
    finally:
        timer.cancel()
    assert result.status == "cancelled"
    assert cancelled_at and time.monotonic() - cancelled_at[0] < 3.0
    assert result.stimuli_sent >= 1
    assert json.loads((tmp_path / "run.json").read_text())["status"] == "cancelled"


def test_real_time_mode_waits_out_gaps_scaled(tmp_path: Path) -> None:
    stream = elements([0, 1000, 1000, 3000])  # gaps of 1 s and 2 s, 10x faster: 100 ms and 200 ms
    config = EngineConfig("secret", PRESETS["cqels"], parameters={"t0": 0})
    result = run_engine(config, QUERY, iter_stimuli(stream), tmp_path,
                        options=StandOptions(mode="real-time", time_scale=10.0))
    assert result.status == "ok", result.error
    trace = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    sent = [r["sent"] for r in trace]
    assert [r["elements"] for r in trace] == [1, 2, 1]
    assert sent[1] - sent[0] == pytest.approx(100, abs=40)
    assert sent[2] - sent[0] == pytest.approx(300, abs=40)  # drift-free: measured from the start
    assert result.schedule_lag_ms["max"] < 40


def test_schedule_is_drift_free() -> None:
    schedule = RealTimeSchedule(time_scale=4.0)
    first = schedule.due(1000)
    assert schedule.due(5000) - first == pytest.approx(1.0)
    assert schedule.application_time_at(first + 0.5) == pytest.approx(3000)
    with pytest.raises(UserError):
        RealTimeSchedule(time_scale=0)


def test_iter_stimuli_groups_contemporaneous_elements() -> None:
    stimuli = list(iter_stimuli(elements([0, 0, 5, 7, 7, 7])))
    assert [(s.id, s.application_time, len(s)) for s in stimuli] == [(0, 0, 2), (1, 5, 1), (2, 7, 3)]
    assert isinstance(stimuli[0], Stimulus)
    with pytest.raises(UserError, match="time-ordered"):
        list(iter_stimuli(elements([5, 1])))


def test_bad_input_fails_before_a_process_starts(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="unknown engine type"):
        run_engine(EngineConfig("warp-drive"), QUERY, [], tmp_path)
    with pytest.raises(UserError):
        run_engine(EngineConfig("secret"), "SELECT nonsense {", [], tmp_path)
    with pytest.raises(UserError, match="command"):
        run_engine(EngineConfig("external"), QUERY, [], tmp_path)


def test_engine_answering_an_unknown_stimulus_fails_the_run(tmp_path: Path) -> None:
    config = fake_engine("""
        if msg["type"] == "stimulus":
            send({"type": "response", "stimulus": msg["id"] + 7, "t": msg["t"], "bindings": []})
            send({"type": "done", "stimulus": msg["id"]})
        """)
    result = run_engine(config, QUERY, iter_stimuli(elements([0, 1000])), tmp_path, options=StandOptions(stimulus_timeout_s=5))
    assert result.status == "failed"
    assert result.error == "protocol error: a response for stimulus 7, which the stand never sent"


def test_engine_answering_twice_for_a_stimulus_fails_the_run(tmp_path: Path) -> None:
    config = fake_engine("""
        if msg["type"] == "stimulus":
            send({"type": "done", "stimulus": msg["id"]})
            send({"type": "done", "stimulus": msg["id"]})
        """)
    result = run_engine(config, QUERY, iter_stimuli(elements([0, 1000, 2000])), tmp_path,
                        options=StandOptions(stimulus_timeout_s=5))
    assert result.status == "failed"
    assert result.error == "protocol error: done for stimulus 0, which is already done"


def test_engine_losing_a_done_times_out_naming_the_stimulus(tmp_path: Path) -> None:
    config = fake_engine("""
        if msg["type"] == "stimulus" and msg["id"] != 1:
            send({"type": "done", "stimulus": msg["id"]})
        """)
    result = run_engine(config, QUERY, iter_stimuli(elements([0, 1000, 2000])), tmp_path,
                        options=StandOptions(stimulus_timeout_s=0.5))
    assert result.status == "timeout"
    assert "stimulus 1" in (result.error or "")
    assert result.stimuli_done == 1  # stimulus 0 was measured and kept
