"""Continuous-query parsing: RSP-QL, C-SPARQL, SPARQLstream and CQELS-QL into one model."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsp_workbench.core.semantics import R2S
from rsp_workbench.errors import UserError
from rsp_workbench.query.model import ContinuousQuery, DatasetMode, QueryForm, QuerySyntax
from rsp_workbench.query.parser import CQELS_CONTINUOUS_SLIDE_MS, parse_query
from rsp_workbench.query.template import fill_template
from tests.paths import DATA

QUERIES = DATA / "queries"
MALFORMED = QUERIES / "malformed"
EX = "http://example.org/"


def load(name: str, **variables: str | int | float) -> ContinuousQuery:
    path = QUERIES / name
    return parse_query(fill_template(path.read_text(), variables, source=str(path)), source=str(path))


def error_of(text: str, **kwargs: object) -> UserError:
    with pytest.raises(UserError) as info:
        parse_query(text, source="q.rq", **kwargs)  # type: ignore[arg-type]
    return info.value


# -- C-SPARQL --------------------------------------------------------------------------


def test_csrbench_rooms_query_listing_1() -> None:
    query = load("csrbench_rooms.csparql.rq")
    assert query.syntax is QuerySyntax.CSPARQL
    assert query.name == "query"
    assert query.r2s is None and query.output_stream is None
    assert query.dataset_mode is DatasetMode.MERGED
    assert query.form is QueryForm.SELECT
    assert query.variables == ("room",)
    (window,) = query.windows
    assert window.name == "urn:rspwb:window:0" and window.generated_name
    assert window.stream == "http://www.example.org/stream1"
    assert (window.size_ms, window.slide_ms, window.kind) == (10_000, 10_000, "tumbling")
    assert window.position == (1, 38)
    assert query.default_graphs == () and query.named_graphs == ()
    for keyword in ("REGISTER", "STREAM", "RANGE", "FROM"):
        assert keyword not in query.sparql
    assert query.sparql.startswith("SELECT ?room WHERE {")


def test_rooms_sparql_evaluates_over_a_merged_window_snapshot() -> None:
    from rdflib import Graph, URIRef

    query = load("csrbench_rooms.csparql.rq")
    snapshot = Graph()
    detected = URIRef("http://ex.org/detectedAt")
    snapshot.add((URIRef("http://ex.org/m1"), detected, URIRef("http://ex.org/r1")))
    snapshot.add((URIRef("http://ex.org/m2"), detected, URIRef("http://ex.org/r1")))
    snapshot.add((URIRef("http://ex.org/m2"), detected, URIRef("http://ex.org/r2")))
    rows = [str(row[0]) for row in snapshot.query(query.algebra)]
    assert rows == ["http://ex.org/r1"]


def test_csrbench_listing_3_join_with_named_stream_and_templates() -> None:
    query = load("csrbench_listing3_join.csparql.rq", WSIZE=5, WSLIDE=5, VARIATION_THRESHOLD=2.5)
    assert query.syntax is QuerySyntax.CSPARQL
    assert query.name == "q"
    assert query.dataset_mode is DatasetMode.MERGED  # FROM NAMED STREAM is merged, as in C-SPARQL
    (window,) = query.windows
    assert window.stream == "http://cwi.nl/SRBench/observations"
    assert (window.size_ms, window.slide_ms) == (5000, 5000)
    assert window.position == (4, 1)
    assert query.variables == ("sensor", "ob1", "value1", "obs")
    assert "2.5" in query.sparql and "NAMED" not in query.sparql
    assert "Filter" in query.algebra_text()


def test_avg_aggregate_query() -> None:
    from rdflib import BNode, Graph, Literal, Namespace, URIRef

    query = load("yabench_avg.csparql.rq", WSIZE="5s", WSLIDE="1s", TEMP=50.0)
    assert query.name == "avgTemperature"
    assert query.variables == ("sensor", "avg")
    assert (query.windows[0].size_ms, query.windows[0].slide_ms, query.windows[0].kind) == (5000, 1000, "sliding")
    assert "AggregateJoin AVG(?value)" in query.algebra_text()
    om = Namespace("http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#")
    weather = Namespace("http://knoesis.wright.edu/ssw/ont/weather.owl#")
    snapshot = Graph()
    for i, value in enumerate((60.0, 70.0, 10.0)):
        obs, result = URIRef(f"{EX}obs{i}"), BNode()
        snapshot.add((obs, om.observedProperty, weather._AirTemperature))
        snapshot.add((obs, om.procedure, URIRef(f"{EX}sensor1")))
        snapshot.add((obs, om.result, result))
        snapshot.add((result, om.floatValue, Literal(value)))
    rows = list(snapshot.query(query.algebra))
    assert [(str(s), float(a)) for s, a in rows] == [(f"{EX}sensor1", 65.0)]


@pytest.mark.parametrize(
    ("window", "size", "slide"),
    [
        ("[RANGE 500ms STEP 100ms]", 500, 100),
        ("[RANGE 10s STEP 10s]", 10_000, 10_000),
        ("[RANGE 2m STEP 30s]", 120_000, 30_000),
        ("[RANGE 1h STEP 1m]", 3_600_000, 60_000),
        ("[RANGE 1d TUMBLING]", 86_400_000, 86_400_000),
        ("[RANGE 10 S STEP 5 MS]", 10_000, 5),
        ("[range 1.5s step 250ms]", 1500, 250),
        ("[RANGE PT1M30S STEP PT10S]", 90_000, 10_000),
        ("[RANGE 10s TUMBLING]", 10_000, 10_000),
    ],
)
def test_csparql_window_units(window: str, size: int, slide: int) -> None:
    query = parse_query(f"REGISTER QUERY q AS SELECT ?x FROM STREAM <{EX}s> {window} WHERE {{ ?x ?p ?o }}")
    assert (query.windows[0].size_ms, query.windows[0].slide_ms) == (size, slide)


def test_csparql_register_stream_construct_and_static_graphs() -> None:
    text = f"""PREFIX ex: <{EX}>
