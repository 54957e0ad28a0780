"""The scalable oracle's core: solution mappings computed once, annotated with positions.

The reference path (`rsp_workbench.oracle.reference`) evaluates SPARQL from scratch for every
evaluation. Here the *monotone* part of the query (BGP, FILTER, BIND, UNION, Join,
Project, DISTINCT, GRAPH <const>, VALUES) is evaluated once over the whole stream and every
solution row carries a presence condition: a disjunction of *requirements*, each a
position interval ``[pmin, pmax]`` per window. A requirement holds for an evaluation whose
window contents are ``[lo_w, hi_w)`` iff ``lo_w ≤ pmin_w`` and ``pmax_w < hi_w`` for every
window (window contents are contiguous position ranges, `rsp_workbench.core.report`).
Requirements whose elements lie further apart in time than the window size can never hold
and are dropped while joining (the band condition of docs/design/ARCHITECTURE.md).

Exactness with respect to rdflib over a window snapshot (what the reference computes):

* a snapshot is an RDF *graph*, a set: the same triple at several times (or also in a
  static graph) is one triple. A BGP's rows are therefore *distinct* mappings whose
  condition is the OR over all element combinations that build them;
* rdflib's non-lazy Join turns its right operand into a set (``set(evalPart(p2))``) and
  DISTINCT is a set: both OR the conditions of equal rows; UNION and Project keep bags;
* FILTER and BIND use rdflib's own expression evaluation (errors: filter false, BIND
  leaves the variable unbound), cached per distinct value tuple.

Operators above the monotone part (GROUP BY/aggregates, HAVING, OPTIONAL, MINUS,
subqueries) are evaluated by rdflib itself, once per distinct set of monotone rows present
in a window content (substituted as a VALUES table; `UpperOracle`, `RelationEvaluator`). Order-dependent
constructs (LIMIT/OFFSET, REDUCED, SAMPLE, GROUP_CONCAT), non-deterministic functions
(NOW, RAND, BNODE, UUID), EXISTS, ``GRAPH ?var`` and time-varying graphs are outside the
fast path: `compile_plan` names the construct and the caller uses the reference path.
SUM/AVG over floating-point values may differ in the last bits when the row order
differs from rdflib's (integers and decimals are exact).
"""

from __future__ import annotations

from collections import Counter, OrderedDict, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from rsp_workbench.core.r2s import apply_r2s
from rsp_workbench.core.report import Evaluation, content_at
from rsp_workbench.core.semantics import ActiveWindowChoice, EngineSemantics
from rsp_workbench.core.windows import WindowSpec
from rsp_workbench.oracle.deltas import DeltaAnswer, DeltaOracle, EvaluationGrid, Timeline, evaluations_for
from rsp_workbench.errors import UserError
from rsp_workbench.query.model import ContinuousQuery, DatasetMode, QueryForm
from rsp_workbench.responses.model import SolutionMapping
from rsp_workbench.streams.model import StreamElement
from rsp_workbench.streams.terms import canonical_term, canonical_triple, from_rdflib, to_rdflib

if TYPE_CHECKING:  # pragma: no cover
    from rsp_workbench.oracle.reference import ExpectedAnswer, StaticData

BIG = 1 << 62  # "no requirement" pmin; the matching pmax is -1
Requirement = tuple[int, ...]  # (pmin_0, pmax_0, pmin_1, pmax_1, ...), one pair per window
Row = tuple[tuple[str | None, ...], tuple[Requirement, ...]]  # (values, OR of requirements)
ContentKey = tuple[tuple[int, int], ...]  # per window (lo, hi), empty contents as (0, 0)
#: Evaluates one BGP (patterns, graph, a FILTER's numeric bounds) into annotated rows: `Annotator.bgp`
#: in Python, or Arrow or Spark joins over large streams (`annotate`'s ``bgp``)
BGPJoins = Callable[[Sequence[tuple[Any, Any, Any]], "str | None", Sequence["NumericBound"]],
                    "Relation | CodedRelation"]

_NONDETERMINISTIC = {"Builtin_NOW", "Builtin_RAND", "Builtin_BNODE", "Builtin_UUID", "Builtin_STRUUID"}
_GRAPH_READING = {"Builtin_EXISTS", "Builtin_NOTEXISTS"}
_MONOTONE = {"BGP", "Filter", "Extend", "Union", "Join", "Project", "Distinct", "Graph", "ToMultiSet", "OrderBy"}
_UPPER = {"Group", "AggregateJoin", "Filter", "Extend", "LeftJoin", "Minus", "Join", "Union", "Project",
          "Distinct", "OrderBy", "ToMultiSet"}


class FastPathUnsupported(UserError):
    """The query (or dataset) is outside the fast path; use the reference path."""


# --- plan ------------------------------------------------------------------------------


@dataclass
class FastPlan:
    """A compiled query: monotone subtrees to annotate, and rdflib's part above them.

    ``leaves`` are the monotone subtrees (rdflib CompValues). ``upper`` is None when the
    whole pattern is monotone (the relation is then read off the annotated rows);
    otherwise it is a copy of the query algebra whose leaves are VALUES placeholders
    (``placeholders[i]`` stands for ``leaves[i]``), evaluated by rdflib per content.
    """

    query: ContinuousQuery
    leaves: list[Any]
    upper: Any | None
    placeholders: list[Any] = field(default_factory=list)


def _walk_expr(expr: Any, names: set[str], variables: set[Any]) -> None:
    from rsp_workbench.query.rdflib_sparql import CompValue
    from rdflib.term import Variable

    if isinstance(expr, Variable):
        variables.add(expr)
    elif isinstance(expr, CompValue):
        names.add(expr.name)
        for key, value in expr.items():
            if key != "_vars":
                _walk_expr(value, names, variables)
    elif isinstance(expr, (list, tuple)):
        for item in expr:
            _walk_expr(item, names, variables)


def _expr_problem(expr: Any) -> str | None:
    names: set[str] = set()
    _walk_expr(expr, names, set())
    if names & _GRAPH_READING:
        return "EXISTS / NOT EXISTS"
    bad = names & _NONDETERMINISTIC
    if bad:
        return sorted(bad)[0].replace("Builtin_", "") + "()"
    return None


def _monotone_problem(node: Any) -> str | None:
    """None if ``node`` can be annotated, else the name of the first construct that cannot."""
    from rdflib.term import URIRef

    name: str = node.name
    if name not in _MONOTONE:
        return name
    if name == "BGP":
        return None
    if name == "ToMultiSet":
        return None if node.p.name == "values" else "subquery"
    if name in ("Filter", "Extend"):
        problem = _expr_problem(node.expr)
        if problem:
            return problem
    if name == "Graph" and not isinstance(node.term, URIRef):
        return "GRAPH ?variable"
    if name in ("Union", "Join"):
        return _monotone_problem(node.p1) or _monotone_problem(node.p2)
    return _monotone_problem(node.p)


