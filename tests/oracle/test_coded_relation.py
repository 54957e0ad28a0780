"""A BGP's joined rows kept as term codes (`CodedRelation`): the same relation, rows and
presence tables as the Python rows give, without a Python string per row."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from rsp_workbench.oracle.annotated import (
    canonical_order,
    coded_relation,
    CodedRelation,
    RowTable,
    annotate,
    build_context,
    compile_plan,
    first_appearance_groups,
    is_identity,
)
from rsp_workbench.oracle.answers import annotation_context
from rsp_workbench.oracle.coding import _codes_by_hash, arrow_relation, mapped, spilled, take_rows
from rsp_workbench.oracle.columnar import ArrowBGP, columns_from_elements, query_predicates, tables_for
from rsp_workbench.oracle.reference import StaticData
from rsp_workbench.streams.model import StreamElement

from tests.oracle.cases import E, INT, S1, csparql


def test_groups_are_numbered_in_order_of_first_appearance() -> None:
    # columns (2,5) (0,5) (2,5) (1,unbound): three groups, first seen at columns 0, 1 and 3
    codes = np.array([[2, 0, 2, 1], [5, 5, 5, -1]])
    first, group = first_appearance_groups(codes)
    assert first.tolist() == [0, 1, 3]
    assert group.tolist() == [0, 1, 0, 2]


def test_one_row_of_codes_is_grouped_by_each_code_s_first_column() -> None:
    # one variable (a FILTER reads ?v): 3 first at column 0, unbound (-1) at 1, 0 at 3
    first, group = first_appearance_groups(np.array([[3, -1, 3, 0, -1]]))
    assert first.tolist() == [0, 1, 3]
    assert group.tolist() == [0, 1, 0, 2, 1]


def test_a_row_of_all_different_codes_makes_every_column_its_own_group() -> None:
    # the second row's codes differ pairwise (-1, unbound, once): no two columns can be equal
    codes = np.array([[2, 2, 2, 2], [3, -1, 0, 1]])
    first, group = first_appearance_groups(codes)
    assert first.tolist() == [0, 1, 2, 3]
    assert group.tolist() == [0, 1, 2, 3]
    # two unbound (-1) codes are equal: then the first row decides
    first, group = first_appearance_groups(np.array([[2, 0, 2, 1], [-1, 0, -1, 1]]))
    assert first.tolist() == [0, 1, 3]
    assert group.tolist() == [0, 1, 0, 2]


def test_rows_in_an_order_of_their_own_whatever_order_they_came_in() -> None:
    """The Spark path's joined rows arrive in the order tasks and shuffles gave them; sorted by
    (pmin, pmax, hash of each variable) they are in one order on any master."""
    pmin = np.array([7, 3, 3, 9, 3])
    pmax = np.array([8, 5, 4, 9, 5])
    hashes = np.array([1, 20, 10, 0, -5])
    order = canonical_order([pmin, pmax, hashes])
    # 3 is tied three times: pmax breaks one tie (4 before 5), the hash the other (-5 before 20)
    assert order.tolist() == [2, 4, 1, 0, 3]
    shuffled = np.array([3, 0, 4, 2, 1])  # the same rows in another order sort to the same rows
    again = shuffled[canonical_order([pmin[shuffled], pmax[shuffled], hashes[shuffled]])]
    assert again.tolist() == order.tolist()
    assert canonical_order([np.array([2, 1, 0])]).tolist() == [2, 1, 0]  # no tie: the first key alone
    unread = []  # a key given as a function is read only when the first key leaves ties
    assert canonical_order([np.array([2, 0, 1]), lambda: unread.append(1) or np.zeros(3)]).tolist() == [1, 2, 0]
    assert unread == []
    assert canonical_order([pmin, lambda: pmax, lambda: hashes]).tolist() == [2, 4, 1, 0, 3]
    assert canonical_order([np.empty(0, np.int64), np.empty(0, np.int64)]).tolist() == []


def test_groups_of_codes_too_wide_to_pack_in_one_integer_are_the_same() -> None:
    wide = 2**31 - 1  # three rows of codes up to 2^31: 2^93 combinations, past one int64
    codes = np.array([[wide, 0, wide, 1], [5, 5, 5, -1], [wide, 3, wide, 3]])
    first, group = first_appearance_groups(codes)
    assert first.tolist() == [0, 1, 3]
    assert group.tolist() == [0, 1, 0, 2]


def test_equal_mappings_merge_and_keep_their_minimal_requirements() -> None:
    """One window; each joined row has the positions [pmin, pmax] of the elements that built it.
    (x1, y1) is built three times: from positions 3..5, 3..7 and 6..6. A window that holds
    3..7 holds 3..5, so 3..7 adds nothing and is dropped; 3..5 and 6..6 stay (neither implies
    the other). The last row leaves ?x unbound."""
    x = pa.chunked_array([["x1", "x2"], ["x1", "x1", None]])  # two chunks: two dictionaries, unified
    y = pa.chunked_array([["y1", "y1"], ["y1", "y1", "y2"]])
    table = pa.table({"x": x, "y": y, "pmin0": [3, 4, 3, 6, 1], "pmax0": [5, 4, 7, 6, 1]})
    relation = arrow_relation(["x", "y"], table.column, ["x", "y"], ["pmin0", "pmax0"])
    assert isinstance(relation, CodedRelation)
    assert relation.rows == [(("x1", "y1"), ((3, 5), (6, 6))), (("x2", "y1"), ((4, 4),)), ((None, "y2"), ((1, 1),))]
    table_of = RowTable.of(relation, 1)
    assert table_of.row_of.tolist() == [0, 0, 1, 2]
    assert table_of.pmin.tolist() == [[3, 6, 4, 1]] and table_of.pmax.tolist() == [[5, 6, 4, 1]]
    assert list(table_of.mappings) == [("x1", "y1"), ("x2", "y1"), (None, "y2")]
    assert table_of.solution(2) == frozenset({("y", "y2")})  # an unbound variable is not in the mapping


def test_projection_keeps_the_bag() -> None:
    """SELECT ?y over two rows that differ only in ?x: two rows, one mapping counted twice."""
    table = pa.table({"x": ["x1", "x2"], "y": ["y1", "y1"], "pmin0": [1, 2], "pmax0": [1, 2]})
    projected = arrow_relation(["x", "y"], table.column, ["x", "y"], ["pmin0", "pmax0"]).project(("y",))
    assert projected is not None
    rows = RowTable.of(projected, 1)
    assert rows.mapping_of.tolist() == [0, 0] and list(rows.mappings) == [("y1",)]
    assert rows.counts(((0, 3),)).tolist() == [2]  # both rows in a window holding positions 0..2
    assert rows.counts(((2, 3),)).tolist() == [1]


def _elements() -> list[StreamElement]:
    """Observations with values 10, 60, 60 and 70, each as its value then its type; x3 arrives
    twice (t 3000 and 4000), so its mapping has several supports."""
    rows = [("x1", 10, 1000), ("x2", 60, 2000), ("x3", 60, 3000), ("x3", 60, 4000), ("x4", 70, 4000)]
    elements = []
    for x, v, t in rows:
        elements.append(StreamElement(E.format(x), E.format("p"), INT.format(v), t))
        elements.append(StreamElement(E.format(x), E.format("type"), E.format("Obs"), t))
    return elements


def test_the_coded_rows_equal_the_python_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Filter and projection over the Arrow joins' coded rows give the `RowTable` the Python
    joins give; the FILTER is evaluated once per distinct value, not per row: 60 and 70 (the
    scan already dropped 10, which certainly fails it)."""
    query = csparql("SELECT ?x ?v WHERE { ?x <http://e/type> <http://e/Obs> . ?x <http://e/p> ?v FILTER(?v > 50) }",
                    size=2000, slide=1000)
    plan = compile_plan(query)
    elements = _elements()
    python = annotate(plan, build_context(query, {S1: elements}, StaticData()))[0]
    columns = {S1: columns_from_elements(elements, query_predicates(query))}
    context = annotation_context(query, {S1: columns[S1].times}, StaticData())
    calls: list[int] = []
    from rsp_workbench.query.rdflib_sparql import ebv as real_ebv

    monkeypatch.setattr("rsp_workbench.query.rdflib_sparql.ebv", lambda *a: calls.append(1) or real_ebv(*a))
    coded = annotate(plan, context, ArrowBGP(context, tables_for(query, columns)))[0]
    assert isinstance(coded.relation, CodedRelation)
    assert len(calls) == 2
    assert list(coded.mappings) == python.mappings
    assert coded.mapping_of.tolist() == python.mapping_of.tolist()
    assert coded.row_of.tolist() == python.row_of.tolist()
    assert coded.pmin.tolist() == python.pmin.tolist() and coded.pmax.tolist() == python.pmax.tolist()
    # x2 (positions 2..3); x3, whose two values and two types (positions 4 to 7) combine into
    # the minimal 4..5, 5..6 and 6..7 (4..7 holds 4..5); x4 (8..9)
    assert coded.row_of.tolist() == [0, 1, 1, 1, 2]
    assert coded.pmin.tolist() == [[2, 4, 5, 6, 8]] and coded.pmax.tolist() == [[3, 5, 6, 7, 9]]


