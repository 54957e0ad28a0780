"""`rspwb oracle` and `rspwb check` as Python functions (`rsp_workbench.oracle.commands`): the same
answers as the CLI from plain values, on the rooms stream (CSRBench Fig. 1 layout)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsp_workbench.core.semantics import preset
from rsp_workbench.errors import UserError
from rsp_workbench.oracle.commands import check_answer, oracle_answers
from tests.oracle.cli_support import CORRECT_ANSWERS, QUERY, relation, run_json


def answer_file(folder: Path, relations: list[dict[str, object]]) -> Path:
    path = folder / "answer.json"
    path.write_text(json.dumps({"relations": relations}))
    return path


def test_expected_answers_from_python_values(rooms: Path) -> None:
    """C-SPARQL, t0 = 0: windows [0, 10 s), [10, 20 s), … report at their close; m1 and m2 meet
    in r1 (at 1 s and 3 s) and in r2 (at 11 s and 13 s)."""
    result = oracle_answers(rooms / "stream", rooms / "q.rq", stream_format="csrbench-dir", system="csparql", t0=0)
    assert result.setup.vectors == ((0,),) and result.method.path == "fast"
    rows = list(result.window_rows((0,)))
    assert [(r["start"], r["end"], r["expected"]) for r in rows[:3]] == [(0, 10_000, 1), (10_000, 20_000, 1),
                                                                         (20_000, 30_000, 0)]
    answer = result.answers[(0,)]
    assert [sorted(e.bindings) for e in answer.emissions][:2] == [
        [frozenset({("room", "<http://ex.org/r1>")})], [frozenset({("room", "<http://ex.org/r2>")})]]


def test_the_function_and_the_command_give_the_same_windows(capsys: pytest.CaptureFixture[str], rooms: Path) -> None:
    printed = run_json(capsys, ["oracle", "--stream", str(rooms / "stream"), "--stream-format", "csrbench-dir",
                                "--query", str(rooms / "q.rq"), "--system", "cqels", "--t0", "0"])
    result = oracle_answers(str(rooms / "stream"), QUERY, stream_format="csrbench-dir", system="cqels", t0="0s")
    assert list(result.window_rows((0,))) == printed["windows"]
    assert (result.setup.t_s, result.setup.end) == (printed["t_s"], printed["end"])


def test_semantics_given_as_a_value_with_overrides(rooms: Path) -> None:
    """C-SPARQL notifies the empty relation of [20 s, 30 s); without empty notification only
    the windows with r1 and r2 are reported."""
    def emitted(**semantics: object) -> list[int]:
        result = oracle_answers({None: rooms / "stream"}, rooms / "q.rq", stream_format="csrbench-dir", t0=0,
                                **semantics)
        return [r["time"] for r in result.window_rows((0,)) if r["emitted"]]

    assert emitted(system=preset("csparql")) == [10_000, 20_000, 30_000]
    assert emitted(system=preset("csparql"), overrides={"empty_notification": False}) == [10_000, 20_000]


def test_check_answer_judges_correct_and_incorrect(rooms: Path) -> None:
    correct = check_answer(rooms / "stream", rooms / "q.rq", answer_file(rooms, CORRECT_ANSWERS["cqels"]),
                           stream_format="csrbench-dir", system="cqels")
    assert correct.correct and correct.verdict == "correct" and 0 in correct.payload["t0"]
    wrong = check_answer(rooms / "stream", rooms / "q.rq",
                         answer_file(rooms, [relation(10_000, ["r1"]), relation(20_000, ["r3"])]),
                         stream_format="csrbench-dir", system="sparqlstream")
    assert not wrong.correct
    divergence = wrong.payload["first_divergence"]
    assert (divergence["t0"], divergence["index"]) == (0, 1)
    assert divergence["extra"] == [{"binding": {"room": "<http://ex.org/r3>"}}]


def test_errors_name_the_parameter(rooms: Path) -> None:
    with pytest.raises(UserError) as info:
        oracle_answers(rooms / "stream", rooms / "q.rq", stream_format="csrbench-dir", system="csparql", t0="soon")
    assert info.value.field == "--t0"
    with pytest.raises(UserError) as info:
        oracle_answers(rooms / "missing", rooms / "q.rq", system="csparql")
    assert info.value.field == "--stream" and info.value.file == str(rooms / "missing")


def test_without_a_spark_job_auto_stays_in_python_and_spark_is_refused(rooms: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from rsp_workbench.oracle import paths

    monkeypatch.setattr(paths, "SPARK_THRESHOLD", 3)  # the rooms stream counts as big
    result = oracle_answers(rooms / "stream", rooms / "q.rq", stream_format="csrbench-dir", system="csparql", t0=0)
    assert result.method.engine == "arrow" and "no Spark job" in (result.method.reason or "")
    with pytest.raises(UserError) as info:
        oracle_answers(rooms / "stream", rooms / "q.rq", stream_format="csrbench-dir", system="csparql", t0=0,
                       method="spark")
    assert info.value.field == "--method"


def test_a_query_file_whose_name_has_a_brace_is_read_as_a_file(rooms: Path) -> None:
    odd = rooms / "q{1}.rq"
    odd.write_text(QUERY)
    by_name = oracle_answers(rooms / "stream", str(odd), stream_format="csrbench-dir", system="csparql", t0=0)
    by_text = oracle_answers(rooms / "stream", QUERY, stream_format="csrbench-dir", system="csparql", t0=0)
    assert list(by_name.window_rows((0,))) == list(by_text.window_rows((0,)))
