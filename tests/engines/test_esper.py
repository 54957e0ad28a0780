"""The Esper + Jena plug-in (engine ``type: esper``): C-SPARQL's architecture on the stand.

Tests that run the engine need its jar built (``./install.sh --engines esper``); they skip with the
reason when it is missing, except where ``RSPWB_ENGINES_REQUIRED`` names it (``esper`` or ``all``),
where a skip would hide a broken install. Each JVM start costs a few seconds (Esper compiles the
EPL statement): the tests that run it are few and small.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest

import rsp_workbench.engines.esper as esper
from rsp_workbench.core.semantics import PRESETS, EngineSemantics
from rsp_workbench.engine import PROGRAM_ENGINES, EngineConfig, StaticGraphs, group_contemporaneous
from rsp_workbench.errors import UserError
from rsp_workbench.responses.model import mapping
from rsp_workbench.stand.host import engine_command, run_engine
from rsp_workbench.stand.options import StandOptions
from rsp_workbench.streams.model import StreamElement
from tests.engines.support import (EX, ROOMS, ROOMS_STREAM, answers, detections, one_station_experiment, require_built,
                                   run_and_report)
from tests.paths import ROOT

SAMPLES = ROOT / "sample_experiments" / "real-engines"
R1 = Counter([mapping(room=f"<{EX}r1>")])
R2 = Counter([mapping(room=f"<{EX}r2>")])


def needs_esper() -> None:
    missing = None if esper.jar().is_file() else "rsp_workbench/engines/esper is not built (./install.sh --engines esper)"
    if missing is None and esper.java() is None:
        missing = "no Java to run rsp_workbench/engines/esper on (./install.sh installs Java 17)"
    require_built("esper", missing)


def esper_engine(**parameters: object) -> EngineConfig:
    preset = PROGRAM_ENGINES["esper"].preset_for(parameters)
    return EngineConfig("esper", PRESETS[preset], parameters=dict(parameters), name="esper", dialect="csparql")


def rooms_run(tmp_path: Path, end: int = 30000, **parameters: object) -> list[tuple[int | None, str, Counter[object]]]:
    result = run_engine(esper_engine(**parameters), ROOMS, group_contemporaneous(ROOMS_STREAM), tmp_path,
                        syntax="csparql", options=StandOptions(end=end), query_id="rooms")
    assert result.ok, result.error
    return answers(tmp_path)


@pytest.mark.slow
def test_time_batch_starts_at_the_first_event_and_posts_on_esper_s_clock(tmp_path: Path) -> None:
    needs_esper()
    # #time_batch(10 s) without a reference point: the first batch starts with the first event
    # (1000), so [1000, 11000) holds both r1 detections and is posted when the clock reaches
    # 11000 (before the element at 11000 enters: closed-open), with t = Esper's time 11000;
    # [11000, 21000) holds r2 and is posted at 21000 although the next element comes at 25000
    # (advanceTimeSpan fires each callback at its own time); [21000, 31000) only after 30000.
    assert rooms_run(tmp_path) == [(11000, "=", R1), (21000, "=", R2)]


@pytest.mark.slow
def test_time_batch_with_a_reference_point_and_the_empty_relation(tmp_path: Path) -> None:
    needs_esper()
    # #time_batch(10 s, 0L): batches [0, 10000), [10000, 20000), [20000, 30000). The last holds
    # p3 only: the window is not empty, the query's answer is, and that empty relation is sent.
    assert rooms_run(tmp_path, reference_point=0) == [(10000, "=", R1), (20000, "=", R2), (30000, "=", Counter())]


@pytest.mark.slow
def test_an_empty_batch_is_not_posted(tmp_path: Path) -> None:
    needs_esper()
    stream = detections(("m1", "r1", 1000), ("m2", "r1", 3000), ("m1", "r2", 35000), ("m2", "r2", 36000))
    result = run_engine(esper_engine(reference_point=0), ROOMS, group_contemporaneous(stream), tmp_path,
                        syntax="csparql", options=StandOptions(end=40000), query_id="rooms")
    assert result.ok, result.error
    # [10000, 20000) and [20000, 30000) are empty: Esper posts neither (no FORCE_UPDATE)
    assert answers(tmp_path) == [(10000, "=", R1), (40000, "=", R2)]


def test_each_parameter_combination_runs_under_its_own_preset() -> None:
    experiment = one_station_experiment(
        "{id: batch, type: esper}",
        "{id: ref, type: esper, parameters: {reference_point: 500ms}}",
        "{id: rstream, type: esper, parameters: {stream: rstream}}",
        "{id: snapshot, type: esper, parameters: {window: time}}",
        "{id: all, type: esper, parameters: {window: time, output: all}}",
        "{id: told, type: esper, preset: csparql, parameters: {window: time}}")
    presets = {engine.id: engine.preset for engine in experiment.engines}
    assert presets == {"batch": "esper-time-batch", "ref": "esper-time-batch-ref", "rstream": "esper-time-batch-rstream",
                       "snapshot": "esper-time-snapshot", "all": "esper-time-all", "told": "csparql"}
    assert all(engine.dialect == "csparql" for engine in experiment.engines)
    assert experiment.engines[0].semantics == PRESETS["esper-time-batch"] != EngineSemantics()


def test_a_parameter_outside_its_choices_is_a_validation_error() -> None:
    with pytest.raises(UserError) as bad:
        from rsp_workbench.experiment.runs import expand_runs

        expand_runs(one_station_experiment("{id: e, type: esper, parameters: {window: length}}"))
    assert "'length' is not one of time_batch, time" in str(bad.value)


def test_missing_build_is_one_line_saying_how(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(esper, "HERE", tmp_path)
    with pytest.raises(UserError) as missing:
        engine_command(esper_engine())
    message = str(missing.value)
    assert "\n" not in message and "./install.sh --engines esper" in message and "mvn" in message


@pytest.mark.slow
def test_a_sliding_time_batch_is_refused_in_one_line(tmp_path: Path) -> None:
    needs_esper()
    query = ROOMS.replace("STEP 10s", "STEP 5s")
    result = run_engine(esper_engine(), query, group_contemporaneous(ROOMS_STREAM), tmp_path, syntax="csparql")
    assert result.status == "failed"
    assert "window time_batch is tumbling: RANGE must equal STEP (got 10000 ms and 5000 ms)" in (result.error or "")


@pytest.mark.slow
def test_terms_static_data_and_aggregates_come_back_as_n_triples(tmp_path: Path) -> None:
    needs_esper()
    # static data joins the window content in the default graph, as C-SPARQL merges them
    query = """REGISTER QUERY q AS
