"""Benchmark: sg1 generation at BIG (10,000 stations, 1 s interval, 30 s ≈ 2.1 M triples).

Measures, and prints where the time goes:

- ``rng``: phases + all value draws (vectorised java.util.Random), no formatting;
- ``core``: the whole stream formatted as YABench text in memory (no I/O);
- ``export``: ``rsp_workbench.pipeline.generate.generate`` writing the file (local engine);
- ``cli``: ``rspwb generate`` as a subprocess, process start included (wall time);
- ``reference``: the plain sequential pure-Python algorithm (``sg1.reference_text``)
  writing the same file in a subprocess, process start included — the baseline that the
  CLI must stay within 2x of, and the oracle the files are compared with byte for byte;
- ``spark`` (only with ``--spark``): the same generation as a Spark job (cold JVM in a
  subprocess, then warm in-process).

Run ``python3 benchmarks/bench_generate.py [--small] [--spark] [--json]``.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BIG = {"stations": 10_000, "interval": "1s", "duration": "30s", "seed": 1430236906}
SMALL = {"stations": 500, "interval": "1s", "duration": "30s", "seed": 1430236906}

REFERENCE_SCRIPT = """
import sys
from rsp_workbench.generators.sg1 import reference_text
params = dict(stations=int(sys.argv[1]), interval=sys.argv[2], duration=sys.argv[3], seed=int(sys.argv[4]))
with open(sys.argv[5], "w", encoding="utf-8", newline="\\n") as out:
    for text in reference_text(params):
        out.write(text)
