"""lubm: data shape and counts, determinism, stream mode, TBox files (full and ρDF subset)."""

from __future__ import annotations

from collections import Counter

import pytest
import rdflib
from rdflib import OWL, RDF, RDFS, URIRef

from rsp_workbench.errors import UserError
from rsp_workbench.generators import generator_spec
from rsp_workbench.generators import lubm
from rsp_workbench.generators.flows import FlowShape

ONE = {"universities": 1, "min_departments": 1, "max_departments": 1, "seed": 3}
UB = lubm.UB
RHODF_PREDICATES = {RDFS.subClassOf, RDFS.subPropertyOf, RDFS.domain, RDFS.range}


@pytest.fixture(scope="module")
def one_department() -> list[tuple[str, str, str]]:
    return list(lubm.triples(ONE))


def types(triples: list[tuple[str, str, str]]) -> Counter[str]:
    return Counter(o[len(UB) + 1 : -1] for _, p, o in triples if p == lubm.RDF_TYPE)


def test_spec_is_registered() -> None:
    assert {p.name for p in generator_spec("lubm").params} >= {"universities", "min_departments", "max_departments", "seed"}


def test_department_shape_follows_lubm_ranges(one_department: list[tuple[str, str, str]]) -> None:
    counts = types(one_department)
    assert counts["University"] == 1 and counts["Department"] == 1
    assert 7 <= counts["FullProfessor"] <= 10
    assert 10 <= counts["AssociateProfessor"] <= 14
    assert 8 <= counts["AssistantProfessor"] <= 11
    assert 5 <= counts["Lecturer"] <= 7
    assert 10 <= counts["ResearchGroup"] <= 20
    faculty = sum(counts[k] for k in ("FullProfessor", "AssociateProfessor", "AssistantProfessor", "Lecturer"))
    assert 8 * faculty <= counts["UndergraduateStudent"] <= 14 * faculty
    assert 3 * faculty <= counts["GraduateStudent"] <= 4 * faculty
    assert faculty <= counts["Course"] <= 2 * faculty and faculty <= counts["GraduateCourse"] <= 2 * faculty
    predicates = Counter(p[len(UB) + 1 : -1] for _, p, _ in one_department if p.startswith(f"<{UB}"))
    assert predicates["headOf"] == 1
    assert predicates["worksFor"] == faculty - 1  # the head has headOf instead
    assert predicates["teacherOf"] == counts["Course"] + counts["GraduateCourse"]
    assert predicates["memberOf"] == counts["UndergraduateStudent"] + counts["GraduateStudent"]
    for name in ("advisor", "publicationAuthor", "takesCourse", "undergraduateDegreeFrom", "doctoralDegreeFrom",
                 "mastersDegreeFrom", "subOrganizationOf", "emailAddress", "name", "teachingAssistantOf"):
        assert predicates[name] > 0, name


def test_head_is_a_full_professor(one_department: list[tuple[str, str, str]]) -> None:
    heads = [s for s, p, _ in one_department if p == f"<{UB}headOf>"]
    assert len(heads) == 1 and "/FullProfessor" in heads[0]


def test_deterministic_by_seed(one_department: list[tuple[str, str, str]]) -> None:
    assert list(lubm.triples(ONE)) == one_department
    assert list(lubm.triples({**ONE, "seed": 4})) != one_department


def test_department_count_in_range() -> None:
    params = {"universities": 5, "min_departments": 2, "max_departments": 4}
    counts = [lubm.department_count(params, u) for u in range(5)]
    assert all(2 <= c <= 4 for c in counts)


def test_stream_mode_constant_flow(one_department: list[tuple[str, str, str]]) -> None:
    elements = list(lubm.iter_elements({**ONE, "stimulus_size": 1000, "period": "1s", "start": 500}))
    assert [e.triple() for e in elements] == one_department
    sizes = Counter(e.t for e in elements)
    assert sorted(sizes)[:2] == [500, 1500] and all(n == 1000 for t, n in sizes.items() if t != max(sizes))


