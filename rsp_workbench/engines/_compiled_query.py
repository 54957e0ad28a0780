"""Conjunctive queries (BGP + FILTER + projection + DISTINCT) compiled from rdflib's algebra.

A module of its own because the compiled form is read by more than the incremental matcher
(`rsp_workbench.engines._match`): the windowed engines (`rsp_workbench.engines._windowed`),
the eviction engine and the Spark streaming plan compile with :func:`compile_select` too, and
each decides what a query outside the fragment (:class:`Unsupported`) means for it.
:class:`FilterEvaluator` applies FILTERs with rdflib's own expression semantics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rsp_workbench.streams.terms import canonical_term, from_rdflib, to_rdflib

Triple = tuple[str, str, str]
GraphKey = str | None  # None: the default graph


class Unsupported(Exception):
    """The query is outside the natively incremental fragment (use the rdflib mirror)."""


class Var(str):
    """A query variable (``?x``; query blank nodes become variables ``_:label``)."""

    __slots__ = ()


@dataclass(frozen=True)
class Pattern:
    """A triple pattern in a graph; terms are N-Triples text or :class:`Var`."""

    graph: GraphKey
    s: str
    p: str
    o: str

    def __post_init__(self) -> None:
        # the positions of constants and variables, computed once: unify/lookup run per triple
        terms = (self.s, self.p, self.o)
        object.__setattr__(self, "_constants", tuple((i, t) for i, t in enumerate(terms) if not isinstance(t, Var)))
        object.__setattr__(self, "_variables", tuple((i, t) for i, t in enumerate(terms) if isinstance(t, Var)))
        object.__setattr__(self, "_is_var", tuple(isinstance(t, Var) for t in terms))

    def variables(self) -> set[str]:
        return {term for term in (self.s, self.p, self.o) if isinstance(term, Var)}

    def unify(self, triple: Triple, binding: dict[str, str]) -> dict[str, str] | None:
        for position, constant in self._constants:  # type: ignore[attr-defined]
            if triple[position] != constant:
                return None
        result = binding
        copied = False
        for position, term in self._variables:  # type: ignore[attr-defined]
            value = triple[position]
            bound = result.get(term)
            if bound is None:
                if not copied:
                    result = dict(result)
                    copied = True
                result[term] = value
            elif bound != value:
                return None
        return result

    def lookup(self, binding: dict[str, str]) -> tuple[str | None, str | None, str | None]:
        var_s, var_p, var_o = self._is_var  # type: ignore[attr-defined]
        return (binding.get(self.s) if var_s else self.s, binding.get(self.p) if var_p else self.p,
                binding.get(self.o) if var_o else self.o)


@dataclass
class CompiledQuery:
    """The natively supported fragment: patterns, filters, projection, DISTINCT."""

    patterns: list[Pattern]
    filters: list[Any]  # rdflib expressions
    projection: list[str]
    distinct: bool


def compile_select(query_algebra: Any, window_graphs: set[str]) -> CompiledQuery:
    """Compile rdflib's algebra of a SELECT query into a conjunctive query, or raise Unsupported.

    Supported: ``Project``/``Distinct`` over any nesting of ``Join``, ``BGP``, ``Filter``
    (without EXISTS, and only over variables bound inside the filtered group) and
    ``Graph <iri>``. Everything else (OPTIONAL, UNION, aggregates, ORDER BY, LIMIT,
    property paths, BIND, VALUES, GRAPH ?g …) is evaluated through the rdflib mirror.
    """
    from rdflib import BNode, URIRef, Variable

    root = query_algebra.algebra
    if root.name != "SelectQuery":
        raise Unsupported(root.name)
    node = root.p
    distinct = False
    if node.name == "Distinct":
        distinct, node = True, node.p
    if node.name != "Project":
        raise Unsupported(node.name)
    projection = [str(v) for v in node.PV]
    patterns: list[Pattern] = []
    filters: list[Any] = []

    def term(value: Any) -> str:
        if isinstance(value, Variable):
            return Var(str(value))
        if isinstance(value, BNode):
            return Var(f"_:{value}")
        if isinstance(value, (URIRef,)) or hasattr(value, "datatype"):
            return canonical_term(from_rdflib(value))
        raise Unsupported(f"term {value!r}")

    def walk(part: Any, graph: GraphKey) -> set[str]:
        name = part.name
        if name == "BGP":
            variables: set[str] = set()
            for s, p, o in part.triples:
                if not all(isinstance(x, (Variable, BNode, URIRef)) or hasattr(x, "datatype") for x in (s, p, o)):
                    raise Unsupported("property path")
                pattern = Pattern(graph, term(s), term(p), term(o))
                patterns.append(pattern)
                variables |= pattern.variables()
            return variables
        if name == "Join":
            return walk(part.p1, graph) | walk(part.p2, graph)
        if name == "Filter":
            inner = walk(part.p, graph)
            used = _expression_variables(part.expr)
            if used is None or not used <= inner:
                raise Unsupported("filter scope")
            filters.append(part.expr)
            return inner
        if name == "Graph":
            if not isinstance(part.term, URIRef):
                raise Unsupported("GRAPH ?var")
            return walk(part.p, str(part.term))
        raise Unsupported(name)

    walk(node.p, None)
    if not patterns:
        raise Unsupported("no triple pattern")
    return CompiledQuery(patterns, filters, projection, distinct)


def _expression_variables(expr: Any) -> set[str] | None:
    """Variables an expression reads; None if it has EXISTS or aggregates (not supported)."""
    from rdflib import Variable
    from rsp_workbench.query.rdflib_sparql import CompValue

    found: set[str] = set()

    def visit(value: Any) -> bool:
        if isinstance(value, Variable):
            found.add(str(value))
            return True
        if isinstance(value, CompValue):
            if value.name.startswith(("Builtin_EXISTS", "Builtin_NOTEXISTS", "Aggregate")):
                return False
            return all(visit(v) for k, v in value.items() if k != "_vars")
        if isinstance(value, (list, tuple)):
            return all(visit(v) for v in value)
        return True

    return found if visit(expr) else None


class FilterEvaluator:
    """SPARQL FILTER semantics via rdflib's own expression evaluator (effective boolean value)."""

    def __init__(self, expressions: list[Any]) -> None:
        from rdflib import Graph, Variable
        from rsp_workbench.query.rdflib_sparql import QueryContext

        self.expressions = expressions
        self.context = QueryContext(Graph())
        self.variables = [sorted(_expression_variables(e) or ()) for e in expressions]
        self._var = Variable

        # results are cached per tuple of input terms unless an expression is non-deterministic
        self.cacheable = [not _mentions(e, _VOLATILE) for e in expressions]
        self.cache: dict[tuple[int, tuple[str, ...]], bool] = {}

    def accepts(self, binding: dict[str, str]) -> bool:
        for index, names in enumerate(self.variables):
            key = (index, tuple(binding[name] for name in names))
            result = self.cache.get(key) if self.cacheable[index] else None
            if result is None:
                result = self._evaluate(index, names, binding)
                if self.cacheable[index]:
                    if len(self.cache) > 200_000:
                        self.cache.clear()
                    self.cache[key] = result
            if not result:
                return False
        return True

    def _evaluate(self, index: int, names: list[str], binding: dict[str, str]) -> bool:
        from rsp_workbench.query.rdflib_sparql import ebv
        from rsp_workbench.query.rdflib_sparql import FrozenBindings, SPARQLError

        values = {self._var(name): to_rdflib(binding[name]) for name in names}
        try:
            return bool(ebv(self.expressions[index], FrozenBindings(self.context, values)))
        except SPARQLError:
            return False


_VOLATILE = ("Builtin_NOW", "Builtin_RAND", "Builtin_UUID", "Builtin_STRUUID", "Builtin_BNODE")


def _mentions(expr: Any, names: tuple[str, ...]) -> bool:
    from rsp_workbench.query.rdflib_sparql import CompValue

    if isinstance(expr, CompValue):
        if expr.name.startswith(names):
            return True
        return any(_mentions(v, names) for k, v in expr.items() if k != "_vars")
    if isinstance(expr, (list, tuple)):
        return any(_mentions(v, names) for v in expr)
    return False