SELECT ?o ?kind (COUNT(?s) AS ?n)
FROM STREAM <http://s> [RANGE 1s STEP 1s]
WHERE { ?s <http://ex.org/says> ?o . ?s <http://ex.org/kind> ?kind } GROUP BY ?o ?kind"""
    said = '"a \\"quoted\\", {braced} line\\nnext"'
    stream = [StreamElement(f"<{EX}x>", f"<{EX}says>", said, 100), StreamElement(f"<{EX}y>", f"<{EX}says>", said, 200),
              StreamElement(f"<{EX}z>", f"<{EX}says>", '"chat"@fr', 300)]
    static = StaticGraphs(default=tuple((f"<{EX}{who}>", f"<{EX}kind>", '"k"') for who in "xyz"))
    result = run_engine(esper_engine(reference_point=0), query, group_contemporaneous(stream), tmp_path,
                        syntax="csparql", options=StandOptions(end=1000), static=static)
    assert result.ok, result.error
    integer = "<http://www.w3.org/2001/XMLSchema#integer>"
    assert answers(tmp_path) == [(1000, "=", Counter([mapping(o=said, kind='"k"', n=f'"2"^^{integer}'),
                                                      mapping(o='"chat"@fr', kind='"k"', n=f'"1"^^{integer}')]))]


@pytest.mark.slow
def test_an_out_of_memory_error_is_one_fatal_line_with_the_jvm_s_message() -> None:
    needs_esper()
    lines = [{"type": "register", "protocol": 1, "engine": {"type": "esper", "parameters": {"heap": "64m"}},
              "query": {"id": "q", "text": ROOMS}, "static": {"default": [], "named": {}}},
             {"type": "stimulus", "id": 0, "t": 1000, "elements": [[f"<{EX}a>", f"<{EX}p>", '"x"']]},
             {"type": "stimulus", "id": 1, "t": 2000, "elements": [[f"<{EX}a>", f"<{EX}p>", '"x"']]},
             {"type": "close"}]
    command = esper.command(esper_engine(heap="64m"))
    run = subprocess.run(command, input="".join(json.dumps(line) + "\n" for line in lines), capture_output=True,
                         text=True, timeout=120, env={**os.environ, "RSPWB_ESPER_OOM_AT_STIMULUS": "1"})
    answered = [json.loads(line) for line in run.stdout.splitlines()]
    assert [a["type"] for a in answered] == ["ready", "done", "error"] and run.returncode == 1
    assert answered[2] == {"type": "error", "fatal": True, "message": "java.lang.OutOfMemoryError: Java heap space"}


@pytest.mark.slow
def test_an_out_of_memory_error_fails_that_run_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    needs_esper()
    monkeypatch.setenv("RSPWB_ESPER_OOM_AT_STIMULUS", "2")
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-Xmx128m")  # a heap filled in a moment, not a quarter of the machine's
    out = tmp_path / "bundle"
    rows = run_and_report(SAMPLES / "esper.yaml", out, capsys, size="smoke")
    assert {rows[e]["status"] for e in ("time-batch", "time-snapshot", "time-all")} == {"failed"}
    assert rows["csparql-preset"]["status"] == "ok" and rows["csparql-preset"]["verdict"] == "correct"
    run = json.loads(next(p for p in out.rglob("run.json") if p.parent.name.endswith("-time-batch-rooms")).read_text())
    assert "java.lang.OutOfMemoryError: Java heap space" in (run.get("error") or "")


def test_a_missing_optional_engine_skips_unless_the_environment_requires_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RSPWB_ENGINES_REQUIRED", raising=False)
    with pytest.raises(pytest.skip.Exception, match="not built"):
        require_built("esper", "not built")
    for required in ("esper", "rsprs,esper", "all"):
        monkeypatch.setenv("RSPWB_ENGINES_REQUIRED", required)
        with pytest.raises(pytest.fail.Exception, match="RSPWB_ENGINES_REQUIRED names esper but not built"):
            require_built("esper", "not built")
    monkeypatch.setenv("RSPWB_ENGINES_REQUIRED", "rsprs")
    with pytest.raises(pytest.skip.Exception):
        require_built("esper", "not built")
    require_built("esper", None)  # built: neither
