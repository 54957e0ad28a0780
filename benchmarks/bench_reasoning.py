"""Naive vs incremental ρDF baselines on a small Heaven grid (Heaven Sect. 7, Tables 1–2).

Grid: stimulus size {1, 10, 100} triples × window ω {1 s, 10 s}, slide β = 100 ms, one
stimulus every 100 ms of application time (LUBM through ``rsp_workbench.generators.lubm`` with
a constant flow), C-SPARQL semantics (window close ∧ non-empty, Rstream) and Heaven's
query: the entire materialisation of the window, ``SELECT ?s ?p ?o WHERE { ?s ?p ?o }``.
Absolute time: each stimulus is pushed when the previous one is done, so the latency of
a stimulus is pure processing time (window slide + reasoning + query + R2S).

Every (engine, cell) runs in a fresh Python process (in-process engine calls, no protocol)
so that peak memory (``ru_maxrss``) is that run's alone; memory is reported as peak RSS
minus the RSS after registration (the engine's growth). Latency is the mean over the
stimuli after the first window filled (steady state). The table marks per cell which
approach dominates by more than 5 % (Heaven's rule): I incremental, N naive, ≃ even;
memory differences under 0.5 MB count as even (RSS noise at these small sizes).
``--stand`` instead runs each cell on the test stand (``rsp_workbench.stand.host.run_engine``,
absolute-time mode, engine in its own process) and uses its latency and peak RSS.

Usage::

    python3 benchmarks/bench_reasoning.py                  # 300 stimuli per run
    python3 benchmarks/bench_reasoning.py --stimuli 150 --json out.json
    python3 benchmarks/bench_reasoning.py --query faculty  # SELECT ?x { ?x a ub:Faculty }
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

STREAM = "http://example.org/lubm"
ENGINES = ("naive", "incremental")
SIZES = (1, 10, 100)
WINDOWS_MS = (1000, 10_000)
SLIDE_MS = 100
QUERIES = {
    "materialisation": "SELECT ?s ?p ?o FROM STREAM <{stream}> [RANGE {size}ms STEP {slide}ms] WHERE {{ ?s ?p ?o }}",
    "faculty": "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
               "SELECT ?x FROM STREAM <{stream}> [RANGE {size}ms STEP {slide}ms] WHERE {{ ?x a ub:Faculty }}",
}


def stimuli_for(size: int, count: int) -> list[Any]:
    """``count`` LUBM stimuli of ``size`` triples, one every 100 ms (constant flow)."""
    from rsp_workbench.engine import group_contemporaneous
    from rsp_workbench.generators import lubm

    params = {"universities": 5, "stimulus_size": size, "period": SLIDE_MS}
    elements = []
    for element in lubm.iter_elements(params):
        if element.t >= count * SLIDE_MS:
            break
        elements.append(element)
    return group_contemporaneous(elements)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _current_rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / (1024 * 1024)


def run_cell(engine_type: str, size: int, window_ms: int, count: int, query: str) -> dict[str, Any]:
    """One run, in this process: per-stimulus latency (ms) and memory growth (MB)."""
    from rsp_workbench.core.semantics import PRESETS
    from rsp_workbench.engine import EngineConfig
    from rsp_workbench.engines import create_engine
    from rsp_workbench.query.parser import parse_query

    stimuli = stimuli_for(size, count)
    engine = create_engine(EngineConfig(engine_type, semantics=PRESETS["csparql"]))
    engine.register(parse_query(QUERIES[query].format(stream=STREAM, size=window_ms, slide=SLIDE_MS)))
    base = _current_rss_mb()
    latencies: list[float] = []
    bindings = 0
    for stimulus in stimuli:
        start = time.perf_counter()
        responses = engine.push(stimulus)
        latencies.append((time.perf_counter() - start) * 1000)
        bindings += sum(len(r.bindings) for r in responses)
    engine.close()
    warm = min(len(latencies) - 1, window_ms // SLIDE_MS)
    steady = latencies[warm:]
    return {
        "engine": engine_type, "size": size, "window_ms": window_ms, "stimuli": len(stimuli),
        "latency_ms": statistics.fmean(steady), "latency_p50_ms": statistics.median(steady),
        "latency_max_ms": max(steady), "memory_mb": max(0.0, _rss_mb() - base), "peak_rss_mb": _rss_mb(),
        "bindings": bindings,
    }


def run_cell_on_stand(engine_type: str, size: int, window_ms: int, count: int, query: str) -> dict[str, Any]:
    """One run through the test stand in absolute-time mode (engine in its own process)."""
    from rsp_workbench.core.semantics import PRESETS
    from rsp_workbench.engine import EngineConfig
    from rsp_workbench.stand.host import run_engine
    from rsp_workbench.stand.options import StandOptions

    stimuli = stimuli_for(size, count)
    config = EngineConfig(engine_type, semantics=PRESETS["csparql"], name=engine_type)
    with tempfile.TemporaryDirectory() as folder:
        result = run_engine(config, QUERIES[query].format(stream=STREAM, size=window_ms, slide=SLIDE_MS), stimuli,
                            folder, options=StandOptions(mode="absolute-time", sampling_ms=100))
    if not result.ok:
        raise RuntimeError(f"{engine_type} failed on the stand: {result.error}\n{result.stderr_tail}")
    return {
        "engine": engine_type, "size": size, "window_ms": window_ms, "stimuli": len(stimuli),
        "latency_ms": result.latency_ms.get("mean", float("nan")), "latency_p50_ms": result.latency_ms.get("p50", float("nan")),
        "latency_max_ms": result.latency_ms.get("max", float("nan")), "memory_mb": result.peak_rss_mb or float("nan"),
        "peak_rss_mb": result.peak_rss_mb, "bindings": result.bindings,
    }


def _isolated(engine_type: str, size: int, window_ms: int, count: int, query: str) -> dict[str, Any]:
    command = [sys.executable, __file__, "--cell", f"{engine_type}:{size}:{window_ms}", "--stimuli", str(count),
               "--query", query]
    done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


#: Memory differences below this are RSS page/allocator noise, reported as even.
MEMORY_NOISE_MB = 0.5


def dominance(incremental: float, naive: float, floor: float = 0.0) -> str:
    """Heaven Table 2: A dominates B when they differ by more than 5 % (lower is better).

    ``floor``: absolute differences up to this are even (used for memory, see MEMORY_NOISE_MB).
    """
    from rsp_workbench.results.view_data import dominant  # the same rule as the Results browser's tables

    if abs(incremental - naive) <= floor:
        return "≃"
    return {"incremental": "I", "naive": "N"}.get(dominant({"incremental": incremental, "naive": naive}) or "", "≃")


def run_grid(count: int, query: str, stand: bool) -> list[dict[str, Any]]:
    results = []
    for size in SIZES:
        for window_ms in WINDOWS_MS:
            for engine_type in ENGINES:
                if stand:
                    results.append(run_cell_on_stand(engine_type, size, window_ms, count, query))
                else:
                    results.append(_isolated(engine_type, size, window_ms, count, query))
                print(f"  {engine_type:<11} size {size:>3} ω {window_ms / 1000:g}s: "
                      f"{results[-1]['latency_ms']:.2f} ms, {results[-1]['memory_mb']:.1f} MB", file=sys.stderr)
    return results


def table(results: list[dict[str, Any]]) -> str:
    cells = {(r["engine"], r["size"], r["window_ms"]): r for r in results}
    lines = ["size  ω     | latency ms naive / incr  (dom) | memory MB naive / incr  (dom) | triples in window"]
    for size in SIZES:
        for window_ms in WINDOWS_MS:
            n, i = cells[("naive", size, window_ms)], cells[("incremental", size, window_ms)]
            lines.append(
                f"{size:>4}  {window_ms / 1000:>3g}s  | {n['latency_ms']:>9.2f} / {i['latency_ms']:<9.2f} ({dominance(i['latency_ms'], n['latency_ms'])})"
                f"     | {n['memory_mb']:>8.1f} / {i['memory_mb']:<8.1f} ({dominance(i['memory_mb'], n['memory_mb'], MEMORY_NOISE_MB)})"
                f"      | {size * window_ms // SLIDE_MS}"
            )
    lines.append("")
    lines.append("Heaven grid (I incremental dominates by > 5 %, N naive, ≃ even):")
    for label, key, floor in (("latency", "latency_ms", 0.0), ("memory", "memory_mb", MEMORY_NOISE_MB)):
        lines.append(f"  {label:<8} size \\ ω  " + "  ".join(f"{w / 1000:>4g}s" for w in WINDOWS_MS))
        for size in SIZES:
            marks = [dominance(cells[("incremental", size, w)][key], cells[("naive", size, w)][key], floor) for w in WINDOWS_MS]
            lines.append(f"           {size:>8}  " + "  ".join(f"{m:>5}" for m in marks))
    return "\n".join(lines)


def register(benchmark: Callable[[str], Callable[[Any], Any]]) -> None:
    """Hook for benchmarks/run.py: one grid cell (size 10, ω 1 s, 100 stimuli) per baseline."""

    def make(engine_type: str) -> Callable[[Path, Any], Callable[[], int]]:
        def prepare(workdir: Path, options: Any) -> Callable[[], int]:
            from rsp_workbench.core.semantics import PRESETS
            from rsp_workbench.engine import EngineConfig
            from rsp_workbench.engines import create_engine
            from rsp_workbench.query.parser import parse_query

            stimuli = stimuli_for(10, 100)
            query = parse_query(QUERIES["materialisation"].format(stream=STREAM, size=1000, slide=SLIDE_MS))

            def timed() -> int:
                engine = create_engine(EngineConfig(engine_type, semantics=PRESETS["csparql"]))
                engine.register(query)
                for stimulus in stimuli:
                    engine.push(stimulus)
                engine.close()
                return sum(len(s) for s in stimuli)

            return timed

        return prepare

    for engine_type in ENGINES:
        benchmark(f"reasoning_{engine_type}_s10_w1s")(make(engine_type))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stimuli", type=int, default=300, help="stimuli per run (100 ms each)")
    parser.add_argument("--query", choices=sorted(QUERIES), default="materialisation")
    parser.add_argument("--stand", action="store_true", help="run each cell on the test stand (absolute-time mode)")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--cell", help=argparse.SUPPRESS)  # engine:size:window_ms — one isolated run
    args = parser.parse_args(argv)
    if args.cell:
        engine_type, size, window_ms = args.cell.split(":")
        print(json.dumps(run_cell(engine_type, int(size), int(window_ms), args.stimuli, args.query)))
        return 0
    results = run_grid(args.stimuli, args.query, args.stand)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
