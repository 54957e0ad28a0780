"""The columnar oracle path (Arrow columns and joins, no JVM) agrees with the reference path;
its YABench text reader reads exactly what `read_yabench` reads; the ``auto`` rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsp_workbench.errors import UserError
from rsp_workbench.oracle.annotated import NumericBound
from rsp_workbench.oracle.columnar import certainly_fails, columns_from_elements, query_predicates, read_columns
from rsp_workbench.oracle.reference import expected_answer
from rsp_workbench.oracle.answers import columnar_expected_answers
from rsp_workbench.oracle.paths import COLUMNAR_THRESHOLD, SPARK_THRESHOLD, choose_path
from rsp_workbench.query.parser import parse_query
from rsp_workbench.streams.reader_common import ReadReport
from rsp_workbench.streams.readers import read_yabench

from tests.oracle.cases import BODIES, S1, S2, STATIC, assert_same, csparql, semantics, streams


def answers_of(query, data, sem, t0s):
    columns = {iri: columns_from_elements(elements, query_predicates(query)) for iri, elements in data.items()}
    return columnar_expected_answers(query, columns, sem, t0s, static=STATIC)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(elements=streams(), body=st.sampled_from(sorted(BODIES)), sem=semantics(), size=st.integers(1, 8),
       slide=st.integers(1, 6), t0=st.integers(0, 5))
@pytest.mark.slow
def test_columnar_path_equals_reference(elements, body, sem, size, slide, t0) -> None:
    query = csparql(BODIES[body], size, slide)
    reference = expected_answer(query, {S1: elements}, sem, (t0,), static=STATIC)
    assert_same(reference, answers_of(query, {S1: elements}, sem, [(t0,)]).answer((t0,)))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=streams(10), second=streams(10), sem=semantics(), t0=st.tuples(st.integers(0, 3), st.integers(0, 3)))
def test_columnar_named_windows_over_two_streams(first, second, sem, t0) -> None:
    query = parse_query(  # a join across the two windows' streams, and one with the static graph
        "PREFIX : <http://e/> SELECT ?x ?y ?v FROM NAMED WINDOW :w1 ON <http://s1> [RANGE 3ms STEP 1ms] "
        "FROM NAMED WINDOW :w2 ON <http://s2> [RANGE 6ms STEP 3ms] "
        "WHERE { WINDOW :w1 { ?x :r ?y } WINDOW :w2 { ?y :p ?v } ?y :lives ?c }", "rspql")
    data = {S1: first, S2: second}
    assert_same(expected_answer(query, data, sem, t0, static=STATIC), answers_of(query, data, sem, [t0]).answer(t0))


def test_predicates_of_the_query() -> None:
    assert query_predicates(csparql(BODIES["filter"], 4, 4)) == {"<http://e/p>"}
    assert query_predicates(csparql(BODIES["union"], 4, 4)) == {"<http://e/p>", "<http://e/r>"}
    assert query_predicates(csparql(BODIES["distinct-bind"], 4, 4)) is None  # ?pred: every element kept


def test_numeric_bound_drops_only_certain_failures() -> None:
    above = NumericBound("v", ">", 50.0)
    assert certainly_fails('"49.0"^^<http://www.w3.org/2001/XMLSchema#float>', above)
    assert not certainly_fails('"50.00000001"^^<http://www.w3.org/2001/XMLSchema#double>', above)  # margin
    assert not certainly_fails('"forty"', above) and not certainly_fails("<http://e/x>", above)
    assert not certainly_fails('"NaN"^^<http://www.w3.org/2001/XMLSchema#double>', NumericBound("v", "<", 0.0))


# --- the YABench text reader -------------------------------------------------------------------

ODD = (
    '<http://e/a> <http://e/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> "0" .\n'
    "# a comment line\n"
    "\n"
    '<http://e/a>   <http://e/r>\t<http://e/b> "0" .   # other spacing and a comment\n'
    '<http://e/b> <http://e/p> 76.0^^<http://www.w3.org/2001/XMLSchema#float> "5" .\n'
    '_:x <http://e/r> <http://e/c> "5" .\n'
    '<http://e/c> <http://e/q> "caf\\u00E9"@fr "7" .\n'
    '<http://e/c> <http://e/p> "two words" "7" .\n'
    '<http://e/\\u0063> <http://e/r> <http://e/a> "9" .\r\n'
    '<http://e/d> <http://e/p> "x\\"y" "9" .'  # no newline at the end
)


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "s.stream"
    path.write_text(text, encoding="utf-8", newline="")
    return str(path)


@pytest.mark.parametrize("predicates", [None, frozenset({"<http://e/p>", "<http://e/r>"}), frozenset()])
def test_text_reader_reads_what_the_python_reader_reads(tmp_path: Path, predicates) -> None:
    path = write(tmp_path, ODD)
    elements = list(read_yabench(path))
    report = ReadReport()
    columns = read_columns(path, "yabench", predicates, report=report)
    assert columns.times.tolist() == [e.t for e in elements] and report.elements == len(elements) == 8
    table = columns.table.to_pydict()
    rows = list(zip(table["pos"], table["s"], table["p"], table["o"]))
    assert rows == [(i, e.subject, e.predicate, e.object) for i, e in enumerate(elements)
                    if predicates is None or e.predicate in predicates]


@pytest.mark.parametrize("text, line, words", [
    ('<http://e/a> <http://e/p> <http://e/b> "0" .\n<http://e/a> <http://e/p> nope "1" .\n', 2, "expected an object"),
    ('<http://e/a> <http://e/p> <http://e/b> "3" .\n# c\n<http://e/a> <http://e/p> <http://e/b> "2" .\n', 3,
     "time goes backwards: 2 after 3"),
    ('<http://e/a> <http://e/p> <http://e/b> "3" .\n<http://e/a> <http://e/p> <http://e/b> "2" .\nbad\n', 2,
     "time goes backwards"),  # the first problem in the file is the one named
    ('<http://e/a> <http://e/p> <http://e/b> "99999999999999999999" .\n', 1, "outside the int64 range"),
])
def test_text_reader_names_file_and_line(tmp_path: Path, text: str, line: int, words: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(UserError) as error:
        read_columns(path, "yabench", None)
    with pytest.raises(UserError) as python:
        list(read_yabench(path))
    assert (error.value.file, error.value.line) == (path, line) == (python.value.file, python.value.line)
    assert words in error.value.message and error.value.message == python.value.message


def test_text_reader_given_bytes_reads_what_it_reads_from_text(tmp_path: Path, monkeypatch) -> None:
    """A Spark task hands its range's bytes (`_byte_blocks`: Arrow strings over the bytes, no
    decoding): the same columns as from decoded text, also cut into blocks of a few lines, and a
    byte that is not UTF-8 named after the line before it, counted from the part's first line."""
    from rsp_workbench.oracle import columnar
    from rsp_workbench.oracle.columnar import read_yabench_columns

    path = write(tmp_path, ODD)
    text = read_yabench_columns(path, None)
    monkeypatch.setattr(columnar, "_BLOCK_CHARS", 100)  # a block of one or two lines
    data = ODD.encode("utf-8")
    given = read_yabench_columns(path, None, text=data, first_line=1)
    assert given.times.tolist() == text.times.tolist() == [0, 0, 5, 5, 7, 7, 9, 9]
    assert given.table.to_pydict() == text.table.to_pydict()
    bad = data.replace(b"two words", b"two \xff words")  # on the file's 8th line
    with pytest.raises(UserError) as error:
        read_yabench_columns(path, None, text=bad, first_line=11)  # the part's first line is the file's 11th
    assert (error.value.file, error.value.message) == (path, "not UTF-8 text (after line 17)")


