"""The rsp-rs plug-in (engine ``type: rsprs``): the real engine on the stand, its install checks.

Tests that run rsp-rs need its adapter built (``./install.sh --engines rsprs``); they skip with
the reason when it is missing, except where ``RSPWB_ENGINES_REQUIRED`` names it (``rsprs`` or
``all``: set by .ci/run once it builds the optional engines), where a skip would hide a broken install.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import rsp_workbench.engines.rsprs as rsprs
from tests.engines.support import EX, ROOMS, ROOMS_STREAM, answers, detections, require_built, run_and_report
from tests.paths import ROOT
from rsp_workbench.core.semantics import PRESETS, R2S, BorderConvention, ReportPolicy, Strategy, Tick
from rsp_workbench.engine import EngineConfig, group_contemporaneous
from rsp_workbench.errors import UserError
from rsp_workbench.experiment.loader import loads_experiment
from rsp_workbench.responses.model import mapping
from rsp_workbench.responses.readers import read_response_log
from rsp_workbench.stand.host import engine_command, run_engine
from rsp_workbench.stand.options import StandOptions
from rsp_workbench.streams.model import StreamElement

SAMPLES = ROOT / "sample_experiments" / "real-engines"


def needs_rsprs() -> None:
    require_built("rsprs", None if rsprs.binary().is_file()
                  else "rsp_workbench/engines/rsprs is not built (./install.sh --engines rsprs)")


def rsprs_engine(**parameters: object) -> EngineConfig:
    return EngineConfig("rsprs", PRESETS["rsprs"], parameters=dict(parameters), name="rsprs", dialect="rspjs")


def test_rsprs_windows_start_at_the_first_element_and_close_with_a_later_one(tmp_path: Path) -> None:
    needs_rsprs()
    result = run_engine(rsprs_engine(), ROOMS, group_contemporaneous(ROOMS_STREAM), tmp_path,
                        syntax="csparql", options=StandOptions(end=30000), query_id="rooms")
    assert result.ok, result.error
    # t0 = 1000 (the first element): [1000, 11000) holds both detections in r1; the element at
    # 11000 is on its close, not after it (closed-open: close < t), so 13000 reports it. [11000,
    # 21000) is reported at 25000; [21000, 31000) never: no element follows it. (RSP-JS, windows
    # from 0: r1 at 11000.)
    assert answers(tmp_path) == [
        (13000, "=", Counter([mapping(room=f"<{EX}r1>")])),
        (25000, "=", Counter([mapping(room=f"<{EX}r2>")])),
    ]
    assert result.exit_code == 0 and result.stimuli_done == 5


def test_rsprs_close_stream_reports_the_last_window_at_the_sentinel(tmp_path: Path) -> None:
    needs_rsprs()
    stream = detections(("m1", "r1", 1000), ("m2", "r1", 3000), ("m1", "r2", 11000), ("m2", "r2", 13000),
                        ("m1", "r3", 22000), ("m2", "r3", 24000))
    result = run_engine(rsprs_engine(close_stream=True), ROOMS, group_contemporaneous(stream), tmp_path,
                        syntax="csparql", query_id="rooms")
    assert result.ok, result.error
    # without it the stream ends with [21000, 31000) (r3) unreported; the sentinel at the last
    # element's time + ω + β = 44000 closes it, and the engine reports it at 44000
    assert answers(tmp_path) == [
        (13000, "=", Counter([mapping(room=f"<{EX}r1>")])),
        (22000, "=", Counter([mapping(room=f"<{EX}r2>")])),
        (44000, "=", Counter([mapping(room=f"<{EX}r3>")])),
    ]


def test_rsprs_sends_one_response_per_binding_at_one_time(tmp_path: Path) -> None:
    needs_rsprs()
    query = """SELECT ?who ?room
