"""Incremental matching of conjunctive queries (BGP + FILTER + projection) over window contents.

The window store is a *set* of triples per graph (RDF graph semantics, as the oracle's
rdflib dataset), kept with reference counts so that an element that is in two windows,
or also in the static data, is added once and removed only when its last copy leaves.
When a triple enters or leaves, :class:`IncrementalBGP` computes only the solution
mappings that involve it (a delta join: pattern ``i`` bound to the triple, patterns
``j < i`` matched without it, so every mapping is counted once) and updates the bag of
projected mappings. Queries outside this fragment are evaluated by rdflib over an rdflib
dataset that is maintained incrementally as well (:class:`RdflibMirror`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterator

from workbench.streams.terms import canonical_term, from_rdflib, to_rdflib

Triple = tuple[str, str, str]
GraphKey = str | None  # None: the default graph


class Unsupported(Exception):
    """The query is outside the natively incremental fragment (use the rdflib mirror)."""


class Var(str):
    """A query variable (``?x``; query blank nodes become variables ``_:label``)."""

    __slots__ = ()


class TripleIndex:
    """One graph: reference-counted triples with SPO/POS/OSP hash indexes."""

    def __init__(self) -> None:
        self.counts: dict[Triple, int] = {}
        self.spo: dict[str, dict[str, set[str]]] = {}
        self.pos: dict[str, dict[str, set[str]]] = {}
        self.osp: dict[str, dict[str, set[str]]] = {}

    def __len__(self) -> int:
        return len(self.counts)

    def __contains__(self, triple: Triple) -> bool:
        return triple in self.counts

    def insert(self, triple: Triple) -> None:
        s, p, o = triple
        self.spo.setdefault(s, {}).setdefault(p, set()).add(o)
        self.pos.setdefault(p, {}).setdefault(o, set()).add(s)
        self.osp.setdefault(o, {}).setdefault(s, set()).add(p)

    def delete(self, triple: Triple) -> None:
        s, p, o = triple
        _discard(self.spo, s, p, o)
        _discard(self.pos, p, o, s)
        _discard(self.osp, o, s, p)

    def match(self, s: str | None, p: str | None, o: str | None) -> Iterator[Triple]:
        """Triples matching the bound positions (None = any)."""
        if s is not None:
            by_p = self.spo.get(s)
            if not by_p:
                return
            if p is not None:
                objects = by_p.get(p)
                if not objects:
                    return
                if o is not None:
                    if o in objects:
                        yield (s, p, o)
                    return
                for obj in objects:
                    yield (s, p, obj)
                return
            if o is not None:
                for pred in self.osp.get(o, {}).get(s, ()):
                    yield (s, pred, o)
                return
            for pred, objects in by_p.items():
                for obj in objects:
                    yield (s, pred, obj)
            return
        if p is not None:
            by_o = self.pos.get(p)
            if not by_o:
                return
            if o is not None:
                for subj in by_o.get(o, ()):
                    yield (subj, p, o)
                return
            for obj, subjects in by_o.items():
                for subj in subjects:
                    yield (subj, p, obj)
            return
        if o is not None:
            for subj, preds in self.osp.get(o, {}).items():
                for pred in preds:
                    yield (subj, pred, o)
            return
        yield from self.counts


def _discard(index: dict[str, dict[str, set[str]]], a: str, b: str, c: str) -> None:
    inner = index[a]
    values = inner[b]
    values.discard(c)
    if not values:
        del inner[b]
        if not inner:
            del index[a]


@dataclass(frozen=True)
class Pattern:
    """A triple pattern in a graph; terms are N-Triples text or :class:`Var`."""

    graph: GraphKey
    s: str
    p: str
    o: str

    def variables(self) -> set[str]:
        return {term for term in (self.s, self.p, self.o) if isinstance(term, Var)}

    def unify(self, triple: Triple, binding: dict[str, str]) -> dict[str, str] | None:
        result = binding
        copied = False
        for term, value in zip((self.s, self.p, self.o), triple):
            if isinstance(term, Var):
                bound = result.get(term)
                if bound is None:
                    if not copied:
                        result = dict(result)
                        copied = True
                    result[term] = value
                elif bound != value:
                    return None
            elif term != value:
                return None
        return result

    def lookup(self, binding: dict[str, str]) -> tuple[str | None, str | None, str | None]:
        def resolve(term: str) -> str | None:
            return binding.get(term) if isinstance(term, Var) else term

        return resolve(self.s), resolve(self.p), resolve(self.o)


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
    from rdflib.plugins.sparql.parserutils import CompValue

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
        from rdflib.plugins.sparql.sparql import QueryContext

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
        from rdflib.plugins.sparql.evalutils import _ebv
        from rdflib.plugins.sparql.sparql import FrozenBindings, SPARQLError

        values = {self._var(name): to_rdflib(binding[name]) for name in names}
        try:
            return bool(_ebv(self.expressions[index], FrozenBindings(self.context, values)))
        except SPARQLError:
            return False


_VOLATILE = ("Builtin_NOW", "Builtin_RAND", "Builtin_UUID", "Builtin_STRUUID", "Builtin_BNODE")


def _mentions(expr: Any, names: tuple[str, ...]) -> bool:
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(expr, CompValue):
        if expr.name.startswith(names):
            return True
        return any(_mentions(v, names) for k, v in expr.items() if k != "_vars")
    if isinstance(expr, (list, tuple)):
        return any(_mentions(v, names) for v in expr)
    return False


class IncrementalBGP:
    """The bag of projected solution mappings of a compiled query, maintained under Δ+ / Δ−.

    ``on_change(mapping, delta)`` is called for every projected mapping whose count changes.
    """

    def __init__(self, compiled: CompiledQuery, on_change: Callable[[Hashable, int], None]) -> None:
        self.compiled = compiled
        self.graphs: dict[GraphKey, TripleIndex] = {}
        self.filter = FilterEvaluator(compiled.filters) if compiled.filters else None
        self.on_change = on_change
        self.projection = [(name, Var(name)) for name in compiled.projection]
        self.plans = [self._plan(i) for i in range(len(compiled.patterns))]
        self.pattern_graphs = {pattern.graph for pattern in compiled.patterns}

    def _plan(self, first: int) -> list[int]:
        """Join order after pattern ``first``: most bound positions first (greedy)."""
        patterns = self.compiled.patterns
        bound = set(patterns[first].variables())
        rest = [i for i in range(len(patterns)) if i != first]
        order: list[int] = []
        while rest:
            def score(i: int) -> tuple[int, int, int]:
                # connected patterns first (a bound variable makes the lookup selective), then constants
                pattern = patterns[i]
                terms = (pattern.s, pattern.p, pattern.o)
                joined = sum(1 for x in terms if isinstance(x, Var) and x in bound)
                constants = sum(1 for x in terms if not isinstance(x, Var))
                return (-joined, -constants, i)

            best = min(rest, key=score)
            rest.remove(best)
            order.append(best)
            bound |= patterns[best].variables()
        return order

    def graph(self, key: GraphKey) -> TripleIndex:
        index = self.graphs.get(key)
        if index is None:
            index = self.graphs[key] = TripleIndex()
        return index

    def insert(self, key: GraphKey, triple: Triple) -> None:
        self.graph(key).insert(triple)
        if key in self.pattern_graphs:
            self._delta(key, triple, +1)

    def delete(self, key: GraphKey, triple: Triple) -> None:
        if key in self.pattern_graphs:
            self._delta(key, triple, -1)
        self.graph(key).delete(triple)

    def _delta(self, key: GraphKey, triple: Triple, sign: int) -> None:
        patterns = self.compiled.patterns
        for i, pattern in enumerate(patterns):
            if pattern.graph != key:
                continue
            binding = pattern.unify(triple, {})
            if binding is None:
                continue
            for full in self._extend(binding, self.plans[i], 0, i, key, triple):
                if self.filter is not None and not self.filter.accepts(full):
                    continue
                mapping = frozenset((name, full[var]) for name, var in self.projection if var in full)
                self.on_change(mapping, sign)

    def _extend(
        self, binding: dict[str, str], plan: list[int], step: int, first: int, key: GraphKey, triple: Triple
    ) -> Iterator[dict[str, str]]:
        if step == len(plan):
            yield binding
            return
        index = plan[step]
        pattern = self.compiled.patterns[index]
        graph = self.graphs.get(pattern.graph)
        if graph is None:
            return
        exclude = index < first and pattern.graph == key
        s, p, o = pattern.lookup(binding)
        for candidate in graph.match(s, p, o):
            if exclude and candidate == triple:
                continue
            extended = pattern.unify(candidate, binding)
            if extended is not None:
                yield from self._extend(extended, plan, step + 1, first, key, triple)


class RdflibMirror:
    """An rdflib dataset kept equal to the window store, for queries outside the native fragment."""

    def __init__(self) -> None:
        from rdflib import Dataset

        self.dataset = Dataset(default_union=False)
        self._graphs: dict[GraphKey, Any] = {}

    def _graph(self, key: GraphKey) -> Any:
        from rdflib import URIRef

        graph = self._graphs.get(key)
        if graph is None:
            graph = self.dataset.default_graph if key is None else self.dataset.graph(URIRef(key))
            self._graphs[key] = graph
        return graph

    def insert(self, key: GraphKey, triple: Triple) -> None:
        self._graph(key).add(tuple(to_rdflib(x) for x in triple))

    def delete(self, key: GraphKey, triple: Triple) -> None:
        self._graph(key).remove(tuple(to_rdflib(x) for x in triple))

    def evaluate(self, prepared: Any) -> Counter[Hashable]:
        """The bag of solution mappings, exactly as the oracle's ``evaluate_snapshot`` builds it."""
        bag: Counter[Hashable] = Counter()
        for row in self.dataset.query(prepared):
            values = row.asdict()
            bag[frozenset((str(var), from_rdflib(value)) for var, value in values.items() if value is not None)] += 1
        return bag

    def pattern_is_empty(self, pattern: Any, prologue: Any) -> bool:
        """True if an algebra pattern has no solution over the dataset (for the null_aggregate fault)."""
        from rdflib.plugins.sparql.evaluate import evalPart
        from rdflib.plugins.sparql.sparql import QueryContext

        context = QueryContext(self.dataset, initBindings={})
        context.prologue = prologue
        for _ in evalPart(context, pattern):
            return False
        return True


class WindowStore:
    """Reference-counted graph contents feeding a native matcher or an rdflib mirror."""

    def __init__(self, sink: IncrementalBGP | RdflibMirror) -> None:
        self.sink = sink
        self.counts: dict[tuple[GraphKey, Triple], int] = {}

    def add(self, key: GraphKey, triple: Triple) -> None:
        item = (key, triple)
        count = self.counts.get(item, 0)
        self.counts[item] = count + 1
        if count == 0:
            self.sink.insert(key, triple)

    def remove(self, key: GraphKey, triple: Triple) -> None:
        item = (key, triple)
        count = self.counts[item]
        if count == 1:
            del self.counts[item]
            self.sink.delete(key, triple)
        else:
            self.counts[item] = count - 1

    def __len__(self) -> int:
        return len(self.counts)
