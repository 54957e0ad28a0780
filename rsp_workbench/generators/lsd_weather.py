"""``lsd-weather``: LinkedSensorData-style weather observations for the SRBench/CSRBench queries.

YABench's SG1 (yabench.txt Sect. 3.2) only emits air temperature; CSRBench's queries
(csrbench-correctness.txt Sect. 6: Q1–Q7) also filter relative humidity, average
temperature, join two observations of one sensor (Q6) and join against a fixed station
(Q7). This generator emits the LSD vocabulary for several observed properties per
station so that all of them run, with station metadata as static data.

Every observation of property P by station ``A{id}`` at time ``t`` is 7 triples, in SG1's
order (docs/design/FORMATS.md), plus 2 when ``sampling_time`` is on::

    ssw:Observation_{P}_A{id}_{t} rdf:type weather:{P}Observation ;
        om-owl:observedProperty weather:_{P} ; om-owl:procedure ssw:System_A{id} ;
        om-owl:result ssw:MeasureData_{P}_A{id}_{t} .
    ssw:MeasureData_{P}_A{id}_{t} rdf:type om-owl:MeasureData ;
        om-owl:floatValue "v"^^xsd:float ; om-owl:uom weather:{unit} .
    [ssw:Observation_… om-owl:samplingTime ssw:Instant_{P}_A{id}_{t} .
     ssw:Instant_{P}_A{id}_{t} time:inXSDDateTime "2004-08-13T…Z"^^xsd:dateTime .]

(One instant per observation, unlike LSD's shared instants, so that no stream element repeats.)

Parallel interface: :func:`partition_keys` gives one key per (station, property);
:func:`elements_for_key` yields that key's elements in time order. The merged stream is
ordered by ``(t, key rank, position within key)`` where the key rank is the key's index in
``partition_keys`` — the pipeline must merge with that tie-break (as :func:`iter_elements`
does) so that the output is identical however keys are grouped into tasks. Values are a
bounded random walk per (station, property) drawn from a Philox stream keyed by
``(seed, station, property)``; phases and lateness come from keyed hashes.

Out-of-order delivery (``out_of_order``, ``late_fraction``): the generated *stream* stays
time-ordered (every writer and reader requires it, and the oracle works on application
time). Lateness is a property of *delivery*: each station report (all its properties at
one ``t``) is late with probability ``late_fraction``, then its *arrival time* is ``t``
plus a delay uniform in ``1..out_of_order`` ms; otherwise arrival is ``t``. The element
keeps its application time ``t``. :func:`arrival_time` computes it from the element
alone and :func:`delivery_order` re-sorts a time-ordered stream into arrival order
(``(arrival, original position)``) — that is what a streamer sends. A file written in
delivery order is *not* time-ordered: stream writers refuse it and readers with
``on_disorder="warn"`` report the steps back, so keep the time-ordered file and derive
delivery order (or store ``arrival`` as an extra Parquet column).
"""

from __future__ import annotations

import heapq
import itertools
import operator
import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Iterator, Mapping, NamedTuple

from rsp_workbench.errors import UserError
from rsp_workbench.generators import GeneratorSpec, ParamSpec, check_volume
from rsp_workbench.generators._random import rng_for, unit_hash
from rsp_workbench.streams.model import XSD, StreamElement

SSW = "http://knoesis.wright.edu/ssw/"
OM_OWL = "http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#"
WEATHER = "http://knoesis.wright.edu/ssw/ont/weather.owl#"
WGS84 = "http://www.w3.org/2003/01/geo/wgs84_pos#"
TIME = "http://www.w3.org/2006/time#"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
RDFS_LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
XSD_FLOAT = XSD + "float"
XSD_DATETIME = XSD + "dateTime"
#: Application time 0 as a calendar time (hurricane Charley, the CSRBench data set).
EPOCH = datetime(2004, 8, 13, tzinfo=timezone.utc)


