"""The complete answer of a stream join without memory bounds, computed by the oracle itself:
the ground truth a bounded-memory join (eviction paper, Sect. 1) is judged against by recall.

The join answers each basic-graph-pattern match once, when its last triple arrives; with no
window every match over the whole stream counts, and a window's range ω is time-based
garbage collection (Sect. 2.1): a match counts iff the triples it is built from arrived less
than ω apart. So the truth is the query's distinct (projected) mappings over the stream with
some support whose times span less than ω — the oracle's annotated evaluation
(:mod:`rsp_workbench.oracle.annotated`) over all elements, each mapping with the positions
of the elements that build it, never the judged engine's join with its cache turned off.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from rsp_workbench.engine import Stimulus
from rsp_workbench.errors import UserError
from rsp_workbench.query.model import ContinuousQuery, DatasetMode
from rsp_workbench.responses.model import EngineResponse, SolutionMapping
from rsp_workbench.streams.terms import canonical_term

#: the band of a query without window: every pair of elements (times are int64 ms)
_NO_RANGE = 1 << 62


def unbounded_answer(stimuli: Sequence[Stimulus], query: ContinuousQuery) -> set[SolutionMapping]:
    """The distinct mappings of ``query``'s pattern over the stimuli's elements whose support
    spans less than the window range (any span without a window), terms canonical."""
    from rsp_workbench.oracle.annotated import (
        BIG,
        AnnotationContext,
        Annotator,
        FastPathUnsupported,
        WindowData,
        compile_plan,
    )

    plan = compile_plan(query)
    if plan.upper is not None:
        raise FastPathUnsupported("the unbounded join's answer is defined for a monotone pattern (BGP, FILTER, …)")
    sizes = {w.size_ms for w in query.windows}
    if len(sizes) > 1:
        raise UserError("a join with memory bounds needs one window range for all partners", field="query")
    reach = sizes.pop() if sizes else _NO_RANGE
    triples = [(canonical_term(e.subject), canonical_term(e.predicate), canonical_term(e.object))
               for s in stimuli for e in s.elements]
    times = [s.application_time for s in stimuli for _ in s.elements]
    # the join reads every element it is sent, whatever its stream or window graph
    names = [w.name for w in query.windows] if query.dataset_mode is DatasetMode.NAMED else [""]
    context = AnnotationContext([WindowData(name, reach, triples, times) for name in dict.fromkeys(names)],
                                DatasetMode.NAMED if query.windows and query.dataset_mode is DatasetMode.NAMED
                                else DatasetMode.MERGED, frozenset(), {})
    relation = Annotator(context, query.algebra.prologue).evaluate(plan.leaves[0])
    truth: set[SolutionMapping] = set()
    for values, requirements in relation.rows:
        for requirement in requirements:
            used = [(requirement[i], requirement[i + 1]) for i in range(0, len(requirement), 2)
                    if requirement[i + 1] >= 0 and requirement[i] < BIG]
            if not used or max(times[hi] for _, hi in used) - min(times[lo] for lo, _ in used) < reach:
                truth.add(frozenset((v, term) for v, term in zip(relation.variables, values) if term is not None))
                break
    return truth


def found_mappings(responses: Iterable[EngineResponse]) -> set[SolutionMapping]:
    """The distinct mappings an engine reported (``+``/``=`` responses), terms canonical."""
    return {frozenset((v, canonical_term(term)) for v, term in binding)
            for response in responses if response.operation != "-" for binding in response.bindings}


def recall(found: set[SolutionMapping], truth: set[SolutionMapping]) -> float:
    """|found ∩ truth| / |truth| (1.0 when the truth is empty): the eviction paper's KPI, set
    semantics (a result reported twice, after its bindings were evicted and re-created, counts once)."""
    return len(found & truth) / len(truth) if truth else 1.0
