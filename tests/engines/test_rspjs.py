"""The RSP-JS plug-in (engine ``type: rspjs``): the real engine on the stand, its install checks.

Tests that run RSP-JS need Node.js and ``npm ci`` in rsp_workbench/engines/rspjs (``./install.sh``); they
skip with the reason when either is missing, except on CI, where install.sh has run and
a skip would hide a broken install.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

import rsp_workbench.engines.rspjs as rspjs
from rsp_workbench.core.semantics import PRESETS
from rsp_workbench.engine import EngineConfig, group_contemporaneous
from rsp_workbench.errors import UserError
from rsp_workbench.experiment.loader import loads_experiment
from rsp_workbench.responses.model import mapping
from rsp_workbench.responses.readers import read_response_log
from rsp_workbench.stand.host import engine_command, run_engine
from rsp_workbench.stand.options import StandOptions
from tests.engines.support import EX, ROOMS, ROOMS_STREAM, detections
from tests.paths import ROOT

def _missing() -> str | None:
    if shutil.which("node") is None and shutil.which("nodejs") is None:
        return "Node.js is not installed (./install.sh installs it)"
    if not (rspjs.HERE / "node_modules" / "rsp-js").is_dir():
        return "rsp_workbench/engines/rspjs/node_modules is missing (npm ci --prefix rsp_workbench/engines/rspjs)"
    return None


def needs_rspjs() -> None:
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI ran ./install.sh but {reason}")
        pytest.skip(reason)


def rspjs_engine(**parameters: object) -> EngineConfig:
    return EngineConfig("rspjs", PRESETS["rspjs"], parameters=dict(parameters), name="rspjs", dialect="rspjs")


@pytest.mark.slow
def test_rspjs_reports_a_window_when_the_next_instant_arrives(tmp_path: Path) -> None:
    needs_rspjs()
    result = run_engine(rspjs_engine(), ROOMS, group_contemporaneous(ROOMS_STREAM), tmp_path,
                        syntax="csparql", options=StandOptions(end=30000), query_id="rooms")
    assert result.ok, result.error
    log = read_response_log(tmp_path / "responses.jsonl")
    # [0,10000) holds both detections in r1 and is reported by the element at 11000;
    # [10000,20000) by the one at 25000; [20000,30000) never: no element follows it
    # (RSP-JS has no notion of time passing without data, so `advance` closes nothing).
    assert [(r.application_time, r.operation, Counter(r.bindings)) for r in log.responses] == [
        (11000, "=", Counter([mapping(room=f"<{EX}r1>")])),
        (25000, "=", Counter([mapping(room=f"<{EX}r2>")])),
    ]
    assert result.exit_code == 0 and result.stimuli_done == 5


@pytest.mark.slow
def test_rspjs_sends_one_response_per_binding_at_one_time(tmp_path: Path) -> None:
    needs_rspjs()
    query = """SELECT ?who ?room
