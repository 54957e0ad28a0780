"""Recall vs binding-cache size per eviction strategy on chain-join data (eviction-strategies.txt Fig. 1–3).

For uniform and bursty ``chain-join`` streams, runs the ``eviction`` engine in-process
with caches of 10, 100, 1,000 and 10,000 bindings per join partner and strategies fifo,
random (seed 0) and likelihood (probabilities estimated offline from the full unbounded
run, as the paper does), and prints recall against the unbounded join plus the time per
run. Usage::

    python3 benchmarks/bench_eviction.py                      # 20 s at 1,000 triples/s
    python3 benchmarks/bench_eviction.py --duration 5s --sizes 10,100,1000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rsp_workbench.engines.eviction import estimate_likelihoods, recall, run_join, unbounded_answer  # noqa: E402
from rsp_workbench.engine import group_contemporaneous  # noqa: E402
from rsp_workbench.generators.chain_join import iter_elements  # noqa: E402

STRATEGIES = ("fifo", "random", "likelihood")
DATASETS: dict[str, dict[str, Any]] = {
    "uniform": {},
    "bursty": {"burst_every": "5s", "burst_length": "500ms", "burst_factor": 10.0},
}


def run_benchmark(duration: str = "20s", rate: float = 1000.0, sizes: tuple[int, ...] = (10, 100, 1000, 10000),
                  seed: int = 1) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for dataset, extra in DATASETS.items():
        params = {"duration": duration, "rate": rate, "seed": seed, **extra}
        stimuli = group_contemporaneous(iter_elements(params))
        elements = sum(len(s) for s in stimuli)
        truth = unbounded_answer(stimuli)
        started = time.perf_counter()
        likelihoods = estimate_likelihoods(stimuli)
        estimate_s = time.perf_counter() - started
        for size in sizes:
            for strategy in STRATEGIES:
                started = time.perf_counter()
                responses = run_join(stimuli, strategy=strategy, cache_size=size, seed=0,
                                     likelihoods=likelihoods if strategy == "likelihood" else None)
                seconds = time.perf_counter() - started
                rows.append({"data": dataset, "elements": elements, "results": len(truth), "cache_size": size,
                             "strategy": strategy, "recall": round(recall(responses, truth), 4),
                             "seconds": round(seconds, 3), "estimate_s": round(estimate_s, 3)})
    return rows


def print_table(rows: list[dict[str, Any]]) -> None:
    print(f"{'data':<8} {'elements':>8} {'results':>8} {'cache':>6} " + " ".join(f"{s:>11}" for s in STRATEGIES)
          + "   (recall; time per run in s)")
    keyed = {(r["data"], r["cache_size"], r["strategy"]): r for r in rows}
    for data in dict.fromkeys(r["data"] for r in rows):
        for size in dict.fromkeys(r["cache_size"] for r in rows if r["data"] == data):
            first = keyed[(data, size, STRATEGIES[0])]
            cells = " ".join(f"{keyed[(data, size, s)]['recall']:>6.3f} {keyed[(data, size, s)]['seconds']:>4.1f}"
                             for s in STRATEGIES)
            print(f"{data:<8} {first['elements']:>8} {first['results']:>8} {size:>6} {cells}")


def register(benchmark: Callable[[str], Callable[[Any], Any]]) -> None:
    """Hook for benchmarks/run.py: ``eviction_recall`` (a small sweep; elements = triples joined)."""

    def prepare(workdir: Path, options: argparse.Namespace) -> Callable[[], int]:
        def timed() -> int:
            rows = run_benchmark(duration="5s", sizes=(10, 100, 1000))
            return sum(r["elements"] for r in rows)

        return timed

    benchmark("eviction_recall")(prepare)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", default="20s")
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--sizes", default="10,100,1000,10000")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", metavar="FILE")
    options = parser.parse_args(argv)
    rows = run_benchmark(options.duration, options.rate, tuple(int(x) for x in options.sizes.split(",")), options.seed)
    print_table(rows)
    if options.json:
        Path(options.json).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
