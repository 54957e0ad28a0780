"""The ``secret`` engine's incremental window close (``prefill``) and the batch delta joins under it
give exactly the answers of filling the window at its close, and of one delta per triple.

Random streams over a small vocabulary (the same triple at several instants, joins across
instants), tumbling, sliding and hopping windows, every preset with a window-close policy, several
queries (joins, a pattern with a variable predicate, a triple joined with itself, FILTER,
DISTINCT, two windows on two streams with static data) and time heartbeats between stimuli.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from string import Template
from typing import Any, Hashable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsp_workbench.engines._compiled_query import compile_select
from rsp_workbench.engines._match import IncrementalBGP, TripleIndex, lookup_index
from rsp_workbench.engines._window_store import Retired, WindowStore
from rsp_workbench.core.semantics import PRESETS, R2S, BorderConvention, EngineSemantics, ReportPolicy, Strategy, Tick
from rsp_workbench.engine import EngineConfig, StaticGraphs, group_contemporaneous, merge_streams
from rsp_workbench.engines import create_engine
from rsp_workbench.query.parser import parse_query
from rsp_workbench.streams.model import StreamElement

EX = "http://example.org/"
S1, S2 = f"{EX}s1", f"{EX}s2"


def iri(name: str) -> str:
    return f"<{EX}{name}>"


NODES = [iri(name) for name in "abcd"]
PREDICATES = [iri("p"), iri("q")]
LITERALS = ['"1"^^<http://www.w3.org/2001/XMLSchema#integer>', '"7"^^<http://www.w3.org/2001/XMLSchema#integer>']

QUERIES = {name: Template(text).safe_substitute(EX=EX, S1=S1, S2=S2) for name, text in {
    "chain": """PREFIX : <$EX>
SELECT ?x ?y ?z FROM NAMED STREAM <$S1> [NOW - $size MS SLIDE $slide MS]
WHERE { ?x :p ?y . ?y :q ?z }""",
    "self-join, distinct": """PREFIX : <$EX>
SELECT DISTINCT ?x ?y FROM NAMED STREAM <$S1> [NOW - $size MS SLIDE $slide MS]
WHERE { ?x :p ?y . ?y :p ?x }""",
    "variable predicate, filter": """PREFIX : <$EX>
SELECT ?x ?r ?v FROM NAMED STREAM <$S1> [NOW - $size MS SLIDE $slide MS]
WHERE { ?x ?r ?y . ?y :q ?v . FILTER(isLiteral(?v) && ?v > 3) }""",
    "two windows, static": """PREFIX : <$EX>
