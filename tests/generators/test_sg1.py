"""java.util.Random reproduction and the SG1 generator (byte-identity with the plain algorithm)."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsp_workbench.errors import UserError
from rsp_workbench.generators import sg1
from rsp_workbench.generators.javarandom import (
    INT_MAX,
    LONG_MAX,
    LONG_MIN,
    MASK48,
    JavaRandom,
    accepts,
    lcg_states,
    lcg_step,
    next_int_block,
    scramble_seed,
)
from rsp_workbench.pipeline.generate import TaskState, GenerationCancelled, generate
from rsp_workbench.streams.writers import format_nquads_line

M = 0x5DEECE66D  # java.util.Random multiplier
A = 0xB  # addend
TWO48 = 2**48

# ---------------------------------------------------------------- java.util.Random


def test_known_answers_from_the_jdk() -> None:
    # Values any JDK prints: new Random(s).nextInt() and the textbook nextInt(bound) cases.
    assert JavaRandom(0).next_int() == -1155484576
    assert JavaRandom(1).next_int() == -1155869325
    assert JavaRandom(42).next_int() == -1170105035
    assert JavaRandom(42).next_int(10) == 0
    assert JavaRandom(0).next_int(100) == 60


def test_hand_derivation_random0_next_int_100() -> None:
    # new Random(0): scrambled seed = (0 ^ M) & (2^48-1) = M = 25214903917
    x0 = 25214903917
    assert scramble_seed(0) == x0 == M
    # next(31): x1 = (x0 * M + 0xB) mod 2^48 = 25214903917^2 + 11 mod 2^48
    x1 = (25214903917 * 25214903917 + 11) % TWO48
    assert x1 == 205749139540596
    r = x1 >> 17  # top 31 of 48 bits
    assert r == 1569741360
    # 100 is no power of two: val = r % 100 = 60; accepted since r - 60 + 99 < 2^31
    assert r - 60 + 99 < 2**31
    assert JavaRandom(0).next_int(100) == 60


def test_hand_derivation_random42_next_int_10() -> None:
    x0 = (42 ^ M) % TWO48  # 42 = 0b101010 flips low bits of M
    assert x0 == 25214903879
    x1 = (x0 * M + A) % TWO48
    r = x1 >> 17
    # next(32) of the same state, as a signed int, is -1170105035 (JDK known answer)
    assert (x1 >> 16) - 2**32 == -1170105035
    assert r % 10 == 0 and r - 0 + 9 < 2**31
    assert JavaRandom(42).next_int(10) == 0


def test_hand_derivation_yabench_seed() -> None:
    seed = 1430236906
    x0 = (seed ^ M) % TWO48
    x1 = (x0 * M + A) % TWO48
    x2 = (x1 * M + A) % TWO48
    x3 = (x2 * M + A) % TWO48
    rnd = JavaRandom(seed)
    assert rnd.next_int(1000) == (x1 >> 17) % 1000  # phase of station 0 (no rejection for 1000
    assert rnd.next_int(1000) == (x2 >> 17) % 1000  # unless r >= 2^31 - 2^31 % 1000, ~3e-7)
    assert rnd.next_int(100) == (x3 >> 17) % 100
    assert rnd.state == x3


def test_negative_seeds_are_twos_complement() -> None:
    # -1 is all ones: scrambled = ~M & (2^48-1)
    assert scramble_seed(-1) == MASK48 ^ M
    # Long.MIN_VALUE has zero low 48 bits: same stream as seed 0 (and as 2^48)
    assert scramble_seed(LONG_MIN) == scramble_seed(0) == scramble_seed(2**48)
    a, b = JavaRandom(LONG_MIN), JavaRandom(0)
    assert [a.next_int(1000) for _ in range(50)] == [b.next_int(1000) for _ in range(50)]
    assert scramble_seed(LONG_MAX) == (MASK48 ^ M)  # low 48 bits of 2^63-1 are all ones
    with pytest.raises(ValueError):
        scramble_seed(LONG_MAX + 1)


def test_power_of_two_bound_takes_the_top_bits() -> None:
    for seed in (0, 1, -7, 1430236906, LONG_MIN):
        x1 = lcg_step(scramble_seed(seed))
        assert JavaRandom(seed).next_int(16) == x1 >> 44  # (16 * next(31)) >> 31 = top 4 bits
        assert JavaRandom(seed).next_int(1) == 0
        assert JavaRandom(seed).next_int(2**30) == x1 >> 18


def test_rejection_loop_consumes_a_state() -> None:
    bound = 2**30 + 1  # every r >= bound is rejected: r - (r - bound) + bound - 1 = 2^31 + 1 overflows
    x1 = lcg_step(scramble_seed(1))
    x2 = lcg_step(x1)
    assert x1 >> 17 == 1569548985 >= bound  # first draw rejected
    assert not accepts(x1 >> 17, bound)
    assert x2 >> 17 == 215764588 < bound  # second accepted
    rnd = JavaRandom(1)
    assert rnd.next_int(bound) == 215764588
    assert rnd.state == x2
    values, state = next_int_block(scramble_seed(1), bound, 1)
    assert values.tolist() == [215764588] and state == x2


def test_lcg_states_match_stepping() -> None:
    state = scramble_seed(99)
    expected = []
    x = state
    for _ in range(1000):
        x = lcg_step(x)
        expected.append(x)
    assert lcg_states(state, 1000).tolist() == expected


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(LONG_MIN, LONG_MAX),
    bound=st.one_of(
        st.integers(1, INT_MAX),
        st.sampled_from([1, 2, 64, 100, 1000, 2**30, 2**30 + 1, INT_MAX, 3 * 2**29]),
    ),
    count=st.integers(0, 300),
)
def test_vectorised_next_int_equals_sequential(seed: int, bound: int, count: int) -> None:
    rnd = JavaRandom(seed)
    expected = [rnd.next_int(bound) for _ in range(count)]
    values, state = next_int_block(scramble_seed(seed), bound, count)
    assert values.tolist() == expected
    assert state == rnd.state


def test_vectorised_across_blocks() -> None:
    rnd = JavaRandom(5)
    expected = [rnd.next_int(2**30 + 1) for _ in range(300_000)]
    values, state = next_int_block(scramble_seed(5), 2**30 + 1, 300_000)
    assert values.tolist() == expected and state == rnd.state


def test_java_format_1f() -> None:
    assert sg1.java_format_1f(76) == "76.0"
    assert sg1.java_format_1f(-3) == "-3.0"
    assert sg1.java_format_1f(0.15) == "0.2"  # Java rounds the shortest decimal half-up (C gives 0.1)
    assert sg1.java_format_1f(1.45) == "1.5"
    assert sg1.java_format_1f(0.04) == "0.0"
    assert sg1.java_format_1f(-0.0) == "-0.0"
    assert sg1.java_format_1f(1e20) == "100000000000000000000.0"


# ---------------------------------------------------------------- SG1

# docs/design/FORMATS.md "SG1", copied verbatim ({id} station, {t} time in ms, {v} value).
TEMPLATE = """\
<http://knoesis.wright.edu/ssw/Observation_AirTemperature_A{id}_{t}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://knoesis.wright.edu/ssw/ont/weather.owl#TemperatureObservation> "{t}" .
<http://knoesis.wright.edu/ssw/Observation_AirTemperature_A{id}_{t}> <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#observedProperty> <http://knoesis.wright.edu/ssw/ont/weather.owl#_AirTemperature> "{t}" .
<http://knoesis.wright.edu/ssw/Observation_AirTemperature_A{id}_{t}> <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#procedure> <http://knoesis.wright.edu/ssw/System_A{id}> "{t}" .
<http://knoesis.wright.edu/ssw/Observation_AirTemperature_A{id}_{t}> <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#result> <http://knoesis.wright.edu/ssw/MeasureData_AirTemperature_A{id}_{t}> "{t}" .
<http://knoesis.wright.edu/ssw/MeasureData_AirTemperature_A{id}_{t}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#MeasureData> "{t}" .
<http://knoesis.wright.edu/ssw/MeasureData_AirTemperature_A{id}_{t}> <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#floatValue> {v}^^<http://www.w3.org/2001/XMLSchema#float> "{t}" .
<http://knoesis.wright.edu/ssw/MeasureData_AirTemperature_A{id}_{t}> <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#uom> <http://knoesis.wright.edu/ssw/ont/weather.owl#fahrenheit> "{t}" .
"""


def fast_text(params: dict, fmt: str = "yabench", chunk: int = sg1.CHUNK_OBSERVATIONS) -> str:
    plan = sg1.prepare(params)
    return "".join(c.to_text(fmt) for c in sg1.iter_chunks(plan, chunk))


def reference(params: dict) -> str:
    return "".join(sg1.reference_text(params))


def test_one_station_by_hand() -> None:
    seed = 7
    rnd = JavaRandom(seed)
    phase = rnd.next_int(1000)
    v0, v1, v2 = (rnd.next_int(100) for _ in range(3))
    params = {"stations": 1, "interval": "1s", "duration": 2500, "seed": seed}
    # first observation at time 0 (YABench >= 1.1.1), then phase + k * interval while <= duration
    times = [0] + [t for t in (phase + 1000, phase + 2000) if t <= 2500]
    expected = "".join(TEMPLATE.format(id=0, t=t, v=f"{v}.0") for t, v in zip(times, (v0, v1, v2)))
    assert reference(params) == expected
    assert fast_text(params) == expected
    legacy = {**params, "legacy_v110": True}
    times = [t for t in (phase, phase + 1000, phase + 2000) if t <= 2500]
    expected_legacy = "".join(TEMPLATE.format(id=0, t=t, v=f"{v}.0") for t, v in zip(times, (v0, v1, v2)))
    assert fast_text(legacy) == reference(legacy) == expected_legacy


def test_first_lines_two_stations() -> None:
    seed = 1430236906
    rnd = JavaRandom(seed)
    p0, p1 = rnd.next_int(1000), rnd.next_int(1000)
    first_value = rnd.next_int(100)
    first_station = 0 if p0 <= p1 else 1
    text = fast_text({"stations": 2, "interval": "1s", "duration": "3s", "seed": seed})
    lines = text.splitlines(keepends=True)
    assert "".join(lines[:7]) == TEMPLATE.format(id=first_station, t=0, v=f"{first_value}.0")
    assert len(lines) % 7 == 0 and text == reference({"stations": 2, "interval": "1s", "duration": "3s", "seed": seed})


PARAMETER_SETS = [
    {"stations": 50, "interval": "1s", "duration": "30s", "seed": 1430236906},
    {"stations": 50, "interval": "1s", "duration": "30s", "seed": 1430236906, "legacy_v110": True},
    {"stations": 10, "interval": "5s", "duration": "1m", "seed": -1, "min_temp": -20, "max_temp": 45},
    {"stations": 25, "interval": 3, "duration": 40, "seed": LONG_MIN},  # many equal phases: stable sort
    {"stations": 7, "interval": 1000, "duration": 0, "seed": 3},  # only observation 0
    {"stations": 7, "interval": 1000, "duration": 0, "seed": 3, "legacy_v110": True},  # nothing
    {"stations": 4, "interval": 2**30 + 1, "duration": 2**33, "seed": 11, "max_temp": 2**30 + 1},  # rejections
    {"stations": 300, "interval": 100, "duration": 2000, "seed": LONG_MAX},
]


@pytest.mark.slow
@pytest.mark.parametrize("params", PARAMETER_SETS)
def test_fast_path_is_byte_identical(params: dict) -> None:
    expected = reference(params)
    assert fast_text(params) == expected
    assert fast_text(params, chunk=13) == expected
    plan = sg1.prepare(params)
    parallel = "".join(
        c.to_text("yabench") for key in sg1.partition_keys(plan, 37) for c in sg1.chunks_for_key(key, plan, 5)
    )
    assert parallel == expected
    assert plan.observations * 7 == expected.count("\n")


@settings(max_examples=40, deadline=None)
@given(
    stations=st.integers(1, 40),
    interval=st.integers(1, 5000),
    duration=st.integers(0, 20000),
    seed=st.integers(LONG_MIN, LONG_MAX),
    min_temp=st.integers(-100, 100),
    span=st.integers(1, 300),
    legacy=st.booleans(),
)
@pytest.mark.slow
def test_fast_path_matches_reference_random(
    stations: int, interval: int, duration: int, seed: int, min_temp: int, span: int, legacy: bool
) -> None:
    params = {
        "stations": stations, "interval": interval, "duration": duration, "seed": seed,
        "min_temp": min_temp, "max_temp": min_temp + span, "legacy_v110": legacy,
    }
    assert fast_text(params, chunk=17) == reference(params)


def test_nquads_and_parquet_match_reference_elements(tmp_path) -> None:
    params = {"stations": 5, "interval": "1s", "duration": "4s", "seed": 2}
    elements = [e for obs in sg1.reference_observations(params) for e in sg1.observation_elements(*obs)]
    assert fast_text(params, "nquads") == "".join(map(format_nquads_line, elements))
    result = generate("sg1", params, tmp_path / "s.parquet", "parquet")
    table = pq.read_table(tmp_path / "s.parquet")
    assert result.elements == table.num_rows == len(elements)
    rows = table.to_pylist()
    assert [(r["subject"], r["predicate"], r["object"], r["t"], r["graph"]) for r in rows] == [tuple(e) for e in elements]


def test_generate_writes_atomically(tmp_path) -> None:
    params = {"stations": 50, "interval": "1s", "duration": "30s", "seed": 1430236906}
    out = tmp_path / "s.stream"
    result = generate("sg1", params, out, "yabench")
    assert out.read_text(encoding="utf-8") == reference(params)
    assert (result.elements, result.items, result.engine) == (10500, 1500, "local")
    assert not list(tmp_path.glob("*.partial"))


def test_cancelled_generation_leaves_nothing(tmp_path) -> None:
    state = TaskState()
    state.on_progress = lambda progress: state.cancel()
    out = tmp_path / "s.stream"
    with pytest.raises(GenerationCancelled):
        generate("sg1", {"stations": 100, "interval": "1s", "duration": "60s"}, out, state=state, progress_interval=0)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"stations": 0, "duration": 1}, "param stations"),
        ({"interval": 0, "duration": 1}, "param interval"),
        ({"interval": "0s", "duration": 1}, "param interval"),
        ({"duration": -5}, "param duration"),
        ({"duration": 1, "min_temp": 5, "max_temp": 5}, "param max_temp"),
        ({"duration": 1, "min_temp": 5, "max_temp": 2}, "param max_temp"),
        ({"duration": 1, "seed": LONG_MAX + 1}, "param seed"),
        ({"duration": 1, "seed": "abc"}, "param seed"),
        ({"stations": 3}, "param duration"),
        ({"duration": 1, "colour": "red"}, "param colour"),
    ],
)
def test_invalid_parameters_name_the_parameter(params: dict, field: str) -> None:
    with pytest.raises(UserError) as info:
        sg1.prepare(params)
    assert info.value.field == field


def test_defaults() -> None:
    p = sg1.check_params({"duration": "30s"})
    assert (p.stations, p.interval, p.seed, p.min_temp, p.max_temp, p.legacy_v110) == (10, 300_000, 0, 0, 100, False)
    assert sg1.check_params({"duration": "30s", "seed": str(LONG_MIN)}).seed == LONG_MIN
