"""lsd-weather: vocabulary, determinism under any partitioning, CSRBench queries, delivery order."""

from __future__ import annotations

import heapq
from collections import Counter

import pytest
import rdflib

from rsp_workbench.errors import UserError
from rsp_workbench.generators import generator_spec
from rsp_workbench.generators import lsd_weather as lsd
from rsp_workbench.streams.model import StreamElement
from rsp_workbench.streams.terms import to_rdflib

SMALL = {"stations": 5, "interval": "1s", "duration": "6s", "seed": 7}
PREFIXES = """
PREFIX om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>
PREFIX weather: <http://knoesis.wright.edu/ssw/ont/weather.owl#>
"""


def merged_by_partitions(params: dict, groups: list[list[int]]) -> list[StreamElement]:
    """Simulate Spark: each group of key ranks is one task; tasks merge by (t, rank, seq)."""
    keys = lsd.partition_keys(params)
    task_outputs = []
    for group in groups:
        rows = [
            (e.t, rank, seq, e) for rank in group for seq, e in enumerate(lsd.elements_for_key(keys[rank], params))
        ]
        task_outputs.append(sorted(rows, key=lambda r: r[:3]))
    return [row[3] for row in heapq.merge(*task_outputs, key=lambda r: r[:3])]


def graph_of(elements) -> rdflib.Graph:
    graph = rdflib.Graph()
    for e in elements:
        graph.add((to_rdflib(e.subject), to_rdflib(e.predicate), to_rdflib(e.object)))
    return graph


def test_spec_is_registered_and_documents_every_parameter() -> None:
    spec = generator_spec("lsd-weather")
    names = {p.name for p in spec.params}
    assert {"stations", "interval", "duration", "seed", "properties", "start", "phase", "out_of_order", "late_fraction"} <= names
    assert all(p.doc for p in spec.params)


def test_output_is_identical_under_different_partitionings() -> None:
    reference = list(lsd.iter_elements(SMALL))
    n = len(lsd.partition_keys(SMALL))
    assert n == 20
    one_task = merged_by_partitions(SMALL, [list(range(n))])
    interleaved = merged_by_partitions(SMALL, [list(range(0, n, 3)), list(range(1, n, 3)), list(range(2, n, 3))])
    singletons = merged_by_partitions(SMALL, [[rank] for rank in reversed(range(n))])
    assert reference == one_task == interleaved == singletons
    assert len(reference) == lsd.estimate_elements(SMALL)


def test_stream_is_time_ordered_and_observations_stay_contiguous() -> None:
    elements = list(lsd.iter_elements(SMALL))
    assert [e.t for e in elements] == sorted(e.t for e in elements)
    for start in range(0, len(elements), 7):
        block = elements[start : start + 7]
        assert len({e.t for e in block}) == 1
        assert block[0].predicate == lsd.RDF_TYPE and block[5].predicate.endswith("#floatValue>")


def test_seed_changes_values_and_phases() -> None:
    a = list(lsd.iter_elements(SMALL))
    b = list(lsd.iter_elements({**SMALL, "seed": 8}))
    assert a != b
    assert a == list(lsd.iter_elements(SMALL))


def test_phases_random_within_interval_or_aligned() -> None:
    random_phases = [lsd.station_phase(SMALL, s) for s in range(5)]
    assert all(0 <= phase < 1000 for phase in random_phases) and len(set(random_phases)) > 1
    aligned = {**SMALL, "phase": "aligned", "start": 500}
    assert [lsd.station_phase(aligned, s) for s in range(5)] == [500] * 5
    assert list(lsd.observation_times(aligned, 0)) == [500 + 1000 * k for k in range(7)]  # t <= start + duration


