"""Benchmark: lsd-weather at YABench's BIG size (10,000 stations, 1 s, 30 s, temperature only
≈ 2.2 M triples): element generation without I/O, YABench text export on the local path,
and the Spark job (``--spark``: in-process session, warm after a first small job).

Run ``python3 benchmarks/bench_lsd.py [--small] [--spark] [--json]`` or through
``benchmarks/run.py generate_lsd``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BIG = {"stations": 10_000, "interval": "1s", "duration": "30s", "seed": 7, "properties": "temperature"}
SMALL = {"stations": 500, "interval": "1s", "duration": "30s", "seed": 7, "properties": "temperature"}


def _core(params: dict[str, Any]) -> int:
    from rsp_workbench.generators import lsd_weather

    return sum(1 for _ in lsd_weather.iter_elements(params))


def _export(params: dict[str, Any], out: Path, engine: str) -> int:
    from rsp_workbench.pipeline.generate import generate

    return generate("lsd-weather", params, out, "yabench", engine=engine).elements


def run_benchmark(params: dict[str, Any], spark: bool) -> dict[str, Any]:
    results: dict[str, Any] = {"params": params}
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "lsd.stream"
        for name, job in (("core", lambda: _core(params)), ("export_local", lambda: _export(params, out, "local"))):
            start = time.perf_counter()
            count = job()
            seconds = time.perf_counter() - start
            results[name] = {"triples": count, "seconds": round(seconds, 2), "triples_per_s": round(count / seconds)}
        if spark:
            from rsp_workbench.pipeline.spark import get_spark

            start = time.perf_counter()
            get_spark()
            results["spark_start_seconds"] = round(time.perf_counter() - start, 2)
            start = time.perf_counter()
            count = _export(params, out, "spark")
            seconds = time.perf_counter() - start
            results["export_spark"] = {"triples": count, "seconds": round(seconds, 2), "triples_per_s": round(count / seconds)}
    return results


def register(benchmark: Callable[[str], Callable[[Any], Any]]) -> None:
    """Plug into benchmarks/run.py (elements/s of the local export at BIG)."""

    def bench_lsd_export(workdir: Path, options: Any) -> Callable[[], int]:
        return lambda: _export(BIG, workdir / "lsd.stream", "local")

    benchmark("generate_lsd_export")(bench_lsd_export)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", action="store_true", help="500 stations instead of 10,000")
    parser.add_argument("--spark", action="store_true", help="also run the Spark job")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args(argv)
    results = run_benchmark(SMALL if options.small else BIG, options.spark)
    print(json.dumps(results, indent=2) if options.json else "\n".join(f"{k}: {v}" for k, v in results.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