def compile_plan(query: ContinuousQuery) -> FastPlan:
    """Split the query algebra into annotatable leaves and rdflib's upper part.

    Raises `FastPathUnsupported` naming the construct when the fast path cannot
    reproduce rdflib exactly.
    """
    from rsp_workbench.query.rdflib_sparql import CompValue

    if query.form is not QueryForm.SELECT:
        raise FastPathUnsupported(f"the fast oracle path evaluates SELECT queries, not {query.form.value}")
    root = query.algebra.algebra
    if _monotone_problem(root.p) is None:
        return FastPlan(query, [root.p], None)
    leaves: list[Any] = []
    placeholders: list[Any] = []

    def rebuild(node: Any) -> Any:
        if not isinstance(node, CompValue):
            return node
        if node.name not in ("SelectQuery", "ToMultiSet") and _monotone_problem(node) is None:
            placeholder = CompValue("ToMultiSet", p=CompValue("values", res=[]))
            placeholder["_vars"] = node.get("_vars")
            leaves.append(node)
            placeholders.append(placeholder)
            return placeholder
        if node.name not in _UPPER and node.name != "SelectQuery":
            if node.name in ("Slice", "Reduced"):
                raise FastPathUnsupported(f"{'LIMIT/OFFSET' if node.name == 'Slice' else 'REDUCED'} is order-dependent")
            raise FastPathUnsupported(f"{node.name} is not supported by the fast oracle path")
        if node.name in ("Filter", "Extend", "LeftJoin"):
            problem = _expr_problem(node.expr)
            if problem:
                raise FastPathUnsupported(f"{problem} is not supported by the fast oracle path")
        if node.name == "AggregateJoin":
            group_vars = set(node.p.expr or [])
            for aggregate in node.A:
                if aggregate.name == "Aggregate_GroupConcat":
                    raise FastPathUnsupported("GROUP_CONCAT is order-dependent")
                if aggregate.name == "Aggregate_Sample" and aggregate.vars not in group_vars:
                    raise FastPathUnsupported("SAMPLE is order-dependent")
        if node.name == "ToMultiSet" and node.p.name == "values":
            return node
        copy = CompValue(node.name)
        for key, value in node.items():
            if key in ("p", "p1", "p2") and isinstance(value, CompValue):
                copy[key] = rebuild(value)
            else:
                copy[key] = value
        return copy

    from rsp_workbench.oracle.reference import with_sparql11_aggregates

    upper = with_sparql11_aggregates(rebuild(root))
    if not leaves:
        raise FastPathUnsupported("the query has no pattern the fast oracle path can annotate")
    return FastPlan(query, leaves, upper, placeholders)


# --- filter bounds a BGP may apply early -------------------------------------------------

_XSD = "http://www.w3.org/2001/XMLSchema#"
NUMERIC_DATATYPES = frozenset(_XSD + name for name in (
    "integer", "decimal", "float", "double", "int", "long", "short", "byte", "nonNegativeInteger",
    "positiveInteger", "nonPositiveInteger", "negativeInteger", "unsignedLong", "unsignedInt",
    "unsignedShort", "unsignedByte",
))
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}


@dataclass(frozen=True)
class NumericBound:
    """A FILTER conjunct ``?variable op number`` (op in <, <=, >, >=, =).

    Only a hint for early row pruning: the FILTER itself still runs (rdflib) on what is
    left, so a pruner may drop a row only when the bound *certainly* rejects it.
    """

    variable: str
    op: str
    value: float


def numeric_bounds(expr: Any) -> list[NumericBound]:
    """The ``?var op number`` conjuncts of a FILTER expression (others are ignored)."""
    from rsp_workbench.query.rdflib_sparql import CompValue
    from rdflib.term import Literal, Variable

    if not isinstance(expr, CompValue):
        return []
    if expr.name == "ConditionalAndExpression":
        parts = [expr.expr] + list(expr.other or [])
        return [bound for part in parts for bound in numeric_bounds(part)]
    if expr.name != "RelationalExpression" or expr.op not in _MIRRORED:
        return []
    left, right, op = expr.expr, expr.other, str(expr.op)
    if isinstance(left, Literal) and isinstance(right, Variable):
        left, right, op = right, left, _MIRRORED[op]
    if not (isinstance(left, Variable) and isinstance(right, Literal)) or str(right.datatype) not in NUMERIC_DATATYPES:
        return []
    try:
        value = float(right.toPython())
    except (TypeError, ValueError, OverflowError):
        return []
    return [NumericBound(str(left), op, value)] if np.isfinite(value) else []


# --- dataset -----------------------------------------------------------------------------


@dataclass
class WindowData:
    """One window's stream as the fast path sees it: canonical triples and times."""

    name: str
    size: int
    triples: list[tuple[str, str, str]]
    times: list[int]


@dataclass
class AnnotationContext:
    """What BGP evaluation reads: windows (with their streams) and static graphs."""

    windows: list[WindowData]
    mode: DatasetMode
    static_default: frozenset[tuple[str, str, str]]
    static_named: Mapping[str, frozenset[tuple[str, str, str]]]

    @property
    def width(self) -> int:
        return len(self.windows)

    def true_requirement(self) -> Requirement:
        return (BIG, -1) * self.width


def build_context(
    query: ContinuousQuery, streams: Mapping[str, Sequence[StreamElement]], static: "StaticData"
) -> AnnotationContext:
    """Canonicalise the streams and static graphs once (rdflib graphs are sets of terms)."""
    if static.time_varying_default is not None:
        raise FastPathUnsupported("time-varying graphs are evaluated by the reference path")
    canonical = canonical_term
    windows = []
    cache: dict[str, tuple[list[tuple[str, str, str]], list[int]]] = {}
    for window in query.windows:
        if window.stream not in streams:
            raise UserError(f"no stream given for <{window.stream}>", field="stream")
        if window.stream not in cache:
            elements = streams[window.stream]
            cache[window.stream] = (
                [(canonical(e.subject), canonical(e.predicate), canonical(e.object)) for e in elements],
                [e.t for e in elements],
            )
        triples, times = cache[window.stream]
        windows.append(WindowData(window.name, window.size_ms, triples, times))

    def canon(triples: Iterable[tuple[str, str, str]]) -> frozenset[tuple[str, str, str]]:
        return frozenset(map(canonical_triple, triples))

    return AnnotationContext(
        windows, query.dataset_mode, canon(static.default), {name: canon(t) for name, t in static.named.items()}
    )


# --- annotated relations -------------------------------------------------------------------


