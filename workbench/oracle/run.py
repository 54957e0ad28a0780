"""Oracle orchestration shared by `rspwb oracle`, `rspwb check` and the pipeline.

Resolves an engine's semantics (preset + explicit overrides), enumerates the admissible
t0 vectors (RSP-QL Theorem 1), computes the expected answer per t0 and turns engine
outputs into comparable relations.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any, Hashable, Mapping, Sequence

from workbench.core.semantics import EngineSemantics, preset
from workbench.core.t0 import admissible_t0_vectors, comparison_start
from workbench.errors import UserError
from workbench.oracle.reference import ExpectedAnswer, StaticData, expected_answer
from workbench.oracle.verdict import Relation
from workbench.query.model import ContinuousQuery, DatasetMode, WindowDeclaration
from workbench.responses.model import ResponseLog
from workbench.streams.model import StreamElement


def resolve_semantics(system: str | None, overrides: Mapping[str, Any]) -> EngineSemantics:
    """A preset (CSRBench Table 1, YABench conventions) with explicit parameters on top."""
    base = preset(system) if system else EngineSemantics()
    return base.with_overrides({k: v for k, v in overrides.items() if v is not None})


def with_window(query: ContinuousQuery, size_ms: int | None, slide_ms: int | None, stream: str | None) -> ContinuousQuery:
    """Give a window-less one-time query (e.g. YABench's oracle.query) one window, or
    override the size/slide of a single-window query."""
    if size_ms is None and slide_ms is None:
        return query
    if len(query.windows) > 1:
        raise UserError("--window-size/--window-slide apply to queries with at most one window", field="--window-size")
    if query.windows:
        window = query.windows[0]
        size = size_ms if size_ms is not None else window.size_ms
        slide = slide_ms if slide_ms is not None else (size_ms if window.slide_ms == window.size_ms else window.slide_ms)
        return replace(query, windows=(replace(window, size_ms=size, slide_ms=slide),))
    if size_ms is None:
        raise UserError("the query has no window; give --window-size (and --window-slide)", field="--window-size")
    window = WindowDeclaration(
        name="urn:rspwb:window:0", stream=stream or "urn:rspwb:stream:0", size_ms=size_ms,
        slide_ms=slide_ms if slide_ms is not None else size_ms, position=(1, 1), generated_name=True,
    )
    return replace(query, windows=(window,), dataset_mode=DatasetMode.MERGED)


def t0_vectors(
    query: ContinuousQuery, semantics: EngineSemantics, option: str | int | None, registration: int = 0
) -> tuple[list[tuple[int, ...]], int]:
    """The t0 vectors to evaluate and the comparison start t_s (RSP-QL Def. 26).

    ``option``: an int (ms) fixes every window's t0; ``"all"`` enumerates the admissible
    set; None uses the semantics' own t0, or the admissible set when the engine hides it.
    """
    slides = [w.slide_ms for w in query.windows]
    unit = semantics.time_unit.millis
    if option is None and semantics.t0 is not None:
        option = semantics.t0
    if option is None or option == "all":
        vectors = list(admissible_t0_vectors(registration, slides, unit))
        return vectors, comparison_start(registration, slides, unit)
    value = int(option)
    return [tuple(value for _ in slides)], value


def compute_expected(
    query: ContinuousQuery,
    streams: Mapping[str, Sequence[StreamElement]],
    semantics: EngineSemantics,
    vectors: Sequence[tuple[int, ...]],
    *,
    static: StaticData = StaticData(),
    end: int | None = None,
    method: str = "auto",
) -> dict[tuple[int, ...], ExpectedAnswer]:
    """The oracle's answer for each t0 vector.

    ``method``: ``fast`` annotates the solution mappings once and derives every window
    from them (:mod:`annotated`); ``reference`` evaluates each instant with rdflib;
    ``auto`` (default) takes the fast path when the query is inside its fragment.
    """
    from workbench.oracle.annotated import FastPathUnsupported, compile_plan, fast_expected_answers

    if end is None:
        last = max((elements[-1].t for elements in streams.values() if elements), default=0)
        end = last + max(w.size_ms for w in query.windows)
    if method in ("auto", "fast"):
        try:
            plan = compile_plan(query)
        except FastPathUnsupported:
            if method == "fast":
                raise
        else:
            return fast_expected_answers(query, streams, semantics, vectors, static=static, end=end, plan=plan)
    return {
        vector: expected_answer(query, streams, semantics, vector, static=static, end=end) for vector in vectors
    }


def expected_relations(answer: ExpectedAnswer) -> list[Relation]:
    return [Relation(e.time, e.operation, Counter(e.bindings)) for e in answer.emissions]


def windows_summary(answer: ExpectedAnswer) -> list[dict[str, Any]]:
    """Per evaluation in time order: window borders, elements in it, expected result size."""
    rows = []
    emitted = {(e.time, e.sequence): e for e in answer.emissions}
    for evaluation, relation in zip(answer.evaluations, answer.relations):
        emission = emitted.get((evaluation.time, evaluation.sequence))
        rows.append({
            "start": evaluation.window.open,
            "end": evaluation.window.close,
            "time": evaluation.time,
            "triples": evaluation.size,
            "expected": emission.size if emission is not None else 0,
            "relation_size": sum(relation.values()),
            "emitted": emission is not None,
        })
    return rows


def engine_relations(log: ResponseLog, *, regroup: bool = False) -> list[Relation]:
    """An engine's responses as relations (optionally regrouped by evaluation time)."""
    from workbench.oracle.verdict import regroup_by_time

    relations = [
        Relation(r.application_time, r.operation, Counter(r.bindings)) for r in log.responses
    ]
    return regroup_by_time(relations) if regroup else relations


def check_variables(log: ResponseLog, query: ContinuousQuery) -> None:
    """An output for a different query is reported as such, not as 'incorrect'."""
    expected = set(query.variables)
    produced: set[str] = set(log.variables)
    for response in log.responses:
        for mapping in response.bindings:
            produced.update(var for var, _ in mapping)
    if expected and produced and not produced <= expected:
        raise UserError(
            f"the engine output binds {', '.join(sorted(produced - expected))}, which the query does not "
            f"project ({', '.join(sorted(expected))}): it looks like the output of a different query",
            file=log.source or None,
        )


def mapping_rows(bag: Counter[Hashable]) -> list[dict[str, str]]:
    return [dict(sorted(mapping)) for mapping in bag.elements()]  # type: ignore[call-overload]
