"""Query dialects: a parsed query written back as RSP-QL, C-SPARQL, CQELS-QL and RSP-JS's RSP-QL.

Round trips over every sample query of the repository (the sample experiments' queries
with their variables filled, and the query files under tests/data/queries): parse → write
→ parse gives the same model; a query written in the other dataset mode (named ↔ merged)
and back gives the original model again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rsp_workbench.cli.main import main
from rsp_workbench.errors import UserError
from rsp_workbench.experiment import load_experiment
from rsp_workbench.experiment.loader import apply_size
from rsp_workbench.experiment.runs import expand_runs
from rsp_workbench.query.model import ContinuousQuery, DatasetMode, QuerySyntax
from rsp_workbench.query.parser import parse_query
from rsp_workbench.query.template import fill_template
from rsp_workbench.query.writer import DIALECTS, iso_duration, parse_syntax_of, write_query
from tests.paths import ROOT

# `${WSIZE}` stands for a duration, `%WSIZE% MS` and `${WSIZE}ms` for a number
DATA_QUERY_VARIABLES = {"WSIZE": "5s", "WSLIDE": "5s", "TEMP": "50.0", "VARIATION_THRESHOLD": "10"}
DIALECT_OF = {QuerySyntax.RSPQL: "rspql", QuerySyntax.CSPARQL: "csparql", QuerySyntax.SPARQLSTREAM: "csparql",
              QuerySyntax.CQELS: "cqels"}


def sample_queries() -> list[Any]:
    """(id, text, syntax) of every sample query, once per distinct filled text."""
    found: dict[str, Any] = {}
    for path in sorted((ROOT / "sample_experiments").glob("*/*.yaml")):
        experiment = load_experiment(path)
        for run in expand_runs(apply_size(experiment, "smoke")):
            key = f"{path.parent.name}/{path.stem}:{run.query.id}"
            found.setdefault(run.query_text, pytest.param(run.query_text, run.query.syntax, id=key))
    for path in sorted((ROOT / "tests" / "data" / "queries").glob("*.rq")):
        text = path.read_text(encoding="utf-8").replace("${WSIZE}ms", "5000ms").replace("${WSLIDE}ms", "5000ms")
        text = text.replace("%WSIZE%", "5000").replace("%WSLIDE%", "5000")
        if "${" in text or "%" in text:
            text = fill_template(text, DATA_QUERY_VARIABLES)
        found.setdefault(text, pytest.param(text, None, id=f"tests/{path.name}"))
    return list(found.values())


def model(query: ContinuousQuery, *, r2s: bool = True, graphs: bool = True, algebra: bool = True) -> dict[str, Any]:
    """What a translation must keep (not the text, positions or the syntax label).

    Window names are compared by position: CQELS-QL has none, so its windows get generated
    ones, and the algebra is compared with each window's IRI replaced by its position.
    """
    names = {window.name: f"<window {index}>" for index, window in enumerate(query.windows)}
    text = _canonical(query.algebra.algebra, names)
    return {
        "windows": [(w.stream, w.size_ms, w.slide_ms) for w in query.windows],
        "dataset_mode": query.dataset_mode,
        "graphs": (query.default_graphs, query.named_graphs) if graphs else None,
        "form": query.form,
        "variables": query.variables,
        "r2s": query.r2s if r2s else None,
        "algebra": text if algebra else None,
    }


def _canonical(node: Any, windows: dict[str, str]) -> Any:
    """The algebra as plain values: window IRIs by position, blank nodes unlabelled (`[ … ]`
    gets fresh random labels in every parse) and each BGP's triples sorted."""
    from rdflib.plugins.sparql.parserutils import CompValue
    from rdflib.term import BNode, Identifier

    if isinstance(node, CompValue):
        items = {key: _canonical(value, windows) for key, value in node.items() if key != "_vars"}
        if node.name == "BGP":
            items["triples"] = sorted(items["triples"])
        return (node.name, sorted(items.items(), key=lambda item: item[0]))
    if isinstance(node, BNode):
        return "_:b"
    if isinstance(node, Identifier):
        return windows.get(str(node), node.n3())
    if isinstance(node, dict):
        return sorted((str(k), _canonical(v, windows)) for k, v in node.items())
    if isinstance(node, (list, tuple)):
        return [_canonical(item, windows) for item in node]
    if isinstance(node, (set, frozenset)):
        return sorted(repr(_canonical(item, windows)) for item in node)
    return repr(node)


