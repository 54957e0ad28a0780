"""Fuzzing every stream reader and engine-output reader: a clear error or a correct parse.

Inputs are valid files mutated by hypothesis (bytes flipped, inserted, deleted, cut) and
free-form bytes; a reader may accept the input (then every element is well-formed) or
raise `UserError` naming the file, but never raises anything else.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rsp_workbench.errors import UserError
from rsp_workbench.responses.model import EngineResponse
from rsp_workbench.responses.readers import read_responses
from rsp_workbench.streams.model import MAX_TIME_MS, MIN_TIME_MS, StreamElement
from rsp_workbench.streams.readers import read_stream
from rsp_workbench.streams.writers import write_stream

EX = "http://ex.org/"
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ELEMENTS = [StreamElement(f"<{EX}s{i % 3}>", f"<{EX}p>", '"v\\"{i}"@en' if i % 2 else f"<{EX}o{i}>", 1000 * i,
                          f"<{EX}g>" if i % 4 == 0 else None) for i in range(12)]


def _valid(fmt: str) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"s.{fmt}"
        elements = ELEMENTS if fmt in ("nquads", "parquet") else [e._replace(graph=None) for e in ELEMENTS]
        write_stream(path, elements, fmt)
        return path.read_bytes()


SEEDS = {fmt: _valid(fmt) for fmt in ("yabench", "nquads", "parquet")}


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """``seed`` with a few random edits: flip a bit, overwrite, insert or delete bytes, or cut it."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        kind = draw(st.sampled_from(["flip", "byte", "insert", "delete", "cut"]))
        at = draw(st.integers(0, len(data) - 1))
        if kind == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "byte":
            data[at] = draw(st.integers(0, 255))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8) | st.sampled_from([b'"', b"<", b">", b" .\n", b"\\u"]))
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 16))]
        else:
            del data[at:]
    return bytes(data)


def _check_elements(elements: list[StreamElement]) -> None:
    for element in elements:
        assert isinstance(element.t, int) and MIN_TIME_MS <= element.t <= MAX_TIME_MS
        assert element.subject[0] in "<_" and element.predicate[0] == "<" and element.object[0] in '<_"'
        assert element.graph is None or element.graph[0] in "<_"


def _read(tmp_path: Path, name: str, data: bytes, fmt: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    try:
        elements = list(read_stream(path, fmt))
    except UserError as error:
        assert str(error).startswith(str(path)) and "\n" not in str(error), str(error)
        return
    _check_elements(elements)


@pytest.mark.parametrize("fmt", ["yabench", "nquads", "parquet"])
@FUZZ
@given(data=st.data())
def test_mutated_stream_files(fmt: str, data: st.DataObject) -> None:
    content = data.draw(mutated(SEEDS[fmt]))
    with tempfile.TemporaryDirectory() as folder:
        _read(Path(folder), f"s.{fmt}", content, fmt)


@pytest.mark.parametrize("fmt", ["yabench", "nquads", "parquet"])
@FUZZ
@given(content=st.binary(max_size=400))
def test_arbitrary_bytes_as_stream(fmt: str, content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        _read(Path(folder), f"s.{fmt}", content, fmt)


_TIME = st.one_of(st.integers(), st.integers(-(2**70), 2**70).map(str), st.text(max_size=5))


@FUZZ
@given(lines=st.lists(st.tuples(st.sampled_from([f"<{EX}a>", "_:b", "<bad iri>", '"x"', "x"]),
                                st.sampled_from([f"<{EX}p>", "_:p", "p"]),
                                st.sampled_from([f"<{EX}o>", '"lit"', '"l"@en', '"3"^^<http://x>', '"open', "_:o"]),
                                _TIME), max_size=6))
def test_yabench_lines_from_parts(lines: list[tuple[str, str, str, object]]) -> None:
    text = "".join(f'{s} {p} {o} "{t}" .\n' for s, p, o, t in lines)
    with tempfile.TemporaryDirectory() as folder:
        _read(Path(folder), "s.stream", text.encode(), "yabench")


@FUZZ
@given(files=st.dictionaries(st.integers(0, 2**66), st.text(max_size=60), max_size=3))
def test_csrbench_directories(files: dict[int, str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "stream"
        root.mkdir()
        for number, text in files.items():
            (root / f"data_{number}.ttl").write_text(f"@prefix : <{EX}> .\n:a :p :b .\n{text}", encoding="utf-8")
        try:
            elements = list(read_stream(root, "csrbench-dir"))
        except UserError as error:
            assert "\n" not in str(error) and str(root) in str(error), str(error)
            return
        _check_elements(elements)


# --- engine outputs -----------------------------------------------------------------------

_TERM = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["uri", "literal", "bnode", "typed-literal", "x"]),
                           "value": st.one_of(st.text(max_size=8), st.integers(), st.none())}),
    st.text(max_size=8), st.integers(), st.floats(allow_nan=True), st.none(), st.booleans(),
)
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                     max_leaves=12)