FROM NAMED WINDOW <urn:w> ON STREAM <http://s> [RANGE 2000 STEP 2000]
WHERE {
WINDOW <urn:w> { ?who <http://ex.org/detectedAt> ?room }
}"""
    stream = detections(("a", "r1", 100), ("b", "r2", 500), ("c", "r1", 2500))
    result = run_engine(rsprs_engine(), query, group_contemporaneous(stream), tmp_path, syntax="rspql")
    assert result.ok, result.error
    log = read_response_log(tmp_path / "responses.jsonl")
    # t0 = 100: [100, 2100) holds a and b, closed by c at 2500
    assert [r.application_time for r in log.responses] == [2500, 2500]
    assert Counter(m for r in log.responses for m in r.bindings) == Counter(
        [mapping(who=f"<{EX}a>", room=f"<{EX}r1>"), mapping(who=f"<{EX}b>", room=f"<{EX}r2>")])


def test_rsprs_literals_and_aggregates_come_back_as_n_triples(tmp_path: Path) -> None:
    needs_rsprs()
    query = """SELECT ?o (COUNT(?s) AS ?n)
FROM NAMED WINDOW <urn:w> ON STREAM <http://s> [RANGE 1000 STEP 1000]
WHERE {
WINDOW <urn:w> { ?s <http://ex.org/says> ?o }
} GROUP BY ?o"""
    said = '"a \\"quoted\\", {braced} line\\nnext"'
    stream = [StreamElement(f"<{EX}x>", f"<{EX}says>", said, 100), StreamElement(f"<{EX}y>", f"<{EX}says>", said, 200),
              StreamElement(f"<{EX}z>", f"<{EX}says>", '"chat"@fr', 300), StreamElement(f"<{EX}z>", f"<{EX}q>", '"x"', 1500)]
    result = run_engine(rsprs_engine(), query, group_contemporaneous(stream), tmp_path, syntax="rspql")
    assert result.ok, result.error
    integer = "<http://www.w3.org/2001/XMLSchema#integer>"
    assert Counter(m for r in read_response_log(tmp_path / "responses.jsonl").responses for m in r.bindings) == Counter(
        [mapping(o=said, n=f'"2"^^{integer}'), mapping(o='"chat"@fr', n=f'"1"^^{integer}')])


def test_rsprs_refuses_a_query_it_finds_no_window_in(tmp_path: Path) -> None:
    needs_rsprs()
    config = EngineConfig("rsprs", PRESETS["rsprs"], name="rsprs")  # no dialect: the C-SPARQL text as is
    result = run_engine(config, ROOMS, group_contemporaneous(ROOMS_STREAM), tmp_path, syntax="csparql")
    assert result.status == "failed"
    assert "rsp-rs found no window in the query" in (result.error or "")


def test_a_panic_in_rsp_rs_is_one_fatal_error_line_with_its_own_message() -> None:
    import subprocess

    needs_rsprs()
    # STEP 0 parses in rsp-rs, and its window operator divides by the slide at the first element.
    # (The workbench's parser refuses STEP 0, so the stand never sends it: the adapter is driven here
    # by hand, with the protocol's lines.)
    query = "SELECT ?s\nFROM NAMED WINDOW <urn:w> ON STREAM <http://s> [RANGE 1000 STEP 0]\nWHERE {\nWINDOW <urn:w> { ?s ?p ?o }\n}"
    lines = [{"type": "register", "protocol": 1, "engine": {"type": "rsprs", "parameters": {}},
              "query": {"id": "q", "text": query}, "static": {"default": [], "named": {}}},
             {"type": "stimulus", "id": 0, "t": 1000, "elements": [[f"<{EX}a>", f"<{EX}p>", '"x"']]},
             {"type": "close"}]
    run = subprocess.run(rsprs.command(), input="".join(json.dumps(line) + "\n" for line in lines),
                         capture_output=True, text=True, timeout=30)
    answers = [json.loads(line) for line in run.stdout.splitlines()]
    assert [answer["type"] for answer in answers] == ["ready", "error"] and run.returncode == 1
    error = answers[1]
    assert error["fatal"] is True and "\n" not in error["message"]
    assert error["message"].startswith("rsp-rs panicked: attempt to divide by zero at ")
    assert "csparql_window.rs:263" in error["message"]


@pytest.mark.slow
def test_a_panic_fails_that_run_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    needs_rsprs()
    monkeypatch.setenv("RSPWB_RSPRS_PANIC_AT_STIMULUS", "2")
    out = tmp_path / "bundle"
    rows = run_and_report(SAMPLES / "rsprs.yaml", out, capsys, size="smoke")
    assert rows["rsprs"]["status"] == "failed"
    assert rows["rsprs-preset"]["status"] == "ok" and rows["rsprs-preset"]["verdict"] == "correct"
    run = json.loads(next(path for path in out.rglob("run.json") if path.parent.name.endswith("-rsprs-rooms")).read_text())
    error = run.get("error") or ""
    assert "rsp-rs panicked: forced by RSPWB_RSPRS_PANIC_AT_STIMULUS at stimulus 2" in error, rows["rsprs"]


def test_missing_build_is_one_line_saying_how(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(rsprs, "HERE", tmp_path)
    with pytest.raises(UserError) as missing:
        engine_command(rsprs_engine())
    message = str(missing.value)
    assert "\n" not in message and "./install.sh --engines rsprs" in message and "cargo build --release --locked" in message


def test_experiment_engine_rsprs_needs_no_parameters() -> None:
    experiment = loads_experiment("""
name: x
stream: {generator: sg1, params: {stations: 1, duration: 2s}}
queries: [{id: q, text: "SELECT ?s FROM NAMED WINDOW <urn:w> ON STREAM <urn:s> [RANGE PT1S STEP PT1S] WHERE { WINDOW <urn:w> { ?s ?p ?o } }"}]
engines:
  - {id: rsprs, type: rsprs}
  - {id: closing, type: rsprs, parameters: {close_stream: true}}
""")
    engine, closing = experiment.engines
    assert engine.preset == "rsprs" and engine.semantics == PRESETS["rsprs"] and engine.dialect == "rspjs"
    assert not engine.requires_confirmation
    assert closing.parameters == {"close_stream": True}


@pytest.mark.parametrize("field, value, message", [
    ("faults", "{late_purge: true}", "faults can only be injected into built-in engines, not rsprs ones"),
    ("parameters", "{close_stream: 10s}", "expected true or false"),
    ("parameters", "{log: stderr}", "log"),
])
def test_experiment_engine_rsprs_bad_fields(field: str, value: str, message: str) -> None:
    with pytest.raises(UserError) as error:
        loads_experiment(f"""
name: x
stream: {{generator: sg1, params: {{stations: 1, duration: 2s}}}}
queries: [{{id: q, text: "SELECT ?s FROM STREAM <urn:s> [RANGE 1s STEP 1s] WHERE {{ ?s ?p ?o }}"}}]
engines:
  - {{id: rsprs, type: rsprs, {field}: {value}}}
""", file="x.yaml")
    assert message in str(error.value) and f"engines[0].{field}" in str(error.value)


def test_the_rsprs_preset_is_what_the_readme_declares() -> None:
    """The crate's code as README.md cites it: closed-open windows aligned on the first element, with
    the leading ones, reported when a later element arrives whatever their content, Rstream, no empty
    notification, milliseconds."""
    semantics = PRESETS["rsprs"]
    assert semantics.border is BorderConvention.CLOSED_OPEN and semantics.tick is Tick.TIME
    assert semantics.report == ReportPolicy.of(Strategy.WINDOW_CLOSE, Strategy.NEXT_ELEMENT)
    assert semantics.r2s is R2S.RSTREAM and not semantics.empty_notification
    assert semantics.t0 is None and semantics.leading_partial and semantics.time_unit.value == "ms"


@pytest.mark.slow
def test_sample_rooms_experiment_judges_rsprs_correct_under_its_preset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    needs_rsprs()
    out = tmp_path / "bundle"
    rows = run_and_report(SAMPLES / "rsprs.yaml", out, capsys, size="smoke", codes=(0,))
    assert rows["rsprs"]["status"] == "ok" and rows["rsprs"]["verdict"] == "correct"
    assert rows["rsprs"]["responses"] == 2 and rows["rsprs"]["first_divergence"] is None
    assert {row["verdict"] for row in rows.values()} == {"correct"}


SG1_EXPERIMENT = """
name: rsprs-sg1
seed: 1430236906
stream:
  generator: sg1
  params: {{stations: 5, interval: 1s, duration: 10s, legacy_v110: {legacy}}}
queries:
  - {{id: q1, syntax: csparql, file: {q1}}}
variables: {{WSIZE: 5s, WSLIDE: 5s, TEMP: 50.0}}
engines:
  - {{id: rsprs, type: rsprs}}
kpis: {{collect: [latency, memory, correctness], sampling: 100ms}}
oracle: {{system: rsprs, match: strict, regroup: true, t0: all}}
stand: {{mode: absolute-time}}
"""


@pytest.mark.parametrize("legacy, verdict", [(True, "correct"), (False, "incorrect")])
@pytest.mark.slow
def test_rsprs_on_a_small_sg1_stream_is_judged_under_its_preset(legacy: bool, verdict: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """YABench Exp. 1's query on 5 SG1 stations, 10 s. YABench 1.1.0's SG1 (legacy_v110) starts at the
    smallest phase, 396 ms: rsp-rs anchors its windows there and is correct under its preset (14
    bindings at 5397, the first element after 5396). Today's SG1 starts at 0 ms, which rsp-rs takes for
    an unset t0: the window [0, 5000) is made at 0 and fed, then the element at 397 anchors a second
    grid, and both are reported — [0, 5000) at 5396 and [397, 5397) at 5645: one evaluation more than
    any t0 explains (README.md, item 2)."""
    needs_rsprs()
    q1 = ROOT / "sample_experiments" / "yabench" / "queries" / "q1.rq"
    experiment = tmp_path / "sg1.yaml"
    experiment.write_text(SG1_EXPERIMENT.format(q1=q1, legacy=str(legacy).lower()))
    out = tmp_path / "bundle"
    (row,) = run_and_report(experiment, out, capsys).values()
    assert row["status"] == "ok" and row["verdict"] == verdict, row
    if not legacy:
        divergence = row["first_divergence"]
        assert (divergence["t"], divergence["reason"]) == (5645, "the engine answered more times than expected")
        times = Counter(r.application_time for r in read_response_log(next(out.rglob("responses.jsonl"))).responses)
        assert times == Counter({5396: 14, 5645: 14})


@pytest.mark.slow  # the whole probe battery on the engine
def test_probe_characterises_rsprs(capsys: pytest.CaptureFixture[str]) -> None:
    """`rspwb probe rsprs` on the real engine: its declared preset, one response per binding, and the
    probes no parameter set explains — several windows closed by one element (only the latest is
    reported), a stream starting at 0 (the windows anchored on the next element), and COUNT = 0 at
    the second element (the empty window [R − ω, R) closing at the first element is evaluated)."""
    from rsp_workbench.cli.main import main

    needs_rsprs()
    assert main(["probe", "rsprs", "--json", "--quiet"]) == 1  # probes stay unexplained: the engine's defects
    payload = json.loads(capsys.readouterr().out)
    assert payload["preset"] == "rsprs" and payload["overrides"] == {} and payload["failed"] == []
    assert payload["parameters"]["report"] == "window-close & next-element"
    assert payload["parameters"]["grouping"] == "binding" and payload["parameters"]["border"] == "closed-open"
    # a hidden t0 on the first element (the battery's first-element probe tells it from the registration)
    assert payload["parameters"]["alignment"] == "first-element" and payload["parameters"]["t0"] is None
    assert sorted(probe["probe"] for probe in payload["unexplained"]) == ["count", "gap", "origin"]