REGISTER STREAM alerts COMPUTED EVERY 5s AS
CONSTRUCT {{ ?x ex:alert true }}
FROM STREAM ex:s1 [RANGE 10s STEP 5s]
FROM STREAM ex:s2 [RANGE 4s TUMBLING]
FROM ex:static
FROM NAMED ex:other
WHERE {{ ?x ex:p ?o }}"""
    query = parse_query(text)
    assert query.syntax is QuerySyntax.CSPARQL and query.name == "alerts"
    assert query.form is QueryForm.CONSTRUCT and query.variables == ()
    assert query.computed_every_ms == 5000
    assert [w.name for w in query.windows] == ["urn:rspwb:window:0", "urn:rspwb:window:1"]
    assert query.streams == (f"{EX}s1", f"{EX}s2")
    assert query.default_graphs == (f"{EX}static",) and query.named_graphs == (f"{EX}other",)
    assert "FROM" not in query.sparql and "COMPUTED" not in query.sparql
    assert query.sparql.splitlines()[1].startswith("CONSTRUCT")  # clauses alone on a line vanish


# -- SPARQLstream -----------------------------------------------------------------------


def test_csrbench_listing_2_sparqlstream() -> None:
    query = load("csrbench_listing2.sparqlstream.rq", WSIZE=100, WSLIDE=10, TEMP=30)
    assert query.syntax is QuerySyntax.SPARQLSTREAM
    assert query.dataset_mode is DatasetMode.MERGED
    assert (query.windows[0].size_ms, query.windows[0].slide_ms) == (100, 10)
    assert query.variables == ("sensor", "tempvalue", "obs")


def test_sparqlstream_select_istream_and_default_slide() -> None:
    query = parse_query(f"SELECT ISTREAM ?x FROM NAMED STREAM <{EX}s> [NOW-10 S] WHERE {{ ?x ?p ?o }}")
    assert query.r2s is R2S.ISTREAM
    (window,) = query.windows
    assert (window.size_ms, window.slide_ms, window.slide_given) == (10_000, 10_000, False)
    assert "ISTREAM" not in query.sparql


# -- RSP-QL ------------------------------------------------------------------------------


def test_rspql_coupon_query_example_10() -> None:
    query = load("rspql_coupon.rq")
    assert query.syntax is QuerySyntax.RSPQL
    assert query.r2s is R2S.RSTREAM
    assert query.output_stream == f"{EX}couponAlerts"
    assert query.dataset_mode is DatasetMode.NAMED
    assert query.default_graphs == (f"{EX}shops",)
    w1, w2 = query.windows
    assert (w1.name, w1.stream, w1.size_ms, w1.slide_ms, w1.kind) == (f"{EX}w1", f"{EX}S_nearby", 5000, 2000, "sliding")
    assert (w2.name, w2.stream, w2.size_ms, w2.slide_ms, w2.kind) == (f"{EX}w2", f"{EX}S_coupon", 2000, 2000, "tumbling")
    assert not w1.generated_name and w1.position == (7, 1) and w2.position == (8, 1)
    assert query.variables == ("shopper", "shop", "shop_owner", "coupon")
    assert "GRAPH :w1 {" in query.sparql and "WINDOW" not in query.sparql
    assert query.warnings == ()


def test_rspql_coupon_answers_at_t8() -> None:
    """RSP-QL Example 10: at t=8, W1 = (3,8] and W2 = (6,8] give carl and eve at shop a."""
    from rdflib import Dataset, Literal, URIRef

    query = load("rspql_coupon.rq")

    def iri(local: str) -> URIRef:
        return URIRef(EX + local)

    dataset = Dataset()
    shops = dataset.default_graph
    shops.add((iri("alice"), iri("owns"), iri("a")))
    shops.add((iri("bob"), iri("owns"), iri("b")))
    w1 = dataset.graph(iri("w1"))
    for shopper, shop in (("carl", "a"), ("eve", "a"), ("diana", "b")):
        w1.add((iri(shopper), iri("isNearby"), iri(shop)))
    dataset.graph(iri("w2")).add((iri("alice"), iri("offers"), Literal("10% discount on")))
    rows = sorted((str(r[0])[len(EX):], str(r[1])[len(EX):]) for r in dataset.query(query.algebra))
    assert rows == [("carl", "a"), ("eve", "a")]


def test_rspql_without_register_and_with_prefixes_base_and_variable_window() -> None:
    text = f"""BASE <{EX}>