def test_values_stay_in_range_and_walk_smoothly() -> None:
    params = {"stations": 2, "interval": "1s", "duration": "300s", "properties": "all", "min_temp": 50, "max_temp": 60}
    by_key: dict[tuple[int, str], list[float]] = {}
    for key in lsd.partition_keys(params):
        values = [float(e.object.split('"')[1]) for e in lsd.elements_for_key(key, params) if e.predicate.endswith("#floatValue>")]
        by_key[key] = values
    for (station, name), values in by_key.items():
        prop = lsd.PROPERTIES[name]
        low, high = (50.0, 60.0) if name == "temperature" else (max(prop.low, prop.clip_low or prop.low), prop.high)
        assert all(low - 1e-9 <= v <= high + 1e-9 for v in values), name
        if not prop.circular:
            steps = [abs(b - a) for a, b in zip(values, values[1:])]
            assert max(steps) <= prop.step + 10 ** -prop.decimals + 1e-9
    temperatures = by_key[(0, "temperature")]
    assert len(set(temperatures)) > 10  # it moves


def test_vocabulary_uom_and_static_metadata() -> None:
    params = {**SMALL, "properties": "temperature,humidity,pressure", "sampling_time": True}
    elements = list(lsd.iter_elements(params))
    types = Counter(e.object for e in elements if e.predicate == lsd.RDF_TYPE)
    assert types[f"<{lsd.WEATHER}TemperatureObservation>"] == types[f"<{lsd.WEATHER}PressureObservation>"] > 0
    assert f"<{lsd.OM_OWL}samplingTime>" in {e.predicate for e in elements}
    assert len(elements) == lsd.estimate_elements(params) == 9 * len(elements) // 9
    static = graph_of(StreamElement(s, p, o, 0) for s, p, o in lsd.static_triples(params))
    rows = list(static.query(PREFIXES + """
        PREFIX wgs84: <http://www.w3.org/2003/01/geo/wgs84_pos#>
        SELECT ?s ?lat WHERE { ?s a om-owl:System ; om-owl:processLocation ?p . ?p wgs84:lat ?lat }"""))
    assert len(rows) == 5 and all(24.5 <= float(lat) <= 31.0 for _, lat in rows)


def test_csrbench_queries_run_on_the_stream() -> None:
    graph = graph_of(lsd.iter_elements({**SMALL, "stations": 3, "duration": "4s", "phase": "aligned"}))
    q1 = graph.query(PREFIXES + """SELECT ?sensor ?v ?obs WHERE {
        ?obs om-owl:observedProperty weather:_AirTemperature ; om-owl:procedure ?sensor ;
             om-owl:result [ om-owl:floatValue ?v ] . FILTER(?v > 0) }""")
    assert len(q1) == 15
    q3 = graph.query(PREFIXES + """SELECT ?sensor ?v WHERE {
        ?obs om-owl:observedProperty weather:_RelativeHumidity ; om-owl:procedure ?sensor ;
             om-owl:result [ om-owl:floatValue ?v ] . FILTER(?v >= 0) }""")
    assert len(q3) == 15
    q4 = list(graph.query(PREFIXES + """SELECT (AVG(?v) AS ?avg) WHERE {
        ?obs om-owl:observedProperty weather:_AirTemperature ; om-owl:result [ om-owl:floatValue ?v ] }"""))
    assert 40.0 <= float(q4[0][0]) <= 100.0
    q6 = graph.query(PREFIXES + """SELECT ?sensor ?ob1 WHERE {
        ?ob1 om-owl:procedure ?sensor ; om-owl:observedProperty weather:_AirTemperature ;
             om-owl:result [ om-owl:floatValue ?v1 ] .
        ?ob2 om-owl:procedure ?sensor ; om-owl:observedProperty weather:_AirTemperature ;
             om-owl:result [ om-owl:floatValue ?v2 ] . FILTER(?v1 - ?v2 > 0) }""")
    assert len(q6) > 0
    q7 = graph.query(PREFIXES + """SELECT ?sensor WHERE {
        ?ob1 om-owl:procedure ?sensor ; om-owl:observedProperty weather:_AirTemperature ;
             om-owl:result [ om-owl:floatValue ?v1 ] .
        ?ob2 om-owl:procedure <http://knoesis.wright.edu/ssw/System_A0> ;
             om-owl:observedProperty weather:_AirTemperature ; om-owl:result [ om-owl:floatValue ?v2 ] .
        FILTER(?v1 > ?v2) }""")
    sensors = {str(row[0]) for row in q7}
    assert sensors and sensors <= {f"{lsd.SSW}System_A{i}" for i in range(3)}


