"""Incremental matching of conjunctive queries (BGP + FILTER + projection) over window contents.

When a triple enters or leaves, :class:`IncrementalBGP` computes only the solution
mappings that involve it (a delta join: pattern ``i`` bound to the triple, patterns
``j < i`` matched without it, so every mapping is counted once) and updates the bag of
projected mappings. Queries outside this fragment are evaluated by rdflib over an rdflib
dataset that is maintained incrementally as well (:class:`RdflibMirror`). The queries come
compiled (`rsp_workbench.engines._compiled_query`); the reference-counted window store that
feeds either matcher is `rsp_workbench.engines._window_store`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Container, Hashable, Iterator, Sequence

from rsp_workbench.engines._compiled_query import CompiledQuery, FilterEvaluator, GraphKey, Pattern, Triple, Var
from rsp_workbench.streams.terms import from_rdflib, to_rdflib


class TripleIndex:
    """One graph: a set of triples with SPO/POS/OSP hash indexes (WindowStore counts the copies).

    ``indexes`` names those besides SPO to keep (a matcher keeps only those its lookups read,
    `lookup_index`: each costs a third of an insert); a lookup that needs a missing one fails."""

    def __init__(self, indexes: frozenset[str] = frozenset({"pos", "osp"})) -> None:
        self.spo: dict[str, dict[str, set[str]]] = {}
        self.pos: dict[str, dict[str, set[str]]] | None = {} if "pos" in indexes else None
        self.osp: dict[str, dict[str, set[str]]] | None = {} if "osp" in indexes else None

    def __len__(self) -> int:
        return sum(len(objects) for by_p in self.spo.values() for objects in by_p.values())

    def __contains__(self, triple: Triple) -> bool:
        s, p, o = triple
        return o in self.spo.get(s, {}).get(p, ())

    def insert(self, triple: Triple) -> None:
        s, p, o = triple
        self.spo.setdefault(s, {}).setdefault(p, set()).add(o)
        if self.pos is not None:
            self.pos.setdefault(p, {}).setdefault(o, set()).add(s)
        if self.osp is not None:
            self.osp.setdefault(o, {}).setdefault(s, set()).add(p)

    def delete(self, triple: Triple) -> None:
        s, p, o = triple
        _discard(self.spo, s, p, o)
        if self.pos is not None:
            _discard(self.pos, p, o, s)
        if self.osp is not None:
            _discard(self.osp, o, s, p)

    def candidates(self, s: str | None, p: str | None, o: str | None) -> Sequence[Triple]:
        """:meth:`match` as a sequence, with the join's common case (subject and predicate
        bound) answered from the SPO index directly; same triples, same order."""
        if s is not None and p is not None:
            by_p = self.spo.get(s)
            objects = by_p.get(p) if by_p else None
            if not objects:
                return ()
            if o is not None:
                return ((s, p, o),) if o in objects else ()
            return [(s, p, obj) for obj in objects]
        return list(self.match(s, p, o))

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
                for pred in self.osp.get(o, {}).get(s, ()):  # type: ignore[union-attr]
                    yield (s, pred, o)
                return
            for pred, objects in by_p.items():
                for obj in objects:
                    yield (s, pred, obj)
            return
        if p is not None:
            by_o = self.pos.get(p)  # type: ignore[union-attr]
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
            for subj, preds in self.osp.get(o, {}).items():  # type: ignore[union-attr]
                for pred in preds:
                    yield (subj, pred, o)
            return
        for subj, by_p in self.spo.items():
            for pred, objects in by_p.items():
                for obj in objects:
                    yield (subj, pred, obj)


def lookup_index(s: bool, p: bool, o: bool) -> str:
    """The index :meth:`TripleIndex.candidates` reads for a lookup with these positions bound."""
    if s:
        return "osp" if o and not p else "spo"
    if p:
        return "pos"
    return "osp" if o else "spo"


def _discard(index: dict[str, dict[str, set[str]]], a: str, b: str, c: str) -> None:
    inner = index[a]
    values = inner[b]
    values.discard(c)
    if not values:
        del inner[b]
        if not inner:
            del index[a]


@dataclass(frozen=True)
class _JoinStep:
    """One pattern of a join plan, with what is bound when the plan reaches it (fixed by the
    plan: the first pattern and the steps before bind their variables), so that a candidate
    from the index needs no unification: the index lookup already matched the constants and
    the bound variables; the step only binds its new variables (``free``) and checks a new
    variable repeated in the pattern (``repeats``)."""

    index: int
    graph: GraphKey
    lookup: tuple[tuple[bool, str | None], ...]  # per position: (is a bound variable, term) or (False, None) if free
    free: tuple[tuple[int, str], ...]  # (position, variable) bound here
    repeats: tuple[tuple[int, int], ...]  # (position, earlier position of the same new variable)
    exclude: bool  # the delta's own triples may not match here (pattern before the delta's first)

    @property
    def flat(self) -> tuple[Any, ...]:
        """(graph, s bound?, s, p bound?, p, o bound?, o, free, repeats, exclude): one unpacking per lookup."""
        (s_var, s), (p_var, p), (o_var, o) = self.lookup
        return (self.graph, s_var, s, p_var, p, o_var, o, self.free, self.repeats, self.exclude)


def _join_steps(patterns: Sequence[Pattern], first: int, plan: list[int]) -> tuple[_JoinStep, ...]:
    bound = set(patterns[first].variables())
    steps = []
    for index in plan:
        pattern = patterns[index]
        lookup: list[tuple[bool, str | None]] = []
        free: list[tuple[int, str]] = []
        repeats: list[tuple[int, int]] = []
        seen: dict[str, int] = {}
        for position, term in enumerate((pattern.s, pattern.p, pattern.o)):
            if not isinstance(term, Var):
                lookup.append((False, term))
            elif term in bound:
                lookup.append((True, term))
            else:
                lookup.append((False, None))
                if term in seen:
                    repeats.append((position, seen[term]))
                else:
                    seen[term] = position
                    free.append((position, term))
        bound |= pattern.variables()
        steps.append(_JoinStep(index, pattern.graph, tuple(lookup), tuple(free), tuple(repeats),
                               index < first and pattern.graph == patterns[first].graph))
    return tuple(steps)


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
        self.steps = [tuple(step.flat for step in _join_steps(compiled.patterns, i, plan))
                      for i, plan in enumerate(self.plans)]
        self.pattern_graphs = {pattern.graph for pattern in compiled.patterns}
        # the indexes besides SPO that the joins' lookups (and load's of the first pattern) read
        first = compiled.patterns[0]
        lookups = [(not isinstance(first.s, Var), not isinstance(first.p, Var), not isinstance(first.o, Var))]
        lookups += [(s_var or s is not None, p_var or p is not None, o_var or o is not None)
                    for steps in self.steps for _, s_var, s, p_var, p, o_var, o, *_ in steps]
        self.indexes = frozenset(lookup_index(*bound) for bound in lookups) - {"spo"}
        # the patterns a triple of a graph can bind, by predicate (most patterns have a
        # constant one): _delta then skips the patterns that cannot unify, in pattern order
        self._candidates: dict[GraphKey, tuple[dict[str, tuple[int, ...]], tuple[int, ...]]] = {}
        for key in self.pattern_graphs:
            indexes = [i for i, pattern in enumerate(compiled.patterns) if pattern.graph == key]
            any_predicate = tuple(i for i in indexes if isinstance(compiled.patterns[i].p, Var))
            by_predicate = {
                predicate: tuple(i for i in indexes if compiled.patterns[i].p in (predicate,) or i in any_predicate)
                for predicate in {compiled.patterns[i].p for i in indexes if i not in any_predicate}
            }
            self._candidates[key] = (by_predicate, any_predicate)
        # per graph, the predicates a pattern can bind (None: any, a pattern has a variable predicate)
        self.predicates: dict[GraphKey, frozenset[str] | None] = {
            key: None if any_predicate else frozenset(by_predicate)
            for key, (by_predicate, any_predicate) in self._candidates.items()
        }

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
            index = self.graphs[key] = TripleIndex(self.indexes)
        return index

    def insert(self, key: GraphKey, triple: Triple) -> None:
        if self._matchable(key, triple):
            self.graph(key).insert(triple)
            self._deltas(key, (triple,), (triple,), +1)

    def delete(self, key: GraphKey, triple: Triple) -> None:
        if self._matchable(key, triple):
            self._deltas(key, (triple,), (triple,), -1)
            self.graph(key).delete(triple)

    def _matchable(self, key: GraphKey, triple: Triple) -> bool:
        """Can a pattern ever bind this triple? Others are neither indexed nor joined: no
        lookup can return them (a lookup always names a pattern's graph and, where the
        pattern has one, its constant predicate)."""
        candidates = self._candidates.get(key)
        return candidates is not None and (triple[1] in candidates[0] or bool(candidates[1]))

    def insert_run(self, key: GraphKey, arrivals: dict[Triple, int], count: int) -> list[list[Hashable]]:
        """Insert new triples that arrive one evaluation each (a tuple tick's elements at one
        instant): ``arrivals`` maps each to its evaluation (0 … count − 1). Returns, per
        evaluation, the projected mappings it adds — ``on_change`` is not called. One batch
        delta join (:meth:`insert_all`) instead of one per element; a solution belongs to
        the evaluation its last new triple arrives at, where one delta per element finds it."""
        fresh = [triple for triple in arrivals if self._matchable(key, triple)]
        index = self.graph(key)
        for triple in fresh:
            index.insert(triple)
        added: list[list[Hashable]] = [[] for _ in range(count)]
        templates = [tuple((isinstance(term, Var), term) for term in (pattern.s, pattern.p, pattern.o))
                     for pattern in self.compiled.patterns if pattern.graph == key]

        def arrive(full: dict[str, str], mapping: Hashable) -> None:
            last = max(arrivals.get(tuple(full[term] if is_var else term for is_var, term in template), -1)  # type: ignore[arg-type]  # three terms: a Triple
                       for template in templates)
            added[last].append(mapping)

        self._deltas(key, fresh, arrivals, +1, arrive)
        return added

    def insert_all(self, key: GraphKey, triples: Sequence[Triple]) -> None:
        """Insert several distinct triples not in the store: index them all, then one delta join.

        The same bag changes as inserting them one by one. A solution that uses new triples
        is counted once, from the first pattern bound to a new triple (the patterns before it
        bound to old triples only): fewer calls and lookups per triple than one delta each —
        the window-close presets insert each stimulus's elements as they arrive."""
        fresh = [triple for triple in triples if self._matchable(key, triple)]
        index = self.graph(key)
        for triple in fresh:
            index.insert(triple)
        self._deltas(key, fresh, set(fresh) if len(fresh) > 1 else fresh, +1)

    def delete_all(self, key: GraphKey, triples: Sequence[Triple]) -> None:
        """Delete several distinct triples of the store (the mirror of :meth:`insert_all`:
        the solutions that use them, from the first pattern bound to one of them, then unindex)."""
        fresh = [triple for triple in triples if self._matchable(key, triple)]
        self._deltas(key, fresh, set(fresh) if len(fresh) > 1 else fresh, -1)
        index = self.graph(key)
        for triple in fresh:
            index.delete(triple)

    def _deltas(self, key: GraphKey, triples: Sequence[Triple], changed: Container[Triple], sign: int,
                report: Callable[[dict[str, str], Hashable], None] | None = None) -> None:
        """Report ``sign`` for every solution that binds a pattern to one of ``triples`` (all
        indexed, all in ``changed``): from its first such pattern, the patterns before it of
        the same graph bound to unchanged triples only, so each solution is counted once.
        ``report(solution, mapping)``, if given, takes each accepted solution instead of ``on_change``."""
        patterns = self.compiled.patterns
        by_predicate, any_predicate = self._candidates[key]
        steps = self.steps
        for triple in triples:
            for i in by_predicate.get(triple[1], any_predicate):
                binding = patterns[i].unify(triple, {})
                if binding is None:
                    continue
                solutions: list[dict[str, str]] = []
                self._extend(binding, steps[i], 0, changed, solutions)
                self._report(solutions, sign, report)

    def _report(self, solutions: list[dict[str, str]], sign: int,
                report: Callable[[dict[str, str], Hashable], None] | None = None) -> None:
        """Filter and project solutions; ``on_change`` (or ``report``) for each projected mapping."""
        for full in solutions:
            if self.filter is not None and not self.filter.accepts(full):
                continue
            mapping = frozenset((name, full[var]) for name, var in self.projection if var in full)
            if report is None:
                self.on_change(mapping, sign)
            else:
                report(full, mapping)

    def load(self, key: GraphKey, triples: Sequence[Triple]) -> None:
        """Insert triples into an empty matcher at once: index them all, then join once.

        The same bag as inserting them one by one (every solution over the new content is
        reported +1 once, from its triple of the first pattern), with one join per solution
        instead of a delta join per triple — a window-close evaluation refills the store
        with the whole window (350 k elements at YABench BIG)."""
        assert not any(index.spo for index in self.graphs.values()), "load needs an empty matcher"
        index = self.graph(key)
        for triple in triples:
            index.insert(triple)
        first = self.compiled.patterns[0]
        graph = self.graphs.get(first.graph)
        if graph is None:
            return
        lookup = tuple(None if isinstance(term, Var) else term for term in (first.s, first.p, first.o))
        for triple in graph.candidates(*lookup):
            binding = first.unify(triple, {})
            if binding is None:
                continue
            solutions: list[dict[str, str]] = []
            self._extend(binding, self.steps[0], 0, (triple,), solutions)
            self._report(solutions, +1)

    def _extend(
        self, binding: dict[str, str], steps: tuple[tuple[Any, ...], ...], step: int, changed: Container[Triple],
        out: list[dict[str, str]],
    ) -> None:
        """Append to ``out`` every extension of ``binding`` over ``steps[step:]``, depth first.

        (A list, not a generator, and no unification per candidate: this runs for every
        triple that enters or leaves a window.)
        """
        if step == len(steps):
            out.append(binding)
            return
        graph_key, s_var, s, p_var, p, o_var, o, free, repeats, exclude = steps[step]
        graph = self.graphs.get(graph_key)
        if graph is None:
            return
        candidates = graph.candidates(binding[s] if s_var else s, binding[p] if p_var else p,
                                      binding[o] if o_var else o)
        last = step + 1 == len(steps)
        for candidate in candidates:
            if exclude and candidate in changed:
                continue
            if repeats and any(candidate[a] != candidate[b] for a, b in repeats):
                continue
            extended = dict(binding)
            for position, variable in free:
                extended[variable] = candidate[position]
            if last:
                out.append(extended)
            else:
                self._extend(extended, steps, step + 1, changed, out)


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
            values = row.asdict()  # type: ignore[union-attr]  # a SELECT query gives rows, never triples or a boolean
            bag[frozenset((str(var), from_rdflib(value)) for var, value in values.items() if value is not None)] += 1
        return bag

    def pattern_is_empty(self, pattern: Any, prologue: Any) -> bool:
        """True if an algebra pattern has no solution over the dataset (for the null_aggregate fault)."""
        from rsp_workbench.query.rdflib_sparql import evalPart
        from rsp_workbench.query.rdflib_sparql import QueryContext

        context = QueryContext(self.dataset, initBindings={})
        context.prologue = prologue
        for _ in evalPart(context, pattern):
            return False
        return True
