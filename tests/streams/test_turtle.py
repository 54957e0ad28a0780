"""The plain-Turtle reader (CSRBench's data files) gives exactly what rdflib's parser gives, or steps aside."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsp_workbench.errors import UserError
from rsp_workbench.streams import csrbench_reader
from rsp_workbench.streams.terms import from_rdflib
from rsp_workbench.streams.turtle import plain_turtle_triples
from tests.paths import conformance_dir, required

EX = "http://ex.org/"


def rdflib_triples(path: Path) -> list[tuple[str, str, str]]:
    graph = csrbench_reader._parse_turtle(path)  # the reference: rdflib's parser, as the reader used it alone
    return sorted((from_rdflib(s), from_rdflib(p), from_rdflib(o)) for s, p, o in graph)  # type: ignore[attr-defined]


@pytest.mark.slow
def test_every_csrbench_file_reads_as_rdflib_reads_it() -> None:
    files = sorted((required(conformance_dir()) / "data").glob("data_*.ttl"))
    assert len(files) == 34
    for file in files:
        assert plain_turtle_triples(file.read_text(encoding="utf-8")) == rdflib_triples(file), file.name


def test_the_plain_subset_by_hand() -> None:
    text = f"""@prefix ex: <{EX}> .
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
# a comment; the '#' in an IRI is not one
ex:s a <{EX}T#x> ;
     ex:p "7"^^xsd:double , ex:o ;
     ex:q "plain" ;
     .
ex:s ex:p ex:o .
"""
    assert plain_turtle_triples(text) == sorted([
        (f"<{EX}s>", f"<{EX}p>", '"7.0"^^<http://www.w3.org/2001/XMLSchema#double>'),  # rdflib's normal form
        (f"<{EX}s>", f"<{EX}p>", f"<{EX}o>"),  # twice in the text, once in the graph
        (f"<{EX}s>", f"<{EX}q>", '"plain"'),
        (f"<{EX}s>", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", f"<{EX}T#x>"),
    ])


@pytest.mark.parametrize("body", [
    "ex:s ex:p _:b .", "ex:s ex:p [ ex:q ex:o ] .", 'ex:s ex:p "a\\"b" .', 'ex:s ex:p """long""" .',
    "ex:s ex:p 'single' .", "ex:s ex:p 42 .", "ex:s ex:p true .", 'ex:s ex:p "chat"@fr .', "ex:s ex:p <rel> .",
    "ex:a:b ex:p ex:o .", "ex:s ex:p ex:o", "ex:s ex:p .", "undeclared:s ex:p ex:o .", "ex:s ex:p ex:a%20b .",
])
def test_anything_else_is_left_to_rdflib(body: str) -> None:
    assert plain_turtle_triples(f"@prefix ex: <{EX}> .\n{body}\n") is None


def test_the_reader_falls_back_to_rdflib_and_its_located_errors(tmp_path: Path) -> None:
    folder = tmp_path / "stream"
    folder.mkdir()
    (folder / "data_0.ttl").write_text(f"@prefix ex: <{EX}> .\nex:s ex:p [ ex:q 42 ] .\n", encoding="utf-8")
    (folder / "data_1.ttl").write_text(f"@prefix ex: <{EX}> .\nex:s ex:p ex:o .\n", encoding="utf-8")
    elements = list(csrbench_reader.read_csrbench_dir(folder))
    assert [(e.predicate, e.object, e.t) for e in elements] == [
        (f"<{EX}p>", "_:data_0_b0", 0), (f"<{EX}q>", '"42"^^<http://www.w3.org/2001/XMLSchema#integer>', 0),
        (f"<{EX}p>", f"<{EX}o>", 1000),
    ]
    (folder / "data_2.ttl").write_text(f"@prefix ex: <{EX}> .\nex:s ex:p\n", encoding="utf-8")
    with pytest.raises(UserError) as raised:
        list(csrbench_reader.read_csrbench_dir(folder))
    assert raised.value.file is not None and raised.value.file.endswith("data_2.ttl")
    assert "Turtle" in str(raised.value) and raised.value.line is not None
