"""Helpers shared by several test modules of this folder (constants, builders, comparisons)."""

from __future__ import annotations

import textwrap
from pathlib import Path



PREFIX = "PREFIX om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>"


STREAM = "http://cwi.nl/SRBench/observations"


def experiment_file(tmp_path: Path, engines: str, queries: str | None = None, extra: str = "") -> Path:
    queries = queries or f"""
  - id: filter
    syntax: csparql
    text: |
      {PREFIX}
      REGISTER QUERY q AS SELECT ?obs ?v
      FROM STREAM <{STREAM}> [RANGE 2s STEP 2s]
      WHERE {{ ?obs om-owl:result [om-owl:floatValue ?v] . FILTER(?v > 30) }}
"""
    text = f"""name: tiny
seed: 7
stream:
  generator: sg1
  params: {{stations: 3, interval: 1s, duration: 6s}}
queries:{queries}
engines:
{textwrap.indent(textwrap.dedent(engines).strip(), "  ")}
kpis: {{sampling: 100ms}}
stand: {{mode: absolute-time}}
{extra}"""
    path = tmp_path / "experiment.yaml"
    path.write_text(text, encoding="utf-8")
    return path
