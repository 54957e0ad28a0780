"""What the oracle cannot evaluate is refused when the query is parsed (so by `validate`), named and located."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsp_workbench.cli.main import main
from rsp_workbench.errors import UserError
from rsp_workbench.query.parser import parse_query

HEAD = """REGISTER QUERY q AS
PREFIX : <http://ex.org/>
SELECT ?a ?r
FROM STREAM <http://s> [RANGE 10s STEP 10s]
"""


@pytest.mark.parametrize(("where", "operator", "path"), [
    ("{ ?a :p+ ?r }", "+", "<http://ex.org/p>+"),
    ("{ ?a :p* ?r }", "*", "<http://ex.org/p>*"),
    ("{ ?a :p? ?r }", "?", "<http://ex.org/p>?"),
    ("{ ?a :p/:q ?r }", "/", "<http://ex.org/p>/<http://ex.org/q>"),
    ("{ ?a :p|:q ?r }", "|", "<http://ex.org/p>|<http://ex.org/q>"),
    ("{ ?a ^:p ?r }", "^", "^<http://ex.org/p>"),
    ("{ ?a !:p ?r }", "!", "!(<http://ex.org/p>)"),
    ("{ ?a :q ?b . FILTER(?b > 1) ?b :p+ ?r }", "+", "<http://ex.org/p>+"),
])
def test_a_property_path_is_refused_at_its_operator(where: str, operator: str, path: str) -> None:
    text = HEAD + "WHERE " + where + "\n"
    with pytest.raises(UserError) as caught:
        parse_query(text, source="q.rq")
    error = caught.value
    assert "property path" in error.message and path in error.message, error.message
    assert (error.file, error.line) == ("q.rq", 5)
    assert text.splitlines()[4][error.column - 1] == operator  # the column points at the operator


def test_service_is_refused_at_its_keyword() -> None:
    text = HEAD + "WHERE { ?a :p ?r . SERVICE <http://remote/sparql> { ?r :q ?x } }\n"
    with pytest.raises(UserError) as caught:
        parse_query(text, source="q.rq")
    assert "SERVICE (federated query) is not supported" in caught.value.message
    assert (caught.value.line, caught.value.column) == (5, text.splitlines()[4].index("SERVICE") + 1)


@pytest.mark.parametrize("where", [
    "{ ?a :p ?r . ?a :v ?x FILTER(?x + 1 > 2 && ?x * 2 < 9 && ?x / 2 != 1 && !(?x = 3)) }",
    "{ ?a :p ?r . ?a :v ?x BIND(?x * 2 AS ?y) }",
    "{ ?a a :Room ; :p ?r }",
])
def test_arithmetic_negation_and_rdf_type_are_not_paths(where: str) -> None:
    assert parse_query(HEAD + "WHERE " + where + "\n").variables


def test_validate_refuses_an_experiment_whose_query_has_a_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q.rq").write_text(HEAD + "WHERE { ?a :p+ ?r }\n", encoding="utf-8")
    (tmp_path / "s.stream").write_text('<http://ex.org/a> <http://ex.org/p> <http://ex.org/r> "1" .\n', encoding="utf-8")
    (tmp_path / "e.yaml").write_text("""name: paths
stream: {file: s.stream, format: yabench}
queries: [{id: q, file: q.rq}]
engines: [{id: e, type: secret, preset: csparql}]
""", encoding="utf-8")
    assert main(["validate", str(tmp_path / "e.yaml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "e.yaml:3: queries[0].file" in err and "q.rq line 5:14" in err
    assert "property path <http://ex.org/p>+" in err and "Traceback" not in err