def _read_output(name: str, content: bytes, fmt: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(content)
        try:
            log = read_responses(path, fmt)
        except UserError as error:
            assert str(error).startswith(str(path)) and "\n" not in str(error), str(error)
            return
        for response in log.responses:
            assert isinstance(response, EngineResponse)
            assert response.application_time is None or MIN_TIME_MS <= response.application_time <= MAX_TIME_MS
            for mapping in response.bindings:
                for _name, term in mapping:
                    assert term is None or term[0] in '<_"', term


@FUZZ
@given(relations=st.lists(st.fixed_dictionaries(
    {"head": st.one_of(st.fixed_dictionaries({"vars": st.lists(st.text(max_size=4), max_size=2)}), _JSON),
     "timestamp": st.one_of(st.integers(), st.floats(), st.text(max_size=3), st.none()),
     "results": st.one_of(st.fixed_dictionaries({"bindings": st.lists(st.fixed_dictionaries(
         {"binding": st.dictionaries(st.sampled_from(["x", "y"]), _TERM, max_size=2)}), max_size=3)}), _JSON)}),
    max_size=3))
def test_csrbench_json_from_parts(relations: list[object]) -> None:
    _read_output("answer.json", json.dumps({"relations": relations}).encode(), "csrbench-json")


@FUZZ
@given(document=_JSON)
@pytest.mark.slow
def test_csrbench_json_arbitrary(document: object) -> None:
    _read_output("answer.json", json.dumps(document).encode(), "csrbench-json")


@FUZZ
@given(records=st.lists(st.one_of(
    st.fixed_dictionaries({"application_time": st.one_of(st.integers(), st.floats(), st.text(max_size=3)),
                           "operation": st.sampled_from(["+", "-", "=", "*"]),
                           "binding": st.one_of(st.none(), st.dictionaries(st.sampled_from(["x", "y"]), _TERM,
                                                                            max_size=2))}),
    _JSON), max_size=5))
@example(records=[{"\n": None}])  # a field name with a line break: the error stays one line
def test_response_log_lines(records: list[object]) -> None:
    _read_output("responses.jsonl", "".join(json.dumps(record) + "\n" for record in records).encode(), "jsonl")


@FUZZ
@given(content=st.binary(max_size=300))
def test_response_log_bytes(content: bytes) -> None:
    _read_output("responses.jsonl", content, "jsonl")


QR = ("1000\n<http://ex.org/a>\t\"1.5\"^^<http://www.w3.org/2001/XMLSchema#double>\n"
      "2000\n<http://ex.org/b>\t\"2\"\n_:c\t7\n").encode()


@FUZZ
@given(data=st.data())
def test_yabench_qr_mutated(data: st.DataObject) -> None:
    _read_output("QR_e", data.draw(mutated(QR)), "yabench-qr")


@FUZZ
@given(content=st.binary(max_size=300))
def test_csrbench_json_bytes(content: bytes) -> None:
    _read_output("answer.json", content, "csrbench-json")