"""


def _timed(func: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = func()
    return time.perf_counter() - start, value


def _cli_args(params: dict[str, Any]) -> list[str]:
    args = ["--generator", "sg1"]
    for key, value in params.items():
        args += ["--param", f"{key}={value}"]
    return args


def run_benchmark(params: dict[str, Any] = BIG, spark: bool = False) -> dict[str, Any]:
    """All measurements for ``params`` as a dict (seconds and triples/s)."""
    from rsp_workbench.generators import sg1
    from rsp_workbench.generators.javarandom import next_int_block
    from rsp_workbench.pipeline.generate import generate

    results: dict[str, Any] = {"params": params}
    seconds, plan = _timed(lambda: sg1.prepare(params))
    triples = plan.observations * sg1.TRIPLES_PER_OBSERVATION
    results["triples"] = triples
    results["prepare_s"] = seconds

    bound = plan.params.max_temp - plan.params.min_temp
    seconds, _ = _timed(lambda: next_int_block(plan.value_state, bound, plan.observations))
    results["rng_values_s"] = seconds

    def core() -> int:
        size = 0
        for chunk in sg1.iter_chunks(sg1.prepare(params)):
            size += len(chunk.to_text("yabench"))
        return size

    seconds, size = _timed(core)
    results["core_s"] = seconds
    results["core_triples_per_s"] = triples / seconds
    results["bytes"] = size

    # where the core time goes: one more full pass, timing each stage per chunk
    stages = {"draws_and_schedule": 0.0, "format_text": 0.0, "encode": 0.0}
    state = plan.value_state
    for start in range(0, plan.observations, sg1.CHUNK_OBSERVATIONS):
        stop = min(start + sg1.CHUNK_OBSERVATIONS, plan.observations)
        t0 = time.perf_counter()
        chunk = sg1._chunk(plan, start, stop, state)
        t1 = time.perf_counter()
        text = chunk.to_text("yabench")
        t2 = time.perf_counter()
        text.encode("utf-8")
        t3 = time.perf_counter()
        state = chunk.end_state
        stages["draws_and_schedule"] += t1 - t0
        stages["format_text"] += t2 - t1
        stages["encode"] += t3 - t2
    results["breakdown_s"] = stages

    with tempfile.TemporaryDirectory(prefix="rspwb-bench-") as tmp:
        out = Path(tmp) / "fast.stream"
        seconds, result = _timed(lambda: generate("sg1", params, out, "yabench", engine="local"))
        results["export_s"] = seconds
        results["export_triples_per_s"] = triples / seconds

        cli_out = Path(tmp) / "cli.stream"
        command = [sys.executable, "-m", "rsp_workbench.cli.main", "generate", *_cli_args(params),
                   "--format", "yabench", "--quiet", "--out", str(cli_out)]
        seconds, _ = _timed(lambda: subprocess.run(command, check=True, capture_output=True, cwd=ROOT))
        results["cli_wall_s"] = seconds

        start_only = [sys.executable, "-c", "import rsp_workbench.cli.main, rsp_workbench.pipeline.generate, numpy"]
        seconds, _ = _timed(lambda: subprocess.run(start_only, check=True, capture_output=True, cwd=ROOT))
        results["cli_process_start_s"] = seconds

        ref_out = Path(tmp) / "reference.stream"
        ref_cmd = [sys.executable, "-c", REFERENCE_SCRIPT, str(params["stations"]), str(params["interval"]),
                   str(params["duration"]), str(params["seed"]), str(ref_out)]
        seconds, _ = _timed(lambda: subprocess.run(ref_cmd, check=True, capture_output=True, cwd=ROOT))
        results["reference_wall_s"] = seconds
        results["cli_over_reference"] = results["cli_wall_s"] / results["reference_wall_s"]
        results["identical"] = filecmp.cmp(out, ref_out, shallow=False) and filecmp.cmp(cli_out, ref_out, shallow=False)

        if spark:
            spark_out = Path(tmp) / "spark.stream"
            command = [sys.executable, "-m", "rsp_workbench.cli.main", "generate", *_cli_args(params),
                       "--format", "yabench", "--quiet", "--spark", "--out", str(spark_out)]
            seconds, _ = _timed(lambda: subprocess.run(command, check=True, capture_output=True, cwd=ROOT))
            results["spark_cli_cold_wall_s"] = seconds
            results["identical_spark"] = filecmp.cmp(spark_out, ref_out, shallow=False)
            from rsp_workbench.pipeline.spark import get_spark, stop_spark

            get_spark()
            seconds, _ = _timed(lambda: generate("sg1", params, spark_out, "yabench", engine="spark"))
            results["spark_warm_s"] = seconds
            stop_spark()
    return results


def report(results: dict[str, Any]) -> str:
    r = results
    lines = [
        f"sg1 {r['params']}: {r['triples']:,} triples, {r['bytes'] / 1e6:.0f} MB of YABench text",
        f"  prepare (phases, sort, count)   {r['prepare_s']:8.3f} s",
        f"  value draws (vectorised RNG)    {r['rng_values_s']:8.3f} s",
        f"  core (draws + format, no I/O)   {r['core_s']:8.3f} s   {r['core_triples_per_s'] / 1e6:6.2f} M triples/s",
        "    breakdown: " + ", ".join(f"{k} {v:.3f} s" for k, v in r["breakdown_s"].items()),
        f"  export to file (in-process)     {r['export_s']:8.3f} s   {r['export_triples_per_s'] / 1e6:6.2f} M triples/s",
        f"  rspwb generate (wall, subproc)  {r['cli_wall_s']:8.3f} s   (process start + imports {r['cli_process_start_s']:.3f} s)",
        f"  pure-Python reference (wall)    {r['reference_wall_s']:8.3f} s",
        f"  rspwb / reference               {r['cli_over_reference']:8.2f} x   (goal <= 2x)",
        f"  byte-identical to reference     {r['identical']}",
    ]
    if "spark_cli_cold_wall_s" in r:
        lines += [
            f"  rspwb generate --spark (cold)   {r['spark_cli_cold_wall_s']:8.3f} s   identical: {r['identical_spark']}",
            f"  Spark job, warm session         {r['spark_warm_s']:8.3f} s",
        ]
    return "\n".join(lines)


def bench_sg1_core(workdir: Path, options: Any) -> Callable[[], int]:
    """Harness form (benchmarks/run.py): BIG sg1 formatted in memory; returns triples."""
    from rsp_workbench.generators import sg1

    def timed() -> int:
        plan = sg1.prepare(BIG)
        for chunk in sg1.iter_chunks(plan):
            chunk.to_text("yabench")
        return plan.observations * sg1.TRIPLES_PER_OBSERVATION

    return timed


def bench_sg1_export(workdir: Path, options: Any) -> Callable[[], int]:
    """Harness form: BIG sg1 written to a YABench file in-process; returns triples."""
    from rsp_workbench.pipeline.generate import generate

    return lambda: generate("sg1", BIG, workdir / "sg1-big.stream", "yabench", engine="local").elements


def register(benchmark: Callable[[str], Callable[[Any], Any]]) -> None:
    """Register with benchmarks/run.py: ``bench_generate.register(benchmark)``."""
    benchmark("generate_sg1_core")(bench_sg1_core)
    benchmark("generate_sg1_export")(bench_sg1_export)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="500 stations instead of 10,000")
    parser.add_argument("--spark", action="store_true", help="also time the Spark job (cold and warm)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    results = run_benchmark(SMALL if args.small else BIG, spark=args.spark)
    print(json.dumps(results, indent=2) if args.json else report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