@pytest.mark.parametrize("text, syntax", sample_queries())
def test_every_sample_query_round_trips_through_every_dialect(text: str, syntax: str | None) -> None:
    original = parse_query(text, syntax=syntax)
    if original.syntax is QuerySyntax.SPARQL:
        pytest.skip("a one-time SPARQL query (YABench's oracle query) has no stream dialect")
    own = DIALECT_OF[original.syntax]
    written = {}
    for dialect in DIALECTS:
        try:
            written[dialect] = write_query(original, dialect)
        except UserError as error:
            assert "cannot write this query in" in str(error)
            assert dialect != own  # a query can always be written in its own dialect family
            continue
        again = parse_query(written[dialect], syntax=parse_syntax_of(dialect))
        r2s = dialect in ("rspql", "rspjs") and own in ("rspql", "rspjs")
        graphs = dialect != "rspjs"
        if again.dataset_mode is original.dataset_mode:
            assert model(again, r2s=r2s, graphs=graphs) == model(original, r2s=r2s, graphs=graphs)
        else:
            # named ↔ merged and back: merged → named → merged gives the original model; named →
            # merged → named keeps the windows and the answer but not always the algebra's shape
            # (a FILTER outside the window's group moves inside it)
            back = parse_query(write_query(again, own), syntax=parse_syntax_of(own))
            exact = original.dataset_mode is DatasetMode.MERGED
            assert model(back, r2s=False, algebra=exact) == model(original, r2s=False, algebra=exact)
            assert model(again, r2s=False, graphs=graphs, algebra=False)["windows"] == model(original)["windows"]
        # writing what was read gives the same text again (a fixed point)
        assert write_query(again, dialect) == written[dialect]
    assert own in written


def test_rspjs_dialect_is_what_rsp_js_reads() -> None:
    query = parse_query((ROOT / "tests/data/queries/rspql_coupon.rq").read_text(encoding="utf-8"))
    text = write_query(query, "rspjs")
    lines = text.splitlines()
    # rsp-js/dist/rspql.js reads these line by line: REGISTER, FROM NAMED WINDOW … ON STREAM, WINDOW at line start
    assert "REGISTER RStream <http://example.org/couponAlerts> AS" in lines
    assert ("FROM NAMED WINDOW <http://example.org/w1> ON STREAM <http://example.org/S_nearby> "
            "[RANGE 5000 STEP 2000]") in lines
    assert sum(line.strip().startswith("WINDOW <http://example.org/w") for line in lines) == 2
    assert "FROM <" not in text  # static data reaches RSP-JS through the register message


def test_parser_reads_on_stream_and_sizes_without_units_as_milliseconds() -> None:
    query = parse_query("""PREFIX : <http://e/>
SELECT ?s FROM NAMED WINDOW :w ON STREAM :s [RANGE 10000 STEP 5000]
WHERE { WINDOW :w { ?s ?p ?o } }""")
    assert [(w.name, w.stream, w.size_ms, w.slide_ms) for w in query.windows] == [("http://e/w", "http://e/s", 10000, 5000)]
    iso = parse_query("SELECT ?s FROM NAMED WINDOW <urn:w> ON <urn:s> [RANGE PT1M30S STEP PT0.5S] "
                      "WHERE { WINDOW <urn:w> { ?s ?p ?o } }")
    assert (iso.windows[0].size_ms, iso.windows[0].slide_ms) == (90_000, 500)


def test_c_sparql_still_needs_units() -> None:
    with pytest.raises(UserError, match="no time unit"):
        parse_query("SELECT ?x FROM STREAM <http://s> [RANGE 10 STEP 10s] WHERE { ?x ?p ?o }")


@pytest.mark.parametrize("ms, text", [(10_000, "PT10S"), (500, "PT0.5S"), (90_000, "PT1M30S"), (3_600_000, "PT1H"),
                                      (0, "PT0S"), (1_250, "PT1.25S")])
def test_iso_durations(ms: int, text: str) -> None:
    assert iso_duration(ms) == text


def test_cli_translate(capsys: pytest.CaptureFixture[str]) -> None:
    path = ROOT / "tests/data/queries/csrbench_rooms.csparql.rq"
    assert main(["query", "translate", str(path), "--to", "cqels"]) == 0
    out = capsys.readouterr().out
    assert "STREAM <http://www.example.org/stream1> [RANGE 10s SLIDE 10s] {" in out
    assert parse_query(out).windows[0].size_ms == 10_000


def test_cli_translate_refuses_what_the_dialect_cannot_say(capsys: pytest.CaptureFixture[str]) -> None:
    path = ROOT / "tests/data/queries/rspql_coupon.rq"
    assert main(["query", "translate", str(path), "--to", "csparql"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "rspql_coupon.rq" in err and "2 windows" in err
