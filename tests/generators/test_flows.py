"""Flow shapes (Heaven's streamer): sizes and times per shape, apply_flow, retime, merge, preview."""

from __future__ import annotations

import statistics
from itertools import islice
from pathlib import Path

import pytest

from rsp_workbench.errors import UserError
from rsp_workbench.experiment.model import FLOW_SHAPES as EXPERIMENT_FLOW_SHAPES
from rsp_workbench.generators.flows import (
    FLOW_SHAPES,
    SHAPE_DOCS,
    FlowShape,
    apply_flow,
    merge_streams,
    rate_preview,
    read_triples,
    retime,
)
from rsp_workbench.streams.model import StreamElement


def flow(**settings: object) -> FlowShape:
    return FlowShape.parse(settings)


def test_every_experiment_shape_is_known_and_documented() -> None:
    assert set(FLOW_SHAPES) == set(EXPERIMENT_FLOW_SHAPES) == set(SHAPE_DOCS)
    for params in FLOW_SHAPES.values():
        assert all(p.doc for p in params)


def test_constant() -> None:
    shape = flow(shape="constant", size=3, period="100ms", start=50)
    assert list(islice(shape.schedule(), 4)) == [(50, 3), (150, 3), (250, 3), (350, 3)]


def test_step_adds_every_x_stimuli() -> None:
    assert flow(shape="step", initial=10, step=5, every=2).stimulus_sizes(7) == [10, 10, 15, 15, 20, 20, 25]


def test_step_factor_multiplies_every_x_stimuli() -> None:
    assert flow(shape="step-factor", initial=1, factor=2, every=3).stimulus_sizes(8) == [1, 1, 1, 2, 2, 2, 4, 4]


def test_custom_step_jumps_and_ends_at_a_final_zero() -> None:
    shape = flow(shape="custom-step", initial=5, jumps="2:1, 4:8")
    assert shape.stimulus_sizes(6) == [5, 5, 1, 1, 8, 8]
    assert flow(shape="custom-step", initial=5, jumps={3: 0}).stimulus_sizes(10) == [5, 5, 5]
    assert flow(shape="custom-step", initial=0, jumps=[[1, 2]]).stimulus_sizes(3) == [0, 2, 2]


def test_linear_rounds_half_up() -> None:
    assert flow(shape="linear", initial=0, slope=1.5).stimulus_sizes(5) == [0, 2, 3, 5, 6]
    assert flow(shape="linear", initial=3, slope=-1).stimulus_sizes(10) == [3, 2, 1]  # ends at 0


def test_exponential() -> None:
    assert flow(shape="exponential", initial=1, rate=0.5).stimulus_sizes(6) == [1, 2, 3, 4, 7, 12]


def test_max_size_caps() -> None:
    assert flow(shape="step", initial=1, step=10, max_size=15).stimulus_sizes(4) == [1, 11, 15, 15]


def test_random_is_bounded_seeded_and_covers_the_range() -> None:
    sizes = flow(shape="random", min=2, max=6, seed=1).stimulus_sizes(400)
    assert min(sizes) == 2 and max(sizes) == 5
    assert sizes == flow(shape="random", min=2, max=6, seed=1).stimulus_sizes(400)
    assert sizes != flow(shape="random", min=2, max=6, seed=2).stimulus_sizes(400)
    assert flow(shape="random", min=2, max=6, seed=1).stimulus_sizes(5000)[:400] == sizes  # across blocks


def test_constant_random_plateaus() -> None:
    sizes = flow(shape="constant-random", min=1, max=1000, every=3, seed=5).stimulus_sizes(12)
    plateaus = [sizes[i : i + 3] for i in range(0, 12, 3)]
    assert all(len(set(p)) == 1 for p in plateaus)
    assert len({p[0] for p in plateaus}) > 1
    assert all(1 <= s < 1000 for s in sizes)


def test_poisson_inter_arrival_mean() -> None:
    times = [t for t, _ in islice(flow(shape="poisson", mean="50ms", size=2, seed=3).schedule(), 4000)]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert times == sorted(times)
    assert statistics.mean(gaps) == pytest.approx(50, rel=0.05)
    assert statistics.stdev(gaps) == pytest.approx(50, rel=0.1)  # exponential: sd = mean


def test_gaussian_inter_arrival_mean_and_spread() -> None:
    times = [t for t, _ in islice(flow(shape="gaussian", mean="100ms", stddev="10ms", seed=3).schedule(), 3000)]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert statistics.mean(gaps) == pytest.approx(100, rel=0.02)
    assert statistics.stdev(gaps) == pytest.approx(10, rel=0.15)
    fixed = [t for t, _ in islice(flow(shape="gaussian", mean=100).schedule(), 3)]
    assert fixed == [100, 200, 300]


def test_burst() -> None:
    shape = flow(shape="burst", size=2, factor=5, burst_every="1s", burst_length="200ms", period="100ms")
    assert shape.stimulus_sizes(12) == [10, 10, 2, 2, 2, 2, 2, 2, 2, 2, 10, 10]


def test_shape_specific_defaults() -> None:
    assert flow(shape="burst", burst_every="1s", burst_length="100ms").stimulus_sizes(2) == [10, 1]
    sizes = flow(shape="constant-random", max=1000).stimulus_sizes(20)
    assert len(set(sizes[:10])) == 1 and len(set(sizes[10:])) == 1
    assert flow(shape="step-factor").stimulus_sizes(3) == [1, 2, 4]


def test_stimuli_limits_the_schedule() -> None:
    assert len(list(flow(shape="constant", stimuli=5).schedule())) == 5


