"""Batched framing (docs/engine-protocol.md, "Batches"): same answers, stimuli on time, crashes reported.

An engine that announces ``"batch": true`` in ``ready`` (both kits do) may get several
stimuli in one ``batch`` line; ``StandOptions(batch=1)`` gives it one stimulus per message,
as an engine that does not announce batches gets.
"""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from rsp_workbench.core.semantics import PRESETS
from rsp_workbench.engine import EngineConfig, group_contemporaneous
from rsp_workbench.engines import create_engine
from rsp_workbench.query.parser import parse_query
from rsp_workbench.responses.readers import read_response_log
from rsp_workbench.stand.host import run_engine
from rsp_workbench.stand.options import StandOptions
from rsp_workbench.stand.streamer import iter_stimuli

from tests.stand.support import EX, QUERY, elements
from tests.paths import ROOT

TIMES = [0, 0, 500, 1500, 2500, 2500, 4100, 4300, 5200, 6100, 7900, 8000]  # 10 stimuli


def _trace(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "trace.jsonl").read_text(encoding="utf-8").splitlines()]


def _answers(folder: Path) -> list[tuple]:
    """The responses without the receive times (which differ from run to run)."""
    return [(r.application_time, r.operation, Counter(r.bindings)) for r in read_response_log(folder / "responses.jsonl").responses]


@pytest.mark.slow
def test_batched_and_unbatched_runs_give_the_same_run_folder(tmp_path: Path) -> None:
    config = EngineConfig("secret", PRESETS["csparql"], parameters={"t0": 0}, name="secret-csparql")
    folders = {}
    for batch in (4, 1):  # 4: the ten stimuli go in batches of ≤ 4; 1: one stimulus per message
        folders[batch] = tmp_path / f"batch-{batch}"
        result = run_engine(config, QUERY, iter_stimuli(elements(TIMES)), folders[batch],
                            options=StandOptions(mode="absolute-time", sampling_ms=50, end=10_000, batch=batch))
        assert result.status == "ok", result.error
        assert result.stimuli_done == 10 and result.elements_done == 12
    batched, single = _trace(folders[4]), _trace(folders[1])
    assert [r.get("batch") for r in batched] == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
    assert all("batch" not in r for r in single)
    assert [r["sent"] for r in batched[:4]] == [batched[0]["sent"]] * 4  # one write carried them

    # hand-checked: csparql reports each 2 s tumbling window [o, o + 2000) at its close
    def window(*people: int) -> Counter:
        return Counter({frozenset({("who", f"<{EX}p{i}>"), ("room", f"<{EX}r{i % 3}>")}): 1 for i in people})

    expected = [(2000, "=", window(0, 1, 2, 3)), (4000, "=", window(4, 5)), (6000, "=", window(6, 7, 8)),
                (8000, "=", window(9, 10)), (10000, "=", window(11))]
    assert _answers(folders[4]) == _answers(folders[1]) == expected
    engine = create_engine(config)  # and the engine in-process agrees
    engine.register(parse_query(QUERY))
    assert [(r.application_time, r.operation, Counter(r.bindings))
            for r in engine.run(group_contemporaneous(elements(TIMES)), end=10_000)] == expected

    # each response is traced on the stimulus that caused it, whichever the framing
    def traced(trace: list[dict]) -> list[tuple]:
        return [(r["stimulus"], r["application_time"], r["elements"],
                 [(x["application_time"], x["operation"], x["bindings"]) for x in r["responses"]]) for r in trace]

    assert traced(batched) == traced(single)
    # under batching a stimulus's latency runs from when the engine could start it: sent, and
    # the stimulus before it done
    previous_done = None
    for record in batched:
        start = record["sent"] if previous_done is None else max(record["sent"], previous_done)
        assert record["latency_ms"] == pytest.approx(record["done"] - start, abs=0.002)
        assert record["kpis_before"]["rss_mb"] > 0 and record["kpis_after"]["rss_mb"] > 0
        previous_done = record["done"]
    runs = {batch: json.loads((folders[batch] / "run.json").read_text()) for batch in folders}
    assert runs[4]["latency_ms"]["count"] == runs[1]["latency_ms"]["count"] == 10


