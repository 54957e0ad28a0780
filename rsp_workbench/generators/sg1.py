"""YABench's SG1 generator (weather stations reporting air temperature), byte-for-byte.

Algorithm (YABench ``SG1``; one ``java.util.Random(seed)`` for the whole run):

1. station ``i`` (``i = 0..stations-1``, drawn in that order) gets the phase
   ``nextInt(interval)``;
2. stations are sorted stably by phase into a queue, each with next time = its phase;
3. ``time = 0`` (YABench >= 1.1.1; with ``legacy_v110`` the smallest phase, as 1.1.0 did);
   while ``time <= duration``: pop the first station, draw ``value = nextInt(max - min) + min``,
   write its 7-triple observation at ``time``, advance the station by one interval, append
   it to the queue, and set ``time`` to the first station's next time.

Station ids: the station's creation index ``0..stations-1`` (its phase-draw position),
written ``A{id}`` (docs/design/FORMATS.md "SG1": ``{id}`` = station number; YABench numbers its
stations from a 0-based loop counter). Because phases are < interval, the queue is
round-robin over the sorted stations, so observation ``k`` is station ``order[k % n]`` at
``phase[k % n] + (k // n) * interval`` (observation 0 at time 0 unless legacy); the value
draws are consecutive ``nextInt`` calls, which :mod:`rsp_workbench.generators.javarandom`
computes vectorised. :func:`reference_observations` is the plain sequential form of the
same algorithm, kept as the oracle for tests and the benchmark baseline.

Generator plug-in functions (see ``rsp_workbench.pipeline.generate``): ``prepare``,
``estimate_elements``, ``iter_chunks``, ``partition_keys``, ``chunks_for_key``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from typing import Any, Iterator, Mapping

from rsp_workbench.errors import UserError
from rsp_workbench.generators import GeneratorSpec, ParamSpec, check_volume
from rsp_workbench.generators.javarandom import (
    INT_MAX,
    LONG_MAX,
    LONG_MIN,
    JavaRandom,
    next_int_block,
    scramble_seed,
)
from rsp_workbench.streams.model import StreamElement
from rsp_workbench.streams.writers import TIME_GRAPH_PREFIX

DEFAULT_SEED = 0

SPEC = GeneratorSpec(
    name="sg1",
    doc="YABench SG1: weather stations each reporting an air-temperature observation "
    "(7 triples) once per interval, with random phases; byte-identical to YABench.",
    params=(
        ParamSpec("stations", "int", "number of simulated weather stations", default=10, minimum=1),
        ParamSpec("interval", "duration", "time between two observations of one station", default=300_000),
        ParamSpec("duration", "duration", "length of the stream (last observation time <= duration)", required=True),
        ParamSpec("seed", "int", f"java.util.Random seed (a Java long; default {DEFAULT_SEED})", default=DEFAULT_SEED),
        ParamSpec("min_temp", "int", "smallest temperature value (inclusive)", default=0),
        ParamSpec("max_temp", "int", "largest temperature value (exclusive)", default=100),
        ParamSpec(
            "legacy_v110", "bool", "YABench 1.1.0: first observation at the smallest phase instead of 0",
            default=False,
        ),
    ),
)

ITEM_NAME = "observations"
TRIPLES_PER_OBSERVATION = 7
# Formatting sg1 in one process beats shipping text through Spark (benchmarks/bench_generate.py).
PREFERRED_ENGINE = "local"
KEYS_IN_TIME_ORDER = True

_W = "http://knoesis.wright.edu/ssw/"
_RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
_SO = _W + "ont/sensor-observation.owl#"
_XSD_FLOAT = "http://www.w3.org/2001/XMLSchema#float"
_OBS = f"<{_W}Observation_AirTemperature_A{{id}}_{{t}}>"
_MD = f"<{_W}MeasureData_AirTemperature_A{{id}}_{{t}}>"
_SYSTEM = f"<{_W}System_A{{id}}>"

# The observation's 7 (subject, predicate, object) with {id}, {t}, {v} placeholders;
# the value object is in N-Triples form (YABench writes it unquoted, see writers.yabench_object).
OBSERVATION_TRIPLES: tuple[tuple[str, str, str], ...] = (
    (_OBS, _RDF_TYPE, f"<{_W}ont/weather.owl#TemperatureObservation>"),
    (_OBS, f"<{_SO}observedProperty>", f"<{_W}ont/weather.owl#_AirTemperature>"),
    (_OBS, f"<{_SO}procedure>", _SYSTEM),
    (_OBS, f"<{_SO}result>", _MD),
    (_MD, _RDF_TYPE, f"<{_SO}MeasureData>"),
    (_MD, f"<{_SO}floatValue>", f'"{{v}}"^^<{_XSD_FLOAT}>'),
    (_MD, f"<{_SO}uom>", f"<{_W}ont/weather.owl#fahrenheit>"),
)


def _line_template(fmt: str) -> str:
    """The 7 lines of one observation in ``fmt`` with {id}, {t}, {v} placeholders."""
    lines = []
    for s, p, o in OBSERVATION_TRIPLES:
        if fmt == "yabench":
            o = o.replace(f'"{{v}}"^^<{_XSD_FLOAT}>', f"{{v}}^^<{_XSD_FLOAT}>")
            lines.append(f'{s} {p} {o} "{{t}}" .\n')
        elif fmt == "nquads":
            lines.append(f"{s} {p} {o} <{TIME_GRAPH_PREFIX}{{t}}> .\n")
        else:
            raise ValueError(f"no text template for format {fmt!r}")
    return "".join(lines)


def java_format_1f(value: float) -> str:
    """Java ``String.format(Locale.ENGLISH, "%.1f", value)``.

    Java rounds the shortest decimal representation of the double half-up (so 0.15 gives
    ``0.2`` where C's printf gives ``0.1``); Python's ``repr`` is that shortest form.
    """
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return format(Decimal(repr(float(value))).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP), "f")


def format_observation_yabench(station: int, t: int, value: int) -> str:
    """One observation as YABench writes it: the docs/design/FORMATS.md SG1 template, literally."""
    k = f"A{station}_{t}"
    v = f"{value}.0" if isinstance(value, int) else java_format_1f(value)  # same text for ints
    return (
        f'<{_W}Observation_AirTemperature_{k}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{_W}ont/weather.owl#TemperatureObservation> "{t}" .\n'
        f'<{_W}Observation_AirTemperature_{k}> <{_W}ont/sensor-observation.owl#observedProperty> <{_W}ont/weather.owl#_AirTemperature> "{t}" .\n'
        f'<{_W}Observation_AirTemperature_{k}> <{_W}ont/sensor-observation.owl#procedure> <{_W}System_A{station}> "{t}" .\n'
        f'<{_W}Observation_AirTemperature_{k}> <{_W}ont/sensor-observation.owl#result> <{_W}MeasureData_AirTemperature_{k}> "{t}" .\n'
        f'<{_W}MeasureData_AirTemperature_{k}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{_W}ont/sensor-observation.owl#MeasureData> "{t}" .\n'
        f'<{_W}MeasureData_AirTemperature_{k}> <{_W}ont/sensor-observation.owl#floatValue> {v}^^<http://www.w3.org/2001/XMLSchema#float> "{t}" .\n'
        f'<{_W}MeasureData_AirTemperature_{k}> <{_W}ont/sensor-observation.owl#uom> <{_W}ont/weather.owl#fahrenheit> "{t}" .\n'
    )


def observation_elements(station: int, t: int, value: int) -> list[StreamElement]:
    """The observation's 7 stream elements (object terms in N-Triples form)."""
    v = java_format_1f(value)
    fill = {"{id}": str(station), "{t}": str(t), "{v}": v}

    def term(text: str) -> str:
        for key, repl in fill.items():
            text = text.replace(key, repl)
        return text

    return [StreamElement(term(s), p, term(o), t) for s, p, o in OBSERVATION_TRIPLES]


@dataclass(frozen=True)
class Sg1Params:
    """Validated SG1 parameters (times in ms)."""

    stations: int
    interval: int
    duration: int
    seed: int
    min_temp: int
    max_temp: int
    legacy_v110: bool = False


def check_params(params: Mapping[str, Any]) -> Sg1Params:
    """Resolve (defaults, parsing) and validate; errors name the parameter."""
    values = SPEC.resolve(params)
    p = Sg1Params(
        stations=values["stations"],
        interval=values["interval"],
        duration=values["duration"],
        seed=values["seed"],
        min_temp=values["min_temp"],
        max_temp=values["max_temp"],
        legacy_v110=bool(values["legacy_v110"]),
    )
    if p.stations < 1:
        raise UserError(f"must be at least 1, got {p.stations}", field="param stations")
    if p.interval <= 0:
        raise UserError(f"must be positive, got {p.interval} ms", field="param interval")
    if p.interval > INT_MAX:
        raise UserError(f"must fit a Java int ({INT_MAX} ms), got {p.interval} ms", field="param interval")
    if p.duration < 0:
        raise UserError(f"must not be negative, got {p.duration} ms", field="param duration")
    check_volume(p.stations * (p.duration // p.interval + 1), "observations (stations × duration / interval)",
                 "param duration")
    if not LONG_MIN <= p.seed <= LONG_MAX:
        raise UserError(f"must be a Java long ({LONG_MIN}..{LONG_MAX}), got {p.seed}", field="param seed")
    if p.max_temp <= p.min_temp:
        raise UserError(
            f"must be greater than min_temp ({p.min_temp}), got {p.max_temp}", field="param max_temp"
        )
    if p.max_temp - p.min_temp > INT_MAX:
        raise UserError(f"max_temp - min_temp must fit a Java int, got {p.max_temp - p.min_temp}", field="param max_temp")
    if p.min_temp < -(1 << 31):
        raise UserError(f"must fit a Java int, got {p.min_temp}", field="param min_temp")
    if p.max_temp > INT_MAX + 1:
        raise UserError(f"must be at most {INT_MAX + 1} (values fit a Java int), got {p.max_temp}", field="param max_temp")
    return p


# --------------------------------------------------------------------------- reference


def reference_observations(params: Mapping[str, Any] | Sg1Params) -> Iterator[tuple[int, int, int]]:
    """``(station, t, value)`` per observation: the plain sequential algorithm (the oracle)."""
    p = params if isinstance(params, Sg1Params) else check_params(params)
    rnd = JavaRandom(p.seed)
    phases = [rnd.next_int(p.interval) for _ in range(p.stations)]
    queue = deque(sorted(([phases[i], i] for i in range(p.stations)), key=lambda entry: entry[0]))
    time = queue[0][0] if p.legacy_v110 else 0
    while time <= p.duration:
        station = queue.popleft()
        value = rnd.next_int(p.max_temp - p.min_temp) + p.min_temp
        yield station[1], time, value
        station[0] += p.interval
        queue.append(station)
        time = queue[0][0]


def reference_text(params: Mapping[str, Any] | Sg1Params) -> Iterator[str]:
    """The YABench stream text, one observation (7 lines) at a time, sequentially."""
    for station, t, value in reference_observations(params):
        yield format_observation_yabench(station, t, value)


# --------------------------------------------------------------------------- fast path


@dataclass(frozen=True, eq=False)
class Sg1Plan:
    """Everything after the phase draws: sorted stations, observation count, RNG state.

    ``order``/``phases`` are numpy arrays (station ids and phases in queue order);
    ``value_state`` is the Random state before the first value draw.
    """

    params: Sg1Params
    order: Any
    phases: Any
    observations: int
    value_state: int


@dataclass(frozen=True)
class Sg1Range:
    """Observations ``start..stop-1``; ``state`` is the Random state before draw ``start``."""

    start: int
    stop: int
    state: int


def prepare(params: Mapping[str, Any]) -> Sg1Plan:
    """Validate, draw the phases and count the observations (sequential driver-side work)."""
    import numpy as np

    p = check_params(params)
    phases, state = next_int_block(scramble_seed(p.seed), p.interval, p.stations)
    order = np.argsort(phases, kind="stable")
    sorted_phases = phases[order]
    reachable = sorted_phases[sorted_phases <= p.duration]
    count = int(((p.duration - reachable) // p.interval + 1).sum())
    if not p.legacy_v110:
        count = max(count, 1)  # observation 0 is at time 0 even if every phase > duration
    return Sg1Plan(p, order, sorted_phases, count, state)


def estimate_elements(plan: Sg1Plan) -> int:
    """Exact number of stream elements (triples) the plan writes."""
    return plan.observations * TRIPLES_PER_OBSERVATION


CHUNK_OBSERVATIONS = 512  # ~0.7 MB of text: stays in cache, no mmap churn (see bench_generate.py)


def iter_chunks(plan: Sg1Plan, chunk_observations: int = CHUNK_OBSERVATIONS) -> Iterator["Sg1Chunk"]:
    """The whole stream as chunks, drawing values sequentially from one Random state."""
    state = plan.value_state
    for start in range(0, plan.observations, chunk_observations):
        stop = min(start + chunk_observations, plan.observations)
        chunk = _chunk(plan, start, stop, state)
        state = chunk.end_state
        yield chunk


PARTITION_OBSERVATIONS = 28_000  # ~200k triples, ~40 MB of text per Spark task


def partition_keys(plan: Sg1Plan, observations: int = PARTITION_OBSERVATIONS) -> list[Sg1Range]:
    """Observation ranges of ``observations`` each, with the Random state at their start.

    Finding a range's state needs the draws before it (rejections shift positions), so
    this scans the value draws once on the driver (vectorised, cheap).
    """
    size = max(1, observations)
    bound = plan.params.max_temp - plan.params.min_temp
    keys = []
    state = plan.value_state
    for start in range(0, plan.observations, size):
        stop = min(start + size, plan.observations)
        keys.append(Sg1Range(start, stop, state))
        _, state = next_int_block(state, bound, stop - start)
    return keys


def chunks_for_key(key: Sg1Range, plan: Sg1Plan, chunk_observations: int = CHUNK_OBSERVATIONS) -> Iterator["Sg1Chunk"]:
    """One partition's observations as chunks (runs on a Spark executor)."""
    state = key.state
    for start in range(key.start, key.stop, chunk_observations):
        chunk = _chunk(plan, start, min(start + chunk_observations, key.stop), state)
        state = chunk.end_state
        yield chunk


def _chunk(plan: Sg1Plan, start: int, stop: int, state: int) -> "Sg1Chunk":
    import numpy as np

    p = plan.params
    n = p.stations
    k = np.arange(start, stop, dtype=np.int64)
    slot = k % n
    stations = plan.order[slot]
    times = plan.phases[slot].astype(np.int64) + (k // n) * p.interval
    if start == 0 and not p.legacy_v110 and stop > 0:
        times[0] = 0
    values, end_state = next_int_block(state, p.max_temp - p.min_temp, stop - start)
    values += p.min_temp
    return Sg1Chunk(n, stations, times, values, end_state)


@lru_cache(maxsize=4)
def _id_strings(stations: int) -> Any:
    import numpy as np

    return np.array([str(i) for i in range(stations)], dtype=object)


def _value_strings(values: Any) -> Any:
    """Java ``%.1f`` of each value, computed once per distinct value."""
    import numpy as np

    uniques, inverse = np.unique(values, return_inverse=True)
    table = np.array([java_format_1f(float(v)) for v in uniques.tolist()], dtype=object)
    return table[inverse]


@lru_cache(maxsize=4)
def _compiled_template(fmt: str) -> tuple[tuple[str, Any], ...]:
    """Split the observation template into columns: ``("id"|"v", None)`` or ``("t", parts)``.

    A ``t`` column is a run of constant text and ``{t}`` placeholders, rendered once per
    distinct time as ``tstr.join(parts)``; ids and values are looked up per observation.
    """
    import re

    tokens = re.split(r"(\{id\}|\{v\})", _line_template(fmt))
    columns: list[tuple[str, Any]] = []
    for token in tokens:
        if token == "{id}":
            columns.append(("id", None))
        elif token == "{v}":
            columns.append(("v", None))
        elif token:
            columns.append(("t", tuple(token.split("{t}"))))
    return tuple(columns)


@dataclass(frozen=True, eq=False)
class Sg1Chunk:
    """A run of consecutive observations (numpy arrays); renders itself in bulk.

    Implements the pipeline's ElementChunk protocol: ``elements``, ``items``,
    ``to_text(fmt)``, ``to_columns()``.
    """

    stations_total: int
    stations: Any
    times: Any
    values: Any
    end_state: int

    @property
    def items(self) -> int:
        return len(self.times)

    @property
    def elements(self) -> int:
        return len(self.times) * TRIPLES_PER_OBSERVATION

    def _time_strings(self) -> tuple[list[str], Any]:
        """Distinct time strings (times are non-decreasing) and each observation's index."""
        import numpy as np

        times = self.times
        if len(times) == 0:
            return [], np.empty(0, dtype=np.int64)
        change = np.empty(len(times), dtype=bool)
        change[0] = True
        np.not_equal(times[1:], times[:-1], out=change[1:])
        inverse = np.cumsum(change) - 1
        return list(map(str, times[change].tolist())), inverse

    def to_text(self, fmt: str) -> str:
        """The chunk in ``yabench`` or ``nquads`` text, built column-wise and joined once."""
        import numpy as np

        m = len(self.times)
        if m == 0:
            return ""
        columns = _compiled_template(fmt)
        t_strings, inverse = self._time_strings()
        ids = _id_strings(self.stations_total)[self.stations]
        values = _value_strings(self.values)
        table = np.empty((m, len(columns)), dtype=object)
        for j, (kind, parts) in enumerate(columns):
            if kind == "id":
                table[:, j] = ids
            elif kind == "v":
                table[:, j] = values
            elif len(parts) == 1:
                table[:, j] = parts[0]
            else:
                rendered = np.array([t.join(parts) for t in t_strings], dtype=object)
                table[:, j] = rendered[inverse]
        return "".join(table.ravel().tolist())

    def to_columns(self) -> tuple[list[str], list[str], list[str], list[str | None], list[int]]:
        """``(subject, predicate, object, graph, t)`` lists, one entry per triple (graph null)."""
        import numpy as np

        m = len(self.times)
        ids = _id_strings(self.stations_total)[self.stations].tolist()
        ts = self.times.tolist()
        values = _value_strings(self.values).tolist()
        obs = [f"<{_W}Observation_AirTemperature_A{i}_{t}>" for i, t in zip(ids, ts)]
        md = [f"<{_W}MeasureData_AirTemperature_A{i}_{t}>" for i, t in zip(ids, ts)]
        system = [f"<{_W}System_A{i}>" for i in ids]
        value_terms = [f'"{v}"^^<{_XSD_FLOAT}>' for v in values]
        subjects = np.empty((m, 7), dtype=object)
        objects = np.empty((m, 7), dtype=object)
        for j, (s, _, o) in enumerate(OBSERVATION_TRIPLES):
            subjects[:, j] = obs if s == _OBS else md
            if o == _SYSTEM:
                objects[:, j] = system
            elif o == _MD:
                objects[:, j] = md
            elif "{v}" in o:
                objects[:, j] = value_terms
            else:
                objects[:, j] = o
        predicates = [p for _, p, _ in OBSERVATION_TRIPLES] * m
        return (
            subjects.ravel().tolist(),
            predicates,
            objects.ravel().tolist(),
            [None] * (7 * m),
            np.repeat(self.times, 7).tolist(),
        )


def iter_observation_tuples(plan: Sg1Plan) -> Iterator[tuple[int, int, int]]:
    """``(station, t, value)`` from the fast path (for tests comparing with the reference)."""
    for chunk in iter_chunks(plan):
        yield from zip(chunk.stations.tolist(), chunk.times.tolist(), chunk.values.tolist())
