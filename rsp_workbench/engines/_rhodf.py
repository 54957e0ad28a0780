"""ρDF entailment over N-Triples term text: from scratch (:func:`closure`) and incrementally.

The rules (Muñoz, Pérez, Gutierrez 2007; Heaven Sect. 6; docs/design/SEMANTICS.md "Baselines"):

* rdfs5  ``p sp q, q sp r ⇒ p sp r`` and rdfs11 ``c sc d, d sc e ⇒ c sc e`` — the TBox
  hierarchies, closed transitively **once** when a :class:`Schema` is built (Heaven: "the
  materialization of T is computed at configuration time");
* rdfs7  ``p sp q, x p y ⇒ x q y``;
* rdfs2  ``p dom c, x p y ⇒ x type c``;
* rdfs3  ``p range c, x p y ⇒ y type c`` (not when ``y`` is a literal: a literal cannot be
  a subject in RDF, so that conclusion is dropped);
* rdfs9  ``c sc d, x type c ⇒ x type d``.

The TBox is static: schema triples inside the ABox (window or static data) are plain
data and do not extend the schema. With a fixed, closed TBox every ABox rule has exactly
**one** ABox premise, so ``closure(A) = ⋃_{t ∈ A} closure({t})``. :class:`IncrementalClosure`
uses that for *counting* maintenance: the support count of a materialised triple is the
number of distinct explicit triples whose single-triple closure contains it; Δ+ adds the
consequences of explicit triples that become present, Δ− subtracts those of explicit
triples that are gone, and a triple leaves the materialisation exactly when its count
reaches 0. Unlike the classic counting algorithm (Gupta et al. 1993), which counts
immediate derivations and is wrong on recursive rules (cycles keep each other alive),
counting *explicit supports* is exact here even with ``sp``/``sc`` cycles. The cost of a
delta is proportional to the delta and its consequences; single-triple closures are
computed once per predicate (and per class for ``rdf:type``) as templates.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping

Triple = tuple[str, str, str]

RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
SUB_CLASS_OF = f"<{RDFS}subClassOf>"
SUB_PROPERTY_OF = f"<{RDFS}subPropertyOf>"
DOMAIN = f"<{RDFS}domain>"
RANGE = f"<{RDFS}range>"
SCHEMA_PREDICATES = frozenset({SUB_CLASS_OF, SUB_PROPERTY_OF, DOMAIN, RANGE})

# Placeholders for the subject/object of a template (cannot collide with real N-Triples terms).
_X = "<\x00x>"
_Y_RESOURCE = "<\x00y>"
_Y_LITERAL = '"\x00y"'


def is_literal(term: str) -> bool:
    return term.startswith('"')


def _transitive(edges: Mapping[str, set[str]]) -> dict[str, frozenset[str]]:
    """rdfs5/rdfs11: everything reachable from each node (itself only through a cycle)."""
    closed: dict[str, frozenset[str]] = {}
    for start in edges:
        seen: set[str] = set()
        stack = list(edges[start])
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(edges.get(node, ()))
        closed[start] = frozenset(seen)
    return closed


@dataclass(frozen=True)
class Schema:
    """A ρDF TBox with ``sp``/``sc`` closed transitively (rdfs5, rdfs11), indexed for the ABox rules."""

    super_properties: Mapping[str, frozenset[str]]
    super_classes: Mapping[str, frozenset[str]]
    domains: Mapping[str, frozenset[str]]
    ranges: Mapping[str, frozenset[str]]

    @classmethod
    def from_triples(cls, tbox: Iterable[Triple]) -> "Schema":
        """Keep the sc/sp/dom/range triples of ``tbox`` (anything else is ignored)."""
        sp: dict[str, set[str]] = {}
        sc: dict[str, set[str]] = {}
        dom: dict[str, set[str]] = {}
        rng: dict[str, set[str]] = {}
        for s, p, o in tbox:
            target = {SUB_PROPERTY_OF: sp, SUB_CLASS_OF: sc, DOMAIN: dom, RANGE: rng}.get(p)
            if target is not None:
                target.setdefault(s, set()).add(o)
        return cls(
            _transitive(sp), _transitive(sc),
            {k: frozenset(v) for k, v in dom.items()}, {k: frozenset(v) for k, v in rng.items()},
        )

    def axioms(self) -> set[Triple]:
        """The closed TBox as triples (rdfs5/rdfs11 conclusions included)."""
        out: set[Triple] = set()
        for relation, table in ((SUB_PROPERTY_OF, self.super_properties), (SUB_CLASS_OF, self.super_classes),
                                (DOMAIN, self.domains), (RANGE, self.ranges)):
            out.update((s, relation, o) for s, objects in table.items() for o in objects)
        return out

    def conclusions(self, triple: Triple) -> Iterator[Triple]:
        """One application of rdfs7, rdfs2, rdfs3 and rdfs9 to one ABox triple."""
        s, p, o = triple
        for q in self.super_properties.get(p, ()):
            yield (s, q, o)
        for c in self.domains.get(p, ()):
            yield (s, RDF_TYPE, c)
        if not is_literal(o):
            for c in self.ranges.get(p, ()):
                yield (o, RDF_TYPE, c)
        if p == RDF_TYPE:
            for d in self.super_classes.get(o, ()):
                yield (s, RDF_TYPE, d)


def load_schema(path: str | Path) -> Schema:
    """A :class:`Schema` from an RDF file (Turtle, N-Triples, … — rdflib guesses by suffix)."""
    from rsp_workbench.generators.flows import read_triples

    return Schema.from_triples(read_triples(path))


def default_schema() -> Schema:
    """The ρDF subset of univ-bench (``resources/univ-bench-rhodf.ttl``)."""
    from rsp_workbench.generators.lubm import tbox_triples

    return Schema.from_triples(tbox_triples(rhodf=True))


def _saturate(schema: Schema, result: set[Triple], frontier: list[Triple]) -> set[Triple]:
    """Semi-naive forward chaining: apply the ABox rules to the frontier until nothing is new."""
    conclusions = schema.conclusions
    while frontier:
        new: list[Triple] = []
        for triple in frontier:
            for derived in conclusions(triple):
                if derived not in result:
                    result.add(derived)
                    new.append(derived)
        frontier = new
    return result


def closure(abox: Iterable[Triple], tbox: Schema | Iterable[Triple]) -> set[Triple]:
    """The ρDF materialisation of ``abox`` under ``tbox``, computed from scratch (naive baseline).

    Contains the explicit triples and everything the ABox rules derive; the TBox axioms
    themselves are not included (see :meth:`Schema.axioms`).
    """
    schema = tbox if isinstance(tbox, Schema) else Schema.from_triples(tbox)
    result = set(abox)
    return _saturate(schema, result, list(result))


class IncrementalClosure:
    """The ρDF materialisation of a multiset of explicit triples, maintained by support counting.

    ``explicit`` holds the multiplicity of each explicit triple (the same triple may be in
    the window at two times, or in the window and the static data); only a change between
    0 and ≥1 touches the materialisation. ``support[u]`` is the number of distinct explicit
    triples whose single-triple closure contains ``u`` (see the module docstring for why
    this is exact for ρDF with a static TBox).
    """

    def __init__(self, tbox: Schema | Iterable[Triple]) -> None:
        self.schema = tbox if isinstance(tbox, Schema) else Schema.from_triples(tbox)
        self.explicit: Counter[Triple] = Counter()
        self.support: dict[Triple, int] = {}
        self._templates: dict[tuple[str, str], tuple[Triple, ...]] = {}
        # predicates whose consequences depend on the object's value (p ⊑* rdf:type)
        self._typing = {p for p, supers in self.schema.super_properties.items() if RDF_TYPE in supers} | {RDF_TYPE}

    def __len__(self) -> int:
        return len(self.support)

    def __contains__(self, triple: object) -> bool:
        return triple in self.support

    def triples(self) -> set[Triple]:
        """The current materialisation (a copy)."""
        return set(self.support)

    def consequences(self, triple: Triple) -> list[Triple]:
        """``closure({triple})``: the triple itself and everything it alone entails."""
        s, p, o = triple
        if p in self._typing:
            key, y = (p, o), o
        else:
            y = _Y_LITERAL if is_literal(o) else _Y_RESOURCE
            key = (p, y)
        template = self._templates.get(key)
        if template is None:
            start = (_X, p, y)
            template = tuple(_saturate(self.schema, {start}, [start]))
            self._templates[key] = template
        names = {_X: s, y: o}
        get = names.get
        return [(get(a, a), get(b, b), get(c, c)) for a, b, c in template]

    def add(self, triples: Iterable[Triple]) -> list[Triple]:
        """Δ+: explicit triples enter; return the triples that became materialised."""
        added: list[Triple] = []
        explicit, support = self.explicit, self.support
        for triple in triples:
            count = explicit[triple]
            explicit[triple] = count + 1
            if count:
                continue
            for derived in set(self.consequences(triple)):
                before = support.get(derived, 0)
                support[derived] = before + 1
                if not before:
                    added.append(derived)
        return added

    def remove(self, triples: Iterable[Triple]) -> list[Triple]:
        """Δ−: explicit triples leave (one occurrence each); return the triples no longer materialised."""
        removed: list[Triple] = []
        explicit, support = self.explicit, self.support
        for triple in triples:
            count = explicit.get(triple, 0)
            if not count:
                raise KeyError(f"remove of a triple that is not present: {triple}")
            if count > 1:
                explicit[triple] = count - 1
                continue
            del explicit[triple]
            for derived in set(self.consequences(triple)):
                after = support[derived] - 1
                if after:
                    support[derived] = after
                else:
                    del support[derived]
                    removed.append(derived)
        return removed
