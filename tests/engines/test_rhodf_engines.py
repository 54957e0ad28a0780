"""The ρDF baselines (Heaven Sect. 6): rules checked by hand, incremental maintenance equal to
materialisation from scratch, and ``naive`` ≡ ``incremental`` on every stimulus."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Hashable

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rsp_workbench.engines._rhodf import (
    DOMAIN,
    RANGE,
    RDF_TYPE,
    SUB_CLASS_OF,
    SUB_PROPERTY_OF,
    IncrementalClosure,
    Schema,
    closure,
    default_schema,
)
from rsp_workbench.core.semantics import PRESETS, BorderConvention, EngineSemantics, R2S, ReportPolicy, Strategy, Tick
from rsp_workbench.engine import EngineConfig, StaticGraphs, Stimulus, group_contemporaneous, merge_streams
from rsp_workbench.engines import create_engine
from rsp_workbench.errors import UserError
from rsp_workbench.generators import lubm
from rsp_workbench.query.parser import parse_query
from rsp_workbench.streams.model import StreamElement

UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
EX = "http://example.org/"
STREAM = f"{EX}lubm"


def ub(name: str) -> str:
    return f"<{UB}{name}>"


def ex(name: str) -> str:
    return f"<{EX}{name}>"


def typed(x: str, cls: str) -> tuple[str, str, str]:
    return (x, RDF_TYPE, ub(cls))


SCHEMA = default_schema()

# --- the rules, by hand --------------------------------------------------------------------


def test_tbox_hierarchies_are_closed_once() -> None:
    """rdfs5 / rdfs11 on univ-bench: headOf ⊑ worksFor ⊑ memberOf, FullProfessor ⊑ … ⊑ Person."""
    assert SCHEMA.super_properties[ub("headOf")] == {ub("worksFor"), ub("memberOf")}
    assert SCHEMA.super_classes[ub("FullProfessor")] == {ub(c) for c in ("Professor", "Faculty", "Employee", "Person")}
    assert (ub("headOf"), SUB_PROPERTY_OF, ub("memberOf")) in SCHEMA.axioms()


def test_subproperty_chain() -> None:
    """rdfs7 twice: headOf ⊑ worksFor ⊑ memberOf (memberOf has no domain/range in ρDF univ-bench)."""
    a, d = ex("alice"), ex("dept0")
    assert closure([(a, ub("headOf"), d)], SCHEMA) == {
        (a, ub("headOf"), d), (a, ub("worksFor"), d), (a, ub("memberOf"), d),
    }


def test_domain_range_and_subclass_chain() -> None:
    """rdfs2 + rdfs9 on the subject, rdfs3 + rdfs9 on the object."""
    f, c = ex("f"), ex("course")
    assert closure([(f, ub("teacherOf"), c)], SCHEMA) == {
        (f, ub("teacherOf"), c),
        typed(f, "Faculty"), typed(f, "Employee"), typed(f, "Person"),  # domain Faculty ⊑ Employee ⊑ Person
        typed(c, "Course"), typed(c, "Work"),  # range Course ⊑ Work
    }
    s, p = ex("s"), ex("p")
    assert closure([(s, ub("advisor"), p)], SCHEMA) == {
        (s, ub("advisor"), p), typed(s, "Person"),
        typed(p, "Professor"), typed(p, "Faculty"), typed(p, "Employee"), typed(p, "Person"),
    }


def test_range_never_types_a_literal() -> None:
    """rdfs3 on a literal object would make a literal a subject: dropped; the domain still applies."""
    x = ex("x")
    literal = '"x@example.org"'
    tbox = [(ub("emailAddress"), RANGE, ub("Person"))]
    assert closure([(x, ub("emailAddress"), literal)], tbox) == {(x, ub("emailAddress"), literal)}
    assert closure([(x, ub("emailAddress"), literal)], SCHEMA) == {(x, ub("emailAddress"), literal), typed(x, "Person")}


def test_implicit_typing_through_subproperty_and_cycles() -> None:
    """ρDF implicit typing (p ⊑ q, q domain C ⇒ x type C) and sc/sp cycles terminate."""
    tbox = [
        (ex("p"), SUB_PROPERTY_OF, ex("q")), (ex("q"), SUB_PROPERTY_OF, ex("p")), (ex("q"), DOMAIN, ex("A")),
        (ex("A"), SUB_CLASS_OF, ex("B")), (ex("B"), SUB_CLASS_OF, ex("A")),
    ]
    x, y = ex("x"), ex("y")
    expected = {(x, ex("p"), y), (x, ex("q"), y), (x, RDF_TYPE, ex("A")), (x, RDF_TYPE, ex("B"))}
    assert closure([(x, ex("p"), y)], tbox) == expected
    reasoner = IncrementalClosure(tbox)
    assert set(reasoner.add([(x, ex("p"), y)])) == expected
    assert set(reasoner.remove([(x, ex("p"), y)])) == expected
    assert len(reasoner) == 0


def test_incremental_keeps_multiplicity_and_shared_support() -> None:
    """The same explicit triple twice needs two removals; a derived triple with two supports stays."""
    a, d = ex("a"), ex("d")
    reasoner = IncrementalClosure(SCHEMA)
    head, works = (a, ub("headOf"), d), (a, ub("worksFor"), d)
    assert set(reasoner.add([head, head])) == {head, works, (a, ub("memberOf"), d)}
    assert reasoner.add([works]) == []  # already derived: only its support grows
    assert reasoner.remove([head]) == []  # one occurrence of head is still in the window
    assert reasoner.remove([head]) == [head]  # worksFor/memberOf still supported by the explicit worksFor
    assert reasoner.triples() == {works, (a, ub("memberOf"), d)}
    assert set(reasoner.remove([works])) == {works, (a, ub("memberOf"), d)}
    with pytest.raises(KeyError):
        reasoner.remove([works])


# --- property: incremental maintenance = from scratch ------------------------------------------

CLASSES = [ex(f"C{i}") for i in range(4)]
PROPERTIES = [ex(f"p{i}") for i in range(4)]
NODES = [ex(f"n{i}") for i in range(3)] + ['"lit"']

tbox_triples = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(PROPERTIES), st.just(SUB_PROPERTY_OF), st.sampled_from(PROPERTIES + [RDF_TYPE])),
        st.tuples(st.sampled_from(CLASSES), st.just(SUB_CLASS_OF), st.sampled_from(CLASSES)),
        st.tuples(st.sampled_from(PROPERTIES), st.sampled_from([DOMAIN, RANGE]), st.sampled_from(CLASSES)),
    ),
    max_size=8,
)
abox_triples = st.one_of(
    st.tuples(st.sampled_from(NODES[:3]), st.sampled_from(PROPERTIES), st.sampled_from(NODES + CLASSES)),
    st.tuples(st.sampled_from(NODES[:3]), st.just(RDF_TYPE), st.sampled_from(CLASSES)),
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(tbox=tbox_triples, steps=st.lists(st.tuples(st.booleans(), st.lists(abox_triples, max_size=4)), max_size=12))
def test_incremental_closure_equals_closure_from_scratch(tbox: list[Any], steps: list[tuple[bool, list[Any]]]) -> None:
    schema = Schema.from_triples(tbox)
    reasoner = IncrementalClosure(schema)
    window: Counter[tuple[str, str, str]] = Counter()
    materialised: set[tuple[str, str, str]] = set()
    for adding, triples in steps:
        if adding:
            window.update(triples)
            added = reasoner.add(triples)
            assert not materialised & set(added)
            materialised |= set(added)
        else:
            present = []
            for triple in triples:  # remove only occurrences that are in the window
                if window[triple] > 0:
                    window[triple] -= 1
                    present.append(triple)
            removed = reasoner.remove(present)
            assert set(removed) <= materialised
            materialised -= set(removed)
        expected = closure(+window, schema)
        assert reasoner.triples() == expected == materialised


# --- the engines ---------------------------------------------------------------------------------

PREFIX = f"PREFIX ub: <{UB}>\n"
FACULTY = PREFIX + f"SELECT ?x FROM STREAM <{STREAM}> [RANGE {{size}} STEP {{slide}}] WHERE {{{{ ?x a ub:Faculty }}}}"
MEMBER = PREFIX + f"SELECT ?x ?d FROM STREAM <{STREAM}> [RANGE {{size}} STEP {{slide}}] WHERE {{{{ ?x ub:memberOf ?d }}}}"
JOIN = PREFIX + (f"SELECT DISTINCT ?s ?d FROM STREAM <{STREAM}> [RANGE {{size}} STEP {{slide}}] "
                 "WHERE {{ ?s ub:advisor ?p . ?p ub:memberOf ?d . ?p a ub:Person }}")
COUNT = PREFIX + (f"SELECT (COUNT(?x) AS ?n) FROM NAMED STREAM <{STREAM}> [RANGE {{size}} STEP {{slide}}] "
                  f"WHERE {{{{ GRAPH <{STREAM}> {{{{ ?x a ub:Person }}}} }}}}")
QUERIES = {"faculty": FACULTY, "member": MEMBER, "join": JOIN, "count": COUNT}


def responses_per_stimulus(
    engine_type: str, query_text: str, stimuli: list[Stimulus], semantics: EngineSemantics, *,
    end: int | None = None, parameters: dict[str, Any] | None = None, static: StaticGraphs = StaticGraphs(),
) -> list[list[tuple[int | None, str, Counter[Hashable]]]]:
    engine = create_engine(EngineConfig(engine_type, semantics=semantics, parameters=parameters or {}))
    engine.register(parse_query(query_text), static)
    out = [engine.push(stimulus) for stimulus in stimuli]
    if end is not None:
        out.append(engine.advance_time(end))
    out.append(engine.close())
    return [[(r.application_time, r.operation, Counter(r.bindings)) for r in batch] for batch in out]


def test_tiny_stream_answers_include_inferred_facts() -> None:
    """Hand-computed: tumbling 1 s windows [0,1000), [1000,2000) under C-SPARQL semantics."""
    alice, bob, dept, student = ex("alice"), ex("bob"), ex("dept0"), ex("student")
    stream = [
        StreamElement(alice, ub("headOf"), dept, 0),
        StreamElement(student, ub("advisor"), bob, 500),
        StreamElement(bob, ub("worksFor"), dept, 1200),
    ]
    stimuli = group_contemporaneous(stream)
    semantics = PRESETS["csparql"]
    faculty = FACULTY.format(size="1s", slide="1s")
    member = MEMBER.format(size="1s", slide="1s")
    for engine_type in ("naive", "incremental"):
        got = [r for batch in responses_per_stimulus(engine_type, faculty, stimuli, semantics, end=2000) for r in batch]
        # advisor range Professor ⊑ Faculty types bob in [0,1000); nothing types anyone Faculty in [1000,2000)
        assert got == [(1000, "=", Counter({frozenset({("x", bob)}): 1})), (2000, "=", Counter())]
        got = [r for batch in responses_per_stimulus(engine_type, member, stimuli, semantics, end=2000) for r in batch]
        # headOf ⊑ worksFor ⊑ memberOf, then worksFor ⊑ memberOf
        assert got == [
            (1000, "=", Counter({frozenset({("x", alice), ("d", dept)}): 1})),
            (2000, "=", Counter({frozenset({("x", bob), ("d", dept)}): 1})),
        ]


def test_static_schema_and_tbox_parameter(tmp_path: Path) -> None:
    """``tbox`` names a file; schema triples in the static data extend it; static ABox is reasoned over."""
    (tmp_path / "t.ttl").write_text(f"<{EX}p> <http://www.w3.org/2000/01/rdf-schema#domain> <{UB}Faculty> .\n")
    static = StaticGraphs(default=((ex("q"), SUB_PROPERTY_OF, ex("p")), (ex("carl"), ex("q"), ex("z"))))
    stream = [StreamElement(ex("dana"), ex("p"), ex("z"), 0)]
    query = FACULTY.format(size="1s", slide="1s")
    for engine_type in ("naive", "incremental"):
        got = responses_per_stimulus(engine_type, query, group_contemporaneous(stream), PRESETS["csparql"], end=1000,
                                     parameters={"tbox": str(tmp_path / "t.ttl")}, static=static)
        assert got[-2] == [(1000, "=", Counter({frozenset({("x", ex("dana"))}): 1, frozenset({("x", ex("carl"))}): 1}))]


def test_bad_input_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError):
        create_engine(EngineConfig("naive", faults={"late_purge": True}))
    engine = create_engine(EngineConfig("incremental", parameters={"tbox": str(tmp_path / "missing.ttl")}))
    with pytest.raises(UserError):
        engine.register(parse_query(FACULTY.format(size="1s", slide="1s")))


# random small LUBM-like streams over a vocabulary where ρDF fires a lot
SUBJECTS = [ex(f"u{i}") for i in range(4)]
STREAM_PROPERTIES = [ub(p) for p in ("headOf", "worksFor", "memberOf", "advisor", "teacherOf", "emailAddress")]
STREAM_CLASSES = [ub(c) for c in ("FullProfessor", "Lecturer", "GraduateStudent", "Course", "Department")]

elements = st.lists(
    st.tuples(
        st.integers(0, 40),
        st.one_of(
            st.tuples(st.sampled_from(SUBJECTS), st.sampled_from(STREAM_PROPERTIES),
                      st.sampled_from(SUBJECTS + ['"a@b.org"'])),
            st.tuples(st.sampled_from(SUBJECTS), st.just(RDF_TYPE), st.sampled_from(STREAM_CLASSES)),
        ),
    ),
    max_size=25,
)
semantics_choices = st.sampled_from([
    PRESETS["csparql"], PRESETS["cqels"], PRESETS["sparqlstream"],
    EngineSemantics(border=BorderConvention.OPEN_CLOSED, report=ReportPolicy.parse("cc"), r2s=R2S.DSTREAM),
    EngineSemantics(border=BorderConvention.CLOSED, report=ReportPolicy.parse("wc"), r2s=R2S.ISTREAM,
                    empty_notification=True),
])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=elements, semantics=semantics_choices, query=st.sampled_from(sorted(QUERIES)),
       window=st.sampled_from([("5ms", "5ms"), ("10ms", "3ms"), ("4ms", "8ms")]))
@pytest.mark.slow
def test_naive_and_incremental_agree_on_every_stimulus(
    items: list[tuple[int, tuple[str, str, str]]], semantics: EngineSemantics, query: str, window: tuple[str, str],
) -> None:
    stream = [StreamElement(s, p, o, t) for t, (s, p, o) in sorted(items, key=lambda item: item[0])]
    stimuli = group_contemporaneous(stream)
    text = QUERIES[query].format(size=window[0], slide=window[1])
    naive = responses_per_stimulus("naive", text, stimuli, semantics, end=60)
    incremental = responses_per_stimulus("incremental", text, stimuli, semantics, end=60)
    assert naive == incremental


def test_engines_agree_on_a_lubm_stream_with_two_streams_merged() -> None:
    """The real generator (Heaven's D), a sliding window, two queries, and multi-stream stimuli."""
    items = list(lubm.iter_elements({"min_departments": 1, "max_departments": 1, "stimulus_size": 10}))[:800]
    stimuli = merge_streams({STREAM: items[:600], f"{EX}other": [e._replace(t=e.t + 50) for e in items[600:]]})
    for name in ("faculty", "member"):
        text = QUERIES[name].format(size="1s", slide="100ms")
        naive = responses_per_stimulus("naive", text, stimuli, PRESETS["csparql"], end=7000)
        incremental = responses_per_stimulus("incremental", text, stimuli, PRESETS["csparql"], end=7000)
        assert naive == incremental
        assert any(counter for batch in naive for _, _, counter in batch)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=elements, semantics=semantics_choices, query=st.sampled_from(sorted(QUERIES)),
       window=st.sampled_from([("5ms", "5ms"), ("10ms", "3ms")]))