PREFIX ex: <{EX}>
SELECT * FROM NAMED WINDOW <w> ON ex:s [RANGE PT10S]
WHERE {{ WINDOW ?win {{ ?b ex:p ?a }} }}"""
    query = parse_query(text, syntax="rspql")
    assert query.r2s is None
    (window,) = query.windows
    assert (window.name, window.stream, window.slide_ms, window.slide_given) == (f"{EX}w", f"{EX}s", 10_000, False)
    assert query.variables == ("win", "b", "a")  # SELECT *: order of first appearance


def test_rspql_unused_window_is_a_warning() -> None:
    text = f"""PREFIX : <{EX}>
SELECT ?x FROM NAMED WINDOW :w1 ON :s [RANGE PT2S STEP PT1S]
FROM NAMED WINDOW :w2 ON :s [RANGE PT4S STEP PT1S]
WHERE {{ WINDOW :w1 {{ ?x ?p ?o }} }}"""
    query = parse_query(text)
    assert len(query.warnings) == 1 and f"{EX}w2" in query.warnings[0]


# -- CQELS-QL ----------------------------------------------------------------------------


def test_csrbench_style_cqels_query() -> None:
    query = load("csrbench_q1.cqels.rq", WSIZE=1000, WSLIDE=1000, TEMP=20)
    assert query.syntax is QuerySyntax.CQELS
    assert query.dataset_mode is DatasetMode.NAMED
    assert query.r2s is None and query.name is None
    (window,) = query.windows
    assert (window.name, window.generated_name) == ("urn:rspwb:window:0", True)
    assert (window.size_ms, window.slide_ms) == (1000, 1000)
    assert window.position == (5, 3)
    assert "GRAPH <urn:rspwb:window:0> {" in query.sparql and "STREAM" not in query.sparql
    assert query.variables == ("sensor", "tempvalue", "obs")


def test_cqels_range_without_slide_slides_continuously_and_windows_get_stable_names() -> None:
    text = f"""PREFIX ex: <{EX}>