def parquet_of(tmp_path: Path, text: str) -> str:
    from rsp_workbench.streams.parquet import ParquetStreamWriter
    from rsp_workbench.streams.readers import read_yabench

    path = tmp_path / "s.parquet"
    with ParquetStreamWriter(path) as writer:
        writer.write_all(read_yabench(write(tmp_path, text), on_disorder="warn"))
    return str(path)


@pytest.mark.parametrize("predicates", [None, frozenset({"<http://e/p>"})])
def test_parquet_reader_reads_what_the_element_path_reads(tmp_path: Path, predicates) -> None:
    from rsp_workbench.streams.readers import read_stream

    path = parquet_of(tmp_path, ODD)
    direct = read_columns(path, "parquet", predicates)
    via_elements = columns_from_elements(read_stream(path, "parquet"), predicates)
    assert direct.times.tolist() == via_elements.times.tolist() and len(direct.times) == 8
    assert direct.table.to_pydict() == via_elements.table.to_pydict()


def test_parquet_reader_names_the_row_where_time_goes_backwards(tmp_path: Path) -> None:
    from rsp_workbench.streams.readers import read_stream

    import pyarrow as pa
    import pyarrow.parquet as pq

    from rsp_workbench.streams.parquet import SCHEMA

    path = str(tmp_path / "unsorted.parquet")  # written as another tool would: the workbench's writer refuses it
    pq.write_table(pa.Table.from_pydict({"subject": ["<http://e/a>"] * 2, "predicate": ["<http://e/p>"] * 2,
                                         "object": ["<http://e/b>", "<http://e/c>"], "graph": [None, None],
                                         "t": [3, 2]}, schema=SCHEMA), path)
    with pytest.raises(UserError) as error:
        read_columns(path, "parquet", None)
    with pytest.raises(UserError) as python:
        list(read_stream(path, "parquet"))
    assert (error.value.message, error.value.field) == (python.value.message, python.value.field) == \
        ("time goes backwards: 2 after 3", "row 2")
    report = ReadReport()
    assert read_columns(path, "parquet", None, on_disorder="warn", report=report).times.tolist() == [2, 3]
    assert (report.disorders, report.first_disorder_line) == (1, 2)