@dataclass(frozen=True)
class ObservedProperty:
    """One LSD observed property: vocabulary terms and its value model (bounded random walk)."""

    key: str
    local: str  # e.g. AirTemperature (IRI local names)
    observation_class: str
    uom: str
    low: float
    high: float
    step: float  # largest change between two consecutive observations
    decimals: int = 1
    circular: bool = False  # wraps around (wind direction) instead of reflecting
    clip_low: float | None = None  # values below are reported as this (precipitation: 0)

    @property
    def property_iri(self) -> str:
        return f"<{WEATHER}_{self.local}>"


PROPERTIES: dict[str, ObservedProperty] = {
    p.key: p
    for p in (
        ObservedProperty("temperature", "AirTemperature", "TemperatureObservation", "fahrenheit", 40.0, 100.0, 0.5),
        ObservedProperty("humidity", "RelativeHumidity", "RelativeHumidityObservation", "percent", 10.0, 100.0, 1.0),
        ObservedProperty("wind_speed", "WindSpeed", "WindSpeedObservation", "milesPerHour", 0.0, 60.0, 1.0),
        ObservedProperty(
            "wind_direction", "WindDirection", "WindDirectionObservation", "degrees", 0.0, 360.0, 10.0,
            circular=True,
        ),
        ObservedProperty("pressure", "Pressure", "PressureObservation", "inchesOfMercury", 28.5, 31.0, 0.02, 2),
        ObservedProperty(
            "precipitation", "Precipitation", "PrecipitationObservation", "inches", -1.0, 0.5, 0.05, 2,
            clip_low=0.0,
        ),
    )
}
DEFAULT_PROPERTIES = ("temperature", "humidity", "wind_speed", "wind_direction")

SPEC = GeneratorSpec(
    name="lsd-weather",
    doc="LinkedSensorData weather stations (SRBench/CSRBench vocabulary): temperature, humidity, "
    "wind speed/direction (pressure, precipitation optional) per station, station metadata as "
    "static data; runs CSRBench Q1–Q7.",
    params=(
        ParamSpec("stations", "int", "number of weather stations (System_A0 … System_A{n-1})", default=10, minimum=1),
        ParamSpec("interval", "duration", "time between two reports of one station (> 0)", default=1000),
        ParamSpec("duration", "duration", "stream length: reports at times t <= start + duration", required=True),
        ParamSpec("seed", "int", "seed of all random choices (values, phases, lateness, locations)", default=0),
        ParamSpec(
            "properties", "str",
            "comma list of observed properties or 'all'; known: " + ", ".join(PROPERTIES),
            default=",".join(DEFAULT_PROPERTIES),
        ),
        ParamSpec("start", "int", "application time (ms) of the stream start", default=0, minimum=0),
        ParamSpec(
            "phase", "choice", "random: each station's first report at start + U[0, interval); "
            "aligned: all stations report at start, start + interval, …",
            default="random", choices=("random", "aligned"),
        ),
        ParamSpec("min_temp", "float", "lower bound of the temperature walk (°F)", default=40.0),
        ParamSpec("max_temp", "float", "upper bound of the temperature walk (°F, > min_temp)", default=100.0),
        ParamSpec("sampling_time", "bool", "also emit om-owl:samplingTime with an xsd:dateTime (2 triples)", default=False),
        ParamSpec(
            "out_of_order", "duration",
            "largest delivery delay of a late report (ms); the stream stays time-ordered, see delivery_order",
            default=0,
        ),
        ParamSpec("late_fraction", "float", "fraction of station reports delivered late (0..1)", default=0.0, minimum=0),
    ),
)

ITEM_NAME = "observations"
KEYS_IN_TIME_ORDER = False  # keys overlap in time: merge by (t, key rank)
_BLOCK = 4096  # observations per random-draw block (fixed: draws must not depend on chunking)


@dataclass(frozen=True)
class LsdParams:
    """Validated parameters (times in ms)."""

    stations: int
    interval: int
    duration: int
    seed: int
    properties: tuple[str, ...]
    start: int
    phase: str
    min_temp: float
    max_temp: float
    sampling_time: bool
    out_of_order: int
    late_fraction: float

    @property
    def end(self) -> int:
        """Last admissible report time (inclusive, like SG1)."""
        return self.start + self.duration

    @property
    def triples_per_observation(self) -> int:
        return 9 if self.sampling_time else 7