def test_delivery_order_bounded_and_deterministic() -> None:
    params = {**SMALL, "out_of_order": "800ms", "late_fraction": 0.3}
    elements = list(lsd.iter_elements(params))
    deliveries = list(lsd.delivery_order(elements, params))
    assert sorted(d.element for d in deliveries) == sorted(elements)
    arrivals = [d.arrival for d in deliveries]
    assert arrivals == sorted(arrivals)
    delays = [d.arrival - d.element.t for d in deliveries]
    assert all(0 <= delay <= 800 for delay in delays)
    late_reports = {(d.element.subject.rsplit("_", 2)[-2], d.element.t) for d in deliveries if d.arrival > d.element.t}
    reports = {(e.subject.rsplit("_", 2)[-2], e.t) for e in elements}
    assert 0.1 < len(late_reports) / len(reports) < 0.5
    times = [d.element.t for d in deliveries]
    assert times != sorted(times)  # application times go backwards in delivery order
    assert deliveries == list(lsd.delivery_order(elements, params))
    # all elements of one report share the delay
    by_report: dict[tuple[str, int], set[int]] = {}
    for d in deliveries:
        by_report.setdefault((d.element.subject.rsplit("_", 2)[-2], d.element.t), set()).add(d.arrival)
    assert all(len(arrivals) == 1 for arrivals in by_report.values())


def test_no_lateness_keeps_the_order() -> None:
    elements = list(lsd.iter_elements(SMALL))
    assert [d.element for d in lsd.delivery_order(elements, SMALL)] == elements


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"interval": 0}, "param interval"),
        ({"interval": "-1s"}, "param interval"),
        ({"stations": 0}, "param stations"),
        ({"properties": "temperature,snow"}, "param properties"),
        ({"properties": ""}, "param properties"),
        ({"max_temp": 40}, "param max_temp"),
        ({"late_fraction": 1.5}, "param late_fraction"),
        ({"phase": "sideways"}, "param phase"),
        ({"colour": "red"}, "param colour"),
    ],
)
def test_invalid_parameters_name_the_parameter(override: dict, field: str) -> None:
    with pytest.raises(UserError) as info:
        lsd.check_params({**SMALL, **override})
    assert info.value.field == field


def test_properties_accept_a_list_and_all() -> None:
    assert lsd.check_params({**SMALL, "properties": ["wind_speed", "humidity"]}).properties == ("wind_speed", "humidity")
    assert lsd.check_params({**SMALL, "properties": "all"}).properties == tuple(lsd.PROPERTIES)


def test_duration_is_required() -> None:
    with pytest.raises(UserError) as info:
        lsd.check_params({"stations": 1})
    assert info.value.field == "param duration"


@pytest.mark.parametrize(
    "params",
    [
        {"stations": 37, "interval": "1s", "duration": "20s", "seed": 3},
        {"stations": 5, "interval": "700ms", "duration": "9s", "seed": 1, "properties": "all",
         "sampling_time": True, "start": 250},
        {"stations": 4, "interval": "1s", "duration": "5s", "seed": 2, "phase": "aligned"},
    ],
)
def test_round_merge_equals_the_reference_merge(params: dict) -> None:
    """iter_elements merges round by round; the order is exactly the (t, key rank) merge."""
    p = lsd.check_params(params)
    keys = lsd.partition_keys(p)
    reference = list(heapq.merge(*(lsd.elements_for_key(k, p) for k in keys), key=lambda e: e.t))
    assert list(lsd.iter_elements(params)) == reference