def test_codes_by_hash_point_at_the_first_row_of_each_term() -> None:
    terms = pa.chunked_array([["a", "b"], ["a", None, "c", "b"]])
    hashes = np.array([11, 22, 11, 0, 33, 22])
    codes, dictionary = _codes_by_hash(hashes, terms)
    assert codes.tolist() == [0, 1, 0, -1, 3, 1]  # the null (hashed like any row) is unbound
    assert dictionary.to_pylist() == ["a", "b", None, "c"]


def test_codes_by_hash_of_distinct_terms_are_the_rows() -> None:
    terms = pa.chunked_array([["a", "b", "c"]])
    codes, dictionary = _codes_by_hash(np.array([3, 2, 1]), terms)
    assert codes.tolist() == [0, 1, 2] and dictionary is terms


def test_a_hash_collision_is_caught_and_the_terms_are_encoded_instead() -> None:
    """Two different terms with one hash must not become one term: the codes come from the
    terms themselves then."""
    terms = pa.chunked_array([["a", "b", "a"]])
    assert _codes_by_hash(np.array([5, 5, 5]), terms) is None
    table = pa.table({"x": terms, "hx": [5, 5, 5], "pmin0": [0, 1, 2], "pmax0": [0, 1, 2]})
    relation = arrow_relation(["x"], table.column, ["x"], ["pmin0", "pmax0"], hashes=["hx"])
    assert relation.rows == [(("a",), ((0, 0), (2, 2))), (("b",), ((1, 1),))]


