"""YABench Experiment 1 as the real-engine benchmarks feed it (bench_rsprs, bench_esper,
bench_spark_streaming): SG1's reference observations (seed 1430236906, one per station per second)
grouped into the stand's stimuli, and CSRBench Q1 with α = β = 5 s and the 50.0 threshold."""

from __future__ import annotations

from pathlib import Path

from rsp_workbench.core.time import parse_duration
from rsp_workbench.engine import Stimulus, group_contemporaneous
from rsp_workbench.generators.sg1 import observation_elements, reference_observations
from rsp_workbench.streams.model import StreamElement

Q1 = Path(__file__).resolve().parents[1] / "sample_experiments" / "yabench" / "queries" / "q1.rq"


def exp1_stream(stations: int, duration: str) -> tuple[list[StreamElement], list[Stimulus]]:
    """The SG1 triples of ``stations`` stations over ``duration``, and the stimuli they make."""
    params = {"stations": stations, "interval": 1000, "duration": parse_duration(duration), "seed": 1430236906}
    elements = [e for station, t, value in reference_observations(params) for e in observation_elements(station, t, value)]
    return elements, group_contemporaneous(elements)


def exp1_query() -> str:
    """CSRBench Q1 (C-SPARQL) with YABench Exp. 1's window and threshold filled in."""
    return Q1.read_text().replace("${WSIZE}", "5s").replace("${WSLIDE}", "5s").replace("${TEMP}", "50.0")
