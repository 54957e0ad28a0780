"""SG1, parallel: YABench's weather stations with one random sequence per station, generated station block by block.

YABench's SG1 (:mod:`rsp_workbench.generators.sg1`) draws every phase and every value from one
``java.util.Random``: a stream is one sequence, so it can only be written by one process. This
variant gives each station its own ``java.util.Random``, seeded from the experiment's seed and
the station number, so any block of stations can be generated anywhere (a Spark task) and the
stream is the same whatever the partitioning. It is **not byte-identical to YABench** (different
draws, and no observation forced to time 0); the vocabulary, the 7-triple observation and the
text layout are SG1's, so SG1's queries and the YABench oracle presets apply unchanged.

Algorithm, per station ``i`` (``i = 0..stations-1``):

1. ``random = java.util.Random(station_seed(seed, i))`` (SplitMix64 of the seed and the station,
   as a Java long: independent, reproducible streams per station);
2. ``phase = random.nextInt(interval)``;
3. observations at ``phase + k·interval`` for ``k = 0, 1, …`` while ``≤ duration``, with
   ``value = random.nextInt(max_temp - min_temp) + min_temp`` drawn in time order.

The stream is every station's observations ordered by time, ties by station number (each
observation's 7 triples together).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from rsp_workbench.generators import GeneratorSpec, ParamSpec
from rsp_workbench.generators import sg1
from rsp_workbench.generators.javarandom import LONG_MAX, JavaRandom
from rsp_workbench.streams.model import StreamElement

SPEC = GeneratorSpec(
    name="sg1-parallel",
    doc="SG1's weather stations with one java.util.Random per station (seeded from the seed and the "
    "station): generated in parallel on Spark, the same stream under any partitioning; not "
    "byte-identical to YABench's SG1 (use sg1 for that).",
    params=tuple(param for param in sg1.SPEC.params if param.name != "legacy_v110"),
)

ITEM_NAME = "observations"
KEYS_IN_TIME_ORDER = False  # station blocks overlap in time: merged by (t, block), within a block by (t, station)
PREFERRED_ENGINE = "spark"
#: Elements one key (a block of stations) should stay below: a task's text travels to the driver whole.
KEY_ELEMENTS = 200_000

_MASK64 = (1 << 64) - 1


def station_seed(seed: int, station: int) -> int:
    """The Java long seeding station ``station``'s ``java.util.Random``: SplitMix64's finaliser of
    ``seed + (station + 1)·golden-ratio``, so nearby stations get unrelated sequences."""
    z = (seed + (station + 1) * 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    z ^= z >> 31
    return z - (1 << 64) if z > LONG_MAX else z


@dataclass(frozen=True)
class Plan:
    """Validated parameters (times in ms); picklable, shipped to the executors."""

    stations: int
    interval: int
    duration: int
    seed: int
    min_temp: int
    max_temp: int


@dataclass(frozen=True)
class StationBlock:
    """A key: the stations ``start ≤ i < stop``."""

    start: int
    stop: int


def check_params(params: Mapping[str, Any]) -> Plan:
    """Validate with SG1's rules (errors name the parameter); refuses SG1's ``legacy_v110``."""
    values = SPEC.resolve(params)
    checked = sg1.check_params(values)
    return Plan(checked.stations, checked.interval, checked.duration, checked.seed, checked.min_temp, checked.max_temp)


prepare = check_params


def observations_per_station(plan: Plan) -> int:
    """At most this many observations per station (exactly this many when its phase is 0)."""
    return plan.duration // plan.interval + 1


def estimate_elements(plan: Plan) -> int:
    return plan.stations * observations_per_station(plan) * sg1.TRIPLES_PER_OBSERVATION


def partition_keys(plan: Plan) -> list[StationBlock]:
    per_station = observations_per_station(plan) * sg1.TRIPLES_PER_OBSERVATION
    size = max(1, KEY_ELEMENTS // per_station)
    return [StationBlock(start, min(start + size, plan.stations)) for start in range(0, plan.stations, size)]


def station_observations(plan: Plan, station: int) -> Iterator[tuple[int, int, int]]:
    """``(t, station, value)`` of one station, in time order (the algorithm's steps 1–3)."""
    random = JavaRandom(station_seed(plan.seed, station))
    t = random.next_int(plan.interval)
    spread = plan.max_temp - plan.min_temp
    while t <= plan.duration:
        yield t, station, random.next_int(spread) + plan.min_temp
        t += plan.interval


def elements_for_key(key: StationBlock, plan: Plan) -> Iterator[StreamElement]:
    """The block's observations ordered by (t, station), 7 elements each."""
    merged = heapq.merge(*(station_observations(plan, station) for station in range(key.start, key.stop)))
    for t, station, value in merged:
        yield from sg1.observation_elements(station, t, value)
