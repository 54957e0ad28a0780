"""The one judging entry point (`rsp_workbench.oracle.judge.judge`): recorded responses + stream +
semantics → verdict, quality, recall — hand-checked on a four-element stream."""

from __future__ import annotations

from typing import Any

from rsp_workbench.oracle.judge import JudgeOptions, RecordedRun, judge, python_expected
from rsp_workbench.oracle.run import OracleMethod, resolve_semantics
from rsp_workbench.query.parser import parse_query
from rsp_workbench.responses.model import EngineResponse, ResponseLog, mapping
from rsp_workbench.streams.model import StreamElement

S = "http://ex.org/S"
QUERY = parse_query(f"REGISTER QUERY q AS SELECT ?s FROM STREAM <{S}> [RANGE 2s STEP 2s] "
                    "WHERE { ?s <http://ex.org/p> ?o }")
STREAM = [StreamElement(f"<http://ex.org/{name}>", "<http://ex.org/p>", '"1"', t)
          for name, t in (("a", 500), ("b", 1500), ("c", 2500), ("d", 4500))]
CSPARQL = resolve_semantics("csparql", {})  # closed-open, window-close & non-empty, Rstream


def response(t: int, *names: str) -> EngineResponse:
    return EngineResponse(t, None, "=", tuple(mapping(s=f"<http://ex.org/{n}>") for n in names))


def recorded(*responses: EngineResponse, **extra: Any) -> RecordedRun:
    log = ResponseLog(("s",), tuple(responses))
    return RecordedRun(query=QUERY, streams={S: STREAM}, log=log, semantics=CSPARQL, end=6000, **extra)


def test_a_right_answer_is_correct_with_full_quality() -> None:
    # [0, 2 s) holds a and b, [2, 4 s) holds c, [4, 6 s) holds d: reported at each close
    judgement = judge(recorded(response(2000, "a", "b"), response(4000, "c"), response(6000, "d")),
                      JudgeOptions(t0=0))
    assert judgement.verdict == "correct" and judgement.payload["t0"] == [0]
    assert (judgement.precision, judgement.recall) == (1.0, 1.0)
    assert [(w["start"], w["end"], w["expected_size"]) for w in judgement.payload["windows"]] == [
        (0, 2000, 2), (2000, 4000, 1), (4000, 6000, 1)]
    assert judgement.payload["method"] == "fast" and judgement.payload["method_engine"] == "python"
    assert judgement.oracle_lines().count("\n") == 3


def test_a_missing_binding_is_incorrect_at_its_evaluation() -> None:
    judgement = judge(recorded(response(2000, "a"), response(4000, "c"), response(6000, "d")), JudgeOptions(t0=0))
    assert judgement.verdict == "incorrect"
    divergence = judgement.payload["first_divergence"]
    assert divergence["expected_time"] == 2000 and divergence["missing"] == [{"binding": {"s": "<http://ex.org/b>"}}]
    assert judgement.recall == round((0.5 + 1 + 1) / 3, 6)


def test_an_output_for_another_query_is_incorrect_with_the_reason() -> None:
    log = ResponseLog(("x",), (EngineResponse(2000, None, "=", (mapping(x="<http://ex.org/a>"),)),))
    judgement = judge(RecordedRun(query=QUERY, streams={S: STREAM}, log=log, semantics=CSPARQL, end=6000))
    assert judgement.verdict == "incorrect" and "different query" in judgement.payload["error"]
    assert judgement.quality is None


def test_the_caller_chooses_where_the_expected_answers_are_computed() -> None:
    calls = []

    def counted(*args: Any) -> Any:
        calls.append(args[3])
        answers, _ = python_expected(*args)
        return answers, OracleMethod("fast", "spark", "a test said so")

    run = recorded(response(2000, "a", "b"), response(4000, "c"), response(6000, "d"), streams_key=("test", 1))
    judgement = judge(run, JudgeOptions(t0=0, quality=False), counted)
    assert calls == [[(0,)]]
    assert "windows" not in judgement.payload and judgement.quality is None
    assert (judgement.payload["method_engine"], judgement.payload["method_reason"]) == ("spark", "a test said so")
    judge(run, JudgeOptions(t0=0, quality=False), counted)  # same streams key: the answers are reused
    assert len(calls) == 1


def test_eviction_engines_are_judged_by_recall() -> None:
    from rsp_workbench.engine import group_contemporaneous

    judgement = judge(recorded(response(2000, "a"), engine_type="eviction", stimuli=group_contemporaneous(STREAM)))
    assert judgement.verdict == "recall" and judgement.quality is None