@dataclass
class Relation:
    """A bag of annotated rows over ``variables`` (names; blank-node keys as ``_:label``)."""

    variables: tuple[str, ...]
    rows: list[Row]


class CodedRelation:
    """A BGP's relation held as columns: each variable's terms as codes into its distinct
    terms (an Arrow string array, memory-mapped on the Spark path, decoded in blocks when
    asked), the requirements as one array. Why: at 10x YABench BIG the 1.5 M joined rows as Python tuples of strings took
    2 GB of the Spark path's driver (and of the columnar path's process).

    Rows are distinct mappings, numbered by first appearance; ``row_of[q]`` is the row of
    requirement ``q`` (a mapping several element sets build has several, minimal, as
    `distinct` keeps them). Filter, Project and `RowTable.of` work on the codes; every other
    operator reads ``rows``, the same Python rows a `Relation` holds."""

    def __init__(self, variables: Sequence[str], codes: np.ndarray, terms: Sequence[Any], row_of: np.ndarray,
                 requirements: np.ndarray) -> None:
        self.variables = tuple(variables)
        self.codes = codes  # (variables, rows), -1 where a variable is unbound
        self.terms = list(terms)  # per variable, its distinct terms (pyarrow string arrays)
        self.row_of = row_of
        self.requirements = requirements  # (len(row_of), 2 * windows)
        self._rows: list[Row] | None = None
        self._blocks: OrderedDict[tuple[int, int], list[str | None]] = OrderedDict()  # decoded terms, recently used

    @property
    def size(self) -> int:
        return int(self.codes.shape[1])

    #: Terms decoded together, and how many such blocks stay decoded: answers ask for mappings
    #: roughly in the order of their rows, so a block's neighbours are asked for next (one term
    #: at a time from Arrow costs ~4 us, against ~0.1 us from a decoded block).
    BLOCK, BLOCKS_KEPT = 4096, 64

    def values(self, r: int, only: Sequence[int] | None = None) -> tuple[str | None, ...]:
        """Row ``r``'s terms (with ``only``, the terms of the variables at those positions, None
        for the others: a FILTER decodes the blocks of the variables it reads, not of every one)."""
        return tuple(None if (only is not None and v not in only) or (code := int(self.codes[v, r])) < 0
                     else self._term(v, code) for v in range(len(self.variables)))

    def _term(self, v: int, code: int) -> str | None:
        key = (v, code // self.BLOCK)
        block = self._blocks.get(key)
        if block is None:
            block = self._blocks[key] = self.terms[v].slice(key[1] * self.BLOCK, self.BLOCK).to_pylist()
            if len(self._blocks) > self.BLOCKS_KEPT:
                self._blocks.popitem(last=False)
        else:
            self._blocks.move_to_end(key)
        return block[code % self.BLOCK]

    @property
    def rows(self) -> list[Row]:
        """The rows as a `Relation` holds them (for the operators that read Python rows)."""
        if self._rows is None:
            decoded = [terms.to_pylist() for terms in self.terms]
            grouped: list[list[Requirement]] = [[] for _ in range(self.size)]
            for r, requirement in zip(self.row_of.tolist(), self.requirements.tolist()):
                grouped[r].append(tuple(requirement))
            self._rows = [(tuple(None if c < 0 else decoded[v][c] for v, c in enumerate(codes)), tuple(requirements))
                          for codes, requirements in zip(self.codes.T.tolist(), grouped)]
        return self._rows

    def subset(self, keep: np.ndarray) -> "CodedRelation":
        """The rows where ``keep`` (a mask over the rows) holds (every row: this relation, not a copy)."""
        if keep.all():
            return self
        if is_identity(self.row_of, self.size):  # a requirement per row: the rows kept are numbered anew
            return CodedRelation(self.variables, self.codes[:, keep], self.terms, np.arange(int(keep.sum())),
                                 self.requirements[keep])
        renumbered = np.cumsum(keep) - 1
        kept = keep[self.row_of]
        return CodedRelation(self.variables, self.codes[:, keep], self.terms, renumbered[self.row_of[kept]],
                             self.requirements[kept])

    def project(self, variables: tuple[str, ...]) -> "CodedRelation | None":
        """The relation over ``variables`` (bag semantics: no row merges), or None when one is not here."""
        if any(v not in self.variables for v in variables):
            return None
        at = [self.variables.index(v) for v in variables]
        return CodedRelation(variables, self.codes[at], [self.terms[i] for i in at], self.row_of, self.requirements)


AnyRelation = Relation | CodedRelation  # what the operators read: ``variables`` and ``rows``


class CodedMappings(Sequence[tuple[str | None, ...]]):
    """The distinct mappings of a `CodedRelation`'s rows, decoded when asked (by their first row)."""

    def __init__(self, relation: CodedRelation, first_rows: np.ndarray) -> None:
        self.relation = relation
        self.first_rows = first_rows

    def __len__(self) -> int:
        return len(self.first_rows)

    def __getitem__(self, m: Any) -> Any:
        if isinstance(m, slice):
            return [self[i] for i in range(*m.indices(len(self)))]
        return self.relation.values(int(self.first_rows[m]))


def is_identity(numbers: np.ndarray, n: int) -> bool:
    """Whether ``numbers`` are 0, 1, …, n - 1 in order: compared a million at a time (one
    ``np.arange`` of 7.5 M rows is 60 MB)."""
    step = 1 << 20
    return len(numbers) == n and all(np.array_equal(numbers[i:i + step], np.arange(i, min(i + step, n)))
                                     for i in range(0, n, step))


def all_distinct(numbers: np.ndarray) -> bool:
    """Whether non-negative numbers (row or mapping numbers, codes) are all different: as many
    numbers seen as there are, O(n), where np.unique sorts them (10× YABench BIG: 1.5 M rows, 3 s
    of the driver); a flag per number, where a count (``np.bincount``) took 8 bytes."""
    if len(numbers) == 0:
        return True
    seen = np.zeros(int(numbers.max()) + 1, bool)
    seen[numbers] = True
    return int(np.count_nonzero(seen)) == len(numbers)


def canonical_order(keys: Sequence[np.ndarray | Callable[[], np.ndarray]]) -> np.ndarray:
    """The permutation that sorts rows by ``keys`` (the first decides, the next break its ties, …;
    a key may be a function that reads it, called only if the first key leaves ties). Rows equal
    in every key keep their order. One stable sort by the first key, the rest only for the rows
    it leaves tied: a `np.lexsort` of every key took 1.4 s for 1.5 M rows."""
    def read(key: np.ndarray | Callable[[], np.ndarray]) -> np.ndarray:
        return np.asarray(key() if callable(key) else key)

    first = read(keys[0])
    order = np.argsort(first, kind="stable")
    if len(keys) == 1 or len(order) < 2:
        return order
    ordered = first[order]
    tied = ordered[1:] == ordered[:-1]
    if not tied.any():
        return order
    in_tie = np.zeros(len(order), bool)
    in_tie[1:] |= tied
    in_tie[:-1] |= tied
    rows = order[in_tie]  # runs of equal first keys, in first-key order: a sort on every key keeps the runs in place
    order[in_tie] = rows[np.lexsort([read(key)[rows] for key in reversed(keys[1:])] + [first[rows]])]
    return order


def first_appearance_groups(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The groups of equal columns of ``codes`` (non-negative ints below 2^31, -1 allowed),
    numbered in order of first appearance: the first column of each group and each column's
    group. Rows are folded in one at a time (a pair of ints packed into one, then renumbered
    densely), so any number of rows and any code size fit."""
    n = int(codes.shape[1])
    if n == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    if any(int(row.max()) < 2 * n and all_distinct(np.add(row, 1, dtype=np.int64)) for row in codes):
        # a row of all-different codes (a variable unique per joined row, e.g. an observation; codes
        # into a dictionary are below n): every column is a group of its own (10× YABench BIG: 1 s
        # of sorting spared)
        return np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64)
    if len(codes) == 1 and int(codes[0].max()) < 2 * n:
        # one variable (a FILTER's): its codes are the groups, numbered by each code's first row
        # without sorting the rows (np.unique's sorts: 400 MB of the driver at 50x YABench BIG)
        shifted = codes[0].astype(np.int64) + 1  # unbound (-1) is a group too
        first_row = np.full(int(shifted.max()) + 1, n, np.int64)
        np.minimum.at(first_row, shifted, np.arange(n))
        present = np.flatnonzero(first_row < n)
        by_appearance = present[np.argsort(first_row[present], kind="stable")]
        rank = np.empty(len(first_row), np.int64)
        rank[by_appearance] = np.arange(len(by_appearance))
        return first_row[by_appearance], rank[shifted]
    key = np.zeros(n, np.int64)
    for row in codes:
        packed = key * (int(row.max()) + 2) + (row.astype(np.int64) + 1)  # key < n, codes + 1 <= 2^31
        _, key = np.unique(packed, return_inverse=True)
        key = np.asarray(key, np.int64).reshape(-1)
    _, first, group = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return first[order], rank[np.asarray(group).reshape(-1)]


def coded_relation(variables: Sequence[str], codes: np.ndarray, terms: Sequence[Any],
                   requirements: np.ndarray) -> CodedRelation:
    """Joined rows (per variable codes into ``terms``; a requirement per joined row) as a BGP's
    relation: equal mappings merge (a snapshot is a set of triples), their requirements OR-ed
    and kept minimal, as `distinct` does."""
    first, row = first_appearance_groups(codes)
    if len(first) == codes.shape[1]:
        # as many mappings as joined rows: each row is its own, numbered in row order (a variable unique
        # per row); nothing to merge or move (the sort and copies below: 500 MB of the driver at 50x BIG)
        return CodedRelation(variables, codes, terms, first, requirements)
    order = np.argsort(row, kind="stable")
    row_of, requirements = row[order], requirements[order]
    counts = np.bincount(row_of, minlength=len(first))
    if len(counts) and counts.max() > 1:  # rare: the same mapping from several element sets
        single = counts[row_of] == 1
        starts = np.concatenate([[0], np.cumsum(counts)])
        rows, kept = [row_of[single]], [requirements[single]]
        for r in np.flatnonzero(counts > 1).tolist():
            minimal = minimal_requirements(tuple(x) for x in requirements[starts[r]:starts[r + 1]].tolist())
            rows.append(np.full(len(minimal), r, np.int64))
            kept.append(np.array(minimal, np.int64).reshape(len(minimal), requirements.shape[1]))
        row_of, requirements = np.concatenate(rows), np.concatenate(kept)
        order = np.argsort(row_of, kind="stable")
        row_of, requirements = row_of[order], requirements[order]
    return CodedRelation(variables, codes[:, first], terms, row_of, requirements)


def term_key(term: Any) -> str:
    from rdflib.term import BNode

    return f"_:{term}" if isinstance(term, BNode) else str(term)


def is_variable(term: Any) -> bool:
    from rdflib.term import BNode, Variable

    return isinstance(term, (Variable, BNode))


def minimal_requirements(requirements: Iterable[Requirement]) -> tuple[Requirement, ...]:
    """Drop requirements implied by others (r is redundant if some s ⊆ r per window)."""
    unique = sorted(set(requirements))
    if len(unique) <= 1:
        return tuple(unique)
    keep: list[Requirement] = []
    for r in unique:
        if any(_weaker(s, r) for s in unique if s != r):
            continue
        keep.append(r)
    return tuple(keep)


def _weaker(s: Requirement, r: Requirement) -> bool:
    """True if s holds whenever r holds (s's intervals lie inside r's)."""
    return all(s[i] >= r[i] and s[i + 1] <= r[i + 1] for i in range(0, len(r), 2))


class Annotator:
    """Evaluates the monotone fragment once over the whole stream (pure Python)."""

    def __init__(self, context: AnnotationContext, prologue: Any = None, joins: BGPJoins | None = None) -> None:
        from rdflib import Dataset
        from rsp_workbench.query.rdflib_sparql import QueryContext

        self.context = context
        self.joins = joins
        self.rdflib_context = QueryContext(graph=Dataset())
        self.rdflib_context.prologue = prologue
        self._expr_cache: dict[tuple[int, tuple[str | None, ...]], Any] = {}

    # band condition ---------------------------------------------------------------------
    def conjoin(self, a: Requirement, b: Requirement) -> Requirement | None:
        out: list[int] = []
        for w, window in enumerate(self.context.windows):
            lo = min(a[2 * w], b[2 * w])
            hi = max(a[2 * w + 1], b[2 * w + 1])
            if hi >= 0 and lo < BIG and window.times[hi] - window.times[lo] > window.size:
                return None
            out += (lo, hi)
        return tuple(out)

    def conjoin_all(self, a: tuple[Requirement, ...], b: tuple[Requirement, ...]) -> tuple[Requirement, ...]:
        result = [r for x in a for y in b if (r := self.conjoin(x, y)) is not None]
        return minimal_requirements(result)

    # operators ----------------------------------------------------------------------------
    def evaluate(self, node: Any, graph: str | None = None) -> AnyRelation:
        name = node.name
        if name == "BGP":
            return self.bgp(node.triples, graph)
        if name == "Graph":
            return self.evaluate(node.p, str(node.term))
        if name == "Filter":
            if node.p.name == "BGP":  # let the BGP drop rows the filter certainly rejects
                return self.filter(node, self.bgp(node.p.triples, graph, numeric_bounds(node.expr)))
            return self.filter(node, self.evaluate(node.p, graph))
        if name == "Extend":
            return self.extend(node, self.evaluate(node.p, graph))
        if name == "Union":
            left, right = self.evaluate(node.p1, graph), self.evaluate(node.p2, graph)
            variables = tuple(dict.fromkeys(left.variables + right.variables))
            return Relation(variables, _align(left, variables) + _align(right, variables))
        if name == "Join":
            left, right = self.evaluate(node.p1, graph), self.evaluate(node.p2, graph)
            if not node.get("lazy"):
                right = distinct(right)  # rdflib: b = set(evalPart(ctx, join.p2))
            return self.join(left, right)
        if name == "Project":
            keep = tuple(str(v) for v in node.PV)
            child = self.evaluate(node.p, graph)
            projected = child.project(keep) if isinstance(child, CodedRelation) else None
            return projected if projected is not None else Relation(keep, _align(child, keep))
        if name == "Distinct":
            return distinct(self.evaluate(node.p, graph))
        if name == "OrderBy":
            return self.evaluate(node.p, graph)  # relations are bags: order is irrelevant
        if name == "ToMultiSet":  # VALUES
            return self.values(node.p.res)
        raise FastPathUnsupported(f"{name} is not supported by the fast oracle path")

    def values(self, res: list[Mapping[Any, Any]]) -> Relation:
        variables = tuple(dict.fromkeys(term_key(k) for r in res for k in r))
        true = (self.context.true_requirement(),)
        rows: list[Row] = []
        for r in res:
            bound = {term_key(k): from_rdflib(v) for k, v in r.items() if v != "UNDEF"}
            rows.append((tuple(bound.get(v) for v in variables), true))
        return Relation(variables, rows)

    def sources(self, graph: str | None) -> tuple[list[frozenset[tuple[str, str, str]]], list[int]]:
        """Static triple sets and window indices a pattern in ``graph`` reads."""
        context = self.context
        if graph is None:
            windows = list(range(context.width)) if context.mode is DatasetMode.MERGED else []
            return [context.static_default], windows
        windows = [i for i, w in enumerate(context.windows) if w.name == graph and context.mode is DatasetMode.NAMED]
        statics = [context.static_named[graph]] if graph in context.static_named else []
        return statics, windows

    def candidates(self, pattern: tuple[Any, Any, Any], graph: str | None) -> list[tuple[tuple[str, ...], Requirement]]:
        """Matches of one triple pattern: (values of its variable positions, requirement)."""
        constants = [None if is_variable(t) else from_rdflib(t) for t in pattern]
        var_positions = [i for i, t in enumerate(pattern) if is_variable(t)]
        # a variable repeated inside the pattern must match the same term
        repeats = [(i, j) for i in var_positions for j in var_positions if i < j and pattern[i] == pattern[j]]

        def matches(triple: tuple[str, str, str]) -> bool:
            return all(c is None or c == triple[i] for i, c in enumerate(constants)) and all(
                triple[i] == triple[j] for i, j in repeats
            )

        out: list[tuple[tuple[str, ...], Requirement]] = []
        true = self.context.true_requirement()
        statics, windows = self.sources(graph)
        for triples in statics:
            for triple in triples:
                if matches(triple):
                    out.append((tuple(triple[i] for i in var_positions), true))
        for w in windows:
            window = self.context.windows[w]
            for position, triple in enumerate(window.triples):
                if matches(triple):
                    requirement = list(true)
                    requirement[2 * w] = requirement[2 * w + 1] = position
                    out.append((tuple(triple[i] for i in var_positions), tuple(requirement)))
        return out

    def bgp(self, patterns: Sequence[tuple[Any, Any, Any]], graph: str | None,
            bounds: Sequence["NumericBound"] = ()) -> AnyRelation:
        """The BGP's distinct mappings, each with the OR of its requirements.

        ``bounds`` (from a FILTER right above) are a hint for evaluators that read large
        streams (`rsp_workbench.pipeline.oracle_job.SparkBGP`); here they are not needed.
        With ``joins`` given, those compute it.
        """
        if self.joins is not None:
            return self.joins(patterns, graph, bounds)
        variables: list[str] = []
        for pattern in patterns:
            for term in pattern:
                if is_variable(term) and term_key(term) not in variables:
                    variables.append(term_key(term))
        index_of = {v: i for i, v in enumerate(variables)}
        partial: list[tuple[tuple[str | None, ...], Requirement]] = [
            ((None,) * len(variables), self.context.true_requirement())
        ]
        bound: set[str] = set()
        for pattern in connected_order(patterns):
            names = [term_key(t) for t in pattern if is_variable(t)]
            unique_names = list(dict.fromkeys(names))
            join_names = [n for n in unique_names if n in bound]
            index: dict[tuple[str | None, ...], list[tuple[tuple[str, ...], Requirement]]] = defaultdict(list)
            for values, requirement in self.candidates(pattern, graph):
                binding = dict(zip(names, values))
                index[tuple(binding[n] for n in join_names)].append(
                    (tuple(binding[n] for n in unique_names), requirement)
                )
            step: list[tuple[tuple[str | None, ...], Requirement]] = []
            for held, requirement in partial:
                key = tuple(held[index_of[n]] for n in join_names)
                for new_values, new_requirement in index.get(key, ()):
                    combined = self.conjoin(requirement, new_requirement)
                    if combined is None:
                        continue
                    row: list[str | None] = list(held)
                    for n, v in zip(unique_names, new_values):
                        row[index_of[n]] = v
                    step.append((tuple(row), combined))
            partial = step
            bound.update(unique_names)
            if not partial:
                break
        grouped: dict[tuple[str | None, ...], list[Requirement]] = defaultdict(list)
        for held, requirement in partial:
            grouped[held].append(requirement)
        return Relation(tuple(variables), [(v, minimal_requirements(r)) for v, r in grouped.items()])

    def _bindings(self, relation: AnyRelation, values: tuple[str | None, ...]) -> Any:
        from rsp_workbench.query.rdflib_sparql import FrozenBindings
        from rdflib.term import BNode, Variable

        return FrozenBindings(
            self.rdflib_context,
            {
                (BNode(name[2:]) if name.startswith("_:") else Variable(name)): to_rdflib(value)
                for name, value in zip(relation.variables, values)
                if value is not None
            },
        )

    @staticmethod
    def _used_positions(node: Any, relation: AnyRelation) -> list[int]:
        """Where the variables ``node.expr`` reads are in ``relation``'s rows."""
        used: set[Any] = set()
        _walk_expr(node.expr, set(), used)
        return [relation.variables.index(str(v)) for v in used if str(v) in relation.variables]

    def _expression(self, node: Any, relation: AnyRelation,
                    evaluate: Callable[[Any], Any]) -> Callable[[tuple[str | None, ...]], Any]:
        positions = self._used_positions(node, relation)
        cache: dict[tuple[str | None, ...], Any] = {}

        def value_of(values: tuple[str | None, ...]) -> Any:
            key = tuple(values[i] for i in positions)
            try:
                return cache[key]
            except KeyError:
                result = cache[key] = evaluate(self._bindings(relation, values))
                return result

        return value_of

    def filter(self, node: Any, relation: AnyRelation) -> AnyRelation:
        from rsp_workbench.query.rdflib_sparql import ebv

        test = self._expression(node, relation, lambda bindings: ebv(node.expr, bindings))
        if isinstance(relation, CodedRelation):  # evaluated once per distinct terms of the variables it reads
            if relation.size == 0:
                return relation
            used = self._used_positions(node, relation)  # the test reads these only (and caches by them)
            first, group = first_appearance_groups(relation.codes[used])
            passed = np.array([bool(test(relation.values(int(r), used))) for r in first], dtype=bool)
            return relation.subset(passed[group])
        return Relation(relation.variables, [row for row in relation.rows if test(row[0])])

    def extend(self, node: Any, relation: AnyRelation) -> Relation:
        from rsp_workbench.query.rdflib_sparql import eval_expression
        from rsp_workbench.query.rdflib_sparql import SPARQLError

        def compute(bindings: Any) -> str | None:
            try:
                value = eval_expression(node.expr, bindings)
            except SPARQLError:
                return None
            if isinstance(value, SPARQLError):
                return None
            return from_rdflib(value)

        value_of = self._expression(node, relation, compute)
        name = str(node.var)
        if name in relation.variables:  # rdflib merges (the new value wins)
            at = relation.variables.index(name)
            rows = []
            for values, requirements in relation.rows:
                new = value_of(values)
                rows.append(((values[:at] + (new,) + values[at + 1 :]) if new is not None else values, requirements))
            return Relation(relation.variables, rows)
        return Relation(relation.variables + (name,), [(v + (value_of(v),), r) for v, r in relation.rows])

    def join(self, left: AnyRelation, right: AnyRelation) -> Relation:
        variables = tuple(dict.fromkeys(left.variables + right.variables))
        shared = [v for v in left.variables if v in right.variables]
        li = [left.variables.index(v) for v in shared]
        ri = [right.variables.index(v) for v in shared]
        out_left = [left.variables.index(v) if v in left.variables else None for v in variables]
        out_right = [right.variables.index(v) if v in right.variables else None for v in variables]
        fully_bound: dict[tuple[str | None, ...], list[Row]] = defaultdict(list)
        partly: list[Row] = []
        for row in right.rows:
            key = tuple(row[0][i] for i in ri)
            if None in key:
                partly.append(row)
            else:
                fully_bound[key].append(row)
        rows: list[Row] = []
        for lvalues, lreq in left.rows:
            key = tuple(lvalues[i] for i in li)
            if None in key:
                candidates: Iterable[Row] = right.rows
            else:
                candidates = fully_bound.get(key, []) + partly
            for rvalues, rreq in candidates:
                if any(lvalues[a] is not None and rvalues[b] is not None and lvalues[a] != rvalues[b] for a, b in zip(li, ri)):
                    continue
                requirements = self.conjoin_all(lreq, rreq)
                if not requirements:
                    continue
                merged = tuple(
                    (lvalues[a] if a is not None and lvalues[a] is not None else (rvalues[b] if b is not None else None))
                    for a, b in zip(out_left, out_right)
                )
                rows.append((merged, requirements))
        return Relation(variables, rows)


def connected_order(patterns: Sequence[tuple[Any, Any, Any]]) -> list[tuple[Any, Any, Any]]:
    """Most selective pattern first, then patterns sharing a variable with what is bound."""
    remaining = list(patterns)
    order: list[tuple[Any, Any, Any]] = []
    bound: set[Any] = set()
    while remaining:
        def score(p: tuple[Any, Any, Any]) -> tuple[int, int]:
            shares = any(is_variable(t) and t in bound for t in p)
            return (0 if shares or not bound else 1, sum(1 for t in p if is_variable(t) and t not in bound))

        best = min(remaining, key=score)
        remaining.remove(best)
        order.append(best)
        bound.update(t for t in best if is_variable(t))
    return order


def _align(relation: AnyRelation, variables: tuple[str, ...]) -> list[Row]:
    positions = [relation.variables.index(v) if v in relation.variables else None for v in variables]
    return [(tuple(values[i] if i is not None else None for i in positions), req) for values, req in relation.rows]


def distinct(relation: AnyRelation) -> Relation:
    """A set: equal rows merge, their conditions are OR-ed."""
    grouped: dict[tuple[str | None, ...], list[Requirement]] = defaultdict(list)
    for values, requirements in relation.rows:
        grouped[values].extend(requirements)
    return Relation(relation.variables, [(v, minimal_requirements(r)) for v, r in grouped.items()])


# --- rows as arrays, presence per content -----------------------------------------------------


@dataclass
class RowTable:
    """Annotated rows flattened for numpy: one entry per requirement.

    ``row_of[q]`` is the row of requirement q; ``pmin``/``pmax`` have shape (windows, Q).
    ``mapping_of[row]`` numbers the distinct mappings (bag elements) of the rows.
    """

    relation: AnyRelation
    row_of: np.ndarray
    pmin: np.ndarray
    pmax: np.ndarray
    mapping_of: np.ndarray
    mappings: Sequence[tuple[str | None, ...]]

    @classmethod
    def of(cls, relation: AnyRelation, width: int) -> "RowTable":
        if isinstance(relation, CodedRelation):
            first, mapping_of = first_appearance_groups(relation.codes)
            requirements = relation.requirements
            return cls(relation, relation.row_of, requirements[:, 0::2].T.copy(), requirements[:, 1::2].T.copy(),
                       mapping_of, CodedMappings(relation, first))
        row_of, reqs = [], []
        ids: dict[tuple[str | None, ...], int] = {}
        mapping_of = np.empty(len(relation.rows), dtype=np.int64)
        for r, (values, alternatives) in enumerate(relation.rows):
            mapping_of[r] = ids.setdefault(values, len(ids))
            for requirement in alternatives:
                row_of.append(r)
                reqs.append(requirement)
        array = np.array(reqs, dtype=np.int64).reshape(len(reqs), 2 * width) if reqs else np.empty((0, 2 * width), np.int64)
        return cls(relation, np.array(row_of, dtype=np.int64), array[:, 0::2].T.copy(), array[:, 1::2].T.copy(),
                   mapping_of, list(ids))

    def present_rows(self, key: ContentKey) -> np.ndarray:
        """Indices of the rows present for window contents ``key`` (each row counts once)."""
        mask = np.ones(len(self.row_of), dtype=bool)
        for w, (lo, hi) in enumerate(key):
            mask &= (self.pmin[w] >= lo) & (self.pmax[w] < hi)
        return np.unique(self.row_of[mask])

    def counts(self, key: ContentKey) -> np.ndarray:
        """Multiplicity of every distinct mapping for contents ``key``."""
        return np.bincount(self.mapping_of[self.present_rows(key)], minlength=len(self.mappings))

    def bag(self, key: ContentKey, cache: dict[int, SolutionMapping] | None = None) -> Counter[Hashable]:
        counts = self.counts(key)
        out: Counter[Hashable] = Counter()
        for m in np.flatnonzero(counts):
            out[self.solution(int(m), cache)] = int(counts[m])
        return out

    def solution(self, m: int, cache: dict[int, SolutionMapping] | None = None) -> SolutionMapping:
        if cache is not None and m in cache:
            return cache[m]
        values = self.mappings[m]
        mapping = frozenset((v, t) for v, t in zip(self.relation.variables, values) if t is not None and not v.startswith("_:"))
        if cache is not None:
            cache[m] = mapping
        return mapping


class RelationEvaluator:
    """The instantaneous relation (a bag, as the reference returns it) per content key.

    Above the pattern (aggregates, OPTIONAL, MINUS), a relation depends only on which
    annotated rows are present: it is evaluated by rdflib once per distinct set of present
    rows, however many window contents (and t0) share that set.
    """

    CACHE_SIZE = 4096  # relations kept for t0 values that share window contents (or present rows)

    def __init__(self, plan: FastPlan, tables: list[RowTable]) -> None:
        self.plan = plan
        self.tables = tables
        self._cache: dict[ContentKey, Counter[Hashable]] = {}
        self._by_rows: dict[tuple[bytes, ...], Counter[Hashable]] = {}
        self._solutions: dict[int, SolutionMapping] = {}
        self._dataset: Any = None  # one empty rdflib Dataset for every upper evaluation (making one costs ms)

    def relation(self, key: ContentKey) -> Counter[Hashable]:
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if self.plan.upper is None:
            result = self.tables[0].bag(key, self._solutions)
        else:
            result = self.relation_of_rows([table.present_rows(key) for table in self.tables])
        if len(self._cache) >= self.CACHE_SIZE:  # bounded: contents of one t0 at a time, roughly
            self._cache.clear()
        self._cache[key] = result
        return result

    def relation_of_rows(self, present: Sequence[np.ndarray]) -> Counter[Hashable]:
        """The relation above the pattern when exactly rows ``present[i]`` of table i are present
        (sorted row indices)."""
        signature = tuple(np.asarray(rows, dtype=np.int64).tobytes() for rows in present)
        cached = self._by_rows.get(signature)
        if cached is None:
            if len(self._by_rows) >= self.CACHE_SIZE:
                self._by_rows.clear()
            cached = self._by_rows[signature] = self._upper(present)
        return cached

    def _upper(self, present: Sequence[np.ndarray]) -> Counter[Hashable]:
        from rdflib import BNode, Dataset, Variable
        from rsp_workbench.query.rdflib_sparql import Query

        for table, placeholder, rows in zip(self.tables, self.plan.placeholders, present):
            names = [BNode(v[2:]) if v.startswith("_:") else Variable(v) for v in table.relation.variables]
            res = []
            for r in rows:
                values = table.mappings[int(table.mapping_of[r])]
                res.append({n: to_rdflib(t) for n, t in zip(names, values) if t is not None})
            placeholder.p["res"] = res
        upper = self.plan.upper
        assert upper is not None  # this evaluator runs only for plans with operators above the pattern
        query = Query(self.plan.query.algebra.prologue, upper)
        if self._dataset is None:
            self._dataset = Dataset(default_union=False)
        bag: Counter[Hashable] = Counter()
        for row in self._dataset.query(query):
            values = row.asdict()
            bag[frozenset((str(var), from_rdflib(value)) for var, value in values.items() if value is not None)] += 1
        return bag


@dataclass(frozen=True)
class GridAnswer:
    """The oracle's answer for one t0 of a single-window query with operators above the
    pattern: `ExpectedAnswer`'s fields over an evaluation grid, each relation shared by the
    evaluations whose present rows are the same (`UpperOracle`)."""

    t0: tuple[int, ...]
    grid: EvaluationGrid
    relations: Sequence[Counter[Hashable]]
    emissions: tuple[Any, ...]

    @property
    def evaluations(self) -> Sequence[Evaluation]:
        return self.grid.evaluations()

    def evaluation_times(self) -> np.ndarray:
        return self.grid.time


class UpperOracle:
    """Answers per t0 for a single-window plan with operators above the pattern.

    Along a monotone grid (contents only move forward) every requirement of an annotated row
    holds in one run of evaluations, so the set of present rows changes only where a run
    starts or ends: between two such points the relation is the same, and it is evaluated
    once (`RelationEvaluator.relation_of_rows`, shared across t0) — not once per window
    content (a tuple tick has one content per element).
    """

    def __init__(self, query: ContinuousQuery, semantics: EngineSemantics, evaluator: RelationEvaluator,
                 timeline: Timeline, end: int | None) -> None:
        self.query, self.semantics, self.evaluator, self.timeline, self.end = query, semantics, evaluator, timeline, end
        self.r2s = query.r2s or semantics.r2s

    @staticmethod
    def applies(plan: FastPlan, query: ContinuousQuery) -> bool:
        return plan.upper is not None and len(query.windows) == 1

    def answer(self, t0: Sequence[int]) -> GridAnswer | None:
        """The answer for ``t0``; None if the contents do not move monotonically."""
        from rsp_workbench.oracle.deltas import evaluation_grid
        from rsp_workbench.oracle.reference import window_specs

        spec = window_specs(self.query, self.semantics, tuple(t0))[0]
        grid = evaluation_grid(self.timeline, spec, self.semantics, self.end)
        if not grid.monotone():
            return None
        n = len(grid)
        runs = []  # per table: (first, last, row) of every requirement's run of evaluations
        for table in self.evaluator.tables:
            enter = np.searchsorted(grid.hi, table.pmax[0], "right")  # first j with hi_j > pmax
            exit_ = np.searchsorted(grid.lo, table.pmin[0], "right") - 1  # last j with lo_j <= pmin
            ok = enter <= exit_
            runs.append((enter[ok], exit_[ok], table.row_of[ok]))
        cuts = np.unique(np.concatenate([[0], *(first for first, _, _ in runs), *(last + 1 for _, last, _ in runs)]))
        cuts = cuts[cuts < n]
        segment_relations = [self.evaluator.relation_of_rows(rows) for rows in _present_rows_at(cuts, runs)]
        segment = np.searchsorted(cuts, np.arange(n), "right") - 1
        relations = tuple(segment_relations[k] for k in segment.tolist())
        emissions = tuple(apply_r2s(self.r2s, zip(grid.time.tolist(), grid.sequence.tolist(), relations),
                                    empty_notification=self.semantics.empty_notification))
        return GridAnswer(tuple(t0), grid, relations, emissions)


def _present_rows_at(cuts: np.ndarray, runs: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
                     budget: int = 50_000_000) -> Iterator[list[np.ndarray]]:
    """Per cut j (ascending), each table's rows present at evaluation j (sorted): those with a
    run ``first ≤ j ≤ last``. Few cuts: a vectorised test of every run per cut; many (a tuple
    tick, one per element), a sweep over the runs' borders."""
    total = sum(len(rows) for _, _, rows in runs)
    if len(cuts) * max(total, 1) <= budget:
        for j in cuts.tolist():
            yield [np.unique(rows[(first <= j) & (last >= j)]) for first, last, rows in runs]
        return
    changes: dict[int, list[tuple[int, int, int]]] = {}
    for t, (first, last, rows) in enumerate(runs):
        for at, sign in ((first, 1), (last + 1, -1)):
            for j, r in zip(at.tolist(), rows.tolist()):
                changes.setdefault(j, []).append((t, r, sign))
    present: list[Counter[int]] = [Counter() for _ in runs]
    for j in cuts.tolist():
        for t, r, sign in changes.get(j, ()):
            present[t][r] += sign
            if present[t][r] == 0:
                del present[t][r]
        yield [np.array(sorted(p), dtype=np.int64) for p in present]


def annotate(plan: FastPlan, context: AnnotationContext, bgp: BGPJoins | None = None) -> list[RowTable]:
    """Annotated row tables of the plan's leaves (``bgp`` overrides BGP evaluation, e.g. Spark)."""
    annotator = Annotator(context, plan.query.algebra.prologue, bgp)
    return [RowTable.of(annotator.evaluate(leaf), context.width) for leaf in plan.leaves]


# --- evaluation instants on distinct timestamps -----------------------------------------------


def content_keys(
    evaluations: Sequence[Evaluation], timelines: Sequence[Timeline], specs: Sequence[WindowSpec],
    choice: ActiveWindowChoice, report_window: int,
) -> list[ContentKey]:
    """Per evaluation, the content (lo, hi) of every window (RSP-QL Def. 18)."""
    keys = []
    for e in evaluations:
        key = []
        for w, (timeline, spec) in enumerate(zip(timelines, specs)):
            if w == report_window:
                lo, hi = e.lo, e.hi
            else:
                _, lo_c, hi_c = content_at(timeline.distinct, spec, e.time, choice)
                lo, hi = timeline.starts[lo_c], timeline.starts[hi_c]
            key.append((lo, hi) if hi > lo else (0, 0))
        keys.append(tuple(key))
    return keys


# --- the fast expected answer for one t0 ---------------------------------------------------------


def fast_expected_answer(
    query: ContinuousQuery,
    streams: Mapping[str, Sequence[StreamElement]],
    semantics: EngineSemantics,
    t0: Sequence[int],
    *,
    static: "StaticData | None" = None,
    end: int | None = None,
    report_window: int = 0,
    plan: FastPlan | None = None,
) -> "ExpectedAnswer | DeltaAnswer | GridAnswer":
    """Same result as `reference.expected_answer`, from mappings annotated once (the same fields
    over presence runs or an evaluation grid where those apply)."""
    answers = fast_expected_answers(
        query, streams, semantics, [tuple(t0)], static=static, end=end, report_window=report_window, plan=plan
    )
    answer: ExpectedAnswer | DeltaAnswer | GridAnswer = answers[tuple(t0)]
    return answer


def fast_expected_answers(
    query: ContinuousQuery,
    streams: Mapping[str, Sequence[StreamElement]],
    semantics: EngineSemantics,
    t0_vectors: Sequence[tuple[int, ...]],
    *,
    static: "StaticData | None" = None,
    end: int | None = None,
    report_window: int = 0,
    plan: FastPlan | None = None,
) -> Mapping[tuple[int, ...], Any]:
    """The expected answer for every t0 vector; the mappings are annotated once for all.

    A lazy mapping (`rsp_workbench.oracle.deltas.LazyAnswers`): each t0's answer is computed
    when asked for, one at a time. Single-window monotone plans give `DeltaAnswer`s
    (presence runs, `rsp_workbench.oracle.deltas`); the others an `ExpectedAnswer` from the
    relation of each distinct window content.
    """
    from rsp_workbench.oracle.deltas import LazyAnswers
    from rsp_workbench.oracle.reference import ExpectedAnswer, StaticData, window_specs

    static = static if static is not None else StaticData()
    if not query.windows:
        raise UserError("the query has no window over a stream", field="query")
    plan = plan or compile_plan(query)
    context = build_context(query, streams, static)
    tables = annotate(plan, context)
    evaluator = RelationEvaluator(plan, tables)
    timelines = [Timeline.of(w.times) for w in context.windows]
    r2s = query.r2s or semantics.r2s
    deltas: DeltaOracle | UpperOracle | None = None
    if DeltaOracle.applies(plan, query):
        deltas = DeltaOracle(query, semantics, tables[0], timelines[report_window], end)
    elif UpperOracle.applies(plan, query):
        deltas = UpperOracle(query, semantics, evaluator, timelines[report_window], end)

    def compute(t0: tuple[int, ...]) -> Any:
        if deltas is not None:
            answer = deltas.answer(t0)
            if answer is not None:
                return answer
        specs = window_specs(query, semantics, t0)
        evaluations = evaluations_for(timelines[report_window], specs[report_window], semantics, end=end)
        keys = content_keys(evaluations, timelines, specs, semantics.active_window, report_window)
        relations = [evaluator.relation(k) for k in keys]
        emissions = list(apply_r2s(r2s, ((e.time, e.sequence, rel) for e, rel in zip(evaluations, relations)),
                                   empty_notification=semantics.empty_notification))
        return ExpectedAnswer(tuple(t0), tuple(evaluations), tuple(relations), tuple(emissions))

    def times(t0: tuple[int, ...]) -> Any:
        from rsp_workbench.oracle.deltas import evaluation_grid

        spec = window_specs(query, semantics, t0)[report_window]
        return evaluation_grid(timelines[report_window], spec, semantics, end).time

    return LazyAnswers([tuple(v) for v in t0_vectors], compute, times)
