"""Maximum sustainable input rate of the ``secret`` engine per preset, and the stand overhead.

Feeds an SG1 stream (YABench MEDIUM load by default: 1,000 stations, 1 s interval, i.e.
~7,000 triples/s of application time) to the engine in **absolute-time** mode on the test
stand (engine in its own process, next stimulus sent when the previous one is done), so
the measured rate is what the engine can absorb: triples / (last done − first sent).
An engine keeps up in real time with a load of R triples/s iff this rate is ≥ R.
Also reports the in-process rate (no protocol, no process boundary; the worker's garbage
collector thresholds) and the stand's own
CPU (streamer, writer, receiver, probe threads). First it measures the **stand's ceiling**:
the same stream through the ``null`` engine (answers ``done`` only), i.e. the most the
stand carries through the process boundary to any engine, twice: with batched framing
(``batch`` messages of up to ``--batch`` stimuli, what the stand uses with every engine that
announces it) and with one stimulus per message and round trip (``--batch 1``, the protocol
for engines that do not announce batches); peak RSS is over the engine's process tree (the
stand's psutil samples). The presets run with ``--batch`` too; for each, the engine
process's own CPU seconds on the stand (protocol included, from the trace's KPIs) give its
rate per CPU second. ``--real-time`` also runs each preset in real time (time scale 1,
what YABench does): it keeps up when the last stimulus is done within a second of its due
time (a lagging engine builds a backlog), with the engine's CPU per triple and the
latencies (``done − sent``: the queueing behind earlier stimuli included).

Usage::

    python3 benchmarks/bench_engines.py                       # MEDIUM, 10 s of stream, all presets
    python3 benchmarks/bench_engines.py --stations 50 --duration 5s --presets cqels
    python3 benchmarks/bench_engines.py --json results.json
    python3 benchmarks/bench_engines.py --stations 10000 --presets cqels,csparql   # YABench BIG (70,000 triples/s)
    python3 benchmarks/bench_engines.py --presets "" --batch 1   # the ceiling without batches only
    python3 benchmarks/bench_engines.py --stations 10000 --presets cqels,csparql --queries filter-5s-tumbling \
        --ceiling-repetitions 0 --real-time   # do the presets keep up with BIG in real time?
    python3 benchmarks/bench_engines.py --stations 10000 --presets csparql --engine-parameter prefill=false \
        --engine-parameter tick_runs=false   # the window joined at its close, one delta join per element
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rsp_workbench.core.semantics import PRESETS  # noqa: E402
from rsp_workbench.core.time import parse_duration  # noqa: E402
from rsp_workbench.engine import EngineConfig, group_contemporaneous  # noqa: E402
from rsp_workbench.engines import create_engine
from rsp_workbench.generators.sg1 import observation_elements, reference_observations  # noqa: E402
from rsp_workbench.query.parser import parse_query  # noqa: E402
from rsp_workbench.stand.host import run_engine  # noqa: E402
from rsp_workbench.stand.options import StandOptions  # noqa: E402
from rsp_workbench.stand.worker import GC_THRESHOLDS  # noqa: E402

STREAM = "http://cwi.nl/SRBench/observations"
QUERIES = {
    # CSRBench Listing 2 (Q1/Q2/Q5 shapes): filter on the temperature, tumbling and sliding
    "filter-1s-tumbling": ("1 S", "1 S"),
    "filter-5s-sliding-1s": ("5 S", "1 S"),
    "filter-5s-tumbling": ("5 S", "5 S"),  # YABench Exp. 1 (Q1: α = β = 5 s)
}


def filter_query(size: str, slide: str, threshold: int = 50) -> str:
    return f"""PREFIX om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>
PREFIX weather: <http://knoesis.wright.edu/ssw/ont/weather.owl#>
SELECT ?sensor ?tempvalue ?obs
FROM NAMED STREAM <{STREAM}> [NOW - {size} SLIDE {slide}]
WHERE {{ ?obs om-owl:observedProperty weather:_AirTemperature ; om-owl:procedure ?sensor ;
         om-owl:result [om-owl:floatValue ?tempvalue] .
  FILTER(?tempvalue > {threshold}) }}"""


def _names(known: dict, what: str):  # type: ignore[no-untyped-def]
    """An argparse type: a comma-separated list of known names (an unknown one is a usage error)."""

    def parse(text: str) -> list[str]:
        names = [name for name in text.split(",") if name]
        unknown = [name for name in names if name not in known]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {what} {unknown[0]!r}; choose from {', '.join(known)}")
        return names

    return parse


def _parameter(text: str) -> tuple[str, object]:
    """An argparse type: ``NAME=VALUE``, the value read as JSON (``false``, ``3``) or else as text."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name, json.loads(value)
    except ValueError:
        return name, value


