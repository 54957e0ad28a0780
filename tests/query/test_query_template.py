"""Query templates: ``${NAME}`` (YABench) and ``%NAME%`` (CSRBench) placeholders."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsp_workbench.errors import UserError
from rsp_workbench.query.parser import parse_query
from rsp_workbench.query.template import fill_template, find_placeholders, template_variables
from tests.paths import DATA

QUERIES = DATA / "queries"


def test_template_variables_dollar_and_percent() -> None:
    text = "RANGE ${WSIZE} STEP ${WSLIDE}\nFILTER(?v > %TEMP%) ${WSIZE}"
    assert template_variables(text) == {"WSIZE", "WSLIDE", "TEMP"}


def test_template_variables_of_sample_files() -> None:
    assert template_variables((QUERIES / "csrbench_q1.cqels.rq").read_text()) == {"WSIZE", "WSLIDE", "TEMP"}
    assert template_variables((QUERIES / "csrbench_listing3_join.csparql.rq").read_text()) == {
        "WSIZE", "WSLIDE", "VARIATION_THRESHOLD"}
    assert template_variables((QUERIES / "rspql_coupon.rq").read_text()) == set()


def test_escape_and_percent_encoding_are_not_variables() -> None:
    text = 'FILTER(?x = "$${LITERAL}") <http://ex.org/caf%C3%A9> <http://ex.org/a%20b%2Fc>'
    assert template_variables(text) == set()
    assert fill_template(text, {}) == 'FILTER(?x = "${LITERAL}") <http://ex.org/caf%C3%A9> <http://ex.org/a%20b%2Fc>'


def test_fill_template_values() -> None:
    text = "[RANGE ${WSIZE}ms STEP %WSLIDE%ms] FILTER(?v > ${TEMP} && ?ok = ${OK}) ${NAME}"
    filled = fill_template(text, {"WSIZE": 1000, "WSLIDE": 500, "TEMP": 50.0, "OK": True, "NAME": "x", "UNUSED": 1})
    assert filled == "[RANGE 1000ms STEP 500ms] FILTER(?v > 50.0 && ?ok = true) x"


def test_missing_variable_names_it_with_line_and_column() -> None:
    text = "SELECT ?x\nWHERE {\n  FILTER(?v > ${TEMP})\n}"
    with pytest.raises(UserError) as info:
        fill_template(text, {"WSIZE": 1}, source="engine.query")
    error = info.value
    assert (error.file, error.line, error.column) == ("engine.query", 3, 15)
    assert "TEMP" in error.message and "--var TEMP=" in error.message
    assert str(error).startswith("engine.query:3:15: ")


def test_missing_percent_variable_is_located() -> None:
    with pytest.raises(UserError) as info:
        fill_template("a\n  b %VARIATION_THRESHOLD% c", {}, source="q.rq")
    assert (info.value.line, info.value.column) == (2, 5)
    assert "VARIATION_THRESHOLD" in info.value.message


@pytest.mark.parametrize(("text", "column"), [("x ${ BAD}", 3), ("x ${}", 3), ("x ${OPEN", 3)])
def test_malformed_placeholders_are_errors(text: str, column: int) -> None:
    with pytest.raises(UserError) as info:
        template_variables(text, source="t.rq")
    assert (info.value.file, info.value.line, info.value.column) == ("t.rq", 1, column)


def test_placeholders_keep_text_order() -> None:
    found = find_placeholders("${B} %A% $${C}")
    assert [(p.name, p.style) for p in found] == [("B", "dollar"), ("A", "percent"), ("C", "escape")]


def test_filled_template_parses_and_unfilled_one_is_a_located_error() -> None:
    text = (QUERIES / "yabench_avg.csparql.rq").read_text()
    query = parse_query(fill_template(text, {"WSIZE": "10s", "WSLIDE": "10s", "TEMP": 30}))
    assert query.windows[0].size_ms == 10_000
    with pytest.raises(UserError) as info:
        parse_query(text, source="avg.rq")
    assert (info.value.line, info.value.column) == (5, 53)
    assert "unfilled template variable ${WSIZE}" in info.value.message
