"""The stand carries BIG: the null engine, the protocol codec, cheap per-stimulus KPIs, and the
engine hot paths that must not change what an engine computes."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import psutil
import pytest

from rsp_workbench.core.semantics import PRESETS
from rsp_workbench.engine import EngineConfig, Stimulus, group_contemporaneous
from rsp_workbench.engines import create_engine, engine_class
from rsp_workbench.experiment.loader import loads_experiment
from rsp_workbench.experiment.runs import expand_runs
from rsp_workbench.query.parser import parse_query
from rsp_workbench.stand import protocol
from rsp_workbench.engines.kit.python import stdlib_line
from rsp_workbench.stand.host import run_engine
from rsp_workbench.stand.options import StandOptions
from rsp_workbench.stand.run_state import _proc_stat
from rsp_workbench.streams.model import StreamElement

from tests.stand.support import EX, QUERY, elements


def test_null_engine_answers_done_only_through_the_stand(tmp_path: Path) -> None:
    stream = elements(list(range(0, 3000, 10)))
    result = run_engine(EngineConfig("null", name="null"), QUERY, group_contemporaneous(stream), tmp_path,
                        options=StandOptions(mode="absolute-time", sampling_ms=50, end=5000))
    assert result.status == "ok", result.error
    assert result.stimuli_done == 300 and result.elements_done == 300 and result.responses == 0
    assert result.throughput_triples_per_s and result.throughput_triples_per_s > 0
    trace = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(trace) == 300 and trace[0]["kpis_before"]["rss_mb"] > 0 and trace[-1]["responses"] == []


def test_null_engine_in_process_and_in_experiments() -> None:
    engine = create_engine(EngineConfig("null"))
    engine.register(parse_query(QUERY))
    assert engine.run(group_contemporaneous(elements([0, 0, 5]))) == [] and engine.elements == 3
    assert engine_class("null").type_name == "null"
    experiment = loads_experiment(f"""
name: ceiling
stream: {{generator: sg1, params: {{stations: 2, interval: 1s, duration: 2s}}}}
queries: [{{id: q, text: "{QUERY.replace(chr(10), ' ').replace('"', '')}"}}]
engines: [{{id: stand-ceiling, type: "null"}}]
""")
    assert experiment.engines[0].type == "null"
    assert [run.engine.type for run in expand_runs(experiment)] == ["null"]


@pytest.mark.parametrize("message", [
    {"type": "stimulus", "id": 3, "t": 8000, "elements": [["<a>", "<b>", '"é ✓ \\" \\n"']], "streams": ["s"]},
    {"type": "response", "stimulus": None, "t": -1, "operation": "+", "bindings": [{"x": "_:b0"}], "f": 0.5},
    {"type": "register", "big": 2 ** 70, "keys": {1: "non-str key"}},  # what only the stdlib encodes
])
def test_codec_writes_the_bytes_the_stdlib_writes(message: dict) -> None:
    line = protocol.dumps(message)
    assert line == stdlib_line(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1


def test_codec_reads_what_the_stdlib_reads() -> None:
    assert protocol.loads(b'{"type":"done","stimulus":1}\n') == {"type": "done", "stimulus": 1}
    assert protocol.loads('{"type":"done","x":NaN}')["x"] != protocol.loads('{"type":"done","x":NaN}')["x"]  # NaN
    assert protocol.parse_engine_line(b'{"type":"response","t":1,"bindings":[],"system_time":Infinity}\n')["t"] == 1
    with pytest.raises(protocol.ProtocolError, match="not a JSON line"):
        protocol.parse_engine_line(b'{"type":"done",\xff}\n')


def test_per_stimulus_kpis_read_what_psutil_reads() -> None:
    process = psutil.Process()
    rss, cpu = _proc_stat(os.getpid())  # type: ignore[misc]
    times = process.cpu_times()
    assert abs(rss - process.memory_info().rss) < 64 * 1024 * 1024
    assert abs(cpu - (times.user + times.system)) < 0.5
    assert _proc_stat(2 ** 22 + 12345) is None  # no such process


# --- the engine hot paths compute what they computed ------------------------------------

TUMBLING = f"""PREFIX : <{EX}>
SELECT ?who ?room FROM NAMED STREAM <{EX}s> [NOW - 1 S SLIDE 1 S]
WHERE {{ ?who :detectedAt ?room . ?who :type :Person }}"""


def _people(times: list[int]) -> list[StreamElement]:
    out = []
    for i, t in enumerate(times):
        out.append(StreamElement(f"<{EX}p{i % 4}>", f"<{EX}detectedAt>", f"<{EX}r{i % 3}>", t))
        out.append(StreamElement(f"<{EX}p{i % 4}>", f"<{EX}type>", f"<{EX}Person>", t))
        out.append(StreamElement(f"<{EX}p{i % 4}>", f"<{EX}ignored>", f'"{i}"', t))  # no pattern binds it
    return out


@pytest.mark.parametrize("preset", ["cqels", "csparql", "sparqlstream"])
def test_emptying_the_store_at_a_tumble_equals_the_rdflib_matcher(preset: str) -> None:
    """The native matcher's shortcuts (store emptied at once, unmatchable triples not indexed)
    give the same bags as the rdflib matcher, which has none of them."""
    stimuli = group_contemporaneous(_people([0, 0, 300, 900, 1000, 1400, 2500, 2600, 4100, 4100]))
    answers = []
    for matcher in ("native", "rdflib"):
        engine = create_engine(EngineConfig("secret", PRESETS[preset], parameters={"t0": 0, "matcher": matcher}))
        engine.register(parse_query(TUMBLING))
        answers.append([(r.application_time, r.operation, Counter(r.bindings)) for r in engine.run(stimuli, end=6000)])
    assert answers[0] == answers[1] and answers[0]


def test_a_pattern_of_variables_only_joins_with_every_triple() -> None:
    query = f"""PREFIX : <{EX}>
SELECT ?who ?x FROM NAMED STREAM <{EX}s> [NOW - 1 S SLIDE 1 S]
WHERE {{ ?who :detectedAt :r0 . ?x ?p ?o }}"""
    stimuli = [Stimulus(0, 0, (StreamElement(f"<{EX}a>", f"<{EX}detectedAt>", f"<{EX}r0>", 0),
                              StreamElement(f"<{EX}b>", f"<{EX}q>", f"<{EX}c>", 0)))]
    answers = []
    for matcher in ("native", "rdflib"):
        engine = create_engine(EngineConfig("secret", PRESETS["csparql"], parameters={"t0": 0, "matcher": matcher}))
        engine.register(parse_query(query))
        answers.append([Counter(r.bindings) for r in engine.run(stimuli, end=2000)])
    assert answers[0] == answers[1] and sum(answers[0][0].values()) == 2
