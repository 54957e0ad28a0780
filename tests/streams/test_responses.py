"""Engine outputs: CSRBench answer JSON, YABench QR_ files, the workbench's JSON Lines log."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsp_workbench.errors import UserError
from rsp_workbench.responses.model import EngineResponse, ResponseLog, make_mapping, mapping, mapping_dict
from rsp_workbench.responses.readers import (
    detect_response_format,
    read_responses,
    write_response_log,
)
from rsp_workbench.streams.model import XSD
from rsp_workbench.streams.terms import iri_term, literal_term
from tests.paths import DATA as TEST_DATA

DATA = TEST_DATA / "responses"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path, fmt: str) -> str:
    with pytest.raises(UserError) as caught:
        read_responses(path, fmt)
    return str(caught.value)


# --- model --------------------------------------------------------------------------------


def test_mappings_are_hashable_values() -> None:
    a = mapping(sensor="<http://x/s1>", value='"1"')
    assert a == make_mapping({"?sensor": "<http://x/s1>", "value": '"1"', "unbound": None})
    assert Counter([a, a, mapping(sensor="<http://x/s2>")])[a] == 2
    assert mapping_dict(a) == {"sensor": "<http://x/s1>", "value": '"1"'}
    with pytest.raises(ValueError):
        EngineResponse(0, None, "*", ())


# --- CSRBench answer JSON ------------------------------------------------------------------


def test_csrbench_json_all_term_kinds() -> None:
    log = read_responses(DATA / "csrbench_answer.json", "csrbench-json")
    assert log.variables == ("sensor", "value")
    assert [(r.application_time, r.system_time, r.operation, len(r.bindings)) for r in log.responses] == [
        (20000, None, "=", 6),
        (30000, None, "=", 0),
    ]
    assert log.responses[0].bindings == (
        mapping(sensor="<http://ex.org/sensor1>", value=f'"76.0"^^<{XSD}float>'),
        mapping(sensor="_:b0", value=f'"3"^^<{XSD}integer>'),
        mapping(sensor="<http://ex.org/sensor2>", value='"warm \\"ish\\""@en'),
        mapping(sensor="<http://ex.org/sensor3>", value='"plain"'),
        mapping(sensor='"http://ex.org/plain-string"', value=f'"42"^^<{XSD}integer>'),
        mapping(sensor="<http://ex.org/sensor4>", value=f'"76.5"^^<{XSD}double>'),
    )
    assert log.binding_count() == 6
    assert detect_response_format(DATA / "csrbench_answer.json") == "csrbench-json"


def test_csrbench_json_tolerated_shapes(tmp_path: Path) -> None:
    relations = [
        {"head": {"vars": ["?x"]}, "results": {"bindings": [{"timestamp": 5, "x": {"type": "uri", "value": "http://a"}}]}},
        {"timestamp": 6, "results": {"bindings": [{"binding": {"x": None, "y": True}}]}},
    ]
    log = read_responses(write(tmp_path, "a.json", json.dumps(relations)), "csrbench-json")
    assert log.variables == ("x", "y")
    assert log.responses[0] == EngineResponse(5, None, "=", (mapping(x="<http://a>"),))
    assert log.responses[1].bindings == (mapping(y=f'"true"^^<{XSD}boolean>'),)
    istream = read_responses(write(tmp_path, "b.json", json.dumps(relations)), "csrbench-json", operation="+")
    assert {r.operation for r in istream.responses} == {"+"}


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"answers": []}, 'relations: expected a "relations" list'),
        ({"relations": [{"head": {"vars": ["x"]}, "results": {"bindings": [{"binding": {"x": {"type": "url", "value": "a"}}}]}}]},
         "relations[0].results.bindings[0].binding.x: unknown term type 'url'"),
        ({"relations": [{}, {"timestamp": "soon"}]}, "relations[1].timestamp: expected a time in ms"),
        ({"relations": [{"results": {"bindings": [{"binding": {"x": {"type": "typed-literal", "value": "1"}}}]}}]},
         'needs a "datatype"'),
        ({"relations": [{"results": {"bindings": [{"binding": {"x": {"type": "literal"}}}]}}]}, 'expected a "value"'),
        ({"relations": [{"results": {"bindings": [{"binding": {"x": {"type": "bnode", "value": "a b"}}}]}}]},
         "relations[0].results.bindings[0].binding.x: expected an N-Triples term"),
        ({"relations": [{"results": {"bindings": [{"binding": {"x": [1]}}]}}]}, "expected a term object"),
        ({"relations": [{"results": []}]}, 'relations[0].results: expected "results": {"bindings"'),
    ],
)
def test_csrbench_json_malformed(tmp_path: Path, document: object, expected: str) -> None:
    path = write(tmp_path, "answer.json", json.dumps(document))
    message = error_of(path, "csrbench-json")
    assert message.startswith(f"{path}: ") and expected in message, message


def test_csrbench_json_syntax_error(tmp_path: Path) -> None:
    path = write(tmp_path, "answer.json", '{"relations": [\n  {"timestamp": 1,}\n]}')
    assert error_of(path, "csrbench-json").startswith(f"{path}:2:")


# --- YABench QR_ files ----------------------------------------------------------------------


def test_yabench_qr_sample() -> None:
    log = read_responses(DATA / "QR_sample", "yabench-qr")
    assert detect_response_format(DATA / "QR_sample") == "yabench-qr"
    assert (log.run_start, log.variables) == (1430236906000, ("sensor", "value"))
    assert log.responses == (
        EngineResponse(
            None,
            1430236907012,
            "=",
            (
                mapping(sensor="<http://ex.org/sensor1>", value=f'"76.0"^^<{XSD}float>'),
                mapping(sensor="<http://ex.org/sensor2>", value=f'"54.5"^^<{XSD}double>'),
            ),
        ),
        EngineResponse(None, 1430236908010, "=", ()),
        EngineResponse(None, 1430236909011, "=", (mapping(sensor="<http://ex.org/sensor1>", value=f'"77"^^<{XSD}integer>'),)),
    )


def test_yabench_qr_single_variable_numbers(tmp_path: Path) -> None:
    text = (
        "1000000000000\n?avg\n1000000000500\n76.0^^<http://www.w3.org/2001/XMLSchema#float>\n42\n"
        '\n1000000001500\n"with\ttab"\n'
    )
    log = read_responses(write(tmp_path, "QR_x", text), "yabench-qr")
    assert log.variables == ("avg",)
    assert [r.bindings for r in log.responses] == [
        (mapping(avg=f'"76.0"^^<{XSD}float>'), mapping(avg=f'"42"^^<{XSD}integer>')),
        (mapping(avg='"with\ttab"'),),
    ]


def test_yabench_qr_unbound_fields(tmp_path: Path) -> None:
    text = "1000\na\tb\tc\n2000\n<http://x>\t\t_:b\n\t<http://y>\t\n"
    log = read_responses(write(tmp_path, "QR_u", text), "yabench-qr")
    assert log.responses[0].bindings == (mapping(a="<http://x>", c="_:b"), mapping(b="<http://y>"))


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("start\na\n", "1", "expected the run start in epoch ms"),
        ("1000\n\n", "2", "expected the variable names"),
        ("1000\na\tb\n<http://x>\t<http://y>\n", "3", "expected an emission time"),
        ("1000\na\tb\n2000\n<http://x>\n", "4", "expected 2 TAB-separated terms (a, b), got 1"),
        ("1000\na\tb\n2000\n<http://x> <http://y>\n", "4:11", "expected a TAB between terms"),
        ("1000\na\tb\n2000\n<http://x>\thttp://y\n", "4:12", "expected an N-Triples term"),
        ("1000\na\n2000\n\"bad \\q\"\n", "4:1", "expected an N-Triples term"),
        ("1000\n", "2", "expected the run start on line 1 and the variable names on line 2"),
    ],
)
def test_yabench_qr_malformed(tmp_path: Path, text: str, line: str, expected: str) -> None:
    path = write(tmp_path, "QR_bad", text)
    message = error_of(path, "yabench-qr")
    assert message.startswith(f"{path}:{line}: ") and expected in message, message


# --- JSON Lines response log ---------------------------------------------------------------

_terms = st.one_of(
    st.builds(lambda s: iri_term("http://ex.org/" + s), st.text(max_size=8)),
    st.builds(literal_term, st.text(max_size=8)),
    st.builds(lambda s: literal_term(s, language="en-gb"), st.text(max_size=8)),
    st.integers().map(lambda n: literal_term(str(n), XSD + "integer")),
)
_mappings = st.dictionaries(st.sampled_from(["x", "y", "z"]), _terms).map(make_mapping)
_responses = st.builds(
    EngineResponse,
    st.one_of(st.none(), st.integers(0, 10**9)),
    st.one_of(st.none(), st.integers(0, 2 * 10**12)),
    st.sampled_from(["+", "-", "="]),
    st.lists(_mappings, max_size=4).map(tuple),
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_responses, max_size=6))
@pytest.mark.slow
def test_response_log_round_trip(tmp_path: Path, responses: list[EngineResponse]) -> None:
    log = ResponseLog(("x", "y", "z"), tuple(responses), source="s", run_start=17, engine="cqels", query="q1", run="r3")
    path = tmp_path / "responses.jsonl"
    write_response_log(path, log)
    assert read_responses(path, "jsonl") == ResponseLog(
        ("x", "y", "z"), tuple(responses), source=str(path), run_start=17, engine="cqels", query="q1", run="r3"
    )
    assert not (tmp_path / "responses.jsonl.partial").exists()


def test_response_log_without_header(tmp_path: Path) -> None:
    records = [
        {"system_time": 10, "application_time": 1000, "operation": "+", "binding": {"x": "<http://a>"}},
        {"system_time": 10, "application_time": 1000, "operation": "+", "binding": {"x": "<http://b>"}},
        {"system_time": 20, "application_time": 2000, "operation": "-", "binding": {"y": '"v"@EN'}},
    ]
    path = write(tmp_path, "log.jsonl", "\n".join(json.dumps(r) for r in records) + "\n\n")
    log = read_responses(path, "jsonl")
    assert detect_response_format(path) == "jsonl"
    assert log.variables == ("x", "y")
    assert log.responses == (
        EngineResponse(1000, 10, "+", (mapping(x="<http://a>"), mapping(x="<http://b>"))),
        EngineResponse(2000, 20, "-", (mapping(y='"v"@en'),)),
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", "2:2: not JSON"),
        ("[1, 2]", "2: expected a JSON object per line"),
        ('{"operation": "*"}', "2: operation: expected operation"),
        ('{"binding": {"x": "http://no-brackets"}}', "2: binding.x: expected an N-Triples term"),
        ('{"binding": {"x": 5}}', "2: binding.x: expected N-Triples term text"),
        ('{"system_time": "noon"}', "2: system_time: expected a time in ms"),
    ],
)
def test_response_log_malformed(tmp_path: Path, line: str, expected: str) -> None:
    path = write(tmp_path, "log.jsonl", '{"binding": {"x": "<http://a>"}}\n' + line + "\n")
    message = error_of(path, "jsonl")
    assert message.startswith(f"{path}:{expected}"), message


def test_unknown_response_format(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="unknown engine output format"):
        read_responses(tmp_path / "x", "csv")
    with pytest.raises(UserError, match="cannot tell the engine output format"):
        detect_response_format(tmp_path / "answers.txt")
    assert "cannot open" in error_of(tmp_path / "missing.json", "csrbench-json")


def test_record_lines_are_the_standard_librarys_json() -> None:
    """The response log's lines come from orjson (the stand writes one per binding): the same
    text as ``json.dumps`` compact with non-ASCII as is, and ints beyond 64 bits still written."""
    import json

    from rsp_workbench.responses.readers import _record_line

    for record in ({"engine": "é", "binding": {"x": '"ü\\n"@de', "y": "<http://a/b>"}, "system_time": 1795532112893},
                   {"response": 0, "binding": None, "application_time": -5, "operation": "+"},
                   {"big": 2**70, "tab": "\t\u2028"}):
        assert _record_line(record) == json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
