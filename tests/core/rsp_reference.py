"""Test helper: evaluate a plain SPARQL query with rdflib over window contents.

Deliberately naive (the reference path): build an rdflib graph per evaluation.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping

from rdflib import Dataset, Graph, URIRef

EX = "http://example.org/"


def graph_of(triples: Iterable[tuple[str, str, str]]) -> Graph:
    """Triples in N-Triples term text → an rdflib graph."""
    data = "".join(f"{s} {p} {o} .\n" for s, p, o in triples)
    graph = Graph()
    graph.parse(data=data, format="nt")
    return graph


def select(
    query: str,
    default: Iterable[tuple[str, str, str]] = (),
    named: Mapping[str, Iterable[tuple[str, str, str]]] | None = None,
) -> Counter[frozenset[tuple[str, str]]]:
    """The bag of solution mappings (var → N-Triples text) of a SELECT query."""
    dataset = Dataset(default_union=False)
    for triple in graph_of(default):
        dataset.default_graph.add(triple)
    for name, triples in (named or {}).items():
        target = dataset.graph(URIRef(name))
        for triple in graph_of(triples):
            target.add(triple)
    result = dataset.query(query)
    bag: Counter[frozenset[tuple[str, str]]] = Counter()
    for row in result:
        bag[frozenset((str(var), value.n3()) for var, value in row.asdict().items())] += 1
    return bag


def iri(name: str) -> str:
    return f"<{EX}{name}>"
