"""An engine answer with a malformed value is a wrong answer whose first divergence names it —
never a traceback, never a relation skipped (judged in process and through ``rspwb check``).

AVG over 4 s tumbling windows, t0 = 0, SPARQLstream's semantics; readings 90 at 1 s and 80 at
5 s: the right answer is 90 at 4 s and 80 at 8 s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rsp_workbench.oracle.judge import JudgeOptions, RecordedRun, judge
from rsp_workbench.oracle.run import resolve_semantics
from rsp_workbench.query.parser import parse_query
from rsp_workbench.responses.model import EngineResponse, ResponseLog, mapping
from rsp_workbench.streams.model import StreamElement
from tests.e2e.bad_inputs_support import rspwb

S = "http://ex.org/S"
TEXT = (f"REGISTER QUERY q AS SELECT (AVG(?v) AS ?avg) FROM STREAM <{S}> [RANGE 4s STEP 4s] "
        "WHERE { ?s <http://ex.org/v> ?v }")
QUERY = parse_query(TEXT)
DOUBLE = "http://www.w3.org/2001/XMLSchema#double"
STREAM = [StreamElement(f"<http://ex.org/{name}>", "<http://ex.org/v>", f'"{v}"^^<{DOUBLE}>', t)
          for name, v, t in (("a", 90, 1000), ("b", 80, 5000))]
SPARQLSTREAM = resolve_semantics("sparqlstream", {})


def response(t: int | None, **binding: str) -> EngineResponse:
    return EngineResponse(t, None, "=", (mapping(**binding),))


def judged(*responses: EngineResponse, match: str = "strict") -> dict[str, Any]:
    run = RecordedRun(query=QUERY, streams={S: STREAM}, log=ResponseLog(("avg",), responses),
                      semantics=SPARQLSTREAM, end=9000)
    return judge(run, JudgeOptions(t0=0, match=match, quality=False)).payload


NINETY, EIGHTY = f'"90"^^<{DOUBLE}>', f'"80"^^<{DOUBLE}>'


@pytest.mark.parametrize("match", ["strict", "csrbench"])
def test_a_null_average_without_datatype_is_a_wrong_value(match: str) -> None:
    payload = judged(response(4000, avg='"null"'), response(8000, avg=EIGHTY), match=match)
    d = payload["first_divergence"]
    assert payload["verdict"] == "incorrect" and d["index"] == 0 and d["reason"] == "different bindings"
    assert d["extra"] == [{"binding": {"avg": '"null"'}}]
    assert d["missing"] == [{"binding": {"avg": f'"90.0"^^<{DOUBLE}>'}}]  # the oracle's AVG, as rdflib writes it


@pytest.mark.parametrize("match", ["strict", "csrbench"])
def test_a_relation_without_timestamp_among_timestamped_ones_is_named(match: str) -> None:
    # the bindings are right: without the rule, strict matching ignored every time and found it correct
    payload = judged(response(4000, avg=NINETY), response(None, avg=EIGHTY), match=match)
    d = payload["first_divergence"]
    assert payload["verdict"] == "incorrect" and payload["compared_relations"] == 2
    assert (d["index"], d["actual_time"]) == (1, None)
    assert d["reason"] == "relation #1 has no timestamp (the engine's other relations have one)"
    assert d["extra"] == [{"binding": {"avg": EIGHTY}}]


@pytest.mark.parametrize("match", ["strict", "csrbench"])
def test_bindings_of_an_unknown_variable_are_named(match: str) -> None:
    payload = judged(response(4000, avg=NINETY), response(8000, avg=EIGHTY, sensor="<http://ex.org/s1>"), match=match)
    d = payload["first_divergence"]
    assert payload["verdict"] == "incorrect" and (d["index"], d["actual_time"]) == (1, 8000)
    assert d["reason"] == "relation #1 binds ?sensor, which the query does not project"
    assert d["extra"] == [{"binding": {"avg": EIGHTY, "sensor": "<http://ex.org/s1>"}}]


def _relation(t: int | None, binding: dict[str, Any]) -> dict[str, Any]:
    relation: dict[str, Any] = {"head": {"vars": list(binding)}, "results": {"bindings": [{"binding": binding}]}}
    if t is not None:
        relation["timestamp"] = t
    return relation


AVG_90 = {"avg": {"type": "literal", "datatype": DOUBLE, "value": "90.0"}}
AVG_80 = {"avg": {"type": "literal", "datatype": DOUBLE, "value": "80.0"}}


@pytest.mark.parametrize(("relations", "reason"), [
    ([_relation(4000, {"avg": {"type": "literal", "value": "null"}}), _relation(8000, AVG_80)], "different bindings"),
    ([_relation(4000, AVG_90), _relation(None, AVG_80)], "relation #1 has no timestamp"),
    ([_relation(4000, AVG_90), _relation(8000, {**AVG_80, "sensor": {"type": "uri", "value": "http://ex.org/s1"}})],
     "relation #1 binds ?sensor"),
])
@pytest.mark.parametrize("match", ["strict", "csrbench"])
def test_rspwb_check_judges_a_malformed_answer_as_wrong(tmp_path: Path, relations: list[dict[str, Any]], reason: str,
                                                          match: str) -> None:
    (tmp_path / "q.rq").write_text(TEXT)
    (tmp_path / "s.nq").write_text("".join(f'{e.subject} {e.predicate} {e.object} <urn:rspwb:t:{e.t}> .\n'
                                           for e in STREAM))
    (tmp_path / "answer.json").write_text(json.dumps({"relations": relations}))
    outcome = rspwb("check", "--stream", tmp_path / "s.nq", "--query", tmp_path / "q.rq", "--system", "sparqlstream",
                    "--t0", "0", "--engine-output", tmp_path / "answer.json", "--engine-output-format", "csrbench-json",
                    "--match", match, "--json")
    assert "Traceback" not in outcome.err and outcome.code == 1, outcome.err
    payload = json.loads(outcome.out)
    assert payload["verdict"] == "incorrect" and payload["compared_relations"] == 2
    assert payload["first_divergence"]["reason"].startswith(reason)
