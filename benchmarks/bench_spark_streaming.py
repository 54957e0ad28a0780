"""What the Spark Structured Streaming adapter adds per stimulus to what Spark itself spends, and
whether YABench Exp. 1 completes; absolute time and peak RSS of the engine's process tree.

The SG1 stimuli of YABench Exp. 1 (CSRBench Q1: four triple patterns — three stream-stream joins
within Spark's window — and a FILTER, α = β = 5 s) run on the stand in absolute time (the next batch
sent when the engine is ready; ``run_engine``), with the adapter measuring itself
(``RSPWB_SPARK_PROFILE=1``): per stimulus, its wall time in ``push`` and the part of it spent in
Spark's calls (``addData`` and ``processAllAvailable``: the micro-batch, its no-data batch, the sink).
The adapter's own work is the difference (the JSON text of the stimulus, the rows turned into
responses); the stand's latency per stimulus less Spark's is what the adapter, the kit and the pipe add.
Spark's micro-batch cannot be run without the adapter's calls (the memory source and
``processAllAvailable`` are what an in-process driver would call too), so Spark's own time is taken
inside the adapter, around exactly those calls. Needs Java 17 (``./install.sh``).

Usage::

    python3 benchmarks/bench_spark_streaming.py                       # 50 stations (YABench medium), 30 s
    python3 benchmarks/bench_spark_streaming.py --stations 5 --duration 10s --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rsp_workbench.core.semantics import PRESETS  # noqa: E402
from rsp_workbench.engine import PROGRAM_ENGINES, EngineConfig  # noqa: E402
from rsp_workbench.stand.host import run_engine  # noqa: E402
from rsp_workbench.stand.options import StandOptions  # noqa: E402
from benchmarks.yabench_exp1 import exp1_query, exp1_stream  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stations", type=int, default=50)
    parser.add_argument("--duration", default="30s")
    parser.add_argument("--output", choices=("append", "update"), default="append")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    parameters = {"output": args.output}
    elements, stimuli = exp1_stream(args.stations, args.duration)
    q1 = exp1_query()
    print(f"stream: {len(elements)} triples in {len(stimuli)} stimuli (SG1, {args.stations} stations, {args.duration}); "
          f"output {args.output}", flush=True)
    config = EngineConfig("spark-streaming", PRESETS[PROGRAM_ENGINES["spark-streaming"].preset_for(parameters)],
                          parameters=parameters, name="spark", dialect="rspql")
    with tempfile.TemporaryDirectory() as tmp:
        run_folder = Path(tmp) / "run"
        started = time.perf_counter()
        result = run_engine(config, q1, stimuli, run_folder, syntax="csparql",
                            options=StandOptions(mode="absolute-time", sampling_ms=500, start_timeout_s=900,
                                                 stimulus_timeout_s=None))  # a loaded machine
        wall_s = time.perf_counter() - started
        if not result.ok:
            print(f"failed: {result.error}", file=sys.stderr)
            return 1
        profile = next(json.loads(line)["profile"] for line in (run_folder / "stderr.log").read_text().splitlines()
                       if line.startswith('{"profile"'))
        trace = [json.loads(line) for line in (run_folder / "trace.jsonl").read_text().splitlines()]
        responses = sum(1 for line in (run_folder / "responses.jsonl").read_text().splitlines() if line.strip())
    count = max(1, profile["stimuli"])
    spark_ms = profile["spark_ns"] / 1e6 / count
    adapter_us = (profile["handling_ns"] - profile["spark_ns"]) / 1e3 / count
    stand_ms = sum(record["latency_ms"] for record in trace) / len(trace)
    run_s = (trace[-1]["done"] - trace[0]["sent"]) / 1000.0 if trace[-1].get("done") and trace[0].get("sent") else None
    print(f"Spark itself (addData + processAllAvailable): {spark_ms:.1f} ms/stimulus; the adapter's own work: "
          f"{adapter_us:.1f} µs/stimulus; on the stand: mean latency {stand_ms:.1f} ms/stimulus "
          f"(+{(stand_ms - spark_ms) * 1000:.0f} µs over Spark's), p95 {result.latency_ms.get('p95')} ms")
    print(f"completed: {len(stimuli)} stimuli in {run_s if run_s is not None else float('nan'):.1f} s of feeding "
          f"({wall_s:.1f} s with the JVM's start), {responses} responses, throughput {result.throughput_triples_per_s} "
          f"triples/s; peak RSS of the engine's process tree {result.peak_rss_mb} MiB", flush=True)
    row = {"stimuli": len(stimuli), "triples": len(elements), "output": args.output, "wall_s": wall_s, "feeding_s": run_s,
           "spark_ms_per_stimulus": spark_ms, "adapter_us_per_stimulus": adapter_us, "stand_latency_ms": stand_ms,
           "latency_ms": result.latency_ms, "peak_rss_mb": result.peak_rss_mb, "responses": responses,
           "triples_per_s": result.throughput_triples_per_s}
    if args.json:
        args.json.write_text(json.dumps(row, indent=2))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    os.environ["RSPWB_SPARK_PROFILE"] = "1"
    raise SystemExit(main())
