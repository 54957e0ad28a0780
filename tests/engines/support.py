"""Helpers shared by several test modules of this folder (constants, builders, comparisons)."""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from pathlib import Path

import pytest

from rsp_workbench.experiment.loader import loads_experiment
from rsp_workbench.experiment.model import Experiment
from rsp_workbench.generators.sg1 import observation_elements
from rsp_workbench.responses.readers import read_response_log
from rsp_workbench.streams.model import StreamElement


OBS_STREAM = "http://cwi.nl/SRBench/observations"


PREFIXES = """PREFIX om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>
PREFIX weather: <http://knoesis.wright.edu/ssw/ont/weather.owl#>
"""


def filter_query(size: str, slide: str, threshold: int = 50) -> str:
    """CSRBench Listing 2 (SPARQLstream syntax)."""
    return PREFIXES + f"""SELECT ?sensor ?tempvalue ?obs
FROM NAMED STREAM <{OBS_STREAM}> [NOW - {size} SLIDE {slide}]
WHERE {{ ?obs om-owl:observedProperty weather:_AirTemperature ; om-owl:procedure ?sensor ;
         om-owl:result [om-owl:floatValue ?tempvalue] .
  FILTER(?tempvalue > {threshold}) }}"""


def variation_query(size: str, slide: str) -> str:
    """CSRBench Listing 3 (C-SPARQL): a join of observations at different timestamps."""
    return PREFIXES + f"""REGISTER QUERY q AS SELECT ?sensor ?ob1 ?value1
FROM NAMED STREAM <{OBS_STREAM}> [RANGE {size} STEP {slide}]
WHERE {{ ?ob1 om-owl:procedure ?sensor ; om-owl:observedProperty weather:_AirTemperature ;
          om-owl:result [om-owl:floatValue ?value1] .
   ?ob2 om-owl:procedure ?sensor ; om-owl:observedProperty weather:_AirTemperature ;
          om-owl:result [om-owl:floatValue ?value2] .
   FILTER(?value1 - ?value2 > 10) }}"""


def observations(count: int, seed: int, *, spacing: int = 700, stations: int = 4) -> list[StreamElement]:
    rng = random.Random(seed)
    elements: list[StreamElement] = []
    for k in range(count):
        t = k * spacing + rng.randrange(0, spacing // 2)
        elements += observation_elements(rng.randrange(stations), t, rng.randrange(100))
    return elements


# --- the real engines' plug-ins (rspjs, rsprs, esper) ------------------------------------------

EX = "http://ex.org/"
# CSRBench Listing 1: the room where m1 and m2 are both detected within a 10 s tumbling window.
ROOMS = """REGISTER QUERY rooms AS
SELECT ?room
FROM STREAM <http://www.example.org/stream1> [RANGE 10s STEP 10s]
WHERE { <http://ex.org/m1> <http://ex.org/detectedAt> ?room .
        <http://ex.org/m2> <http://ex.org/detectedAt> ?room }
"""


def detections(*rows: tuple[str, str, int]) -> list[StreamElement]:
    return [StreamElement(f"<{EX}{who}>", f"<{EX}detectedAt>", f"<{EX}{room}>", t) for who, room, t in rows]


# CSRBench Fig. 1: m1, m2 in r1 at 1 s and 3 s; in r2 at 11 s and 13 s; p3 in r3 at 25 s.
ROOMS_STREAM = detections(("m1", "r1", 1000), ("m2", "r1", 3000), ("m1", "r2", 11000), ("m2", "r2", 13000),
                          ("p3", "r3", 25000))


def answers(folder: Path) -> list[tuple[int | None, str, Counter[object]]]:
    """A run folder's responses as (t, operation, bag of bindings)."""
    log = read_response_log(folder / "responses.jsonl")
    return [(r.application_time, r.operation, Counter(r.bindings)) for r in log.responses]


def require_built(engine: str, missing: str | None) -> None:
    """Skip a test of an optional engine plug-in that is not built (``missing`` says what is
    missing), but fail it where ``RSPWB_ENGINES_REQUIRED`` names the engine or ``all`` (set
    once the install step has built them, as on CI): there a skip would hide a broken install."""
    if missing is None:
        return
    required = os.environ.get("RSPWB_ENGINES_REQUIRED", "").replace(",", " ").split()
    if engine in required or "all" in required:
        pytest.fail(f"RSPWB_ENGINES_REQUIRED names {engine} but {missing}")
    pytest.skip(missing)


def run_and_report(experiment: Path, out: Path, capsys: pytest.CaptureFixture[str], size: str | None = None,
                   codes: tuple[int, ...] = (0, 1)) -> dict[str, dict[str, object]]:
    """``rspwb run EXPERIMENT [--size SIZE] --out OUT``, then ``rspwb report OUT --json``: its rows by
    engine id (both commands' exit codes among ``codes``: 1 when a run failed or is incorrect)."""
    from rsp_workbench.cli.main import main

    sizes = ["--size", size] if size else []
    assert main(["run", str(experiment), *sizes, "--out", str(out), "--yes", "--quiet"]) in codes
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) in codes
    return {str(row["engine"]): row for row in json.loads(capsys.readouterr().out)["runs"]}


def one_station_experiment(*engines: str) -> Experiment:
    """An experiment (loaded) around the engines a test checks, one YAML flow mapping each: a 1 s
    C-SPARQL window over one SG1 station."""
    return loads_experiment("""name: x
stream: {generator: sg1, params: {stations: 1, duration: 2s}}
queries: [{id: q, syntax: csparql, text: "REGISTER QUERY q AS SELECT ?s FROM STREAM <urn:s> [RANGE 1s STEP 1s] WHERE { ?s ?p ?o }"}]
engines:
""" + "".join(f"  - {engine}\n" for engine in engines))