@pytest.mark.slow
def test_the_oracle_under_rhodf_entailment_expects_what_the_baselines_answer(
    items: list[tuple[int, tuple[str, str, str]]], semantics: EngineSemantics, query: str, window: tuple[str, str],
) -> None:
    """``rhodf_entailed`` (element-wise closure) + the plain oracle = ρDF over each window (Heaven runs).

    Not for content change under a tuple tick: there the derived elements would be ticks of their own.
    """
    from rsp_workbench.oracle.reference import StaticData
    from rsp_workbench.oracle.run import compute_expected, expected_relations
    from rsp_workbench.oracle.rhodf import rhodf_entailed

    stream = [StreamElement(s, p, o, t) for t, (s, p, o) in sorted(items, key=lambda item: item[0])]
    text = QUERIES[query].format(size=window[0], slide=window[1])
    parsed = parse_query(text, syntax="csparql")
    assume(not (semantics.tick is Tick.TUPLE and Strategy.CONTENT_CHANGE in semantics.report.strategies))
    semantics = semantics.with_overrides({"t0": 0})
    streams, static = rhodf_entailed({STREAM: stream}, {"default": [], "named": {}}, None)
    answer = compute_expected(parsed, streams, semantics, [(0,)], static=StaticData(tuple(static["default"])), end=60)
    expected = [(r.time, r.operation, r.bindings) for r in expected_relations(answer[(0,)])]
    got = [r for batch in responses_per_stimulus("naive", text, group_contemporaneous(stream), semantics, end=60)
           for r in batch]
    assert got == expected
