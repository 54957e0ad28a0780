"""The window store: reference-counted window contents feeding a matcher (`rsp_workbench.engines._match`).

The window store is a *set* of triples per graph (RDF graph semantics, as the oracle's
rdflib dataset), kept with reference counts so that an element that is in two windows,
or also in the static data, is added once and removed only when its last copy leaves.
A module of its own because it is bookkeeping around the matchers, not matching: what
reaches a matcher (first and last copies, only the predicates a pattern can bind) and
how a cleared window's indexes are freed (:class:`Retired`).
"""

from __future__ import annotations

from typing import Any, Hashable, Sequence

from rsp_workbench.engines._compiled_query import GraphKey, Triple
from rsp_workbench.engines._match import IncrementalBGP, RdflibMirror
from rsp_workbench.streams.model import StreamElement

#: What a window store adds and removes: a triple, or a stream element (its first three fields are one).
Statement = Triple | StreamElement


_NOTHING: frozenset[str] = frozenset()


class Retired:
    """Containers a store has dropped, freed a few items at a time.

    Dropping a whole window's indexes at once — a tumbling window's close at YABench BIG:
    ~1 M objects — stalls the engine 0.1–0.3 s in deallocation; popping them a bounded
    number of items per later call spreads that cost over the next stimuli (memory stays
    bounded: they are freed faster than a window fills)."""

    LARGE = 256  # a value with more items than this is retired in turn, not freed at once

    def __init__(self) -> None:
        self.stack: list[dict[Any, Any] | set[Any]] = []

    def __len__(self) -> int:
        return len(self.stack)

    def add(self, container: dict[Any, Any] | set[Any]) -> None:
        if container:
            self.stack.append(container)

    def free(self, budget: int) -> None:
        """Pop about ``budget`` items (a large value popped is retired, not freed)."""
        stack, large = self.stack, self.LARGE
        while budget > 0 and stack:
            top = stack[-1]
            if not top:
                stack.pop()
                continue
            count = min(budget, len(top))
            budget -= count
            if isinstance(top, dict):
                for _ in range(count):
                    value = top.popitem()[1]
                    if isinstance(value, (dict, set)) and len(value) > large:
                        stack.append(value)
            else:
                for _ in range(count):
                    top.pop()


