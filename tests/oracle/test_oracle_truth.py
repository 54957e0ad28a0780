"""The oracle's ground truth does not come from the engines it judges.

The unbounded join's answer (eviction runs) and ρDF entailment (naive/incremental runs) are
computed in ``rsp_workbench.oracle`` by code of its own: each is pinned by a hand-checked
example and cross-checked on random inputs — the unbounded join against the eviction
engine with its caches off, ρDF against owlrl's RDFS closure restricted to what the ρDF
rules conclude.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsp_workbench.engine import group_contemporaneous
from rsp_workbench.oracle.rhodf import DOMAIN, RANGE, RDF_TYPE, SUB_CLASS_OF, SUB_PROPERTY_OF, rhodf_closure, rhodf_entailed
from rsp_workbench.oracle.unbounded_join import found_mappings, recall, unbounded_answer
from rsp_workbench.query.parser import parse_query
from rsp_workbench.responses.model import mapping
from rsp_workbench.streams.model import StreamElement

C = "http://example.org/chain#"
E = "<http://e/{}>"


# --- the unbounded join --------------------------------------------------------------------------

def chain_query(window: str = "") -> object:
    if window:
        return parse_query(f"REGISTER QUERY q AS PREFIX : <{C}> SELECT ?a ?d FROM STREAM <http://s> [RANGE {window} "
                           f"STEP {window}] WHERE {{ ?a :ab ?b . ?b :bc ?c . ?c :cd ?d }}", "csparql")
    return parse_query(f"PREFIX : <{C}> SELECT ?a ?b ?c ?d WHERE {{ ?a :ab ?b . ?b :bc ?c . ?c :cd ?d }}", "sparql")


def chain(*rows: tuple[str, str, str, int]) -> list[StreamElement]:
    return [StreamElement(f"<{C}{s}>", f"<{C}{p}>", f"<{C}{o}>", t) for s, p, o, t in rows]


def test_the_unbounded_join_counts_matches_whose_triples_arrived_less_than_the_range_apart() -> None:
    # a→b at 0 and 7; b→c at 5; c→d at 9; x→y never joins. Without a window: one match
    # (a, b, c, d). With a 10 ms range the support a@0, b@5, d@9 spans 9 < 10; with 5 ms the
    # support a@7, b@5, d@9 spans 4 < 5; with 4 ms no support spans less than 4.
    stream = chain(("a", "ab", "b", 0), ("b", "bc", "c", 5), ("a", "ab", "b", 7), ("c", "cd", "d", 9),
                   ("x", "ab", "y", 9))
    stimuli = group_contemporaneous(stream)
    full = {mapping(a=f"<{C}a>", b=f"<{C}b>", c=f"<{C}c>", d=f"<{C}d>")}
    assert unbounded_answer(stimuli, chain_query()) == full
    projected = {mapping(a=f"<{C}a>", d=f"<{C}d>")}
    assert unbounded_answer(stimuli, chain_query("10ms")) == projected
    assert unbounded_answer(stimuli, chain_query("5ms")) == projected
    assert unbounded_answer(stimuli, chain_query("4ms")) == set()


def test_recall_is_over_distinct_canonical_mappings() -> None:
    from rsp_workbench.responses.model import EngineResponse

    truth = {mapping(v='"1"^^<http://www.w3.org/2001/XMLSchema#integer>'), mapping(v="<http://e/x>")}
    found = found_mappings([EngineResponse(1, 0, "+", (mapping(v='"1"^^<http://www.w3.org/2001/XMLSchema#integer>'),)),
                            EngineResponse(2, 0, "+", (mapping(v='"1"^^<http://www.w3.org/2001/XMLSchema#integer>'),)),
                            EngineResponse(3, 0, "-", (mapping(v="<http://e/x>"),))])
    assert recall(found, truth) == 0.5 and recall(set(), set()) == 1.0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from(["ab", "bc", "cd"]), st.sampled_from("abc"),
                               st.sampled_from([0, 0, 1, 2, 3])), max_size=18),
       window=st.sampled_from(["", "1ms", "2ms", "4ms", "9ms"]))
def test_the_unbounded_join_equals_the_eviction_engine_without_bounds(rows, window) -> None:
    """Two implementations of one definition: the oracle's annotated evaluation and the engine's join."""
    from rsp_workbench.engines.eviction import result_set, run_join

    t, stream = 0, []
    for s, p, o, step in rows:
        t += step
        stream.append(*chain((s, p, o, t)))
    stimuli = group_contemporaneous(stream)
    query = chain_query(window)
    assert unbounded_answer(stimuli, query) == result_set(run_join(stimuli, cache_size=None, query=query))


# --- ρDF -----------------------------------------------------------------------------------------

def test_rhodf_closure_by_hand() -> None:
    tbox = [(E.format("worksFor"), SUB_PROPERTY_OF, E.format("memberOf")),
            (E.format("memberOf"), DOMAIN, E.format("Person")),
            (E.format("memberOf"), RANGE, E.format("Org")),
            (E.format("Person"), SUB_CLASS_OF, E.format("Agent")),
            (E.format("Agent"), SUB_CLASS_OF, E.format("Thing")),
            (E.format("age"), RANGE, E.format("Number"))]
    abox = [(E.format("ann"), E.format("worksFor"), E.format("acme")), (E.format("ann"), E.format("age"), '"3"')]
    assert rhodf_closure(abox, tbox) == {
        *abox,
        (E.format("ann"), E.format("memberOf"), E.format("acme")),  # rdfs7
        (E.format("ann"), RDF_TYPE, E.format("Person")),  # rdfs2
        (E.format("acme"), RDF_TYPE, E.format("Org")),  # rdfs3 (not for the literal "3")
        (E.format("ann"), RDF_TYPE, E.format("Agent")),  # rdfs9
        (E.format("ann"), RDF_TYPE, E.format("Thing")),  # rdfs9 over rdfs11
    }
    element = StreamElement(E.format("ann"), E.format("worksFor"), E.format("acme"), 5)
    streams, static = rhodf_entailed({"s": [element]}, {"default": [], "named": {}}, None)
    assert streams["s"][0] == element and all(e.t == 5 for e in streams["s"])


PROPERTIES = [E.format(f"p{i}") for i in range(3)]
CLASSES = [E.format(f"c{i}") for i in range(3)]
RESOURCES = [E.format(f"r{i}") for i in range(3)]

tbox_triples = st.lists(st.one_of(
    st.tuples(st.sampled_from(PROPERTIES), st.just(SUB_PROPERTY_OF), st.sampled_from([*PROPERTIES, RDF_TYPE])),
    st.tuples(st.sampled_from(CLASSES), st.just(SUB_CLASS_OF), st.sampled_from(CLASSES)),
    st.tuples(st.sampled_from(PROPERTIES), st.sampled_from([DOMAIN, RANGE]), st.sampled_from(CLASSES)),
), max_size=7)
abox_triples = st.lists(st.one_of(
    st.tuples(st.sampled_from(RESOURCES), st.sampled_from(PROPERTIES), st.sampled_from([*RESOURCES, *CLASSES, '"1"'])),
    st.tuples(st.sampled_from(RESOURCES), st.just(RDF_TYPE), st.sampled_from(CLASSES)),
), max_size=6)


def owlrl_rhodf(abox: list[tuple[str, str, str]], tbox: list[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
    """owlrl's RDFS closure, restricted to what the ρDF rules conclude: the ABox-shaped triples
    (no schema predicate, nothing about RDF/RDFS's own vocabulary, no literal subject)."""
    import owlrl
    from rdflib import Graph, Literal

    from rsp_workbench.streams.terms import from_rdflib, to_rdflib

    graph = Graph()
    for triple in [*tbox, *abox]:
        graph.add(tuple(to_rdflib(term) for term in triple))
    owlrl.DeductiveClosure(owlrl.RDFS_Semantics, axiomatic_triples=False, datatype_axioms=False).expand(graph)
    vocabulary = ("http://www.w3.org/1999/02/22-rdf-syntax-ns#", "http://www.w3.org/2000/01/rdf-schema#")
    kept = set()
    for s, p, o in graph:
        triple = (from_rdflib(s), from_rdflib(p), from_rdflib(o))
        if isinstance(s, Literal) or str(s).startswith(vocabulary) or str(o).startswith(vocabulary):
            continue
        if triple[1] != RDF_TYPE and str(p).startswith(vocabulary):
            continue
        kept.add(triple)
    return kept


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(abox=abox_triples, tbox=tbox_triples)
def test_rhodf_closure_equals_owlrl_on_the_rhodf_rules(abox, tbox) -> None:
    assert rhodf_closure(abox, tbox) == owlrl_rhodf(abox, tbox)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(abox=abox_triples, tbox=tbox_triples)
def test_rhodf_closure_equals_the_baselines_closure(abox, tbox) -> None:
    """The oracle's closure and the one the naive and incremental baselines share agree (and a window's
    closure is the union of its triples' closures, which `rhodf_entailed` relies on)."""
    from rsp_workbench.engines._rhodf import closure

    ours = rhodf_closure(abox, tbox)
    assert ours == closure(abox, tbox)
    assert ours == set().union(set(), *(rhodf_closure([t], tbox) for t in abox))