@pytest.mark.slow
def test_real_time_batches_only_what_is_due(tmp_path: Path) -> None:
    # 100 stimuli within 0.1 ms of wall time (due at once: batched), then one 400 ms later
    times = list(range(100)) + [400_000]
    config = EngineConfig("secret", PRESETS["cqels"], parameters={"t0": 0}, name="secret-cqels")
    result = run_engine(config, QUERY, iter_stimuli(elements(times)), tmp_path,
                        options=StandOptions(mode="real-time", time_scale=1000.0, sampling_ms=50))
    assert result.status == "ok", result.error
    trace = _trace(tmp_path)
    assert len(trace) == 101 and result.responses == 101  # cqels: one Istream response per new element
    assert any("batch" in record for record in trace[:100])
    last = trace[-1]
    assert "batch" not in last  # nothing else was due: its own message, at its time
    assert last["sent"] - trace[0]["sent"] >= 400 - 1
    assert last["schedule_lag_ms"] < 200
    assert all(record["schedule_lag_ms"] >= 0 for record in trace)  # never sent before it was due
    engine = create_engine(config)
    engine.register(parse_query(QUERY))
    expected = engine.run(group_contemporaneous(elements(times)))
    assert _answers(tmp_path) == [(r.application_time, r.operation, Counter(r.bindings)) for r in expected]


def kit_engine(push: str) -> str:
    """A Python-kit engine program (batches announced) whose ``push`` runs ``push`` and then answers
    one binding: the first element's subject."""
    return textwrap.dedent("""
        import sys, time
        sys.path.insert(0, %r)
        from rsp_workbench.engines.kit.python import WrappedEngine, serve

        class Engine(WrappedEngine):
            def register(self, query, engine, static):
                return {"engine": "test"}

            def push(self, t, elements, streams):
                %s
                self.emit([{"who": elements[0][0]}], t=t)

        sys.exit(serve(Engine()))
        """) % (str(ROOT), push)


CRASHING_KIT_ENGINE = kit_engine('if self._stimulus == 3: raise RuntimeError("boom in stimulus 3")')

CRASHING_NODE_KIT_ENGINE = """
const { serve } = require(%s);
serve({
  register() { return { engine: 'crashing' }; },
  push({ id, t, elements }, emit) {
    if (id === 3) throw new Error('boom in stimulus 3');
    emit([{ who: elements[0][0] }], { t });
  },
});
"""

EXITING_RAW_ENGINE = """
import json, os, sys
out = sys.stdout
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "register":
        out.write(json.dumps({"type": "ready", "batch": True}) + "\\n"); out.flush()
    elif message["type"] == "batch":
        for item in message["stimuli"]:
            if item["id"] == 3:
                sys.stderr.write("segfault-like exit\\n"); sys.stderr.flush(); os._exit(3)
            out.write(json.dumps({"type": "response", "stimulus": item["id"], "t": item["t"],
                                  "bindings": [{"who": item["elements"][0][0]}]}) + "\\n")
            out.write(json.dumps({"type": "done", "stimulus": item["id"]}) + "\\n")
            out.flush()
"""


