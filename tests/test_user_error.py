"""UserError's one-line form (FILE:LINE:COLUMN: field: message)."""

from workbench.errors import UserError


def test_a_field_named_by_the_input_stays_on_one_line() -> None:
    """A JSON key such as "\\n" is the field of an unknown-field error (found by test_reader_fuzz)."""
    assert str(UserError("unknown field", file="r.jsonl", line=2, field="\n")) == "r.jsonl:2: \\n: unknown field"
    assert str(UserError("bad", file="oracle.json", field="windows[3].start")) == "oracle.json: windows[3].start: bad"