def test_terms_are_decoded_in_blocks_and_stay_right_when_blocks_are_let_go(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CodedRelation, "BLOCK", 3)
    monkeypatch.setattr(CodedRelation, "BLOCKS_KEPT", 2)
    terms = pa.chunked_array([[f"t{i}" for i in range(5)], [f"t{i}" for i in range(5, 10)]])
    codes = np.array([[9, 0, 4, 7, 1, 9, 3, -1, 8, 0]])
    relation = CodedRelation(["x"], codes, [terms], np.arange(10), np.zeros((10, 2), np.int64))
    asked = [3, 0, 9, 2, 5, 1, 7, 6, 4, 8, 0]  # rows in an order that lets blocks go and decodes them again
    assert [relation.values(r) for r in asked] == [(None if codes[0, r] < 0 else f"t{codes[0, r]}",) for r in asked]
    assert len(relation._blocks) == 2


def test_mapped_terms_are_read_from_a_file_that_is_already_gone(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The distinct terms kept memory-mapped: the same terms, none of them in Arrow's memory,
    no file left in the folder."""
    terms = pa.chunked_array([["<http://e/a>", "<http://e/b>"], ["<http://e/c>"]])
    before = pa.total_allocated_bytes()
    kept = mapped(terms, str(tmp_path))
    del terms
    assert kept.to_pylist() == ["<http://e/a>", "<http://e/b>", "<http://e/c>"]
    assert pa.total_allocated_bytes() <= before
    assert list(tmp_path.iterdir()) == []
    table = pa.table({"x": ["a", "b", "a"], "hx": [1, 2, 1], "pmin0": [0, 1, 2], "pmax0": [0, 1, 2]})
    relation = arrow_relation(["x"], table.column, ["x"], ["pmin0", "pmax0"], hashes=["hx"], spill=str(tmp_path))
    assert relation.rows == [(("a",), ((0, 0), (2, 2))), (("b",), ((1, 1),))]
    assert list(tmp_path.iterdir()) == []


def test_rows_that_are_each_their_own_mapping_stay_as_they_came() -> None:
    """A variable unique per joined row (an observation): every row is a mapping of its own, in
    row order, so the codes and requirements are kept as they are, not sorted and copied."""
    codes = np.array([[0, 1, 2], [-1, -1, 0]], np.int32)
    requirements = np.array([[5, 6], [1, 2], [3, 3]], np.int64)
    relation = coded_relation(["x", "y"], codes, [pa.chunked_array([["a", "b", "c"]])] * 2, requirements)
    assert relation.codes is codes and relation.requirements is requirements
    assert relation.row_of.tolist() == [0, 1, 2]
    assert relation.rows == [(("a", None), ((5, 6),)), (("b", None), ((1, 2),)), (("c", "a"), ((3, 3),))]


def test_terms_spilled_a_batch_at_a_time_stay_the_same_when_their_pages_go(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Terms written to an unlinked file one batch after the other and mapped: the same terms,
    also after the pages read from the mapping are let go (read again when asked); none: an
    empty array of the kind asked for."""
    batches = iter([pa.array(["<http://e/a>", "<http://e/b>"]), pa.array(["<http://e/c>"])])
    terms, let_pages_go = spilled(batches, str(tmp_path))
    assert terms.to_pylist() == ["<http://e/a>", "<http://e/b>", "<http://e/c>"]
    let_pages_go()
    assert terms.take(pa.array([2, 0])).to_pylist() == ["<http://e/c>", "<http://e/a>"]
    assert list(tmp_path.iterdir()) == []
    empty, _ = spilled(iter([]), str(tmp_path), pa.large_string())
    assert len(empty) == 0 and empty.type == pa.large_string()


def test_rows_taken_chunk_by_chunk_come_back_in_the_order_asked() -> None:
    """`take_rows` takes from each chunk on its own (`ChunkedArray.take` copies the whole column
    into one array first), and gives the values in the order of the rows asked for."""
    terms = pa.chunked_array([["a", "b"], [], ["c", None, "e"]])
    assert take_rows(terms, np.array([4, 0, 2, 2, 3, 1])).to_pylist() == ["e", "a", "c", "c", None, "b"]
    assert take_rows(terms, np.array([], np.int64)).to_pylist() == []


def test_a_subset_keeps_each_row_s_requirements_whether_a_row_has_one_or_several() -> None:
    """Rows 0 and 2 of three kept: with one requirement a row (the rows are their requirements'
    numbers), and with row 0 holding two; a subset keeping every row is the relation itself."""
    terms = [pa.chunked_array([["a", "b", "c"]])]
    one_each = CodedRelation(["x"], np.array([[0, 1, 2]]), terms, np.arange(3), np.array([[1, 1], [2, 2], [3, 3]]))
    kept = one_each.subset(np.array([True, False, True]))
    assert kept.row_of.tolist() == [0, 1] and kept.rows == [(("a",), ((1, 1),)), (("c",), ((3, 3),))]
    several = CodedRelation(["x"], np.array([[0, 1, 2]]), terms, np.array([0, 0, 1, 2]),
                            np.array([[1, 1], [4, 4], [2, 2], [3, 3]]))
    kept = several.subset(np.array([True, False, True]))
    assert kept.row_of.tolist() == [0, 0, 1] and kept.rows == [(("a",), ((1, 1), (4, 4))), (("c",), ((3, 3),))]
    assert one_each.subset(np.array([True, True, True])) is one_each
    assert is_identity(np.arange(5), 5) and not is_identity(np.array([0, 0, 1, 2]), 3)