def test_apply_flow_cuts_and_timestamps() -> None:
    triples = [(f"<s{i}>", "<p>", f'"{i}"') for i in range(10)]
    out = list(apply_flow(triples, {"shape": "step", "initial": 1, "step": 1, "period": "1s"}))
    assert [e.t for e in out] == [0, 1000, 1000, 2000, 2000, 2000, 3000, 3000, 3000, 3000]
    assert [e.triple() for e in out] == triples
    elements = [StreamElement("<a>", "<p>", "<b>", 99, "<g>")] * 3
    assert [(e.t, e.graph) for e in apply_flow(elements, flow(shape="constant", size=2))] == [
        (0, "<g>"), (0, "<g>"), (100, "<g>"),
    ]
    assert len(list(apply_flow(triples, flow(shape="constant", size=3, stimuli=2)))) == 6


def test_apply_flow_skips_empty_stimuli() -> None:
    triples = [("<s>", "<p>", f'"{i}"') for i in range(4)]
    out = list(apply_flow(triples, flow(shape="custom-step", initial=1, jumps="1:0,3:3")))
    assert [e.t for e in out] == [0, 300, 300, 300]


def test_read_triples_from_turtle(tmp_path: Path) -> None:
    path = tmp_path / "data.ttl"
    path.write_text('@prefix : <http://ex.org/> .\n:z :p :b , [ :q "x" ] .\n:a :p :c .\n', encoding="utf-8")
    first = list(read_triples(path))
    assert first == list(read_triples(path))  # blank nodes relabelled deterministically
    ex = "http://ex.org/"
    assert first == [
        ("_:b0", f"<{ex}q>", '"x"'),  # rdflib's Turtle parser emits the nested blank node first
        (f"<{ex}z>", f"<{ex}p>", f"<{ex}b>"),
        (f"<{ex}z>", f"<{ex}p>", "_:b0"),
        (f"<{ex}a>", f"<{ex}p>", f"<{ex}c>"),
    ]
    jsonld = tmp_path / "data.jsonld"
    jsonld.write_text('{"@id": "http://ex.org/z", "http://ex.org/p": {"@id": "http://ex.org/b"}}', encoding="utf-8")
    assert list(read_triples(jsonld)) == [(f"<{ex}z>", f"<{ex}p>", f"<{ex}b>")]
    with pytest.raises(UserError):
        list(read_triples(tmp_path / "missing.ttl"))


def test_retime_by_factor_and_rate() -> None:
    stream = [StreamElement("<s>", "<p>", f'"{i}"', t) for i, t in enumerate([1000, 1000, 2000, 5000])]
    assert [e.t for e in retime(stream, 2)] == [1000, 1000, 1500, 3000]
    assert [e.t for e in retime(stream, 0.5)] == [1000, 1000, 3000, 9000]
    assert [e.t for e in retime(stream, 2, origin=0)] == [500, 500, 1000, 2500]
    # 4 elements over 4 s = 1 triple/s; 2 triples/s halves the span
    assert [e.t for e in retime(stream, rate=2.0)] == [1000, 1000, 1500, 3000]
    with pytest.raises(UserError) as info:
        list(retime(stream, 0))
    assert info.value.field == "factor"
    with pytest.raises(UserError):
        list(retime(stream, 2, rate=1.0))


def test_merge_streams_is_time_ordered_and_stable() -> None:
    a = [StreamElement("<a>", "<p>", "<o>", t) for t in (0, 10, 20)]
    b = [StreamElement("<b>", "<p>", "<o>", t) for t in (10, 15)]
    merged = list(merge_streams(a, b))
    assert [(e.subject, e.t) for e in merged] == [
        ("<a>", 0), ("<a>", 10), ("<b>", 10), ("<b>", 15), ("<a>", 20),
    ]


def test_rate_preview() -> None:
    assert rate_preview({"shape": "constant", "size": 10}, "1s", bins=5) == [
        (0, 100.0), (200, 100.0), (400, 100.0), (600, 100.0), (800, 100.0),
    ]
    # +1 every 5 stimuli of 100 ms: 5 triples in the first 0.5 s, 10 in the second
    assert rate_preview(flow(shape="step", initial=1, step=1, every=5), "1s", bins=2) == [(0, 10.0), (500, 20.0)]


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"shape": "zigzag"}, "flow.shape"),
        ({"size": 3}, "flow.shape"),
        ({"shape": "constant", "period": 0}, "flow.period"),
        ({"shape": "constant", "period": "-5ms"}, "flow.period"),
        ({"shape": "constant", "initial": 3}, "flow.initial"),
        ({"shape": "random", "min": 5, "max": 5}, "flow.max"),
        ({"shape": "random", "min": 0, "max": 1}, "flow.max"),
        ({"shape": "random"}, "flow.max"),
        ({"shape": "step", "every": 0}, "flow.every"),
        ({"shape": "step-factor", "factor": 0}, "flow.factor"),
        ({"shape": "custom-step", "jumps": "3-4"}, "flow.jumps"),
        ({"shape": "poisson", "mean": 0}, "flow.mean"),
        ({"shape": "burst", "burst_every": "1s", "burst_length": "2s"}, "flow.burst_length"),
    ],
)
def test_invalid_settings_name_the_setting(settings: dict, field: str) -> None:
    with pytest.raises(UserError) as info:
        FlowShape.parse(settings)
    assert info.value.field == field


def test_unknown_shape_lists_known_shapes() -> None:
    with pytest.raises(UserError) as info:
        FlowShape.from_settings("zigzag", {}, field="stream.flow")
    assert info.value.field == "stream.flow.shape"
    assert "constant" in info.value.message and "poisson" in info.value.message
