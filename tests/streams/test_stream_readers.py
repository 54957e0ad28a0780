"""Stream readers: YABench text, CSRBench directories, timestamped N-Quads, Parquet; N-Triples terms."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsp_workbench.errors import UserError
from rsp_workbench.streams.model import XSD, StreamElement
from rsp_workbench.streams.reader_common import ReadReport
from rsp_workbench.streams.readers import detect_format, read_stream
from rsp_workbench.streams.terms import (
    TermError,
    canonical_term,
    from_rdflib,
    iri_term,
    is_term,
    literal_term,
    number_term,
    to_rdflib,
)
from rsp_workbench.streams.writers import write_stream

FLOAT = f"<{XSD}float>"
S = "<http://example.org/s>"
P = "<http://example.org/p>"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path, fmt: str, **options: object) -> str:
    with pytest.raises(UserError) as caught:
        list(read_stream(path, fmt, **options))  # type: ignore[arg-type]
    return str(caught.value)


# --- terms -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("<http://a/b>", "<http://a/b>"),
        ("<http://a/\\u00E9>", "<http://a/é>"),
        ("<http://a/\\u0020>", "<http://a/\\u0020>"),
        ("_:b0", "_:b0"),
        ('"plain"', '"plain"'),
        ('"x"^^<http://www.w3.org/2001/XMLSchema#string>', '"x"'),
        ('"Hallo"@DE-at', '"Hallo"@de-at'),
        ('"tab\\there \\"q\\" \\u00E9\\n"', '"tab\there \\"q\\" é\\n"'),
        ("76.0^^<http://www.w3.org/2001/XMLSchema#float>", f'"76.0"^^{FLOAT}'),
        ("-1.5E3^^<http://www.w3.org/2001/XMLSchema#double>", f'"-1.5E3"^^<{XSD}double>'),
    ],
)
def test_canonical_term(text: str, canonical: str) -> None:
    assert canonical_term(text) == canonical
    assert is_term(text)


@pytest.mark.parametrize("text", ["http://a", "<a b>", '"unterminated', '"bad \\q escape"', "_:", "abc^^<x>", '"\\uD800"'])
def test_not_a_term(text: str) -> None:
    assert not is_term(text)
    with pytest.raises(TermError):
        canonical_term(text)


def test_number_term() -> None:
    assert number_term("76") == f'"76"^^<{XSD}integer>'
    assert number_term("76.0") == f'"76.0"^^<{XSD}decimal>'
    assert number_term("7.6e1") == f'"7.6e1"^^<{XSD}double>'


def test_rdflib_round_trip() -> None:
    from rdflib import BNode, Literal, URIRef

    assert to_rdflib("<http://a/b>") == URIRef("http://a/b")
    assert to_rdflib("_:x") == BNode("x")
    assert to_rdflib('"01"^^<http://www.w3.org/2001/XMLSchema#integer>') == Literal("01", datatype=URIRef(XSD + "integer"), normalize=False)
    assert to_rdflib('"chat"@fr') == Literal("chat", lang="fr")
    for text in ["<http://a/b>", "_:x", '"a\\"b\\\\c\\nd"', '"01"^^<http://www.w3.org/2001/XMLSchema#integer>', '"chat"@fr']:
        assert from_rdflib(to_rdflib(text)) == text
    assert from_rdflib(Literal("x", datatype=URIRef(XSD + "string"))) == '"x"'


# --- hypothesis strategies -----------------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_iris = st.one_of(
    st.builds(lambda s: iri_term("http://example.org/" + s), _text),
    st.sampled_from([S, P, "<urn:x:1>"]),
)
_bnodes = st.from_regex(r"_:[A-Za-z][A-Za-z0-9]{0,6}", fullmatch=True)
_languages = st.from_regex(r"[a-z]{1,8}(-[a-z0-9]{1,8}){0,2}", fullmatch=True)
_numbers = st.one_of(
    st.integers(-(10**12), 10**12).map(lambda n: literal_term(str(n), XSD + "integer")),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: literal_term(f"{x:.1f}", XSD + "float")),
)
_literals = st.one_of(
    st.builds(literal_term, _text),
    st.builds(lambda lex, lang: literal_term(lex, language=lang), _text, _languages),
    st.builds(lambda lex: literal_term(lex, XSD + "integer"), _text),
    st.builds(lambda lex, dt: literal_term(lex, dt), _text, st.sampled_from(["http://example.org/dt", XSD + "date"])),
    _numbers,
)
_objects = st.one_of(_iris, _bnodes, _literals)


@st.composite
def streams(draw: st.DrawFn, graphs: bool = False) -> list[StreamElement]:
    triples = draw(st.lists(st.tuples(st.one_of(_iris, _bnodes), _iris, _objects), max_size=25))
    times = sorted(draw(st.lists(st.integers(0, 10**9), min_size=len(triples), max_size=len(triples))))
    graph_names = st.one_of(st.none(), _iris, _bnodes) if graphs else st.none()
    return [StreamElement(s, p, o, t, draw(graph_names)) for (s, p, o), t in zip(triples, times)]


_settings = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_settings
@given(_objects)
def test_generated_terms_are_canonical(term: str) -> None:
    assert canonical_term(term) == term


@_settings
@given(streams())
def test_yabench_round_trip(tmp_path: Path, elements: list[StreamElement]) -> None:
    path = tmp_path / "s.stream"
    write_stream(path, elements, "yabench")
    assert list(read_stream(path, "yabench")) == elements


@_settings
@given(streams(graphs=True))
def test_nquads_round_trip(tmp_path: Path, elements: list[StreamElement]) -> None:
    path = tmp_path / "s.nq"
    write_stream(path, elements, "nquads")
    assert list(read_stream(path, "nquads")) == elements


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(streams(graphs=True))
def test_parquet_round_trip(tmp_path: Path, elements: list[StreamElement]) -> None:
    path = tmp_path / "s.parquet"
    write_stream(path, elements, "parquet")
    assert list(read_stream(path, "parquet")) == elements
    assert not (tmp_path / "s.parquet.partial").exists()


# --- YABench text ------------------------------------------------------------------------

SG1_LINES = """\
<http://knoesis.wright.edu/ssw/MeasureData_AirTemperature_A7_1000> <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#floatValue> 76.0^^<http://www.w3.org/2001/XMLSchema#float> "1000" .
<http://knoesis.wright.edu/ssw/MeasureData_AirTemperature_A7_1000> <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#uom> <http://knoesis.wright.edu/ssw/ont/weather.owl#fahrenheit> "1000" .
"""


def test_yabench_sg1_quirk(tmp_path: Path) -> None:
    path = write(tmp_path, "s.stream", SG1_LINES)
    elements = list(read_stream(path, "yabench"))
    assert elements[0].object == f'"76.0"^^{FLOAT}'
    assert elements[1].object == "<http://knoesis.wright.edu/ssw/ont/weather.owl#fahrenheit>"
    assert [e.t for e in elements] == [1000, 1000]


def test_yabench_general_lines(tmp_path: Path) -> None:
    text = (
        "# a comment\n"
        "\n"
        f'_:b1\t{P}   "x\\ty"@EN "0" . # trailing comment\n'
        f'<http://example.org/\\u00E9> {P} "a"^^<http://www.w3.org/2001/XMLSchema#string> "5".\r\n'
        f'{S} {P} _:o "7" .'  # no newline at the end of the file
    )
    path = write(tmp_path, "s.stream", text)
    assert list(read_stream(path, "yabench")) == [
        StreamElement("_:b1", P, '"x\ty"@en', 0),
        StreamElement("<http://example.org/é>", P, '"a"', 5),
        StreamElement(S, P, "_:o", 7),
    ]


def test_yabench_gzip(tmp_path: Path) -> None:
    path = tmp_path / "s.stream.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(SG1_LINES)
    assert len(list(read_stream(path, "yabench"))) == 2
    assert detect_format(path) == "yabench"


@pytest.mark.parametrize(
    ("line", "column", "expected"),
    [
        (f'http://example.org/s {P} <x:o> "1" .', 1, "expected a subject"),
        (f'{S} "p" <x:o> "1" .', 24, "expected a predicate"),
        (f'{S} {P} <o "1" .', 47, "expected an object"),
        (f'{S} {P} "bad \\q" "1" .', 47, "expected an object"),
        (f"{S} {P} <x:o> 1 .", 53, 'expected the time in ms as "<digits>"'),
        (f'{S} {P} <x:o> <urn:rspwb:t:1> .', 53, "expected the time"),
        (f'{S} {P} <x:o> "1"', 56, "expected ' .'"),
        (f'{S} {P} <x:o> "1" . junk', 59, "expected the end of the line"),
        (f'{S} {P} abc^^<http://x> "1" .', 47, "expected an object"),
    ],
)
def test_yabench_malformed(tmp_path: Path, line: str, column: int, expected: str) -> None:
    path = write(tmp_path, "bad.stream", f'{S} {P} <x:o> "0" .\n\n{line}\n')
    message = error_of(path, "yabench")
    assert message.startswith(f"{path}:3:{column}: "), message
    assert expected in message


def test_yabench_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.stream"
    path.write_bytes(f'{S} {P} "\xff" "0" .\n'.encode("latin-1"))
    assert "not UTF-8" in error_of(path, "yabench")


def test_yabench_disorder_error_and_warn(tmp_path: Path) -> None:
    lines = [f'{S} {P} "{i}" "{t}" .\n' for i, t in enumerate([0, 1000, 900, 900, 1000, 950])]
    path = write(tmp_path, "s.stream", "".join(lines))
    assert error_of(path, "yabench") == f"{path}:3: time goes backwards: 900 after 1000"
    report = ReadReport()
    elements = list(read_stream(path, "yabench", on_disorder="warn", report=report))
    assert [e.t for e in elements] == [0, 1000, 900, 900, 1000, 950]
    assert (report.elements, report.disorders, report.first_disorder_line) == (6, 2, 3)
    assert report.summary() == f"{path}:3: time goes backwards 2 times (first: 900 after 1000); elements kept in file order"
    clean = ReadReport()
    list(read_stream(write(tmp_path, "ok.stream", SG1_LINES), "yabench", report=clean))
    assert clean.summary() is None


def test_unknown_options(tmp_path: Path) -> None:
    path = write(tmp_path, "s.stream", SG1_LINES)
    with pytest.raises(UserError, match="unknown stream format"):
        read_stream(path, "csv")
    with pytest.raises(UserError, match="on_disorder"):
        list(read_stream(path, "yabench", on_disorder="ignore"))  # type: ignore[arg-type]
    assert "cannot open" in error_of(tmp_path / "missing.stream", "yabench")


# --- timestamped N-Quads ------------------------------------------------------------------


def test_nquads_time_graph_errors(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.nq",
        f"{S} {P} <x:o> <urn:rspwb:t:10> .\n{S} {P} <x:o> <urn:rspwb:t:5> .\n{S} {P} <x:o> <http://other/g> .\n",
    )
    assert error_of(path, "nquads") == f"{path}:2: time goes backwards: 5 after 10"
    report = ReadReport()
    message = error_of(path, "nquads", on_disorder="warn", report=report)
    assert message.startswith(f"{path}:3: expected the graph name <urn:rspwb:t:{{t}}>")
    assert report.disorders == 1
    bad = write(tmp_path, "bad.nq", f'{S} {P} <x:o> "lit" .\n')
    assert error_of(bad, "nquads").startswith(f"{bad}:1:")


ORACLE_LAYOUT = f"""\
<http://ex/g2> <http://ex/meta#hasTimestamp> "2000"^^<http://www.w3.org/2001/XMLSchema#long> <http://ex/meta> .
{S} {P} "g2-a" <http://ex/g2> .
{S} {P} "g1-a" <http://ex/g1> .
{S} {P} "g2-b" <http://ex/g2> .
{S} {P} "g1-b" <http://ex/g1> .
{S} {P} "g3-a" <http://ex/g3> .
<http://ex/g3> <http://ex/meta#hasTimestamp> "1000" <http://ex/meta> .
<http://ex/g1> <http://ex/meta#hasTimestamp> "1000" .
<http://ex/run> <http://ex/meta#note> "static" .
"""


def test_nquads_oracle_layout(tmp_path: Path) -> None:
    path = write(tmp_path, "oracle.nq", ORACLE_LAYOUT)
    report = ReadReport()
    elements = list(read_stream(path, "nquads", report=report))
    assert [(e.object, e.t, e.graph) for e in elements] == [
        ('"g1-a"', 1000, None),
        ('"g1-b"', 1000, None),
        ('"g3-a"', 1000, None),
        ('"g2-a"', 2000, None),
        ('"g2-b"', 2000, None),
    ]
    assert (report.elements, report.skipped) == (5, 1)
    assert "skipped 1 statements" in (report.summary() or "")
    assert detect_format(path) == "nquads"


def test_nquads_oracle_layout_timestamp_inside_graph(tmp_path: Path) -> None:
    text = (
        f'<http://ex/a> <http://ex/hasTimestamp> "7" <http://ex/a> .\n{S} {P} "a" <http://ex/a> .\n'
        f'<http://ex/obs> <http://ex/hasTimestamp> "99" <http://ex/a> .\n'
    )
    elements = list(read_stream(write(tmp_path, "inside.nq", text), "nquads"))
    assert [(e.subject, e.object, e.t) for e in elements] == [(S, '"a"', 7), ("<http://ex/obs>", '"99"', 7)]


@pytest.mark.parametrize(
    ("extra", "line", "expected"),
    [
        (f"{S} {P} <x:o> <http://ex/g9> .\n", 10, "graph <http://ex/g9> has no timestamp"),
        ('<http://ex/g1> <http://ex/meta#hasTimestamp> "3000" .\n', 10, "two timestamps: 1000 and 3000"),
        ('<http://ex/g3> <http://ex/meta#hasTimestamp> "soon" .\n', 10, "expected an integer time"),
    ],
)
def test_nquads_oracle_layout_errors(tmp_path: Path, extra: str, line: int, expected: str) -> None:
    path = write(tmp_path, "oracle.nq", ORACLE_LAYOUT + extra)
    message = error_of(path, "nquads")
    assert message.startswith(f"{path}:{line}: ") and expected in message, message


def test_nquads_without_timestamps(tmp_path: Path) -> None:
    path = write(tmp_path, "plain.nq", f"{S} {P} <x:o> .\n")
    assert "no timestamped graphs" in error_of(path, "nquads")
    empty = write(tmp_path, "empty.nq", "# nothing\n")  # an empty stream, as in YABench text and Parquet
    assert list(read_stream(empty, "nquads")) == []


# --- CSRBench directory --------------------------------------------------------------------


def csrbench_dir(tmp_path: Path) -> Path:
    root = tmp_path / "stream"
    root.mkdir()
    prefix = "@prefix : <http://ex/> .\n@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
    (root / "data_10.ttl").write_text(prefix + ":s10 :p 1.5 .\n", encoding="utf-8")
    (root / "data_2.ttl").write_text(prefix + ':s2 :p "two"@en ; :q [ :r :x ] .\n', encoding="utf-8")
    (root / "data_01.ttl").write_text(prefix + ":s1 :p :o1, :o0 .\n", encoding="utf-8")
    (root / "README.txt").write_text("not a stream file", encoding="utf-8")
    return root


def test_csrbench_dir(tmp_path: Path) -> None:
    root = csrbench_dir(tmp_path)
    assert detect_format(root) == "csrbench-dir"
    elements = list(read_stream(root, "csrbench-dir", interval_ms=500))
    assert elements == [
        StreamElement("<http://ex/s1>", "<http://ex/p>", "<http://ex/o0>", 500),
        StreamElement("<http://ex/s1>", "<http://ex/p>", "<http://ex/o1>", 500),
        StreamElement("<http://ex/s2>", "<http://ex/p>", '"two"@en', 1000),
        StreamElement("<http://ex/s2>", "<http://ex/q>", "_:data_2_b0", 1000),
        StreamElement("_:data_2_b0", "<http://ex/r>", "<http://ex/x>", 1000),
        StreamElement("<http://ex/s10>", "<http://ex/p>", f'"1.5"^^<{XSD}decimal>', 5000),
    ]
    assert next(read_stream(root, "csrbench-dir")).t == 1000


def test_csrbench_dir_errors(tmp_path: Path) -> None:
    root = csrbench_dir(tmp_path)
    (root / "data_3.ttl").write_text("@prefix : <http://ex/> .\n:a :b :c .\n:a :b .\n", encoding="utf-8")
    message = error_of(root, "csrbench-dir")
    assert message.startswith(f"{root / 'data_3.ttl'}:3:") and "Turtle syntax error" in message, message
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no data_NN.ttl files" in error_of(empty, "csrbench-dir")
    assert "interval" in error_of(root, "csrbench-dir", interval_ms=0)


# --- Parquet -------------------------------------------------------------------------------


def test_parquet_errors(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "s.parquet"
    write_stream(path, [StreamElement(S, P, '"a"', 10), StreamElement(S, P, '"b"', 20, "<http://g>")], "parquet")
    assert detect_format(path) == "parquet"
    renamed = tmp_path / "s.data"
    renamed.write_bytes(path.read_bytes())
    assert detect_format(renamed) == "parquet"

    table = pa.table({"subject": [S, S, S], "predicate": [P, P, P], "object": ["<x:o>", "<x:o>", "<x:o>"], "t": [5, 3, 4]})
    pq.write_table(table, tmp_path / "back.parquet")
    assert error_of(tmp_path / "back.parquet", "parquet") == f"{tmp_path / 'back.parquet'}: row 2: time goes backwards: 3 after 5"
    report = ReadReport()
    assert [e.t for e in read_stream(tmp_path / "back.parquet", "parquet", on_disorder="warn", report=report)] == [5, 3, 4]
    assert (report.disorders, report.first_disorder_line, report.elements) == (1, 2, 3)

    pq.write_table(table.drop_columns(["t"]), tmp_path / "no_t.parquet")
    assert "missing column 't'" in error_of(tmp_path / "no_t.parquet", "parquet")
    pq.write_table(table.set_column(3, "t", pa.array(["5", "6", "7"])), tmp_path / "str_t.parquet")
    assert "expected int64" in error_of(tmp_path / "str_t.parquet", "parquet")
    bad = table.set_column(2, "object", pa.array(["<x:o>", "oops", None]))
    pq.write_table(bad, tmp_path / "bad.parquet")
    assert "row 3: object is null" in error_of(tmp_path / "bad.parquet", "parquet")
    pq.write_table(table.set_column(2, "object", pa.array(["<x:o>", "oops", "<x:o>"])), tmp_path / "term.parquet")
    assert "row 2: expected an N-Triples term in object" in error_of(tmp_path / "term.parquet", "parquet")
    not_parquet = write(tmp_path, "x.parquet", "hello")
    assert "not a readable Parquet file" in error_of(not_parquet, "parquet")


def test_parquet_batches_and_partial_cleanup(tmp_path: Path) -> None:
    from rsp_workbench.streams.parquet import ParquetStreamWriter

    elements = [StreamElement(S, P, f'"{i}"', i // 3) for i in range(1000)]
    with ParquetStreamWriter(tmp_path / "s.parquet", row_group_size=128) as writer:
        writer.write_all(elements)
    assert list(read_stream(tmp_path / "s.parquet", "parquet")) == elements
    with pytest.raises(RuntimeError):
        with ParquetStreamWriter(tmp_path / "broken.parquet") as writer:
            writer.write(elements[0])
            raise RuntimeError("interrupted")
    assert list(tmp_path.glob("broken*")) == []
    with pytest.raises(UserError, match="goes back in time"):
        with ParquetStreamWriter(tmp_path / "order.parquet") as writer:
            writer.write(elements[10])
            writer.write(elements[0])


# --- format detection ----------------------------------------------------------------------


def test_detect_format(tmp_path: Path) -> None:
    assert detect_format(write(tmp_path, "a.stream", "# header\n" + SG1_LINES)) == "yabench"
    assert detect_format(write(tmp_path, "a.txt", f"{S} {P} <x:o> <urn:rspwb:t:0> .\n")) == "nquads"
    assert detect_format(tmp_path / "x.nq") == "nquads"
    with pytest.raises(UserError, match="cannot tell the stream format"):
        detect_format(write(tmp_path, "a.csv", "a,b,c\n"))


@pytest.mark.parametrize("fmt, line", [
    ("yabench", f'{S} {P} <urn:x> "1" .\n{S} <mailto:a@b.c> "2"^^<tag:x,2020:t> "2" .\n'),
    ("nquads", f"{S} {P} <urn:x> <urn:rspwb:t:1> .\n{S} <mailto:a@b.c> \"2\"^^<tag:x,2020:t> <urn:rspwb:t:2> .\n"),
])
def test_absolute_iris_of_any_scheme_are_read(tmp_path: Path, fmt: str, line: str) -> None:
    elements = list(read_stream(write(tmp_path, f"s.{fmt}", line), fmt))
    assert [e.object for e in elements] == ["<urn:x>", '"2"^^<tag:x,2020:t>']


@pytest.mark.parametrize("fmt, text, column, token", [
    ("yabench", f'{S} {P} <x:o> "0" .\n{S} {P} <../o> "1" .\n', 47, "<../o>"),
    ("yabench", f'{S} {P} <x:o> "0" .\n{S} {P} "1"^^<{"d" * 60}> "1" .\n', 47, "<" + "d" * 38 + "…"),
    ("yabench", f'{S} {P} <x:o> "0" .\n<\\u0068ttp://ex.org/s> {P} <x:o> "1" .\n', 1, "<\\\\u0068ttp://ex.org/s>"),
    ("nquads", f"{S} {P} <x:o> <urn:rspwb:t:0> .\n{S} {P} <x:o> <#g> .\n", 53, "<#g>"),
])
def test_a_relative_iri_is_named_at_its_line_and_column(tmp_path: Path, fmt: str, text: str, column: int,
                                                        token: str) -> None:
    """A stream's IRIs are absolute with a plainly written scheme; the message quotes the IRI, cut short."""
    path = write(tmp_path, f"bad.{fmt}", text)
    message = error_of(path, fmt)
    assert message.startswith(f"{path}:2:{column}: relative IRI '{token}'"), message


def test_the_last_element_time_is_read_from_the_end_of_a_text_stream(tmp_path: Path) -> None:
    """What the Spark path takes as the stream's last time (the default --end) without reading the stream."""
    from rsp_workbench.streams.readers import last_element_time

    yabench = tmp_path / "s.stream"
    yabench.write_text('<http://e/a> <http://e/p> "1" "5" .\n<http://e/a> <http://e/p> "2" "7" .\n# end\n\n',
                       encoding="utf-8")
    nquads = tmp_path / "s.nq"
    nquads.write_text("<http://e/a> <http://e/p> <http://e/b> <urn:rspwb:t:12> .\n", encoding="utf-8")
    broken = tmp_path / "b.stream"
    broken.write_text('<http://e/a> <http://e/p> "1" "5" .\n<http://e/a> "7" .\n', encoding="utf-8")
    assert last_element_time(yabench, "yabench") == 7
    assert last_element_time(nquads, "nquads") == 12
    assert last_element_time(broken, "yabench") is None  # the reader names the line
