"""Spark Structured Streaming as an engine (``type: spark-streaming``): the plan, its refusals, the
presets of the output modes, ``rspwb validate``; and the real engine on the CSRBench rooms.

The plan is decided without Spark (milliseconds); a test that runs the engine starts a JVM (tens of
seconds on a loaded machine: all but one are marked slow). Java is installed by ./install.sh; where it
is missing those tests skip, except where ``RSPWB_ENGINES_REQUIRED`` names spark-streaming or all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import rsp_workbench.engines.sparkstream as sparkstream
from rsp_workbench.core.semantics import PRESETS, R2S, Strategy
from rsp_workbench.engine import PROGRAM_ENGINES, EngineConfig, group_contemporaneous
from rsp_workbench.engines.sparkstream.plan import compile_plan, filter_tree
from rsp_workbench.errors import UserError
from rsp_workbench.query.parser import parse_query
from rsp_workbench.responses.model import mapping
from rsp_workbench.stand.host import engine_command, run_engine
from rsp_workbench.stand.options import StandOptions
from tests.engines.support import (EX, ROOMS, ROOMS_STREAM, answers, one_station_experiment, require_built,
                                   run_and_report)
from tests.paths import ROOT

SAMPLES = ROOT / "sample_experiments" / "real-engines"
R1 = Counter([mapping(room=f"<{EX}r1>")])
R2 = Counter([mapping(room=f"<{EX}r2>")])
COUNTS = """REGISTER QUERY q AS SELECT ?room (COUNT(?who) AS ?n)
FROM STREAM <http://www.example.org/stream1> [RANGE 10s STEP 10s]
WHERE { ?who <http://ex.org/detectedAt> ?room } GROUP BY ?room"""


def plan_of(text: str, **parameters: object):  # type: ignore[no-untyped-def]
    return compile_plan(parse_query(text, syntax="csparql"), parameters)


def refusal(text: str, **parameters: object) -> str:
    with pytest.raises(UserError) as refused:
        plan_of(text, **parameters)
    assert "\n" not in refused.value.message
    return refused.value.message


def test_the_rooms_query_is_two_patterns_joined_on_the_room_within_one_window() -> None:
    plan = plan_of(ROOMS)
    assert (plan.stream, plan.size_ms, plan.slide_ms, plan.start_ms) == ("http://www.example.org/stream1", 10000, 10000, 0)
    assert [(p.s, p.p, p.o) for p in plan.patterns] == [(f"<{EX}m1>", f"<{EX}detectedAt>", "room"),
                                                        (f"<{EX}m2>", f"<{EX}detectedAt>", "room")]
    assert (plan.projection, plan.group_by, plan.filters, plan.output, plan.watermark_ms, plan.trigger) == (
        ("room",), None, (), "append", 0, "stimulus")


def test_yabench_exp1_is_four_patterns_and_a_where() -> None:
    text = (ROOT / "sample_experiments" / "yabench" / "queries" / "q1.rq").read_text(encoding="utf-8")
    plan = plan_of(text.replace("${WSIZE}", "5s").replace("${WSLIDE}", "5s").replace("${TEMP}", "50.0"))
    assert len(plan.patterns) == 4 and plan.projection == ("sensor", "value", "obs")
    assert plan.filters == (("compare", ">", ("var", "value"), ("number", 50.0)),)


def test_group_by_with_count_is_spark_s_group_by_window() -> None:
    plan = plan_of(COUNTS, output="update", watermark="none")
    assert plan.group_by == ("room",) and [(c.name, c.variable, c.distinct) for c in plan.counts] == [("n", "who", False)]
    assert (plan.output, plan.watermark_ms) == ("update", None)


def test_a_filter_becomes_a_tree_of_comparisons_and_arithmetic() -> None:
    query = parse_query("SELECT ?a WHERE { ?a <urn:p> ?v FILTER(?v - 2 > 10 && !(?a = <urn:x>)) }", syntax="sparql")
    expression = query.algebra.algebra.p.p.expr
    assert filter_tree(expression) == ("and", ("compare", ">", ("arith", "-", ("var", "v"), ("number", 2.0)), ("number", 10.0)),
                                       ("not", ("compare", "=", ("var", "a"), ("term", "<urn:x>"))))


@pytest.mark.parametrize(("text", "reason"), [
    (ROOMS.replace("SELECT ?room", "SELECT DISTINCT ?room"), "SELECT DISTINCT is outside the fragment"),
    (ROOMS.replace("?room .\n", "?room . OPTIONAL { ?room <urn:p> ?x }\n"), "LeftJoin is outside the fragment"),
    (COUNTS.replace("COUNT(?who)", "SUM(?who)"), "SUM is outside the fragment (COUNT only)"),
    (ROOMS.replace("?room }", "?room FILTER(regex(str(?room), \"r\")) }"), "in a FILTER is outside the fragment"),
    (ROOMS.replace("FROM STREAM <http://www.example.org/stream1> [RANGE 10s STEP 10s]",
                   "FROM STREAM <urn:a> [RANGE 10s STEP 10s] FROM STREAM <urn:b> [RANGE 10s STEP 10s]"),
     "2 windows (one window over one stream only)"),
])
def test_what_the_plan_cannot_express_is_refused_in_one_line(text: str, reason: str) -> None:
    message = refusal(text)
    assert message.startswith("spark-streaming cannot run this query: ") and reason in message


def test_each_output_mode_runs_under_its_own_preset() -> None:
    experiment = one_station_experiment(
        "{id: append, type: spark-streaming}",
        "{id: update, type: spark-streaming, parameters: {output: update, watermark: 2s}}",
        "{id: complete, type: spark-streaming, parameters: {output: complete, watermark: none}}",
        "{id: told, type: spark-streaming, preset: spark-append-aggregate}")
    assert {e.id: e.preset for e in experiment.engines} == {
        "append": "spark-append", "update": "spark-update", "complete": "spark-complete", "told": "spark-append-aggregate"}
    assert all(e.dialect == "rspql" for e in experiment.engines)
    append, aggregate = PRESETS["spark-append"], PRESETS["spark-append-aggregate"]
    assert (append.report.strategies, append.r2s, append.empty_notification, append.t0) == (
        frozenset({Strategy.CONTENT_CHANGE}), R2S.ISTREAM, False, 0)
    assert (Strategy.NEXT_ELEMENT in aggregate.report.strategies, aggregate.r2s) == (True, R2S.RSTREAM)


def test_a_parameter_outside_its_choices_is_a_validation_error() -> None:
    from rsp_workbench.experiment.runs import expand_runs

    with pytest.raises(UserError) as bad:
        expand_runs(one_station_experiment("{id: e, type: spark-streaming, parameters: {output: continuous}}"))
    assert "'continuous' is not one of append, update, complete" in str(bad.value)


def test_temporary_checkpoints_of_adapters_that_no_longer_run_are_removed(tmp_path: Path) -> None:
    """A run killed by a timeout or a cancel never reaches ``close``: the next adapter removes the
    checkpoint folders whose process is gone, never one of a live process or a user's own."""
    from rsp_workbench.engines.sparkstream.adapter import CHECKPOINT_PREFIX, temporary_checkpoint

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    dead = tmp_path / f"{CHECKPOINT_PREFIX}{int(gone.stdout)}-abc123"
    (dead / "offsets").mkdir(parents=True)
    live = tmp_path / f"{CHECKPOINT_PREFIX}1-xyz"  # init: always running
    live.mkdir()
    users = tmp_path / "my-checkpoint"
    users.mkdir()
    mine = Path(temporary_checkpoint(str(tmp_path)))
    assert mine.is_dir() and mine.name.startswith(f"{CHECKPOINT_PREFIX}{os.getpid()}-")
    assert not dead.exists() and live.is_dir() and users.is_dir()


def test_heap_is_the_driver_s_memory() -> None:
    from rsp_workbench.engines.sparkstream.adapter import session_settings
    from rsp_workbench.experiment.runs import expand_runs

    assert session_settings("local[*]", {"heap": "2g"})["spark.driver.memory"] == "2g"
    assert "spark.driver.memory" not in session_settings("local[*]", {})  # Spark's own default, 1g
    runs = expand_runs(one_station_experiment("{id: e, type: spark-streaming, parameters: {heap: 2g}}"))
    assert runs[0].engine.parameters["heap"] == "2g"


def test_validate_refuses_a_query_outside_the_fragment_at_the_engine_s_line(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from rsp_workbench.cli.main import main

    experiment = tmp_path / "e.yaml"
    experiment.write_text("""name: x
stream: {generator: sg1, params: {stations: 1, duration: 2s}}
queries: [{id: q, syntax: csparql, text: "REGISTER QUERY q AS SELECT DISTINCT ?s FROM STREAM <urn:s> [RANGE 1s STEP 1s] WHERE { ?s ?p ?o }"}]
engines:
  - {id: ref, type: secret}
  - {id: spark, type: spark-streaming}
""", encoding="utf-8")
    assert main(["validate", str(experiment)]) == 2
    error = capsys.readouterr().err.strip()
    assert error == (f"{experiment}:6: engines[1]: query q: spark-streaming cannot run this query: "
                     "SELECT DISTINCT is outside the fragment")


def test_a_missing_java_is_one_line_saying_how(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError) as missing:
        engine_command(EngineConfig("spark-streaming", PRESETS["spark-append"], name="s", dialect="rspql"))
    assert "\n" not in str(missing.value) and "needs Java 17" in str(missing.value) and "./install.sh" in str(missing.value)


# --- the real engine (a JVM per test) ----------------------------------------------------------


def needs_spark() -> None:
    require_built("spark-streaming", sparkstream.java_missing())


def spark_engine(**parameters: object) -> EngineConfig:
    preset = PROGRAM_ENGINES["spark-streaming"].preset_for(parameters)
    return EngineConfig("spark-streaming", PRESETS[preset], parameters=dict(parameters), name="spark", dialect="rspql")


@pytest.mark.slow  # a JVM for the engine: a minute on a quiet machine
def test_the_rooms_in_append_mode_each_room_when_its_join_completes(tmp_path: Path) -> None:
    needs_spark()
    result = run_engine(spark_engine(), ROOMS, group_contemporaneous(ROOMS_STREAM), tmp_path, syntax="csparql",
                        options=StandOptions(end=30000, start_timeout_s=600, stimulus_timeout_s=300), query_id="rooms")
    assert result.ok, result.error
    # m2's detection completes the join within Spark's window [0, 10 s) at 3000, within [10 s, 20 s)
    # at 13000: each new join result once (Istream), at the time of the micro-batch that found it
    assert answers(tmp_path) == [(3000, "+", R1), (13000, "+", R2)]


@pytest.mark.slow
def test_counts_in_append_mode_leave_when_the_watermark_passes_the_window(tmp_path: Path) -> None:
    needs_spark()
    stream = ROOMS_STREAM[:4]
    result = run_engine(spark_engine(), COUNTS, group_contemporaneous(stream), tmp_path, syntax="csparql",
                        options=StandOptions(end=30000, start_timeout_s=600, stimulus_timeout_s=300), query_id="q")
    assert result.ok, result.error
    integer = "<http://www.w3.org/2001/XMLSchema#integer>"
    # [0, 10 s) leaves in the no-data batch after the stimulus at 11000 (watermark 11000 ≥ its end);
    # [10 s, 20 s) never: the advance to 30000 is a row no pattern matches, and Spark pushes the
    # patterns' filters below the watermark, so that row does not move it (README.md)
    assert answers(tmp_path) == [(11000, "=", Counter([mapping(room=f"<{EX}r1>", n=f'"2"^^{integer}')]))]


@pytest.mark.slow
def test_spark_s_planner_refuses_complete_mode_without_an_aggregation_at_validate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    needs_spark()
    monkeypatch.setenv(sparkstream.CHECK_CACHE_ENV, str(tmp_path / "kept"))
    registers = [
        {"type": "register", "engine": {"type": "spark-streaming", "parameters": {"output": "complete"}},
         "query": {"id": "rooms", "text": ROOMS, "syntax": "csparql"}, "static": {"default": [], "named": {}}},
        {"type": "register", "engine": {"type": "spark-streaming", "parameters": {"output": "append", "watermark": "none"}},
         "query": {"id": "q", "text": COUNTS, "syntax": "csparql"}, "static": {"default": [], "named": {}}},
        {"type": "register", "engine": {"type": "spark-streaming", "parameters": {}},
         "query": {"id": "rooms", "text": ROOMS, "syntax": "csparql"}, "static": {"default": [], "named": {}}},
    ]
    verdicts = sparkstream.check(registers)
    assert verdicts[0] is not None and verdicts[0].startswith("Spark refuses the query: ")
    assert ("Invalid streaming output mode: complete. This output mode is not supported for no streaming "
            "aggregations on streaming DataFrames/DataSets") in verdicts[0]
    assert verdicts[1] is not None and ("Invalid streaming output mode: append. This output mode is not supported "
                                        "for streaming aggregations without watermark") in verdicts[1]
    assert verdicts[2] is None
    assert all(v is None or "\n" not in v for v in verdicts)
    # Spark's verdicts are kept: asked again (validate at another size, the designer's next edit),
    # no JVM starts and the answers are the same, whatever the query is called; another query is asked about
    assert len(list((tmp_path / "kept").glob("*.json"))) == 3

    def no_jvm(*args: object, **kwargs: object) -> None:
        raise AssertionError("Spark was asked again")

    monkeypatch.setattr(sparkstream.subprocess, "run", no_jvm)
    assert sparkstream.check(registers) == verdicts
    with pytest.raises(AssertionError, match="asked again"):
        sparkstream.check([{**registers[2], "query": {**registers[2]["query"], "text": COUNTS}}])
    renamed = {**registers[2], "query": {**registers[2]["query"], "id": "renamed"}}
    assert sparkstream.check([renamed]) == [None]


@pytest.mark.slow
def test_a_spark_job_failure_fails_that_run_only_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    needs_spark()
    monkeypatch.setenv("RSPWB_SPARK_FAIL_AT_STIMULUS", "1")
    # the sample without its update-mode engine (a JVM less; the failure is the same in either mode)
    sample = (SAMPLES / "spark-streaming.yaml").read_text(encoding="utf-8")
    update = next(line for line in sample.splitlines(keepends=True) if line.startswith("  - {id: update,"))
    experiment = tmp_path / "spark-streaming.yaml"
    experiment.write_text(sample.replace(update, "").replace("../teaching/", f"{SAMPLES.parent / 'teaching'}/"),
                          encoding="utf-8")
    out = tmp_path / "bundle"
    rows = run_and_report(experiment, out, capsys, size="smoke")
    assert set(rows) == {"append", "spark-append-preset"} and rows["append"]["status"] == "failed"
    assert rows["spark-append-preset"]["status"] == "ok" and rows["spark-append-preset"]["verdict"] == "correct"
    run = json.loads(next(p for p in out.rglob("run.json") if p.parent.name.endswith("-append-rooms")).read_text())
    error = run.get("error") or ""
    assert "Spark job failed: " in error and "forced failure of the stimulus marked to fail" in error


@pytest.mark.slow
def test_yabench_exp1_on_two_stations_is_correct_under_spark_append(tmp_path: Path) -> None:
    from rsp_workbench.generators.sg1 import observation_elements, reference_observations
    from rsp_workbench.oracle.commands import check_answer
    from rsp_workbench.streams.writers import write_stream

    needs_spark()
    # two stations for 2 s (four stimuli, each a micro-batch of about 4 s on a quiet machine) across two windows
    params = {"stations": 2, "interval": 1000, "duration": 2000, "seed": 1430236906}
    elements = [e for station, t, value in reference_observations(params) for e in observation_elements(station, t, value)]
    assert len({element.t for element in elements}) == 4
    query = (ROOT / "sample_experiments" / "yabench" / "queries" / "q1.rq").read_text(encoding="utf-8")
    query = query.replace("${WSIZE}", "1s").replace("${WSLIDE}", "1s").replace("${TEMP}", "50.0")
    result = run_engine(spark_engine(), query, group_contemporaneous(elements), tmp_path / "run", syntax="csparql",
                        options=StandOptions(end=3000, start_timeout_s=900, stimulus_timeout_s=None), query_id="q1")
    assert result.ok, result.error
    stream = tmp_path / "s.stream"
    write_stream(stream, elements, "yabench")
    (tmp_path / "q1.rq").write_text(query, encoding="utf-8")
    # the oracle under the declared preset: each observation above 50 once, at its own stimulus, as +
    verdict = check_answer(stream, tmp_path / "q1.rq", tmp_path / "run" / "responses.jsonl", stream_format="yabench",
                           engine_output_format="jsonl", syntax="csparql", system="spark-append", t0=0, end=3000)
    times = [json.loads(line).get("application_time") for line in (tmp_path / "run" / "responses.jsonl").open()][1:]
    assert times == [0, 1397, 1833], times  # 58, 96 and 52 (not 45), in both windows
    assert verdict.correct, verdict.payload.get("first_divergence")
