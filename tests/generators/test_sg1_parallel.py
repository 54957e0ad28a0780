"""sg1-parallel: SG1's stations, one java.util.Random per station; the same stream under any partitioning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rsp_workbench.errors import UserError
from rsp_workbench.generators import generator_spec
from rsp_workbench.generators import sg1_parallel as gen
from rsp_workbench.generators.javarandom import JavaRandom
from rsp_workbench.pipeline.generate import generate

PARAMS = {"stations": 5, "interval": "1s", "duration": "4500ms", "seed": 42}


def plan(**overrides: Any) -> gen.Plan:
    return gen.check_params({**PARAMS, **overrides})


def stream(p: gen.Plan) -> list[Any]:
    """The pipeline's rule for keys that overlap in time: by t, ties by key position, then position in the key."""
    keyed = [((e.t, rank, i), e) for rank, key in enumerate(gen.partition_keys(p))
             for i, e in enumerate(gen.elements_for_key(key, p))]
    return [e for _, e in sorted(keyed, key=lambda item: item[0])]


def test_station_seed_is_splitmix64_as_a_java_long() -> None:
    # SplitMix64 (Steele, Lea, Flood 2014) of seed 0 + 1·0x9E3779B97F4A7C15: its first output, 0xE220A8397B1DCDAF
    assert gen.station_seed(0, 0) == 0xE220A8397B1DCDAF - (1 << 64)
    assert gen.station_seed(42, 3) == gen.station_seed(42, 3) != gen.station_seed(42, 4)
    assert all(-(1 << 63) <= gen.station_seed(s, i) < (1 << 63) for s in (0, -1, 2**62) for i in range(5))


def test_a_station_observes_at_its_phase_and_every_interval_with_its_own_draws() -> None:
    p = plan()
    random = JavaRandom(gen.station_seed(42, 2))
    phase = random.next_int(1000)
    times = [phase + k * 1000 for k in range(5) if phase + k * 1000 <= 4500]
    values = [random.next_int(100) for _ in times]
    assert list(gen.station_observations(p, 2)) == [(t, 2, v) for t, v in zip(times, values)]


def test_the_stream_is_time_ordered_ties_by_station_seven_triples_each() -> None:
    p = plan()
    elements = stream(p)
    observations = [(elements[i].t, elements[i].subject) for i in range(0, len(elements), 7)]
    assert [e.t for e in elements] == sorted(e.t for e in elements)
    assert len(elements) % 7 == 0 and len(elements) <= gen.estimate_elements(p)
    stations = [int(s.rsplit("_A", 1)[1].split("_")[0]) for _, s in observations]
    assert sorted(zip((t for t, _ in observations), stations)) == list(zip((t for t, _ in observations), stations))
    assert set(stations) == set(range(5))


def test_a_station_stream_does_not_depend_on_the_other_stations() -> None:
    assert list(gen.station_observations(plan(stations=2), 1)) == list(gen.station_observations(plan(stations=50), 1))


def test_the_same_stream_under_any_partitioning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = tmp_path / "whole.stream"
    generate("sg1-parallel", PARAMS, whole, engine="local")
    monkeypatch.setattr(gen, "KEY_ELEMENTS", 1)  # one station per key
    assert len(gen.partition_keys(plan())) == 5
    split = tmp_path / "split.stream"
    generate("sg1-parallel", PARAMS, split, engine="local")
    assert split.read_bytes() == whole.read_bytes() and whole.stat().st_size > 0


@pytest.mark.spark
def test_spark_writes_the_same_bytes(tmp_path: Path, spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    local = tmp_path / "local.stream"
    generate("sg1-parallel", PARAMS, local, engine="local")
    monkeypatch.setattr(gen, "KEY_ELEMENTS", 50)  # several keys, several tasks
    on_spark = tmp_path / "spark.stream"
    generate("sg1-parallel", PARAMS, on_spark, engine="spark")
    assert on_spark.read_bytes() == local.read_bytes()


def test_parameters_are_sg1s_without_the_legacy_switch() -> None:
    names = {param.name for param in generator_spec("sg1-parallel").params}
    assert names == {param.name for param in generator_spec("sg1").params} - {"legacy_v110"}
    with pytest.raises(UserError) as caught:
        gen.check_params({**PARAMS, "legacy_v110": True})
    assert caught.value.field == "param legacy_v110"
    with pytest.raises(UserError) as caught:
        gen.check_params({**PARAMS, "max_temp": 0, "min_temp": 5})
    assert caught.value.field == "param max_temp"