def test_stream_mode_with_a_flow_shape() -> None:
    shape = FlowShape.parse({"shape": "step", "initial": 10, "step": 10, "every": 1, "stimuli": 3})
    elements = list(lubm.iter_elements(ONE, flow=shape))
    assert Counter(e.t for e in elements) == {0: 10, 100: 20, 200: 30}


def test_static_mode_puts_everything_in_static_data(one_department: list[tuple[str, str, str]]) -> None:
    static = list(lubm.static_triples({**ONE, "mode": "static"}))
    assert list(lubm.iter_elements({**ONE, "mode": "static"})) == []
    assert set(one_department) <= set(static)
    assert list(lubm.static_triples({**ONE, "tbox": "none"})) == []


def test_full_tbox_parses_with_hierarchy() -> None:
    graph = rdflib.Graph().parse(lubm.tbox_path(rhodf=False))
    ub = rdflib.Namespace(UB)
    assert (ub.headOf, RDFS.subPropertyOf, ub.worksFor) in graph
    assert (ub.worksFor, RDFS.subPropertyOf, ub.memberOf) in graph
    assert (ub.doctoralDegreeFrom, RDFS.subPropertyOf, ub.degreeFrom) in graph
    assert (ub.FullProfessor, RDFS.subClassOf, ub.Professor) in graph
    assert (ub.Professor, RDFS.subClassOf, ub.Faculty) in graph
    assert (ub.teacherOf, RDFS.domain, ub.Faculty) in graph
    assert (ub.subOrganizationOf, RDF.type, OWL.TransitiveProperty) in graph
    classes = {s for s in graph.subjects(RDF.type, OWL.Class) if isinstance(s, URIRef)}
    for name in ("Person", "Employee", "Faculty", "Professor", "AssociateProfessor", "AssistantProfessor", "Lecturer",
                 "Student", "GraduateStudent", "UndergraduateStudent", "Organization", "University", "Department",
                 "ResearchGroup", "Course", "GraduateCourse", "Publication", "Article"):
        assert ub[name] in classes, name
    # every class and property the generator uses is declared
    used = {o for _, p, o in lubm.triples(ONE) if p == lubm.RDF_TYPE} | {p for _, p, _ in lubm.triples(ONE)}
    declared = {f"<{s}>" for s in graph.subjects(RDF.type, None) if isinstance(s, URIRef)}
    assert used - {lubm.RDF_TYPE} <= declared


def test_rhodf_subset_has_only_the_four_rdfs_predicates_and_matches_the_full_tbox() -> None:
    subset = rdflib.Graph().parse(lubm.tbox_path(rhodf=True))
    assert len(subset) > 50
    assert {p for _, p, _ in subset} == RHODF_PREDICATES
    assert all(isinstance(node, URIRef) for triple in subset for node in triple)
    full = rdflib.Graph().parse(lubm.tbox_path(rhodf=False))
    expected = {
        (s, p, o) for s, p, o in full
        if p in RHODF_PREDICATES and isinstance(s, URIRef) and isinstance(o, URIRef)
    }
    assert set(subset) == expected
    assert len(list(lubm.tbox_triples())) == len(subset)


def test_resources_dir_is_next_to_the_package() -> None:
    assert lubm.resources_dir().name == "resources"
    assert (lubm.resources_dir() / "README.md").is_file()


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"max_departments": 0}, "param max_departments"),
        ({"min_departments": 3, "max_departments": 2}, "param max_departments"),
        ({"universities": 0}, "param universities"),
        ({"period": 0}, "param period"),
        ({"mode": "batch"}, "param mode"),
    ],
)
def test_invalid_parameters_name_the_parameter(override: dict, field: str) -> None:
    with pytest.raises(UserError) as info:
        lubm.check_params({**ONE, **override})
    assert info.value.field == field