SELECT ?x ?y ?z ?o
FROM NAMED WINDOW :w1 ON <$S1> [RANGE $sizems STEP $slidems]
FROM NAMED WINDOW :w2 ON <$S2> [RANGE 300ms STEP 200ms]
WHERE { WINDOW :w1 { ?x :p ?y } WINDOW :w2 { ?y :q ?z } ?z :owns ?o }""",
}.items()}
STATIC = StaticGraphs(default=tuple((node, iri("owns"), iri("o" + node[-2])) for node in NODES[:3]))
WINDOW_CLOSE_PRESETS = [name for name, semantics in PRESETS.items()
                        if Strategy.WINDOW_CLOSE in semantics.report.strategies]


def random_stream(seed: int, count: int, stream_spacing: int) -> list[StreamElement]:
    rng = random.Random(seed)
    elements, t = [], 0
    for _ in range(count):
        t += rng.choice([0, 0, rng.randrange(1, stream_spacing)])  # several elements share an instant
        o = rng.choice(NODES + LITERALS)
        elements.append(StreamElement(rng.choice(NODES), rng.choice(PREDICATES), o, t))
    return elements


EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LENGTHS = st.integers(1, 6).map(lambda k: 100 * k)  # window size and slide, ms
STREAM_CASES = {"seed": st.integers(0, 100_000), "count": st.integers(0, 40), "size": LENGTHS, "slide": LENGTHS}


def case(seed: int, count: int, query: str, size: int, slide: int
         ) -> tuple[str, dict[str, list[StreamElement]], StaticGraphs]:
    """Query text, random streams and static data of one example."""
    streams = {S1: random_stream(seed, count, 250)}
    static = StaticGraphs()
    if query == "two windows, static":
        streams[S2] = random_stream(seed + 1, count // 2, 400)
        static = STATIC
    return QUERIES[query].replace("$size", str(size)).replace("$slide", str(slide)), streams, static


def answers(query: str, streams: dict[str, list[StreamElement]], semantics: EngineSemantics, t0: Any, *,
            prefill: bool = True, tick_runs: bool = True, heartbeat: int = 0, faults: dict[str, bool] | None = None,
            static: StaticGraphs = StaticGraphs()) -> list[tuple[int | None, str, Counter[Any]]]:
    """Push the stimuli, with ``advance`` heartbeats every ``heartbeat`` ms of application time between
    them (as the stand sends in real time), then advance past the end and close."""
    parameters = {"t0": t0, "prefill": prefill, "tick_runs": tick_runs}
    engine = create_engine(EngineConfig("secret", semantics, dict(faults or {}), parameters))
    engine.register(parse_query(query), static)
    stimuli = merge_streams(streams) if len(streams) > 1 else group_contemporaneous(next(iter(streams.values())))
    responses = []
    last = None
    for stimulus in stimuli:
        if last is not None and heartbeat:
            for t in range(last + heartbeat, stimulus.application_time, heartbeat):
                responses += engine.advance_time(t)
        responses += engine.push(stimulus)
        last = stimulus.application_time
    responses += engine.advance_time((last or 0) + 3000)
    responses += engine.close()
    return [(r.application_time, r.operation, Counter(r.bindings)) for r in responses]


@EXAMPLES
@given(
    **STREAM_CASES,
    t0=st.integers(0, 250),
    preset=st.sampled_from(WINDOW_CLOSE_PRESETS),
    policy=st.sampled_from([None, "wc", "wc & nc", "wc & cc", "periodic(400ms) & wc"]),
    border=st.sampled_from([None, *BorderConvention]),
    r2s=st.sampled_from([None, *R2S]),
    query=st.sampled_from(list(QUERIES)),
    heartbeat=st.sampled_from([0, 70]),
    misaligned=st.booleans(),
)
@pytest.mark.slow
def test_prefill_equals_filling_at_the_close(
    seed: int, count: int, size: int, slide: int, t0: int, preset: str, policy: str | None,
    border: BorderConvention | None, r2s: R2S | None, query: str, heartbeat: int, misaligned: bool,
) -> None:
    semantics = PRESETS[preset]
    changes: dict[str, Any] = {}
    if policy is not None:
        changes["report"] = ReportPolicy.parse(policy)
    if border is not None:
        changes["border"] = border
    if r2s is not None:
        changes["r2s"] = r2s
    semantics = replace(semantics, **changes)
    text, streams, static = case(seed, count, query, size, slide)
    faults = {"misaligned_first_window": misaligned}
    t0s = t0 if len(streams) == 1 else [t0, 0]
    expected = answers(text, streams, semantics, t0s, prefill=False, heartbeat=heartbeat, faults=faults,
                       static=static)
    assert answers(text, streams, semantics, t0s, prefill=True, heartbeat=heartbeat, faults=faults,
                   static=static) == expected


@pytest.mark.parametrize("preset", WINDOW_CLOSE_PRESETS)
def test_prefill_answers_at_every_close_of_a_sliding_window(preset: str) -> None:
    """A hand-sized case that must report something: the answers are non-trivial and equal."""
    stream = random_stream(3, 60, 120)
    text = QUERIES["chain"].replace("$size", "500").replace("$slide", "200")
    expected = answers(text, {S1: stream}, PRESETS[preset], 0, prefill=False, heartbeat=50)
    assert sum(len(bag) for _, _, bag in expected) > 5
    assert answers(text, {S1: stream}, PRESETS[preset], 0, prefill=True, heartbeat=50) == expected


@EXAMPLES
@given(
    **STREAM_CASES,
    preset=st.sampled_from(list(PRESETS)),
    policy=st.sampled_from(["cc", "cc", "cc & nc", "wc & cc", "periodic(300ms)"]),  # runs: content change
    tick=st.sampled_from([Tick.TUPLE, Tick.TUPLE, Tick.TUPLE, Tick.TIME, Tick.BATCH]),  # runs: tuple tick
    r2s=st.sampled_from([None, *R2S]),
    notify=st.booleans(),
    query=st.sampled_from(list(QUERIES)),
    late_purge=st.sampled_from([False, False, False, True]),
)
@pytest.mark.slow
def test_tick_runs_equal_one_delta_join_per_element(
    seed: int, count: int, size: int, slide: int, preset: str, policy: str, tick: Tick,
    r2s: R2S | None, notify: bool, query: str, late_purge: bool,
) -> None:
    """The elements of a tuple tick at one instant joined at once, each evaluation then taking the
    mappings its element adds: the answers of one delta join per element (CQELS's preset at BIG)."""
    changes: dict[str, Any] = {"empty_notification": notify, "report": ReportPolicy.parse(policy), "tick": tick}
    if r2s is not None:
        changes["r2s"] = r2s
    semantics = replace(PRESETS[preset], **changes)
    text, streams, static = case(seed, count, query, size, slide)
    t0s = 0 if len(streams) == 1 else [0, 0]
    faults = {"late_purge": late_purge}
    expected = answers(text, streams, semantics, t0s, tick_runs=False, faults=faults, static=static)
    assert answers(text, streams, semantics, t0s, faults=faults, static=static) == expected


def test_tick_runs_answer_cqels_like_one_delta_per_element() -> None:
    """A hand-sized CQELS case with several answers within one instant."""
    stream = [StreamElement(s, p, o, t) for t, (s, p, o) in zip(
        [0, 0, 0, 0, 100, 100, 100, 100],
        [(NODES[0], PREDICATES[0], NODES[1]), (NODES[1], PREDICATES[1], NODES[2]), (NODES[1], PREDICATES[1], NODES[3]),
         (NODES[0], PREDICATES[0], NODES[1]), (NODES[2], PREDICATES[0], NODES[1]), (NODES[1], PREDICATES[1], NODES[0]),
         (NODES[3], PREDICATES[1], NODES[0]), (NODES[1], PREDICATES[0], NODES[3])])]
    text = QUERIES["chain"].replace("$size", "1000").replace("$slide", "1000")
    expected = answers(text, {S1: stream}, PRESETS["cqels"], 0, tick_runs=False)
    got = answers(text, {S1: stream}, PRESETS["cqels"], 0)
    assert got == expected
    # a p b, b q c → (a b c); b q d → (a b d); a p b again: nothing; c p b → (c b c), (c b d);
    # b q a → (a b a), (c b a); d q a: no ?x p d yet; b p d → (b d a)
    assert [(t, sum(bag.values())) for t, _, bag in got] == [(0, 1), (0, 1), (100, 2), (100, 2), (100, 1)]


# --- batch delta joins ---------------------------------------------------------------------------


def _matcher(query: str) -> tuple[IncrementalBGP, Counter[Hashable]]:
    parsed = parse_query(QUERIES[query].replace("$size", "100").replace("$slide", "100"))
    bag: Counter[Hashable] = Counter()

    def on_change(mapping: Hashable, delta: int) -> None:
        bag[mapping] += delta

    return IncrementalBGP(compile_select(parsed.algebra, {w.name for w in parsed.windows}), on_change), bag


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    query=st.sampled_from(["chain", "self-join, distinct", "variable predicate, filter"]),
    steps=st.integers(1, 8),
)
@pytest.mark.slow
def test_batch_deltas_equal_one_delta_per_triple(seed: int, query: str, steps: int) -> None:
    """insert_all / delete_all (through WindowStore.add_all / remove_all) change the bag exactly as
    one insert / delete per triple; the bag is always the bag of the store's content joined afresh."""
    rng = random.Random(seed)
    batched, batched_bag = _matcher(query)
    single, single_bag = _matcher(query)
    store = WindowStore(batched)
    held: list[tuple[str, str, str]] = []  # the store's statements, with repeats (copies)
    for _ in range(steps):
        if held and rng.random() < 0.4:
            gone = rng.sample(held, rng.randrange(1, len(held) + 1))
            for statement in gone:
                held.remove(statement)
            before = set(held) | set(gone)
            store.remove_all(None, gone)
            for triple in dict.fromkeys(gone):
                if triple not in held and triple in before:
                    single.delete(None, triple)
        else:
            new = [(rng.choice(NODES), rng.choice(PREDICATES), rng.choice(NODES + LITERALS))
                   for _ in range(rng.randrange(1, 12))]
            for triple in dict.fromkeys(new):
                if triple not in held:
                    single.insert(None, triple)
            held += new
            store.add_all(None, new)
        assert +batched_bag == +single_bag and not -batched_bag
        fresh, fresh_bag = _matcher(query)
        for triple in dict.fromkeys(held):
            fresh.insert(None, triple)
        assert +fresh_bag == +batched_bag


def test_only_the_indexes_the_joins_read_are_kept() -> None:
    chain, _ = _matcher("chain")
    # ?x :p ?y . ?y :q ?z: from ?x :p ?y, look up (?y, :q, _) in SPO; from ?y :q ?z, (_, :p, ?y) in POS
    assert chain.indexes == frozenset({"pos"})
    assert lookup_index(False, True, True) == "pos" and lookup_index(True, False, True) == "osp"
    index = TripleIndex(frozenset())
    index.insert((iri("a"), iri("p"), iri("b")))
    assert (iri("a"), iri("p"), iri("b")) in index and index.pos is None and index.osp is None


@pytest.mark.slow
def test_retired_containers_are_freed_within_the_budget() -> None:
    retired = Retired()
    big = {n: {m: {m} for m in range(300)} for n in range(1000)}
    retired.add(big)
    retired.add(set(range(500)))
    rounds = 0
    while retired:
        retired.free(1024)
        rounds += 1
    assert not big and rounds < 1000
