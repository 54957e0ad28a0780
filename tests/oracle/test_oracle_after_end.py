"""Every relation an engine emitted is judged, also after the oracle's end (docs/oracle.md,
"Every relation is judged") — hand-checked on a two-element stream.

AVG over 4 s tumbling windows, closed-open, t0 = 0; readings 90 at 1 s and 80 at 5 s. The
run's end is the last element plus the window: 9 s. Windows [0, 4) and [4, 8) hold one
reading each; [8, 12) and later are empty.
"""

from __future__ import annotations

from typing import Any

import pytest

from rsp_workbench.oracle.judge import JudgeOptions, RecordedRun, judge
from rsp_workbench.oracle.run import resolve_semantics
from rsp_workbench.query.parser import parse_query
from rsp_workbench.responses.model import EngineResponse, ResponseLog, mapping
from rsp_workbench.streams.model import StreamElement

S = "http://ex.org/S"
QUERY = parse_query(f"REGISTER QUERY q AS SELECT (AVG(?v) AS ?avg) FROM STREAM <{S}> [RANGE 4s STEP 4s] "
                    "WHERE { ?s <http://ex.org/v> ?v }")
DOUBLE = "http://www.w3.org/2001/XMLSchema#double"
INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
STREAM = [StreamElement(f"<http://ex.org/{name}>", "<http://ex.org/v>", f'"{v}"^^<{DOUBLE}>', t)
          for name, v, t in (("a", 90, 1000), ("b", 80, 5000))]
END = 9000
# SPARQLstream (CSRBench Table 1): window-close & non-empty, tuple tick, no empty relation
SPARQLSTREAM = resolve_semantics("sparqlstream", {})
# window-close on a time tick, every window reported (an empty window too)
EVERY_CLOSE = resolve_semantics("yabench-window-close", {"border": "closed-open"})


def avg(t: int, value: str) -> EngineResponse:
    return EngineResponse(t, None, "=", (mapping(avg=value),))


def judged(semantics: Any, *responses: EngineResponse, match: str = "strict", end_fixed: bool = False) -> dict[str, Any]:
    run = RecordedRun(query=QUERY, streams={S: STREAM}, log=ResponseLog(("avg",), responses), semantics=semantics,
                      end=END, end_fixed=end_fixed)
    return judge(run, JudgeOptions(t0=0, match=match, quality=False)).payload


RIGHT = (avg(4000, f'"90"^^<{DOUBLE}>'), avg(8000, f'"80"^^<{DOUBLE}>'))


@pytest.mark.parametrize("match", ["strict", "csrbench"])
def test_a_relation_after_the_end_where_nothing_is_due_is_extra(match: str) -> None:
    # non-empty content: the empty window [8, 12) is not evaluated, so nothing is due at 12 s
    payload = judged(SPARQLSTREAM, *RIGHT, avg(12000, '"null"'), match=match)
    assert payload["verdict"] == "incorrect"
    assert payload["compared_relations"] == 3 and payload["relations_after_end"] == 1 and payload["end"] == 12000
    d = payload["first_divergence"]
    assert (d["index"], d["matched_before"], d["actual_time"]) == (2, 2, 12000)
    assert d["reason"] == "the engine answered more times than expected"
    assert d["extra"] == [{"binding": {"avg": '"null"'}}] and d["missing"] == []


def test_without_it_the_same_answer_is_correct() -> None:
    payload = judged(SPARQLSTREAM, *RIGHT)
    assert payload["verdict"] == "correct" and payload["relations_after_end"] == 0 and payload["end"] == END


def test_an_empty_window_after_the_end_is_compared_with_what_is_due_there() -> None:
    # every window close is reported: [8, 12) closes at 12 s, empty, and AVG over no value is 0 (SPARQL 1.1)
    payload = judged(EVERY_CLOSE, *RIGHT, avg(12000, '"null"'))
    d = payload["first_divergence"]
    assert (d["index"], d["expected_time"], d["actual_time"], d["reason"]) == (2, 12000, 12000, "different bindings")
    assert d["missing"] == [{"binding": {"avg": f'"0"^^<{INTEGER}>'}}]
    assert d["extra"] == [{"binding": {"avg": '"null"'}}]
    assert judged(EVERY_CLOSE, *RIGHT, avg(12000, f'"0"^^<{INTEGER}>'))["verdict"] == "correct"


def test_an_end_fixed_by_the_user_cuts_the_comparison_and_says_so() -> None:
    payload = judged(SPARQLSTREAM, *RIGHT, avg(12000, '"null"'), end_fixed=True)
    assert payload["verdict"] == "correct" and payload["end"] == END
    assert payload["relations_after_end"] == payload["relations_not_judged"] == 1