def test_text_reader_sorts_by_time_when_told_to_warn(tmp_path: Path) -> None:
    path = write(tmp_path, '<http://e/a> <http://e/p> <http://e/b> "3" .\n\n'
                           '<http://e/b> <http://e/p> <http://e/c> "1" .\n<http://e/c> <http://e/r> <http://e/d> "2" .\n')
    report = ReadReport()
    columns = read_columns(path, "yabench", frozenset({"<http://e/p>"}), on_disorder="warn", report=report)
    assert columns.times.tolist() == [1, 2, 3]
    assert columns.table.to_pydict() == {"s": ["<http://e/b>", "<http://e/a>"], "p": ["<http://e/p>"] * 2,
                                         "o": ["<http://e/c>", "<http://e/b>"], "pos": [0, 2]}
    assert (report.disorders, report.first_disorder, report.first_disorder_line) == (1, (1, 3), 3)


# --- the auto rule --------------------------------------------------------------------------------


def test_auto_rule_by_fragment_and_size() -> None:
    small, big, huge = COLUMNAR_THRESHOLD, COLUMNAR_THRESHOLD + 1, SPARK_THRESHOLD + 1
    assert [choose_path("auto", inside_fragment=True, elements=n) for n in (small, big, huge)] == \
        ["python", "columnar", "spark"]
    assert choose_path("auto", inside_fragment=True, elements=huge, allow_spark=False) == "columnar"
    assert choose_path("auto", inside_fragment=False, elements=huge) == "reference"
    assert choose_path("fast", inside_fragment=True, elements=huge) == "columnar"
    assert choose_path("fast", inside_fragment=False, elements=big) == "python"  # which names the construct
    assert choose_path("spark", inside_fragment=True, elements=1) == "spark"
    assert choose_path("reference", inside_fragment=True, elements=huge) == "reference"


def test_big_streams_take_the_columnar_path_end_to_end(tmp_path: Path, capsys, monkeypatch) -> None:
    import json

    from rsp_workbench.cli.main import main
    from rsp_workbench.oracle import paths as oracle_paths

    lines = [f'<http://e/{i % 3}> <http://e/p> "{i % 4}"^^<http://www.w3.org/2001/XMLSchema#integer> "{i}" .'
             for i in range(12)]
    stream = write(tmp_path, "\n".join(lines) + "\n")
    query = tmp_path / "q.rq"
    query.write_text("REGISTER QUERY q AS SELECT ?x ?v FROM STREAM <http://s1> [RANGE 4ms STEP 2ms] "
                     "WHERE { ?x <http://e/p> ?v FILTER(?v > 1) }")
    args = ["oracle", "--stream", stream, "--query", str(query), "--system", "cqels", "--time-unit", "ms", "--t0", "all", "--json"]
    assert main(args) == 0
    small = json.loads(capsys.readouterr().out)
    monkeypatch.setattr(oracle_paths, "COLUMNAR_THRESHOLD", 3)
    assert main(args) == 0
    big = json.loads(capsys.readouterr().out)
    assert (small["engine"], big["engine"], big["method"]) == ("python", "arrow", "fast")
    assert big["windows"] == small["windows"] and big["by_t0"] == small["by_t0"]


# --- rspwb check: t0 that read the same contents are judged once under CSRBench matching -----------


class CountingCandidates(dict):
    """t0 -> relations, counting which t0's relations the verdict asked for."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.asked: list[int] = []

    def __getitem__(self, t0):
        self.asked.append(t0)
        return super().__getitem__(t0)


def test_csrbench_matching_judges_each_content_class_once() -> None:
    from collections import Counter

    from rsp_workbench.oracle.verdict import Relation, judge

    def relations(*bags, start):
        return [Relation(start + i, "+", Counter(bag)) for i, bag in enumerate(bags)]

    a, b = frozenset({("x", "<http://e/a>")}), frozenset({("x", "<http://e/b>")})
    engine = relations([a], [b], start=100)
    # t0 0 and 2 read the same contents (at other instants), so do 1 and 3
    candidates = CountingCandidates({0: relations([a], [b], start=0), 1: relations([b], [a], start=1),
                                     2: relations([a], [b], start=2), 3: relations([b], [a], start=3)})
    classes = {0: "even", 1: "odd", 2: "even", 3: "odd"}
    verdict = judge(engine, candidates, mode="csrbench", content_class=classes.get)
    assert verdict.correct and verdict.matching_t0 == (0, 2) and candidates.asked == [0, 1]
    plain = judge(engine, CountingCandidates(candidates), mode="csrbench")
    assert plain.matching_t0 == verdict.matching_t0
    wrong = relations([a], [a], start=100)  # matches no class: the closest divergence is the first class's
    assert judge(wrong, candidates, mode="csrbench", content_class=classes.get).first_divergence == \
        judge(wrong, CountingCandidates(candidates), mode="csrbench").first_divergence
    strict = CountingCandidates(candidates)  # strict matching compares instants: every t0 is judged
    judge(relations([a], [b], start=2), strict, mode="strict", content_class=classes.get)
    assert strict.asked == [0, 1, 2, 3]