FROM NAMED WINDOW <urn:w> ON STREAM <http://s> [RANGE 2000 STEP 2000]
WHERE {
WINDOW <urn:w> { ?who <http://ex.org/detectedAt> ?room }
}"""
    stream = detections(("a", "r1", 0), ("b", "r2", 500), ("c", "r1", 2500))
    result = run_engine(rspjs_engine(), query, group_contemporaneous(stream), tmp_path, syntax="rspql")
    assert result.ok, result.error
    log = read_response_log(tmp_path / "responses.jsonl")
    assert [r.application_time for r in log.responses] == [2500, 2500]
    assert Counter(m for r in log.responses for m in r.bindings) == Counter(
        [mapping(who=f"<{EX}a>", room=f"<{EX}r1>"), mapping(who=f"<{EX}b>", room=f"<{EX}r2>")])


def test_rspjs_refuses_a_query_it_finds_no_window_in(tmp_path: Path) -> None:
    needs_rspjs()
    config = EngineConfig("rspjs", PRESETS["rspjs"], name="rspjs")  # no dialect: the C-SPARQL text as is
    result = run_engine(config, ROOMS, group_contemporaneous(ROOMS_STREAM), tmp_path, syntax="csparql")
    assert result.status == "failed"
    assert "RSP-JS found no window in the query" in (result.error or "")


def test_missing_install_is_one_line_saying_how(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(rspjs, "HERE", tmp_path)
    with pytest.raises(UserError) as missing_packages:
        engine_command(rspjs_engine())
    message = str(missing_packages.value)
    assert "\n" not in message and "./install.sh" in message and "npm ci --prefix" in message
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(UserError) as missing_node:
        engine_command(rspjs_engine())
    assert "needs Node.js" in str(missing_node.value) and "./install.sh" in str(missing_node.value)


def test_experiment_engine_rspjs_needs_no_parameters() -> None:
    experiment = loads_experiment("""
name: x
stream: {generator: sg1, params: {stations: 1, duration: 2s}}
queries: [{id: q, text: "SELECT ?s FROM NAMED WINDOW :w ON STREAM :s [RANGE PT1S STEP PT1S] WHERE { WINDOW :w { ?s ?p ?o } }"}]
engines:
  - {id: rspjs, type: rspjs}
  - {id: secret, type: secret, dialect: cqels}
""".replace(":w", "<urn:w>").replace(":s ", "<urn:s> "))
    engine, secret = experiment.engines
    assert engine.preset == "rspjs" and engine.semantics == PRESETS["rspjs"] and engine.dialect == "rspjs"
    assert not engine.requires_confirmation
    assert secret.dialect == "cqels" and secret.preset is None


@pytest.mark.parametrize("field, value, message", [
    ("faults", "{late_purge: true}", "faults can only be injected into built-in engines, not rspjs ones"),
    ("dialect", "sparqlx", "unknown query dialect 'sparqlx'"),
])
def test_experiment_engine_rspjs_bad_fields(field: str, value: str, message: str) -> None:
    with pytest.raises(UserError) as error:
        loads_experiment(f"""
name: x
stream: {{generator: sg1, params: {{stations: 1, duration: 2s}}}}
queries: [{{id: q, text: "SELECT ?s FROM STREAM <urn:s> [RANGE 1s STEP 1s] WHERE {{ ?s ?p ?o }}"}}]
engines:
  - {{id: rspjs, type: rspjs, {field}: {value}}}
""", file="x.yaml")
    assert message in str(error.value) and f"engines[0].{field}" in str(error.value)


@pytest.mark.slow
def test_sample_rooms_experiment_judges_rspjs_correct_under_its_preset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    needs_rspjs()
    import json

    from rsp_workbench.cli.main import main

    sample = ROOT / "sample_experiments" / "real-engines" / "rooms.yaml"
    out = tmp_path / "bundle"
    assert main(["run", str(sample), "--size", "smoke", "--out", str(out), "--yes", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) == 0
    rows = {row["engine"]: row for row in json.loads(capsys.readouterr().out)["runs"]}
    assert rows["rspjs"]["status"] == "ok" and rows["rspjs"]["verdict"] == "correct"
    assert rows["rspjs"]["responses"] == 2 and rows["rspjs"]["first_divergence"] is None
    assert {row["verdict"] for row in rows.values()} == {"correct"}


@pytest.mark.slow
def test_probe_characterises_rspjs(capsys: pytest.CaptureFixture[str]) -> None:
    """`rspwb probe rspjs` on the real engine: its declared preset, one response per binding, and the one
    probe no parameter set explains — several windows closed by one element, only the latest reported."""
    import json

    from rsp_workbench.cli.main import main

    needs_rspjs()
    assert main(["probe", "rspjs", "--json", "--quiet"]) == 1  # a probe stays unexplained: the engine's defect
    payload = json.loads(capsys.readouterr().out)
    assert payload["preset"] == "rspjs" and payload["overrides"] == {} and payload["failed"] == []
    assert payload["parameters"]["report"] == "window-close & next-element & non-empty"
    assert payload["parameters"]["grouping"] == "binding" and payload["parameters"]["border"] == "closed-open"
    assert [probe["probe"] for probe in payload["unexplained"]] == ["gap"]


@pytest.mark.slow
def test_rspjs_alone_is_judged_under_its_declared_grouping(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`{id: rspjs, type: rspjs}` with nothing else: the preset declares one response per binding, so the
    judge regroups; what is left is RSP-JS's drifting window start (README item 2): [0, 5 s) and
    [5 s, 10 s) right, nothing from the third window on (sample_experiments/real-engines/README.md)."""
    import json

    from rsp_workbench.cli.main import main

    needs_rspjs()
    query = ROOT / "sample_experiments" / "yabench" / "queries" / "q1.rq"
    experiment = tmp_path / "rspjs.yaml"
    experiment.write_text(f"""name: rspjs-alone
seed: 1430236906
variables: {{WSIZE: 5s, WSLIDE: 5s, TEMP: 50.0}}
stream: {{generator: sg1, params: {{stations: 5, interval: 1s, duration: 30s}}}}
queries: [{{id: q1, syntax: csparql, file: {query}}}]
engines: [{{id: rspjs, type: rspjs}}]
oracle: {{system: engine, t0: 0s}}
stand: {{mode: absolute-time}}
""", encoding="utf-8")
    out = tmp_path / "bundle"
    assert main(["run", str(experiment), "--out", str(out), "--yes", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["runs"]
    assert (row["verdict"], row["precision"], row["recall"]) == ("incorrect", 1.0, 0.4)
    divergence = row["first_divergence"]
    assert divergence["index"] == 2 and 15000 < divergence["t"] < 16000 and divergence["actual_time"] is None
