"""The wrapping kits: an engine written as register/push/close runs on the stand.

Each kit engine here prints chatter of its own (a stand-alone engine's logging), which
the kit must keep off the protocol stream, and answers one binding per element.
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from rsp_workbench.engine import EngineConfig, group_contemporaneous
from rsp_workbench.responses.model import mapping
from rsp_workbench.responses.readers import read_response_log
from rsp_workbench.stand.host import run_engine
from rsp_workbench.stand.options import StandOptions
from rsp_workbench.streams.model import StreamElement
from tests.paths import ROOT

EX = "http://example.org/"
QUERY = f"SELECT ?s FROM NAMED WINDOW <{EX}w> ON <{EX}s> [RANGE PT1S STEP PT1S] WHERE {{ WINDOW <{EX}w> {{ ?s ?p ?o }} }}"
STREAM = [StreamElement(f"<{EX}a>", f"<{EX}p>", '"x\\"y"@en', 0), StreamElement(f"<{EX}b>", f"<{EX}p>", f"<{EX}o>", 1000)]

PYTHON_ENGINE = '''
import sys
sys.path.insert(0, {root!r})
from rsp_workbench.engines.kit.python import EngineError, WrappedEngine, serve

class Echo(WrappedEngine):
    def register(self, query, engine, static):
        if "SELECT" not in query["text"]:
            raise EngineError("not a SELECT query")
        print("registered", query["id"])  # chatter: must reach stderr, not the protocol
        return {{"engine": "echo"}}

    def push(self, t, elements, streams):
        print("push", t)
        for s, p, o in elements:
            self.emit([{{"s": s, "o": o}}], t=t)

    def close(self):
        self.emit([], t=None)

sys.exit(serve(Echo()))
'''

NODE_ENGINE = '''
const {{ serve, EngineError, parseTerm, termToNT }} = require({kit!r});
const factory = {{
  namedNode: (value) => ({{ termType: 'NamedNode', value }}),
  blankNode: (value) => ({{ termType: 'BlankNode', value }}),
  literal: (value, tag) => (typeof tag === 'string' ? {{ termType: 'Literal', value, language: tag }}
    : {{ termType: 'Literal', value, language: '', datatype: tag }}),
}};
serve({{
  register(message) {{
    if (!message.query.text.includes('SELECT')) throw new EngineError('not a SELECT query');
    console.log('registered', message.query.id);  // chatter: must reach stderr, not the protocol
    return {{ engine: 'echo' }};
  }},
  async push(stimulus, emit) {{
    console.log('push', stimulus.t);
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (const [s, , o] of stimulus.elements) {{
      emit([{{ s: termToNT(parseTerm(s, factory)), o: termToNT(parseTerm(o, factory)) }}], {{ t: stimulus.t }});
    }}
  }},
  close(emit) {{ emit([], {{ t: null }}); }},
}});
'''


def kit_engine(tmp_path: Path, language: str) -> EngineConfig:
    if language == "node":
        node = shutil.which("node") or shutil.which("nodejs")
        if node is None:
            if os.environ.get("CI"):
                pytest.fail("CI ran ./install.sh but Node.js is not installed")
            pytest.skip("Node.js is not installed (./install.sh installs it)")
        script = tmp_path / "echo.js"
        script.write_text(NODE_ENGINE.format(kit=str(ROOT / "rsp_workbench" / "engines" / "kit" / "node" / "rspwb-kit.js")))
        return EngineConfig("external", parameters={"command": [node, str(script)]}, name="echo")
    script = tmp_path / "echo.py"
    script.write_text(textwrap.dedent(PYTHON_ENGINE.format(root=str(ROOT))))
    return EngineConfig("external", parameters={"command": [sys.executable, str(script)]}, name="echo")


@pytest.mark.parametrize("language", ["python", "node"])
def test_kit_engine_runs_on_the_stand_and_keeps_chatter_off_the_protocol(tmp_path: Path, language: str) -> None:
    config = kit_engine(tmp_path, language)
    run = tmp_path / "run"
    result = run_engine(config, QUERY, group_contemporaneous(STREAM), run, options=StandOptions(end=2000), query_id="q")
    assert result.ok, result.error
    assert result.stimuli_done == 2 and result.exit_code == 0
    log = read_response_log(run / "responses.jsonl")
    assert [(r.application_time, r.bindings) for r in log.responses] == [
        (0, (mapping(s=f"<{EX}a>", o='"x\\"y"@en'),)), (1000, (mapping(s=f"<{EX}b>", o=f"<{EX}o>"),)), (None, ()),
    ]
    assert "registered q" in (run / "stderr.log").read_text()


@pytest.mark.parametrize("language", ["python", "node"])
def test_kit_engine_refusing_the_query_fails_with_its_reason(tmp_path: Path, language: str) -> None:
    config = kit_engine(tmp_path, language)
    result = run_engine(config, "ASK { ?s ?p ?o }", group_contemporaneous(STREAM), tmp_path / "run")
    assert result.status == "failed"
    assert "not a SELECT query" in (result.error or "")