class LsdKey(NamedTuple):
    """A partition key: one station's observations of one property."""

    station: int
    property: str


class Delivery(NamedTuple):
    """An element with the (system-side) time it is delivered; ``element.t`` is unchanged."""

    arrival: int
    element: StreamElement


def check_params(params: Mapping[str, Any] | LsdParams) -> LsdParams:
    """Validate raw or resolved parameters; errors name the parameter (``param interval``)."""
    if isinstance(params, LsdParams):
        return params
    raw = params.get("properties")
    if isinstance(raw, (list, tuple)):  # a YAML list is fine too
        params = {**params, "properties": ",".join(str(name) for name in raw)}
    v = SPEC.resolve(params)
    if v["interval"] <= 0:
        raise UserError(f"must be positive, got {v['interval']} ms", field="param interval")
    check_volume(v["stations"] * (v["duration"] // v["interval"] + 1), "reports (stations × duration / interval)",
                 "param duration")
    text = str(v["properties"]).strip()
    names = tuple(PROPERTIES) if text == "all" else tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise UserError(f"is empty; expected a comma list of {', '.join(PROPERTIES)} or 'all'", field="param properties")
    for name in names:
        if name not in PROPERTIES:
            raise UserError(
                f"unknown observed property {name!r}; expected one of {', '.join(PROPERTIES)}", field="param properties"
            )
    if len(set(names)) != len(names):
        raise UserError(f"lists a property twice: {text!r}", field="param properties")
    if v["max_temp"] <= v["min_temp"]:
        raise UserError(f"must be greater than min_temp ({v['min_temp']:g}), got {v['max_temp']:g}", field="param max_temp")
    if not 0.0 <= v["late_fraction"] <= 1.0:
        raise UserError(f"must be between 0 and 1, got {v['late_fraction']:g}", field="param late_fraction")
    return LsdParams(
        stations=v["stations"], interval=v["interval"], duration=v["duration"], seed=v["seed"], properties=names,
        start=v["start"], phase=v["phase"], min_temp=float(v["min_temp"]), max_temp=float(v["max_temp"]),
        sampling_time=bool(v["sampling_time"]), out_of_order=v["out_of_order"], late_fraction=float(v["late_fraction"]),
    )


def station_code(station: int) -> str:
    """``A{id}``: the station code used in IRIs (as SG1 does)."""
    return f"A{station}"


def system_iri(station: int) -> str:
    return f"<{SSW}System_{station_code(station)}>"


def station_phase(params: Mapping[str, Any] | LsdParams, station: int) -> int:
    """Time of the station's first report: ``start`` (aligned) or ``start + U[0, interval)``."""
    p = check_params(params)
    if p.phase == "aligned":
        return p.start
    return p.start + int(unit_hash(p.seed, "lsd-weather", "phase", station) * p.interval)


def observation_times(params: Mapping[str, Any] | LsdParams, station: int) -> range:
    """Report times of one station: phase, phase + interval, … up to ``start + duration``."""
    p = check_params(params)
    return range(station_phase(p, station), p.end + 1, p.interval)


def partition_keys(params: Mapping[str, Any] | LsdParams) -> list[LsdKey]:
    """All keys, station-major then property in parameter order; the index is the merge rank."""
    p = check_params(params)
    return [LsdKey(station, name) for station in range(p.stations) for name in p.properties]


def estimate_elements(params: Mapping[str, Any] | LsdParams) -> int:
    """Exact number of stream elements (for progress bars and partition sizing)."""
    p = check_params(params)
    reports = sum(len(observation_times(p, s)) for s in range(p.stations))
    return reports * len(p.properties) * p.triples_per_observation


def _bounds(p: LsdParams, prop: ObservedProperty) -> tuple[float, float]:
    if prop.key == "temperature":
        return p.min_temp, p.max_temp
    return prop.low, prop.high


def _values(p: LsdParams, key: LsdKey, count: int) -> Iterator[str]:
    """The key's formatted values: a bounded random walk (reflecting, or wrapping if circular)."""
    import numpy as np

    prop = PROPERTIES[key.property]
    low, high = _bounds(p, prop)
    span = high - low
    rng = rng_for(p.seed, "lsd-weather", "walk", key.station, key.property)
    position = span * (0.2 + 0.6 * float(rng.random()))  # start away from the bounds
    for block_start in range(0, count, _BLOCK):
        n = min(_BLOCK, count - block_start)
        steps = (rng.random(_BLOCK)[:n] * 2.0 - 1.0) * prop.step
        if block_start == 0:
            steps[0] = 0.0  # the first report is the initial value
        walk = np.cumsum(np.concatenate(([position], steps)))[1:]
        position = float(walk[-1])
        if prop.circular:
            folded = np.mod(walk, span)
        else:
            folded = np.mod(walk, 2.0 * span)
            folded = np.where(folded > span, 2.0 * span - folded, folded)
        values = low + folded
        if prop.clip_low is not None:
            values = np.maximum(values, prop.clip_low)
        for value in values.tolist():
            rounded = round(value, prop.decimals) + 0.0  # + 0.0 turns -0.0 into 0.0
            if prop.circular and rounded >= high:
                rounded -= span
            yield f"{rounded:.{prop.decimals}f}"


def _datetime_literal(t: int) -> str:
    moment = EPOCH + timedelta(milliseconds=t)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if t % 1000:
        text += f".{moment.microsecond // 1000:03d}"
    return f'"{text}Z"^^<{XSD_DATETIME}>'


def elements_for_key(key: LsdKey | tuple[int, str], params: Mapping[str, Any] | LsdParams) -> Iterator[StreamElement]:
    """One key's elements in time order (runs on a Spark executor; pure and deterministic)."""
    p = check_params(params)
    key = LsdKey(*key)
    prop = PROPERTIES[key.property]
    code = station_code(key.station)
    times = observation_times(p, key.station)
    obs_type = f"<{WEATHER}{prop.observation_class}>"
    observed = prop.property_iri
    procedure = system_iri(key.station)
    uom = f"<{WEATHER}{prop.uom}>"
    measure_type = f"<{OM_OWL}MeasureData>"
    p_observed, p_procedure = f"<{OM_OWL}observedProperty>", f"<{OM_OWL}procedure>"
    p_result, p_value, p_uom = f"<{OM_OWL}result>", f"<{OM_OWL}floatValue>", f"<{OM_OWL}uom>"
    p_sampling, p_instant = f"<{OM_OWL}samplingTime>", f"<{TIME}inXSDDateTime>"
    for t, value in zip(times, _values(p, key, len(times))):
        obs = f"<{SSW}Observation_{prop.local}_{code}_{t}>"
        md = f"<{SSW}MeasureData_{prop.local}_{code}_{t}>"
        yield StreamElement(obs, RDF_TYPE, obs_type, t)
        yield StreamElement(obs, p_observed, observed, t)
        yield StreamElement(obs, p_procedure, procedure, t)
        yield StreamElement(obs, p_result, md, t)
        yield StreamElement(md, RDF_TYPE, measure_type, t)
        yield StreamElement(md, p_value, f'"{value}"^^<{XSD_FLOAT}>', t)
        yield StreamElement(md, p_uom, uom, t)
        if p.sampling_time:
            instant = f"<{SSW}Instant_{prop.local}_{code}_{t}>"
            yield StreamElement(obs, p_sampling, instant, t)
            yield StreamElement(instant, p_instant, _datetime_literal(t), t)


def iter_elements(params: Mapping[str, Any] | LsdParams, seed: int | None = None) -> Iterator[StreamElement]:
    """The whole stream on one core: all keys merged by ``(t, key rank)`` (the reference order)."""
    p = check_params(params)
    if seed is not None:
        p = replace(p, seed=seed)
    return _merge_by_rounds(p, [elements_for_key(key, p) for key in partition_keys(p)])


def _merge_by_rounds(p: LsdParams, streams: list[Iterator[StreamElement]]) -> Iterator[StreamElement]:
    """Merge the keys' streams by ``(t, key rank)``, one report round at a time.

    Every station reports at ``phase + r·interval`` with ``start ≤ phase < start + interval``,
    so round r's elements all lie in ``[start + r·interval, start + (r+1)·interval)``: a stable
    sort of each round (ties keep key rank) gives exactly ``heapq.merge``'s order, an order of
    magnitude faster than a 10,000-way merge in Python.
    """
    per_report = p.triples_per_observation
    take = itertools.islice
    by_time = operator.attrgetter("t")
    live = streams
    while live:
        round_elements: list[StreamElement] = []
        still_live = []
        for stream in live:
            chunk = list(take(stream, per_report))
            if chunk:
                round_elements.extend(chunk)
                still_live.append(stream)
        live = still_live
        round_elements.sort(key=by_time)
        yield from round_elements


def static_triples(params: Mapping[str, Any] | LsdParams) -> Iterator[tuple[str, str, str]]:
    """Station metadata (SRBench's static part): system type, ID, label, location, parameters.

    Locations are drawn around Florida (hurricane Charley, the CSRBench data) from keyed hashes.
    """
    p = check_params(params)
    for station in range(p.stations):
        code = station_code(station)
        system = system_iri(station)
        point = f"<{SSW}point_{code}>"
        lat = 24.5 + 6.5 * unit_hash(p.seed, "lsd-weather", "lat", station)
        long = -87.5 + 7.5 * unit_hash(p.seed, "lsd-weather", "long", station)
        alt = 200.0 * unit_hash(p.seed, "lsd-weather", "alt", station)
        yield (system, RDF_TYPE, f"<{OM_OWL}System>")
        yield (system, f"<{OM_OWL}ID>", f'"{code}"')
        yield (system, RDFS_LABEL, f'"Weather station {code}"')
        yield (system, f"<{OM_OWL}processLocation>", point)
        for name in p.properties:
            yield (system, f"<{OM_OWL}parameter>", PROPERTIES[name].property_iri)
        yield (point, RDF_TYPE, f"<{WGS84}Point>")
        yield (point, f"<{WGS84}lat>", f'"{lat:.4f}"^^<{XSD_FLOAT}>')
        yield (point, f"<{WGS84}long>", f'"{long:.4f}"^^<{XSD_FLOAT}>')
        yield (point, f"<{WGS84}alt>", f'"{alt:.1f}"^^<{XSD_FLOAT}>')


# ---------------------------------------------------------------------------- delivery order

_REPORT_SUBJECT = re.compile(r"_A(\d+)_(\d+)>$")


def report_delay(params: Mapping[str, Any] | LsdParams, station: int, t: int) -> int:
    """Delivery delay (ms) of station ``station``'s report at ``t``: 0, or 1..out_of_order if late."""
    p = check_params(params)
    if p.out_of_order <= 0 or p.late_fraction <= 0.0:
        return 0
    if unit_hash(p.seed, "lsd-weather", "late", station, t) >= p.late_fraction:
        return 0
    return 1 + int(unit_hash(p.seed, "lsd-weather", "delay", station, t) * p.out_of_order)


def arrival_time(element: StreamElement, params: Mapping[str, Any] | LsdParams) -> int:
    """When ``element`` is delivered: ``t`` plus its report's delay (station and t read from the subject)."""
    match = _REPORT_SUBJECT.search(element.subject)
    if match is None:
        return element.t
    return element.t + report_delay(params, int(match.group(1)), int(match.group(2)))


def delivery_order(elements: Iterable[StreamElement], params: Mapping[str, Any] | LsdParams) -> Iterator[Delivery]:
    """Re-sort a time-ordered stream by ``(arrival, position)``: what a streamer sends.

    Needs a buffer of at most ``out_of_order`` ms of stream, since arrival - t <= out_of_order.
    """
    p = check_params(params)
    heap: list[tuple[int, int, StreamElement]] = []
    last_t: int | None = None
    for index, element in enumerate(elements):
        if last_t is not None and element.t < last_t:
            raise UserError(f"element {index + 1} goes back in time ({element.t} < {last_t})", field="stream")
        last_t = element.t
        while heap and heap[0][0] <= element.t:
            arrival, _, ready = heapq.heappop(heap)
            yield Delivery(arrival, ready)
        heapq.heappush(heap, (arrival_time(element, p), index, element))
    while heap:
        arrival, _, ready = heapq.heappop(heap)
        yield Delivery(arrival, ready)
