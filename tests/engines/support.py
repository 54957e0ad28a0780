"""Helpers shared by several test modules of this folder (constants, builders, comparisons)."""

from __future__ import annotations

import random

from rsp_workbench.generators.sg1 import observation_elements
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
