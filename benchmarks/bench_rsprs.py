"""What the rsp-rs adapter adds per stimulus to what rsp-rs itself spends, and peak RSS.

The same SG1 stimuli (YABench Exp. 1's query, CSRBench Q1, α = β = 5 s) three ways:

1. **in-process** — ``examples/in_process.rs`` in rsp_workbench/engines/rsprs: the quads built
   before the clock starts, then the engine calls the adapter makes (``direct``), and, for
   comparison, the crate's own streaming path (``add_quads`` to its stream thread, ``threads``);
2. **the adapter alone** — the protocol lines piped into the built adapter from a file (JSON
   parsing, N-Triples terms, responses written; no stand);
3. **on the stand** — ``run_engine`` in absolute time, batches as usual: the latency per stimulus
   the stand measures (``done − max(sent, previous done)``) and the throughput.

Per-stimulus overhead = (2) or (3) per stimulus − (1) ``direct`` per stimulus. Peak RSS: VmHWM of
the in-process program, ``/usr/bin/time``'s maximum RSS of the piped adapter, the stand's peak RSS
of the engine's process tree. Needs ``./install.sh --engines rsprs``; the example is built here
with ``cargo build --release --locked --example in_process``.

Usage::

    python3 benchmarks/bench_rsprs.py                          # 1,000 stations (MEDIUM), 30 s of stream
    python3 benchmarks/bench_rsprs.py --stations 50 --duration 30s --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rsp_workbench.core.semantics import PRESETS  # noqa: E402
from rsp_workbench.engine import EngineConfig  # noqa: E402
from rsp_workbench.engines import rsprs  # noqa: E402
from rsp_workbench.query.parser import parse_query  # noqa: E402
from rsp_workbench.query.writer import write_query  # noqa: E402
from rsp_workbench.stand.host import run_engine  # noqa: E402
from rsp_workbench.stand.options import StandOptions  # noqa: E402
from rsp_workbench.stand.protocol import session_bytes  # noqa: E402
from benchmarks.yabench_exp1 import exp1_query, exp1_stream  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stations", type=int, default=1000)
    parser.add_argument("--duration", default="30s")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--repeat", type=int, default=3, help="in-process and piped runs, alternating; the fastest of each counts")
    parser.add_argument("--in-process", type=Path, help="a built examples/in_process program (default: build it here)")
    args = parser.parse_args()
    if not rsprs.binary().is_file():
        print("the rsprs adapter is not built: ./install.sh --engines rsprs", file=sys.stderr)
        return 2
    example = args.in_process
    if example is None:
        subprocess.run(["nice", "-n", "10", "cargo", "build", "--release", "--locked", "--quiet", "--example", "in_process"],
                       cwd=rsprs.HERE, check=True)
        example = rsprs.HERE / "target" / "release" / "examples" / "in_process"

    elements, stimuli = exp1_stream(args.stations, args.duration)
    q1 = exp1_query()
    text = write_query(parse_query(q1), "rspjs")
    print(f"stream: {len(elements)} triples in {len(stimuli)} stimuli (SG1, {args.stations} stations, {args.duration})")

    config = EngineConfig("rsprs", PRESETS["rsprs"], name="rsprs", dialect="rspjs")
    with tempfile.TemporaryDirectory() as tmp:
        messages = Path(tmp) / "messages.jsonl"
        messages.write_bytes(session_bytes(config, text, stimuli, syntax="rspql", query_id="q1"))

        runs: list[dict] = []
        piped_runs: list[tuple[float, subprocess.CompletedProcess[bytes]]] = []
        for _ in range(max(1, args.repeat)):  # alternating, so that a load change hits both alike
            runs.append(json.loads(subprocess.run([str(example), str(messages)], capture_output=True, text=True,
                                                  check=True).stdout))
            started = time.perf_counter()
            with messages.open("rb") as source:
                piped_run = subprocess.run(["/usr/bin/time", "-f", "%M", str(rsprs.binary())], stdin=source,
                                           capture_output=True, check=True)
            piped_runs.append((time.perf_counter() - started, piped_run))
        in_process = min(runs, key=lambda run: run["direct"]["seconds"])
        direct_us = in_process["direct"]["us_per_stimulus"]
        print(f"in-process (the adapter's engine calls): {direct_us:.1f} µs/stimulus "
              f"(median {in_process['direct']['median_us']:.1f}), "
              f"{in_process['direct']['bindings']} bindings; the crate's stream thread: "
              f"{min(run['threads']['us_per_stimulus'] for run in runs):.1f} µs/stimulus; "
              f"peak RSS {in_process['peak_rss_kb'] / 1024:.1f} MiB (both ways in one process)")
        piped_s, piped = min(piped_runs, key=lambda item: item[0])
        responses = sum(1 for line in piped.stdout.splitlines() if b'"response"' in line)
        rss_kb = int(re.findall(rb"(\d+)\s*$", piped.stderr)[-1])
        piped_us = piped_s * 1e6 / len(stimuli)
        print(f"adapter alone (piped, process start included): {piped_us:.1f} µs/stimulus "
              f"(+{piped_us - direct_us:.1f}), {responses} responses; max RSS {rss_kb / 1024:.1f} MiB")

        run_folder = Path(tmp) / "run"
        result = run_engine(config, q1, stimuli, run_folder, syntax="csparql",
                            options=StandOptions(mode="absolute-time", sampling_ms=100))
        assert result.ok, result.error
        latencies = [json.loads(line)["latency_ms"] for line in (run_folder / "trace.jsonl").read_text().splitlines()]
        stand_us = 1000.0 * sum(latencies) / len(latencies)
        stand_median_us = 1000.0 * sorted(latencies)[len(latencies) // 2]
        print(f"on the stand (absolute time, batches): mean latency {stand_us:.1f} µs/stimulus "
              f"(+{stand_us - direct_us:.1f}), median {stand_median_us:.1f} µs "
              f"(+{stand_median_us - in_process['direct']['median_us']:.1f}), p95 {result.latency_ms.get('p95')} ms, throughput "
              f"{result.throughput_triples_per_s} triples/s; peak RSS (process tree) {result.peak_rss_mb} MiB")
    row = {"stimuli": len(stimuli), "triples": len(elements), "in_process": in_process,
           "piped": {"us_per_stimulus": piped_us, "max_rss_kb": rss_kb, "responses": responses},
           "stand": {"mean_latency_us": stand_us, "median_latency_us": stand_median_us, "latency_ms": result.latency_ms, "peak_rss_mb": result.peak_rss_mb,
                     "triples_per_s": result.throughput_triples_per_s},
           "overhead_us_per_stimulus": {"piped": piped_us - direct_us, "stand": stand_us - direct_us}}
    if args.json:
        args.json.write_text(json.dumps(row, indent=2))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