@pytest.mark.parametrize("kind", ["error", "node-error", "exit"])
def test_engine_failing_in_the_middle_of_a_batch(tmp_path: Path, kind: str) -> None:
    if kind == "node-error":
        if shutil.which("node") is None:
            pytest.skip("Node.js is not installed")
        kit = json.dumps(str(ROOT / "rsp_workbench" / "engines" / "kit" / "node" / "rspwb-kit.js"))
        command = ["node", "-e", CRASHING_NODE_KIT_ENGINE % kit]
    else:
        script = CRASHING_KIT_ENGINE if kind == "error" else EXITING_RAW_ENGINE
        command = [sys.executable, "-c", textwrap.dedent(script)]
    config = EngineConfig("external", parameters={"command": command}, name="crashing")
    result = run_engine(config, QUERY, iter_stimuli(elements(TIMES)), tmp_path / "run",
                        options=StandOptions(mode="absolute-time", sampling_ms=50, stimulus_timeout_s=20))
    assert result.status == "failed"
    reason = {"error": "engine error: RuntimeError: boom in stimulus 3", "node-error": "engine error: Error: boom in stimulus 3",
              "exit": "the engine exited unexpectedly (exit code 3)"}[kind]
    assert (result.error or "").startswith(
        f"{reason}; 7 stimuli of its batches were sent and not done (ids 3…9); the 3 done before are recorded"), result.error
    # nothing computed is lost: the three stimuli done and their responses are in the run folder
    trace = _trace(tmp_path / "run")
    assert [r["stimulus"] for r in trace] == list(range(10))
    assert [r["done"] is not None for r in trace] == [True] * 3 + [False] * 7
    assert [len(r["responses"]) for r in trace] == [1, 1, 1] + [0] * 7
    assert [r.application_time for r in read_response_log(tmp_path / "run" / "responses.jsonl").responses] == \
        [0, 500, 1500]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["status"] == "failed"




@pytest.mark.slow
def test_the_stimulus_timeout_is_per_stimulus_not_per_batch(tmp_path: Path) -> None:
    """Each stimulus takes 0.3 s, under the 1 s stimulus timeout, and a batch of ten takes 3 s:
    the run is ok (it once failed "stimulus timeout (1 s)" waiting for a whole batch); a stimulus
    that takes longer than the timeout still fails the run, naming that stimulus."""
    def run(seconds: float, folder: str) -> Any:
        command = [sys.executable, "-c", kit_engine(f"time.sleep({seconds})")]
        config = EngineConfig("external", parameters={"command": command}, name="slow")
        return run_engine(config, QUERY, iter_stimuli(elements(TIMES)), tmp_path / folder,
                          options=StandOptions(mode="absolute-time", sampling_ms=50, batch=10, stimulus_timeout_s=1))

    result = run(0.3, "slow")
    assert result.status == "ok", result.error
    assert result.stimuli_done == 10 and result.responses == 10
    assert [r.get("batch") for r in _trace(tmp_path / "slow")] == [0] * 10
    result = run(1.5, "slower")
    assert result.status == "timeout" and "stimulus 0 not finished within 1 s" in (result.error or ""), result.error


@pytest.mark.slow
def test_experiment_stand_batch_sets_the_messages_the_engine_gets(tmp_path: Path) -> None:
    """``stand: {batch: N}`` in an experiment file reaches the stand: with 1 the engine (which
    announces batches) gets one stimulus per message, with 3 batches of at most 3; same answers."""
    from tests.pipeline.support import experiment_file
    from rsp_workbench.experiment import load_experiment
    from rsp_workbench.pipeline.run_experiment import run_experiment

    traces = {}
    for batch in (1, 3):
        folder = tmp_path / f"batch-{batch}"
        folder.mkdir()
        path = experiment_file(folder, "- {id: csparql, type: secret, preset: csparql}")
        path.write_text(path.read_text().replace("stand: {mode: absolute-time}",
                                                 f"stand: {{mode: absolute-time, batch: {batch}}}"))
        summary = run_experiment(load_experiment(path), folder / "bundle")
        assert summary.status == "ok" and [row["verdict"] for row in summary.rows] == ["correct"]
        run_dir = folder / "bundle" / "runs" / "case0-rep0-csparql-filter"
        assert json.loads((run_dir / "run.json").read_text())["batch"] == batch
        traces[batch] = _trace(run_dir)
    count = len(traces[1])
    assert count == 18  # 3 stations × 6 s, each station at its own offset: 18 instants
    assert all("batch" not in record for record in traces[1])  # each sent as its own `stimulus` line
    assert len({record["sent"] for record in traces[1]}) == count  # one write each
    assert [record["batch"] for record in traces[3]] == [i // 3 for i in range(count)]
    assert [(r["stimulus"], r["elements"], len(r["responses"])) for r in traces[1]] == \
        [(r["stimulus"], r["elements"], len(r["responses"])) for r in traces[3]]
