"""What the Esper + Jena adapter adds per stimulus to what Esper and Jena themselves spend, and peak RSS.

The same SG1 stimuli (YABench Exp. 1's query, CSRBench Q1, α = β = 5 s) three ways:

1. **in-process** — ``org.rspwb.esper.InProcess`` in the plug-in's jar: the events built before the
   clock starts, then what the adapter asks of Esper and Jena per stimulus (the clock advanced,
   the events sent, each posted window evaluated by Jena), no JSON, no pipe;
2. **the adapter alone** — the protocol lines piped into the jar from a file (JSON parsing,
   responses written; no stand), less the time of a run with only ``register`` and ``close``
   (the JVM's start, Esper's compile, Jena's warm-up);
3. **on the stand** — ``run_engine`` in absolute time, batches as usual: the latency per stimulus
   the stand measures (``done − max(sent, previous done)``) and the throughput.

Per-stimulus overhead = (2) or (3) per stimulus − (1) per stimulus. Besides, the adapter measures
itself (``RSPWB_ESPER_PROFILE``): the time it spends on stimulus lines outside Esper and Jena
(JSON in, responses' text and ``done`` out), per stimulus, in (2) and (3) — the overhead free of
the machine's load on the difference of separate runs. Peak RSS: VmHWM of the
in-process JVM, ``/usr/bin/time``'s maximum RSS of the piped adapter, the stand's peak RSS of the
engine's process tree. Needs ``./install.sh --engines esper``.

Usage::

    python3 benchmarks/bench_esper.py                          # 1,000 stations (MEDIUM), 10 s of stream
    python3 benchmarks/bench_esper.py --window time --json out.json
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
from rsp_workbench.engine import PROGRAM_ENGINES, EngineConfig  # noqa: E402
from rsp_workbench.engines import esper  # noqa: E402
from rsp_workbench.query.parser import parse_query  # noqa: E402
from rsp_workbench.query.writer import write_query  # noqa: E402
from rsp_workbench.stand.host import run_engine  # noqa: E402
from rsp_workbench.stand.options import StandOptions  # noqa: E402
from rsp_workbench.stand.protocol import session_bytes  # noqa: E402
from benchmarks.yabench_exp1 import exp1_query, exp1_stream  # noqa: E402


def adapter_us(stderr: str) -> float:
    """µs per stimulus the adapter spent outside Esper and Jena, from its profile line on stderr."""
    line = next(line for line in stderr.splitlines() if line.startswith('{"profile"'))
    profile = json.loads(line)["profile"]
    return (profile["handling_ns"] - profile["engine_ns"]) / 1000.0 / max(1, profile["stimuli"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stations", type=int, default=1000)
    parser.add_argument("--duration", default="10s")
    parser.add_argument("--window", choices=("time_batch", "time"), default="time_batch")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--repeat", type=int, default=3, help="in-process and piped runs, alternating; the fastest of each counts")
    args = parser.parse_args()
    if not esper.jar().is_file():
        print("the esper engine is not built: ./install.sh --engines esper", file=sys.stderr)
        return 2
    parameters = {"window": args.window}
    elements, stimuli = exp1_stream(args.stations, args.duration)
    q1 = exp1_query()
    text = write_query(parse_query(q1), "csparql")
    print(f"stream: {len(elements)} triples in {len(stimuli)} stimuli (SG1, {args.stations} stations, {args.duration}); "
          f"window {args.window}")
    config = EngineConfig("esper", PRESETS[PROGRAM_ENGINES["esper"].preset_for(parameters)], parameters=parameters,
                          name="esper", dialect="csparql")
    java = esper.command(config)[:-2]  # the JVM and its options, without -jar JAR

    with tempfile.TemporaryDirectory() as tmp:
        messages = Path(tmp) / "messages.jsonl"
        messages.write_bytes(session_bytes(config, text, stimuli, syntax="csparql", query_id="q1"))
        empty = Path(tmp) / "register-close.jsonl"  # the JVM's start, Esper's compile, Jena's warm-up only
        empty.write_bytes(session_bytes(config, text, [], syntax="csparql", query_id="q1"))
        runs: list[dict] = []
        piped_runs: list[tuple[float, subprocess.CompletedProcess[bytes]]] = []
        startups: list[float] = []
        for _ in range(max(1, args.repeat)):  # alternating, so that a load change hits both alike
            started = time.perf_counter()
            with empty.open("rb") as source:
                subprocess.run(esper.command(config), stdin=source, capture_output=True, check=True)
            startups.append(time.perf_counter() - started)
            runs.append(json.loads(subprocess.run([*java, "-cp", str(esper.jar()), "org.rspwb.esper.InProcess",
                                                   str(messages)], capture_output=True, text=True, check=True).stdout))
            started = time.perf_counter()
            with messages.open("rb") as source:
                piped_run = subprocess.run(["/usr/bin/time", "-f", "%M", *esper.command(config)], stdin=source,
                                           capture_output=True, check=True)
            piped_runs.append((time.perf_counter() - started, piped_run))
        in_process = min(runs, key=lambda run: run["seconds"])
        direct_us = in_process["us_per_stimulus"]
        print(f"in-process (the adapter's Esper and Jena calls): {direct_us:.1f} µs/stimulus "
              f"(median {in_process['median_us']:.1f}), {in_process['bindings']} bindings; "
              f"peak RSS {in_process['peak_rss_kb'] / 1024:.1f} MiB")
        piped_s, piped = min(piped_runs, key=lambda item: item[0])
        piped_profile = adapter_us(piped.stderr.decode())
        responses = sum(1 for line in piped.stdout.splitlines() if b'"response"' in line)
        rss_kb = int(re.findall(rb"(\d+)\s*$", piped.stderr)[-1])
        startup_s = min(startups)
        piped_us = (piped_s - startup_s) * 1e6 / len(stimuli)
        print(f"adapter alone (piped, less the {startup_s:.2f} s of a register-close run: JVM start, EPL compile): "
              f"{piped_us:.1f} µs/stimulus (+{piped_us - direct_us:.1f}), {responses} responses; max RSS {rss_kb / 1024:.1f} MiB; "
              f"the adapter's own work (profile): {piped_profile:.1f} µs/stimulus")

        run_folder = Path(tmp) / "run"
        result = run_engine(config, q1, stimuli, run_folder, syntax="csparql",
                            options=StandOptions(mode="absolute-time", sampling_ms=100))
        assert result.ok, result.error
        stand_profile = adapter_us((run_folder / "stderr.log").read_text())
        latencies = [json.loads(line)["latency_ms"] for line in (run_folder / "trace.jsonl").read_text().splitlines()]
        stand_us = 1000.0 * sum(latencies) / len(latencies)
        stand_median_us = 1000.0 * sorted(latencies)[len(latencies) // 2]
        print(f"on the stand (absolute time, batches): mean latency {stand_us:.1f} µs/stimulus "
              f"(+{stand_us - direct_us:.1f}), median {stand_median_us:.1f} µs "
              f"(+{stand_median_us - in_process['median_us']:.1f}), p95 {result.latency_ms.get('p95')} ms, throughput "
              f"{result.throughput_triples_per_s} triples/s; peak RSS (process tree) {result.peak_rss_mb} MiB; "
              f"the adapter's own work (profile): {stand_profile:.1f} µs/stimulus")
    row = {"stimuli": len(stimuli), "triples": len(elements), "window": args.window, "in_process": in_process,
           "piped": {"us_per_stimulus": piped_us, "startup_s": startup_s, "max_rss_kb": rss_kb, "responses": responses},
           "stand": {"mean_latency_us": stand_us, "median_latency_us": stand_median_us, "latency_ms": result.latency_ms,
                     "peak_rss_mb": result.peak_rss_mb, "triples_per_s": result.throughput_triples_per_s},
           "overhead_us_per_stimulus": {"piped": piped_us - direct_us, "stand": stand_us - direct_us,
                                        "profile_piped": piped_profile, "profile_stand": stand_profile}}
    if args.json:
        args.json.write_text(json.dumps(row, indent=2))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    os.environ["RSPWB_ESPER_PROFILE"] = "1"
    raise SystemExit(main())
