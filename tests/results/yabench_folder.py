"""A YABench-layout test folder built by hand (YABench runner layout, yabench.txt Sect. 3.1),
incomplete the way published folders are: a missing repetition and a missing ``P_<test>_agg``."""

from __future__ import annotations

import json
from pathlib import Path

ENGINE_QUERY = """\
REGISTER QUERY test AS
PREFIX om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>
PREFIX weather: <http://knoesis.wright.edu/ssw/ont/weather.owl#>
SELECT ?sensor ?obs ?value
FROM STREAM <http://ex.org/streams/test> [RANGE ${WSIZE} STEP ${WSLIDE}]
WHERE {
  ?obs om-owl:observedProperty weather:_AirTemperature ;
       om-owl:procedure ?sensor ;
       om-owl:result [om-owl:floatValue ?value] .
  FILTER(?value > ${TEMP})
}
"""

ORACLE_QUERY = """\
PREFIX om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>
PREFIX weather: <http://knoesis.wright.edu/ssw/ont/weather.owl#>
SELECT ?sensor ?obs ?value
WHERE {
  ?obs om-owl:observedProperty weather:_AirTemperature ;
       om-owl:procedure ?sensor ;
       om-owl:result [om-owl:floatValue ?value] .
  FILTER(?value > ${TEMP})
}
"""

# Per repetition of test "small": three windows of ORACLE_ lines
# precision,recall,actual,expected,triples,start,end,delay (hand-chosen means).
ORACLE_SMALL = {
    1: "1.0,1.0,10,10,175,0,5000,73\n0.5,1.0,12,6,175,5000,10000,97\n1.0,0.5,4,8,175,10000,15000,134\n",
    2: "1.0,1.0,10,10,175,0,5000,80\n1.0,1.0,6,6,175,5000,10000,90\n1.0,1.0,8,8,175,10000,15000,101\n",
    # repetition 3 is missing (config says runs: 3)
}
P_HEADER = "time,rss_mem,cpu_percent,mem_percent,threads\n"


def build_test_folder(folder: Path, *, engine: str = "CQELS", enginename: str = "cqels",
                      policy: str = "oncontentchange", agg: bool = False) -> Path:
    """One engine's test folder: test "small" declared with 3 runs, repetitions 1 and 2 present,
    BOXPLOTS over those 2, P_small1 and P_small2, no P_small_agg (unless ``agg``)."""
    folder.mkdir(parents=True)
    config = {
        "generator": "SG1", "enginename": enginename, "seed": "1430236906",
        "vars": {"TEMP": "50.0", "WSIZE": "5s", "WSLIDE": "5s", "WPOLICY": policy},
        "graceful": "false", "interval": "1s", "duration": "15s",
        "tests": [{"name": "small", "stations": "3", "runs": 3}],
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    (folder / "engine.query").write_text(ENGINE_QUERY)
    (folder / "oracle.query").write_text(ORACLE_QUERY)
    oracle = folder / "results" / "oracle"
    performance = folder / "results" / "performance"
    oracle.mkdir(parents=True)
    performance.mkdir(parents=True)
    for n, text in ORACLE_SMALL.items():
        (oracle / f"ORACLE_small{n}").write_text(text)
    (oracle / "BOXPLOTS_small").write_text(
        f"{engine}\n1.0,1.0;1.0,1.0;73.0,80.0\n0.5,1.0;1.0,1.0;97.0,90.0\n1.0,1.0;0.5,1.0;134.0,101.0\n")
    (performance / "P_small1").write_text(f"{engine}\n{P_HEADER}0.0,4.98,114.1,0.19,21\n0.5,79.16,216.6,0.76,23\n"
                                          "1.0,106.2,76.1,0.9,24\n")
    (performance / "P_small2").write_text(f"{engine}\n{P_HEADER}0.0,5.5,100.0,0.2,21\n0.5,90.0,150.0,0.8,23\n")
    if agg:
        (performance / "P_small_agg").write_text(f"{engine}\n{P_HEADER}0.0,5.2,107.0,0.2,21\n")
    return folder


def build_two_engines(root: Path) -> Path:
    """YABench-One's shape: ``root/{cqels,csparql}``; only csparql has ``P_small_agg``."""
    build_test_folder(root / "cqels")
    build_test_folder(root / "csparql", engine="CSPARQL", enginename="csparql", policy="onwindowclose", agg=True)
    return root


def build_unnumbered_folder(folder: Path) -> Path:
    """YABench-One's Experiment_4 shape: two tests run once each, ``ORACLE_gracious``,
    ``ORACLE_non-gracious`` and their ``P_`` files directly under ``results/``, no repetition
    number; the config declares 1 station while every window holds 175 triples (5 stations'
    worth: 5 stations × 5 observations × 7 triples)."""
    folder.mkdir(parents=True)
    config = {
        "generator": "SG1", "enginename": "cqels", "seed": "1430236906",
        "vars": {"TEMP": "50.0", "WSIZE": "5s", "WSLIDE": "5s", "WPOLICY": "oncontentchange"},
        "interval": "1s", "duration": "15s",
        "tests": [{"name": "gracious", "stations": "1", "graceful": "true"},
                  {"name": "non-gracious", "stations": "1", "graceful": "false"}],
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    (folder / "engine.query").write_text(ENGINE_QUERY)
    (folder / "oracle.query").write_text(ORACLE_QUERY)
    results = folder / "results"
    results.mkdir()
    (results / "ORACLE_gracious").write_text(
        "1.0,1.0,10,10,175,0,5000,73\n1.0,0.5,3,6,175,5000,10000,97\n1.0,1.0,8,8,175,10000,15000,134\n")
    (results / "ORACLE_non-gracious").write_text(
        "0.5,1.0,20,10,175,0,5000,73\n0.25,0.5,12,6,175,5000,10000,97\n")
    (results / "P_gracious").write_text(f"CQELS\n{P_HEADER}0.0,4.98,114.1,0.19,21\n0.5,79.16,216.6,0.76,23\n")
    (results / "P_non-gracious").write_text(f"CQELS\n{P_HEADER}0.0,5.5,100.0,0.2,21\n")
    return folder
