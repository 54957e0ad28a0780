"""External engines: the shipped example engine run by the stand as a real subprocess; confirmation."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from rsp_workbench.engine import EngineConfig, group_contemporaneous
from rsp_workbench.errors import UserError
from rsp_workbench.experiment.loader import loads_experiment
from rsp_workbench.responses.model import mapping
from rsp_workbench.responses.readers import read_response_log
from rsp_workbench.stand.confirm import commands_to_confirm, confirm_commands, describe_command
from rsp_workbench.stand.host import run_engine
from rsp_workbench.stand.options import StandOptions
from rsp_workbench.streams.model import StreamElement
from tests.paths import ROOT

EXAMPLE = ROOT / "rsp_workbench" / "engines" / "examples" / "tumbling_bgp.py"
EX = "http://example.org/"
QUERY = f"""PREFIX : <{EX}>
SELECT ?who ?room
FROM NAMED WINDOW :w ON <{EX}s> [RANGE PT2S STEP PT2S]
WHERE {{ WINDOW :w {{ ?who :detectedAt ?room }} }}"""


def external(**parameters: object) -> EngineConfig:
    return EngineConfig("external", parameters={"command": [sys.executable, str(EXAMPLE)], **parameters},
                        name="example")


def detections(times: list[int]) -> list[StreamElement]:
    return [StreamElement(f"<{EX}p{i}>", f"<{EX}detectedAt>", f"<{EX}r{i % 2}>", t) for i, t in enumerate(times)]


def test_example_engine_runs_through_the_stand(tmp_path: Path) -> None:
    stimuli = group_contemporaneous(detections([0, 500, 1500, 2500, 4200]))
    result = run_engine(external(), QUERY, stimuli, tmp_path, options=StandOptions(end=6000), query_id="q")
    assert result.ok, result.error
    assert result.stimuli_done == 5 and result.exit_code == 0
    log = read_response_log(tmp_path / "responses.jsonl")
    got = [(r.application_time, r.operation, Counter(r.bindings)) for r in log.responses]
    # tumbling [0,2000) [2000,4000) [4000,6000), reported at close, Rstream
    assert got == [
        (2000, "=", Counter([mapping(who=f"<{EX}p0>", room=f"<{EX}r0>"), mapping(who=f"<{EX}p1>", room=f"<{EX}r1>"),
                             mapping(who=f"<{EX}p2>", room=f"<{EX}r0>")])),
        (4000, "=", Counter([mapping(who=f"<{EX}p3>", room=f"<{EX}r1>")])),
        (6000, "=", Counter([mapping(who=f"<{EX}p4>", room=f"<{EX}r0>")])),
    ]
    trace = (tmp_path / "trace.jsonl").read_text().splitlines()
    assert len(trace) == 5  # one Heaven trace record per stimulus


def test_example_engine_rejects_a_sliding_window_with_a_fatal_error(tmp_path: Path) -> None:
    query = QUERY.replace("STEP PT2S", "STEP PT1S")
    result = run_engine(external(), query, group_contemporaneous(detections([0])), tmp_path)
    assert result.status == "failed"
    assert "tumbling windows only" in (result.error or "")


def test_example_engine_reports_empty_windows_on_request(tmp_path: Path) -> None:
    stimuli = group_contemporaneous(detections([0, 4500]))
    result = run_engine(external(report_empty=True), QUERY, stimuli, tmp_path)
    assert result.ok, result.error
    log = read_response_log(tmp_path / "responses.jsonl")
    assert [(r.application_time, len(r.bindings)) for r in log.responses] == [(2000, 1), (4000, 0)]


# --- confirmation ---------------------------------------------------------------------------

EXPERIMENT = """\
name: ext
stream:
  generator: sg1
  params: {stations: 2, interval: 1s, duration: 5s}
queries:
  - id: q1
    text: SELECT * WHERE { ?s ?p ?o }
engines:
  - id: mine
    type: external
    parameters:
      command: [python3, my engine.py, --fast]
      env: {JAVA_OPTS: -Xmx1g}
"""


def test_describe_command_shows_program_directory_and_environment(tmp_path: Path) -> None:
    experiment = loads_experiment(EXPERIMENT, base_dir=tmp_path)
    text = describe_command(experiment.engines[0])
    assert "engine 'mine' (external)" in text
    assert "command: python3 'my engine.py' --fast" in text
    assert "JAVA_OPTS=-Xmx1g" in text
    [resolved] = commands_to_confirm(experiment)
    assert f"in directory: {tmp_path}" in resolved


def test_confirm_commands(tmp_path: Path) -> None:
    experiment = loads_experiment(EXPERIMENT, base_dir=tmp_path)
    asked: list[str] = []
    confirm_commands(experiment, assume_yes=False, ask=lambda text: asked.append(text) or True)
    assert len(asked) == 1 and "my engine.py" in asked[0]
    with pytest.raises(UserError, match="must be confirmed.*--yes"):
        confirm_commands(experiment, assume_yes=False, ask=lambda text: False)
    with pytest.raises(UserError, match="--yes"):
        confirm_commands(experiment, assume_yes=False, ask=None)

    def no_tty(text: str) -> bool:
        raise EOFError

    with pytest.raises(UserError):
        confirm_commands(experiment, assume_yes=False, ask=no_tty)
    confirm_commands(experiment, assume_yes=True, ask=None)  # --yes: nothing asked
    builtin = loads_experiment(EXPERIMENT.replace("type: external", "type: secret").split("    parameters:")[0],
                               base_dir=tmp_path)
    confirm_commands(builtin, assume_yes=False, ask=None)  # nothing external: nothing to confirm


def test_external_engine_gets_its_directory_and_environment(tmp_path: Path) -> None:
    """`cwd` and `env` of an external engine reach the process (then it crashes on purpose)."""
    script = "import os, sys; sys.stderr.write(os.getcwd() + '|' + os.environ['RSPWB_TEST'] + '\\n'); sys.exit(3)"
    workdir = tmp_path / "engine-home"
    workdir.mkdir()
    config = EngineConfig(
        "external",
        parameters={"command": [sys.executable, "-c", script], "cwd": str(workdir), "env": {"RSPWB_TEST": "yes"}},
    )
    result = run_engine(config, QUERY, group_contemporaneous(detections([0])), tmp_path / "run")
    assert result.status == "failed"
    assert f"{workdir}|yes" in (tmp_path / "run" / "stderr.log").read_text()