def _engine_cpu_s(folder: Path) -> float | None:
    """CPU seconds of the engine's process tree over the run: the trace's last KPIs minus its first."""
    lines = (folder / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    if not lines:
        return None
    first, last = json.loads(lines[0]), json.loads(lines[-1])
    if not first.get("kpis_before") or not last.get("kpis_after"):
        return None
    return round(last["kpis_after"]["cpu_s"] - first["kpis_before"]["cpu_s"], 3)


def _real_time(config: EngineConfig, text: str, stimuli: list, triples: int, span_s: float,
               args: argparse.Namespace) -> dict:
    """One real-time run (time scale 1): does the engine keep up, and at what CPU cost?"""
    with tempfile.TemporaryDirectory() as folder:
        result = run_engine(config, text, stimuli, folder,
                            options=StandOptions(mode="real-time", sampling_ms=args.sampling_ms, batch=args.batch))
        engine_cpu = _engine_cpu_s(Path(folder))
    # feed_s runs from the first stimulus's due time to the last one's done
    backlog_s = (result.timings.get("feed_s") or 0.0) - span_s
    row = {"status": result.status, "feed_s": result.timings.get("feed_s"), "end_backlog_s": round(backlog_s, 3),
           "keeps_up": result.ok and backlog_s <= 1.0, "latency_ms_p50": result.latency_ms.get("p50"),
           "latency_ms_p95": result.latency_ms.get("p95"), "latency_ms_max": result.latency_ms.get("max"),
           "schedule_lag_ms_max": result.schedule_lag_ms.get("max"), "engine_cpu_s": engine_cpu,
           "engine_cpu_percent": round(100.0 * engine_cpu / span_s, 1) if engine_cpu else None,
           "stand_cpu_s": result.stand_overhead.get("total_cpu_s"), "peak_rss_mb": result.peak_rss_mb}
    print(f"{'':22} {'  real time':13} {row['status']:6} keeps up: {row['keeps_up']} (last done "
          f"{row['end_backlog_s']:+.2f} s after the stream's end)  latency p50/p95/max {row['latency_ms_p50']}/"
          f"{row['latency_ms_p95']}/{row['latency_ms_max']} ms  engine CPU {engine_cpu} s = "
          f"{row['engine_cpu_percent']} % of a core ({triples / engine_cpu if engine_cpu else 0:,.0f} t per CPU s)"
          f"  stand CPU {row['stand_cpu_s']} s  schedule lag max {row['schedule_lag_ms_max']} ms")
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stations", type=int, default=1000)
    parser.add_argument("--interval", default="1s")
    parser.add_argument("--duration", default="10s")
    parser.add_argument("--presets", default="csparql,cqels,sparqlstream", type=_names(PRESETS, "preset"),
                        help=f"comma-separated, of: {', '.join(PRESETS)} (empty: the ceiling only)")
    parser.add_argument("--queries", default=",".join(QUERIES), type=_names(QUERIES, "query"),
                        help=f"comma-separated, of: {', '.join(QUERIES)}")
    parser.add_argument("--sampling-ms", type=int, default=500)
    parser.add_argument("--ceiling-repetitions", type=int, default=2,
                        help="runs of the null engine (the stand's ceiling); 0 skips it")
    parser.add_argument("--batch", type=int, default=StandOptions.batch,
                        help="most stimuli per batch message (default %(default)s; 1 = one round trip per stimulus)")
    parser.add_argument("--real-time", action="store_true",
                        help="also run each preset in real time (as long as the stream) and say whether it keeps up")
    parser.add_argument("--engine-parameter", action="append", default=[], type=_parameter, metavar="NAME=VALUE",
                        help="a parameter of the secret engine (VALUE read as JSON, else text), repeatable: "
                             "prefill=false and tick_runs=false run its slower paths (the same answers)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.batch < 1:
        parser.error("--batch must be at least 1")
    params = {"stations": args.stations, "interval": parse_duration(args.interval),
              "duration": parse_duration(args.duration), "seed": 1}
    elements = [e for station, t, value in reference_observations(params) for e in observation_elements(station, t, value)]
    stimuli = group_contemporaneous(elements)
    span_s = max(1e-9, (elements[-1].t - elements[0].t) / 1000.0)
    load = len(elements) / span_s
    print(f"stream: {len(elements)} triples in {len(stimuli)} stimuli over {span_s:.1f} s "
          f"(offered load {load:,.0f} triples/s)")
    ceilings = []
    framings = [args.batch] if args.batch == 1 else [args.batch, 1]
    for repetition, batch in [(r, b) for r in range(args.ceiling_repetitions) for b in framings]:
        with tempfile.TemporaryDirectory() as folder:
            result = run_engine(EngineConfig("null", name="null"), filter_query(*QUERIES["filter-1s-tumbling"]), stimuli,
                                folder, options=StandOptions(mode="absolute-time", sampling_ms=args.sampling_ms,
                                                             batch=batch))
        framing = "one per message" if batch == 1 else f"batches ≤ {batch}"
        ceiling = {"repetition": repetition, "batch": batch, "status": result.status,
                   "stand_triples_per_s": result.throughput_triples_per_s,
                   "stimuli_per_s": round(result.stimuli_done / max(1e-9, result.timings.get("feed_s", 0.0)), 1),
                   "times_offered_load": round((result.throughput_triples_per_s or 0.0) / load, 2),
                   "peak_rss_mb": result.peak_rss_mb, "stand_cpu_s": result.stand_overhead.get("total_cpu_s"),
                   "feed_s": result.timings.get("feed_s")}
        ceilings.append(ceiling)
        print(f"{'stand ceiling':22} {framing:17} {ceiling['status']:6} stand {ceiling['stand_triples_per_s'] or 0:>10,.0f} t/s"
              f"  ({ceiling['stimuli_per_s']:,.0f} stimuli/s, {ceiling['times_offered_load']}× the offered load)"
              f"  stand CPU {ceiling['stand_cpu_s']} s  peak RSS {ceiling['peak_rss_mb']} MiB")
    rows = []
    for query_name in args.queries:
        text = filter_query(*QUERIES[query_name])
        for preset in args.presets:
            config = EngineConfig("secret", PRESETS[preset], parameters={"t0": 0, **dict(args.engine_parameter)},
                                  name=f"secret-{preset}")
            engine = create_engine(config)
            engine.register(parse_query(text))
            thresholds = gc.get_threshold()
            gc.set_threshold(*GC_THRESHOLDS)  # as in the worker process on the stand
            started, cpu_started = time.perf_counter(), time.process_time()
            responses = engine.run(stimuli)
            in_process = len(elements) / (time.perf_counter() - started)
            gc.set_threshold(*thresholds)
            # CPU time, not wall time: what the engine absorbs on one free core (others load the machine)
            in_process_cpu = len(elements) / max(1e-9, time.process_time() - cpu_started)
            with tempfile.TemporaryDirectory() as folder:
                result = run_engine(config, text, stimuli, folder,
                                    options=StandOptions(mode="absolute-time", sampling_ms=args.sampling_ms,
                                                         batch=args.batch))
                engine_cpu = _engine_cpu_s(Path(folder))
            row = {
                "query": query_name, "preset": preset, "status": result.status,
                "stand_triples_per_s": result.throughput_triples_per_s,
                "in_process_triples_per_s": round(in_process, 1),
                "in_process_cpu_triples_per_s": round(in_process_cpu, 1),
                "stand_engine_cpu_s": engine_cpu,
                "stand_engine_cpu_triples_per_s": round(len(elements) / engine_cpu, 1) if engine_cpu else None,
                "keeps_up_on_a_free_core": in_process_cpu >= load,
                "keeps_up_with_load": bool(result.throughput_triples_per_s and result.throughput_triples_per_s >= load),
                "responses": result.responses, "in_process_responses": len(responses),
                "latency_ms_p50": result.latency_ms.get("p50"), "latency_ms_p95": result.latency_ms.get("p95"),
                "latency_ms_max": result.latency_ms.get("max"),
                "peak_rss_mb": result.peak_rss_mb,
                "stand_cpu_s": result.stand_overhead.get("total_cpu_s"),
                "stand_cpu_percent": result.stand_overhead.get("cpu_percent_of_one_core"),
                "feed_s": result.timings.get("feed_s"),
            }
            rows.append(row)
            print(f"{query_name:22} {preset:13} {row['status']:6} stand {row['stand_triples_per_s'] or 0:>10,.0f} t/s"
                  f" ({row['stand_engine_cpu_triples_per_s'] or 0:,.0f} per engine CPU second)"
                  f"  in-process {row['in_process_triples_per_s']:>10,.0f} t/s ({row['in_process_cpu_triples_per_s']:,.0f} per"
                  f" CPU second)  keeps up: {row['keeps_up_with_load']} (on a free core: {row['keeps_up_on_a_free_core']})"
                  f"  p95 latency {row['latency_ms_p95']} ms  stand CPU {row['stand_cpu_s']} s"
                  f" ({row['stand_cpu_percent']} % of a core)  peak RSS {row['peak_rss_mb']} MiB")
            if args.real_time:
                row["real_time"] = _real_time(config, text, stimuli, len(elements), span_s, args)
    if args.json:
        args.json.write_text(json.dumps({"load_triples_per_s": load, "triples": len(elements), "stand_ceiling": ceilings,
                                           "runs": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
