"""ρDF entailment as the oracle computes it: the ground truth for the ρDF baselines, written
apart from the engines' own closure so that a bug in theirs cannot be "correct" by construction.

The rules (docs/design/SEMANTICS.md "Baselines"; W3C RDF 1.1 Semantics numbering), applied to one set of
triples until nothing new follows:

* rdfs5  ``p sp q, q sp r ⇒ p sp r``     rdfs7 ``p sp q, x p y ⇒ x q y`` (docs/design/SEMANTICS.md's "rdfs5/6")
* rdfs11 ``c sc d, d sc e ⇒ c sc e``     rdfs9 ``c sc d, x type c ⇒ x type d``
* rdfs2  ``p dom c, x p y ⇒ x type c``   rdfs3 ``p range c, x p y ⇒ y type c`` (no literal subjects)

The TBox is the schema triples of the ``tbox`` (univ-bench's ρDF subset by default) and of
the static default graph; schema triples inside a stream are plain data (as the baselines
treat them: Heaven materialises T at configuration time). Every ABox conclusion then needs
exactly one ABox triple, so the entailment of a window is the union of its triples'
entailments: :func:`rhodf_entailed` replaces each element by its own, at its time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from rsp_workbench.errors import UserError

Triple = tuple[str, str, str]

RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
_RDFS = "http://www.w3.org/2000/01/rdf-schema#"
SUB_CLASS_OF = f"<{_RDFS}subClassOf>"
SUB_PROPERTY_OF = f"<{_RDFS}subPropertyOf>"
DOMAIN = f"<{_RDFS}domain>"
RANGE = f"<{_RDFS}range>"
SCHEMA_PREDICATES = frozenset({SUB_CLASS_OF, SUB_PROPERTY_OF, DOMAIN, RANGE})


def rhodf_closure(abox: Iterable[Triple], tbox: Iterable[Triple]) -> set[Triple]:
    """The ABox triples and everything ρDF derives from them under ``tbox`` (the TBox's own
    triples and its rdfs5/rdfs11 conclusions are not part of the result).

    A plain fixpoint over the rules as written (no precomputed hierarchies): the schema is
    closed first, then each ABox rule is applied to every triple until nothing is new.
    """
    schema = {t for t in tbox if t[1] in SCHEMA_PREDICATES}
    while True:  # rdfs5, rdfs11
        chained = {(a, p, d) for a, p, b in schema if p in (SUB_PROPERTY_OF, SUB_CLASS_OF)
                   for b2, p2, d in schema if p2 == p and b2 == b}
        if chained <= schema:
            break
        schema |= chained
    by_predicate: dict[str, dict[str, set[str]]] = {p: {} for p in SCHEMA_PREDICATES}
    for s, p, o in schema:
        by_predicate[p].setdefault(s, set()).add(o)
    result = set(abox)
    frontier = set(result)
    while frontier:
        derived: set[Triple] = set()
        for s, p, o in frontier:
            derived.update((s, q, o) for q in by_predicate[SUB_PROPERTY_OF].get(p, ()))  # rdfs7
            derived.update((s, RDF_TYPE, c) for c in by_predicate[DOMAIN].get(p, ()))  # rdfs2
            if not o.startswith('"'):  # rdfs3: a literal is never a subject
                derived.update((o, RDF_TYPE, c) for c in by_predicate[RANGE].get(p, ()))
            if p == RDF_TYPE:  # rdfs9
                derived.update((s, RDF_TYPE, d) for d in by_predicate[SUB_CLASS_OF].get(o, ()))
        frontier = derived - result
        result |= frontier
    return result


def oracle_tbox(tbox: str | Path | None, static_default: Sequence[Triple]) -> list[Triple]:
    """The TBox of a ρDF run: the ``tbox`` file (univ-bench's ρDF subset when None) plus the
    schema triples of the static default graph."""
    from rsp_workbench.streams.terms import canonical_triple

    try:
        if tbox:
            from rsp_workbench.generators.flows import read_triples

            base = list(read_triples(tbox))
        else:
            from rsp_workbench.generators.lubm import tbox_triples

            base = list(tbox_triples(rhodf=True))
    except Exception as error:  # unreadable or unparsable file: a user error naming it
        raise UserError(f"cannot read the TBox {tbox}: {error}", field="parameters.tbox") from None
    return [canonical_triple(tuple(t)) for t in base if t[1] in SCHEMA_PREDICATES] + \
        [t for t in static_default if t[1] in SCHEMA_PREDICATES]


def rhodf_entailed(streams: Mapping[str, Sequence[Any]], static: Mapping[str, Any],
                   tbox: Any) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """The oracle's inputs under the ρDF entailment regime of the Heaven baselines.

    With the TBox fixed, every ρDF ABox rule has one instance premise, so the closure of a
    window is the union of the closures of its elements: each element is followed by what
    it alone entails, at its own time, and the static default graph is replaced by its
    closure; the plain oracle over these inputs then expects what a ρDF reasoner over the
    window must answer.
    """
    from rsp_workbench.streams.terms import canonical_triple

    default = [canonical_triple(tuple(t)) for t in static.get("default", ())]
    schema = oracle_tbox(str(tbox) if tbox else None, default)
    expanded: dict[str, list[Any]] = {}
    cache: dict[Triple, list[Triple]] = {}
    for iri, elements in streams.items():
        out: list[Any] = []
        for element in elements:
            triple = (element.subject, element.predicate, element.object)
            derived = cache.get(triple)
            if derived is None:
                derived = cache[triple] = sorted(t for t in rhodf_closure([triple], schema) if t != triple)
            out.append(element)
            out.extend(element._replace(subject=s, predicate=p, object=o) for s, p, o in derived)
        expanded[iri] = out
    return expanded, {**static, "default": sorted(rhodf_closure(default, schema))}