SELECT ?x ?y WHERE {{
  STREAM ex:s [RANGE 5s] {{ ?x ex:p ?y }}
  STREAM ex:s [RANGE 10s SLIDE 2s] {{ ?y ex:q ?x }}
  GRAPH ex:static {{ ?x a ex:Thing }}
}}"""
    query = parse_query(text)
    first, second = query.windows
    assert (first.name, first.size_ms, first.slide_ms, first.slide_given) == (
        "urn:rspwb:window:0", 5000, CQELS_CONTINUOUS_SLIDE_MS, False)
    assert (second.name, second.size_ms, second.slide_ms) == ("urn:rspwb:window:1", 10_000, 2000)
    assert query.streams == (f"{EX}s",)
    assert parse_query(text) == query  # stable names: same text, same model


# -- syntax selection, model ---------------------------------------------------------------


def test_syntax_override_and_plain_sparql() -> None:
    rooms = (QUERIES / "csrbench_rooms.csparql.rq").read_text()
    assert parse_query(rooms, syntax="csparql").syntax is QuerySyntax.CSPARQL
    error = error_of(rooms, syntax="cqels")
    assert (error.file, error.line, error.column) == ("q.rq", 1, 1)
    assert "C-SPARQL" in error.message
    plain = parse_query("SELECT ?s WHERE { ?s ?p ?o }", syntax="sparql")
    assert plain.windows == () and plain.syntax is QuerySyntax.SPARQL
    with pytest.raises(UserError, match="unknown query syntax"):
        parse_query(rooms, syntax="n3")


def test_describe_is_json_friendly() -> None:
    payload = load("rspql_coupon.rq").describe()
    assert json.loads(json.dumps(payload)) == payload
    assert payload["syntax"] == "rspql" and payload["r2s"] == "rstream"
    assert [w["size"] for w in payload["windows"]] == ["5s", "2s"]
    assert "Graph :w1" in payload["algebra"]


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "line", "column", "fragment"),
    [
        ("unknown_unit.rq", 3, 34, "unknown time unit 'parsecs'"),
        ("range_without_number.rq", 3, 31, "RANGE needs a duration"),
        ("slide_zero.rq", 3, 37, "slide must be greater than 0"),
        ("undeclared_window.rq", 6, 10, "never declared"),
        ("body_syntax_error.rq", 6, 3, "SPARQL syntax error"),
        ("body_error_after_rewrite.rq", 2, 100, "SPARQL syntax error"),
        ("service.rq", 4, 3, "SERVICE"),
        ("cqels_now.rq", 3, 22, "[NOW]"),
        ("csparql_missing_step.rq", 1, 31, "STEP"),
        ("update.rq", 2, 1, "Update"),
    ],
)
def test_malformed_queries_name_file_line_and_column(name: str, line: int, column: int, fragment: str) -> None:
    path = MALFORMED / name
    with pytest.raises(UserError) as info:
        parse_query(path.read_text(), source=str(path))
    error = info.value
    assert (error.file, error.line, error.column) == (str(path), line, column), str(error)
    assert fragment in error.message
    assert str(error).startswith(f"{path}:{line}:{column}: ")


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        ("SELECT ?x FROM STREAM <http://s> [RANGE 10 STEP 10s] WHERE { ?x ?p ?o }", 1, 41, "no time unit"),
        ("SELECT ?x WHERE { STREAM <http://s> [TRIPLES 5] { ?x ?p ?o } }", 1, 38, "count-based"),
        ("SELECT ?x FROM STREAM ex:s [RANGE 1s STEP 1s] WHERE { ?x ?p ?o }", 1, 23, "unknown prefix"),
        ("SELECT ?x FROM STREAM <http://s> [RANGE 1s STEP 1s WHERE { ?x ?p ?o }", 1, 34, "not closed"),
        ('SELECT ?x WHERE { STREAM <http://s> [RANGE 1s] { ?x ?p "abc } }', 1, 56, "unterminated string"),
        ("SELECT ?x\nWHERE { ?x ?p ?o }", 1, 1, "no stream window"),
        ("SELECT ?x FROM STREAM <http://s> [RANGE ${WSIZE} STEP 1s] WHERE { ?x ?p ?o }", 1, 41, "unfilled template"),
        ("REGISTER QUERY q AS SELECT ?x FROM STREAM <http://s> [RANGE 1s STEP 1s]\n"
         "WHERE { STREAM <http://s> [RANGE 1s] { ?x ?p ?o } }", 2, 9, "use one syntax"),
        ("SELECT ?x FROM NAMED WINDOW <http://w> <http://s> [RANGE PT1S] WHERE { WINDOW <http://w> { ?x ?p ?o } }",
         1, 40, "expected ON"),
        ("SELECT ?x FROM NAMED WINDOW <http://w> ON <http://s> [RANGE PT1S]\n"
         "FROM NAMED WINDOW <http://w> ON <http://s> [RANGE PT2S] WHERE { WINDOW <http://w> { ?x ?p ?o } }",
         2, 19, "declared twice"),
        ("REGISTER FOO q AS SELECT ?x WHERE { ?x ?p ?o }", 1, 10, "after REGISTER"),
        ("SELECT ?x WHERE { STREAM <http://s> [RANGE 0.5ms] { ?x ?p ?o } }", 1, 44, "whole number"),
        ("SELECT ?x WHERE { STREAM <http://s> [RANGE 0s] { ?x ?p ?o } }", 1, 38, "size must be greater than 0"),
        ("SELECT ?x WHERE { STREAM <http://s> [] { ?x ?p ?o } }", 1, 37, "empty window"),
        ("SELECT ?x WHERE { STREAM <http://s> [RANGE 5s] { ?x ?p ?o } ", 1, 60, "end of the query"),
        ("SELECT ?x FROM STREAM <http://s> [RANGE 5s STEP 1s TO NOW] WHERE { ?x ?p ?o }", 1, 52, "unexpected 'TO'"),
    ],
)
def test_inline_errors_are_located(text: str, line: int, column: int, fragment: str) -> None:
    error = error_of(text)
    assert (error.file, error.line, error.column) == ("q.rq", line, column), str(error)
    assert fragment in error.message


_VALID = [
    (QUERIES / "csrbench_rooms.csparql.rq").read_text(),
    (QUERIES / "rspql_coupon.rq").read_text(),
    fill_template((QUERIES / "csrbench_q1.cqels.rq").read_text(), {"WSIZE": 5, "WSLIDE": 5, "TEMP": 1}),
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    which=st.integers(0, len(_VALID) - 1),
    start=st.integers(0, 600),
    length=st.integers(0, 12),
    insert=st.sampled_from(["", "[", "]", "{", "}", "STREAM", "WINDOW", "RANGE", "<", '"', "#", "-1s", "${X}", "?"]),
)
@pytest.mark.slow
def test_mutated_queries_never_raise_anything_but_located_user_errors(
    which: int, start: int, length: int, insert: str
) -> None:
    original = _VALID[which]
    start = min(start, len(original))
    text = original[:start] + insert + original[start + length :]
    try:
        parse_query(text, source="fuzz.rq")
    except UserError as error:
        assert error.file == "fuzz.rq" and error.line is not None and error.column is not None, str(error)


# -- CLI ---------------------------------------------------------------------------------------


def run_cli(argv: list[str]) -> int:
    from rsp_workbench.cli import query_cmd

    parser = argparse.ArgumentParser(prog="rspwb")
    query_cmd.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return int(args.func(args))


def test_cli_query_explain_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["query", "explain", str(QUERIES / "rspql_coupon.rq")]) == 0
    out = capsys.readouterr().out
    for expected in ("RSP-QL (rspql)", "RSTREAM", "http://example.org/S_nearby", "5s", "sliding",
                     "named:", "GRAPH :w1", "algebra", "Graph :w2"):
        assert expected in out


def test_cli_query_explain_json_with_vars(capsys: pytest.CaptureFixture[str]) -> None:
    path = QUERIES / "csrbench_q1.cqels.rq"
    argv = ["query", "explain", str(path), "--var", "WSIZE=2000", "--var", "WSLIDE=500", "--var", "TEMP=40",
            "--json"]
    assert run_cli(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["syntax"] == "cqels"
    assert payload["windows"][0]["size_ms"] == 2000 and payload["windows"][0]["slide_ms"] == 500


def test_cli_query_explain_errors(tmp_path: Path) -> None:
    path = QUERIES / "csrbench_q1.cqels.rq"
    with pytest.raises(UserError) as info:
        run_cli(["query", "explain", str(path), "--var", "WSIZE=1"])
    assert (info.value.file, info.value.line, info.value.column) == (str(path), 5, 71)
    assert "WSLIDE" in info.value.message
    with pytest.raises(UserError, match="NAME=VALUE"):
        run_cli(["query", "explain", str(path), "--var", "WSIZE"])
    with pytest.raises(UserError, match="cannot read"):
        run_cli(["query", "explain", str(tmp_path / "missing.rq")])
    with pytest.raises(UserError, match="not C-SPARQL"):
        run_cli(["query", "explain", str(QUERIES / "rspql_coupon.rq"), "--syntax", "csparql"])