class WindowStore:
    """Reference-counted graph contents feeding a native matcher or an rdflib mirror.

    For the native matcher only the triples a pattern can bind are counted and passed on
    (``IncrementalBGP.predicates``; the others could never join): a stream's other
    predicates cost one set lookup each. ``copies`` still counts every add not removed yet.
    """

    def __init__(self, sink: IncrementalBGP | RdflibMirror) -> None:
        self.sink = sink
        self.counts: dict[tuple[GraphKey, Triple], int] = {}
        self.copies = 0  # how many adds are not removed yet
        self._predicates = sink.predicates if isinstance(sink, IncrementalBGP) else None
        self.retired = Retired()  # what clear() dropped, freed by the next adds and removes

    def _relevant(self, key: GraphKey) -> frozenset[str] | None:
        """The predicates worth storing in graph ``key`` (None: every triple)."""
        if self._predicates is None:
            return None
        return self._predicates.get(key, _NOTHING)

    def add(self, key: GraphKey, triple: Triple) -> None:
        self.add_one(key, triple)

    def remove(self, key: GraphKey, triple: Triple) -> None:
        self.remove_all(key, (triple,))

    def add_all(self, key: GraphKey, statements: Sequence[Statement]) -> None:
        """Add the triples ``(s, p, o, …)[:3]`` of the statements to graph ``key``, in order
        (into an empty native matcher: all at once, :meth:`IncrementalBGP.load`)."""
        at_once = not self.counts and isinstance(self.sink, IncrementalBGP) and len(statements) > 1
        fresh = list(self._first_copies(key, statements))
        if at_once:
            self.sink.load(key, fresh)  # type: ignore[union-attr]
        else:
            self._pass_on(key, fresh, +1)

    def add_run(self, key: GraphKey, statements: Sequence[Statement]) -> list[list[Hashable]]:
        """Add statements that arrive one evaluation each (native matcher only): per statement,
        the projected mappings its arrival adds (:meth:`IncrementalBGP.insert_run`)."""
        assert isinstance(self.sink, IncrementalBGP)
        return self.sink.insert_run(key, self._first_copies(key, statements), len(statements))

    def _first_copies(self, key: GraphKey, statements: Sequence[Statement]) -> dict[Triple, int]:
        """Count one more copy of each statement's triple; the triples whose first copy this is,
        in order, each with the position of its statement (triples no pattern binds are skipped)."""
        if self.retired.stack:
            self.retired.free(2 * len(statements) + 1024)
        relevant = self._relevant(key)
        counts = self.counts
        fresh: dict[Triple, int] = {}
        for position, statement in enumerate(statements):
            if relevant is not None and statement[1] not in relevant:
                continue
            triple = (statement[0], statement[1], statement[2])
            item = (key, triple)
            count = counts.get(item, 0)
            counts[item] = count + 1
            if count == 0:
                fresh[triple] = position
        self.copies += len(statements)
        return fresh

    def add_one(self, key: GraphKey, statement: Statement) -> None:
        """:meth:`add_all` of one statement, with less on the way: a tuple tick adds one
        element per evaluation (700,000 a stream at YABench BIG)."""
        self.copies += 1
        relevant = self._relevant(key)
        if relevant is not None and statement[1] not in relevant:
            return
        if self.retired.stack:
            self.retired.free(1026)
        triple = (statement[0], statement[1], statement[2])
        item = (key, triple)
        count = self.counts.get(item, 0)
        self.counts[item] = count + 1
        if count == 0:
            self.sink.insert(key, triple)

    def remove_all(self, key: GraphKey, statements: Sequence[Statement]) -> None:
        """Remove one copy of each statement's triple from graph ``key``, in order."""
        if self.retired.stack:
            self.retired.free(2 * len(statements) + 1024)
        relevant = self._relevant(key)
        counts = self.counts
        self.copies -= len(statements)
        gone: list[Triple] = []  # the triples whose last copy this is, in order
        for statement in statements:
            if relevant is not None and statement[1] not in relevant:
                continue
            triple = (statement[0], statement[1], statement[2])
            item = (key, triple)
            count = counts[item]
            if count == 1:
                del counts[item]
                gone.append(triple)
            else:
                counts[item] = count - 1
        self._pass_on(key, gone, -1)

    def _pass_on(self, key: GraphKey, triples: list[Triple], sign: int) -> None:
        """Insert (+1) or delete (−1) the triples whose first or last copy changed: a native
        matcher takes several at once (one batch delta join), the rdflib mirror one by one."""
        sink = self.sink
        if len(triples) > 1 and isinstance(sink, IncrementalBGP):
            (sink.insert_all if sign > 0 else sink.delete_all)(key, triples)
            return
        single = sink.insert if sign > 0 else sink.delete
        for triple in triples:
            single(key, triple)

    def clear(self) -> None:
        """Remove everything at once (the native matcher's indexes too).

        The caller knows the bag of solution mappings over an empty store is empty and
        updates it itself; the rdflib mirror has no bag to keep and is emptied triple by triple.
        The native matcher's indexes and the counts are retired (freed bit by bit, `Retired`).
        """
        if isinstance(self.sink, IncrementalBGP):
            for index in self.sink.graphs.values():
                for part in (index.spo, index.pos, index.osp):
                    if part is not None:
                        self.retired.add(part)
            self.sink.graphs = {}
            self.retired.add(self.counts)
            self.counts = {}
        else:
            for key, triple in self.counts:
                self.sink.delete(key, triple)
            self.counts.clear()
        self.copies = 0

    def __len__(self) -> int:
        return len(self.counts)
