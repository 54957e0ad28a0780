"""Benchmark: expected answers for YABench BIG (SG1, 10,000 stations, 1 s, 30 s ≈ 2.1 M triples).

Window 5 s / 5 s, the temperature filter query, every admissible t0 (β = 5 s at 1 ms →
5,000 values), for the presets ``yabench-window-close`` and ``yabench-content-change``
. Also timed, for the
ratio: the rdflib reference path on ONE full BIG window (``evaluate_snapshot``).

Run ``python3 benchmarks/bench_oracle.py [--small] [--json FILE] [--skip-reference]
[--presets yabench-window-close,yabench-content-change]``. The stream is generated once
into ``--workdir`` (default a temp dir) and reused. Times exclude the Spark session start
(reported separately as ``spark_start_s``). The first preset runs on a cold JVM; a later
preset over the same stream reuses the annotated rows (``annotations_reused``), as a GUI
switching report policies would — run one preset per process to time it cold.

``--cli STREAM [--presets cqels,yabench-content-change] [--methods auto,spark]`` times the
command a user runs instead: ``rspwb oracle --stream STREAM --system P
--t0 all --json`` per preset and method, end to end in a subprocess (JVM start included),
with the wall time, the CPU time and peak RSS of the whole process tree, the path that ran
and the number of t0 candidates (``--t0 all`` is the admissible set in the preset's time
unit: 50 values for ``cqels``, 100 ms over a 5 s slide; 5,000 for the ms presets; the JSON
holds the windows of the first t0), then the rdflib yardstick on one window in the same
run, and the ratios to it. With ``--out``, ``--out DIR`` instead of ``--json``: every t0's
answer written (the files and their bytes reported).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

QUERY = """PREFIX om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>
PREFIX weather: <http://knoesis.wright.edu/ssw/ont/weather.owl#>
REGISTER QUERY q AS SELECT ?sensor ?obs ?value
FROM STREAM <http://www.cwi.nl/SRBench/observations> [RANGE 5s STEP 5s]
WHERE { ?obs om-owl:observedProperty weather:_AirTemperature ; om-owl:procedure ?sensor ;
        om-owl:result ?r . ?r om-owl:floatValue ?value . FILTER(?value > 50.0) }"""

BIG = {"stations": 10000, "interval": "1s", "duration": "30s", "seed": 1}
SMALL = {"stations": 500, "interval": "1s", "duration": "30s", "seed": 1}


def stream_file(workdir: Path, params: dict[str, Any]) -> Path:
    from rsp_workbench.pipeline.generate import generate

    path = workdir / f"sg1_{params['stations']}.parquet"
    if not path.exists():
        generate("sg1", params, path, "parquet", engine="local")  # type: ignore[call-arg]
    return path


PRESETS = ("yabench-window-close", "yabench-content-change")


def run_benchmark(params: dict[str, Any], workdir: Path, reference: bool = True,
                  presets: tuple[str, ...] = PRESETS) -> dict[str, Any]:
    from rsp_workbench.core.semantics import PRESETS
    from rsp_workbench.core.t0 import admissible_t0
    from rsp_workbench.pipeline.oracle_job import expected_answers
    from rsp_workbench.pipeline.spark import get_spark
    from rsp_workbench.query.parser import parse_query

    results: dict[str, Any] = {"params": params}
    path = stream_file(workdir, params)
    query = parse_query(QUERY, "csparql")
    started = time.perf_counter()
    spark = get_spark()
    results["spark_start_s"] = round(time.perf_counter() - started, 2)
    t0_values = admissible_t0(0, 5000, 1)
    for preset in presets:
        semantics = PRESETS[preset]
        started = time.perf_counter()
        stages: dict[str, float] = {}

        def progress(stage: str, fraction: float, _stages: dict[str, float] = stages, _t: float = started) -> None:
            _stages.setdefault(stage, round(time.perf_counter() - _t, 2))

        answers = expected_answers(spark, query, str(path), semantics, t0_values, progress=progress, keep_results=False)
        elapsed = time.perf_counter() - started
        summary = answers.summary(0)
        results[preset] = {
            "seconds": round(elapsed, 2),
            "stages_started_at_s": stages,
            "mode": answers.mode,
            "reason": answers.reason,
            "annotations_reused": answers.annotations_reused,
            "t0_values": len(t0_values),
            "classes": len(answers.classes),
            "evaluations_t0_0": len(summary),
            "expected_total_t0_0": sum(w.expected for w in summary),
            "max_window_triples_t0_0": max((w.triples for w in summary), default=0),
        }
        if preset == "yabench-window-close":
            started = time.perf_counter()
            answer = answers.answer(0)
            results[preset]["materialise_t0_0_s"] = round(time.perf_counter() - started, 2)
            results[preset]["relation_sizes_t0_0"] = [sum(r.values()) for r in answer.relations]
        print(preset, json.dumps(results[preset]), flush=True)
    if reference:
        results["reference_one_window"] = reference_one_window(path)
    return results


def reference_one_window(path: Path) -> dict[str, Any]:
    """rdflib loading and answering ONE 5 s window of the stream (the scale yardstick)."""
    from rsp_workbench.oracle.reference import StaticData, evaluate_snapshot
    from rsp_workbench.query.parser import parse_query
    from rsp_workbench.streams.readers import detect_format, read_stream

    query = parse_query(QUERY, "csparql")
    elements = [e for e in read_stream(str(path), detect_format(str(path))) if 0 <= e.t <= 5000]
    started, cpu = time.perf_counter(), time.process_time()
    relation = evaluate_snapshot(query, [elements], StaticData(), 5000)
    row = {"seconds": round(time.perf_counter() - started, 2), "cpu_s": round(time.process_time() - cpu, 1),
           "triples": len(elements), "bindings": sum(relation.values())}
    print("reference", json.dumps(row), flush=True)
    return row


def tree_peak(command: list[str], *, stdout: Any = None, interval: float = 0.05,
              consume: Callable[[Any], dict[str, Any]] | None = None, cwd: Path | None = None) -> dict[str, Any]:
    """Run ``command``; wall time and the peak RSS of its whole process tree (JVM included),
    sampled with psutil every ``interval`` s. ``consume(pipe)`` reads the command's output in
    a thread of this process (not counted), e.g. to find facts in it; its dict is added."""
    import os
    import subprocess
    import threading

    import psutil

    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE if consume else (stdout or subprocess.DEVNULL),
                               stderr=subprocess.PIPE, text=consume is not None,
                               cwd=cwd,
                               env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    facts: dict[str, Any] = {}
    reader = None
    if consume is not None:
        reader = threading.Thread(target=lambda: facts.update(consume(process.stdout)), daemon=True)
        reader.start()
    root = psutil.Process(process.pid)
    peak = 0
    cpu: dict[int, float] = {}  # last cumulative CPU seconds seen per process of the tree
    while process.poll() is None:
        total = 0
        try:
            for member in [root, *root.children(recursive=True)]:
                try:
                    total += member.memory_info().rss
                    times = member.cpu_times()
                    cpu[member.pid] = times.user + times.system
                except psutil.Error:
                    pass
        except psutil.Error:
            pass
        peak = max(peak, total)
        time.sleep(interval)
    seconds = round(time.perf_counter() - started, 2)
    if reader is not None:
        reader.join()
    error = process.stderr.read() if process.stderr else ""
    error = error.decode(errors="replace") if isinstance(error, bytes) else error
    return {"seconds": seconds, "cpu_s": round(sum(cpu.values()), 1), "peak_rss_mb": round(peak / 2**20),
            "exit": process.returncode, "stderr_tail": error[-400:], **facts}


CHECKOUT = Path(__file__).resolve().parents[1]  # `python -m` imports from the cwd before PYTHONPATH


def run_cli(stream: Path, presets: tuple[str, ...], query_file: Path, extra: tuple[str, ...] = (),
            methods: tuple[str, ...] = ("auto",), out: Path | None = None) -> dict[str, Any]:
    """``rspwb oracle --t0 all --json`` end to end (JVM start included) per preset and
    ``--method``; the output is parsed for the path that ran and the t0 count, not kept.
    With ``out``, ``--out out/PRESET-METHOD`` instead of ``--json`` (every t0's answer; the
    files written and their bytes are reported, the folder removed). ``load_1min`` is the
    machine's load average when the run ended."""
    import os
    import shutil

    stream, query_file = stream.resolve(), query_file.resolve()  # the command runs in CHECKOUT
    results: dict[str, Any] = {}
    for preset in presets:
        for method in methods:
            target = (out / f"{preset}-{method}").resolve() if out is not None else None
            mode = ["--out", str(target)] if target is not None else ["--json"]
            command = [sys.executable, "-m", "rsp_workbench.cli.main", "oracle", "--stream", str(stream), "--query",
                       str(query_file), "--system", preset, "--t0", "all", *mode, "--method", method, *extra]
            if target is None:
                row = tree_peak(command, consume=_output_facts, cwd=CHECKOUT)  # from a pipe, as `| jq` would
            else:
                row = tree_peak(command, cwd=CHECKOUT)
                files = list(target.iterdir()) if target.is_dir() else []
                row.update({"files": len(files), "bytes": sum(f.stat().st_size for f in files)})
                shutil.rmtree(target, ignore_errors=True)
            row["load_1min"] = round(os.getloadavg()[0], 1)
            key = preset if method == "auto" else f"{preset} --method {method}"
            results[key] = row
            print("cli", key, json.dumps(row), flush=True)
    return results


def _output_facts(out: Any) -> dict[str, Any]:
    """The path, t0 count and window rows of an ``rspwb oracle --json`` output (read streaming)."""
    facts: dict[str, Any] = {"windows_t0_0": 0}
    listing = True
    for line in out:
        stripped = line.strip().rstrip(",")
        if listing and stripped.startswith('{"start"'):
            facts["windows_t0_0"] += 1
        elif stripped.startswith(('"t0_candidates"', '"method"', '"engine"', '"method_reason"')):
            key, _, value = stripped.partition(": ")
            facts[json.loads(key)] = json.loads(value)
        elif stripped.startswith('"by_t0"'):
            listing = False  # read on to the end: the command must not block on a full pipe
    return facts


def compare_paths(stream: Path, presets: tuple[str, ...]) -> dict[str, Any]:
    """In one process, the CPU time of each Python path of the ``auto`` rule on ``stream``
    (read + annotate + the first t0's window rows, as ``--t0 all --json`` computes): the
    element-object path and the columnar path (`rsp_workbench.oracle.paths`)."""
    from rsp_workbench.core.semantics import PRESETS as SEMANTICS
    from rsp_workbench.oracle.columnar import query_predicates, read_columns
    from rsp_workbench.oracle.run import end_after, expected_with_method, t0_vectors
    from rsp_workbench.oracle.answers import columnar_expected_answers
    from rsp_workbench.query.parser import parse_query
    from rsp_workbench.streams.readers import read_stream

    query = parse_query(QUERY, "csparql")
    results: dict[str, Any] = {}
    for preset in presets:
        semantics = SEMANTICS[preset]
        vectors, _ = t0_vectors(query, semantics, "all")
        row: dict[str, Any] = {}
        for path in ("python", "columnar"):
            cpu = time.process_time()
            if path == "python":
                elements = list(read_stream(str(stream), "yabench"))
                answers, _ = expected_with_method(query, {query.streams[0]: elements}, semantics, vectors,
                                                  end=end_after(query, elements[-1].t), method="fast")
                rows = sum(1 for _ in answers[vectors[0]].summary_rows())
                count = len(elements)
                del elements
            else:
                columns = read_columns(str(stream), "yabench", query_predicates(query))
                answers = columnar_expected_answers(query, {query.streams[0]: columns}, semantics, vectors,
                                                    end=end_after(query, int(columns.times[-1])))
                rows = sum(1 for _ in answers.summary_rows(vectors[0]))
                count = len(columns.times)
            row[f"{path}_cpu_s"] = round(time.process_time() - cpu, 2)
            row["rows"], row["elements"] = rows, count
        print("paths", preset, json.dumps(row), flush=True)
        results[preset] = row
    return results


def register(benchmark: Callable[[str], Callable[[Any], Any]]) -> None:
    """Hook for benchmarks/run.py: ``oracle_sg1_small`` (the BIG run is this script's main)."""

    def prepare(workdir: Path, options: argparse.Namespace) -> Callable[[], int]:
        def timed() -> int:
            results = run_benchmark(SMALL, workdir, reference=False)
            return int(results["yabench-window-close"]["t0_values"])

        return timed

    benchmark("oracle_sg1_small")(prepare)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="500 stations instead of 10,000")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--presets", default=",".join(PRESETS), help="comma-separated, run in this order")
    parser.add_argument("--cli", metavar="STREAM", type=Path, default=None,
                        help="time `rspwb oracle --t0 all --json` end to end on this stream file instead (peak RSS "
                        "of the process tree), then the rdflib reference on one window of it")
    parser.add_argument("--out", action="store_true",
                        help="with --cli: time `--out DIR` (every t0's answer written) instead of `--json`")
    parser.add_argument("--methods", default="auto",
                        help="with --cli: comma-separated --method values to time per preset (e.g. auto,spark)")
    parser.add_argument("--paths", metavar="STREAM", type=Path, default=None,
                        help="compare the CPU time of the Python element path and the columnar path on this "
                        "YABench stream, in this process (what the auto rule's COLUMNAR_THRESHOLD rests on)")
    options = parser.parse_args(argv)
    if options.paths is not None:
        presets = tuple(p.strip() for p in options.presets.split(",") if p.strip())
        print(json.dumps(compare_paths(options.paths, presets), indent=2))
        return 0
    if options.cli is not None:
        presets = tuple(p.strip() for p in options.presets.split(",") if p.strip())
        workdir = options.workdir or Path(tempfile.mkdtemp(prefix="rspwb-bench-oracle-"))
        workdir.mkdir(parents=True, exist_ok=True)
        query_file = workdir / "q1.rq"
        query_file.write_text(QUERY, encoding="utf-8")
        methods = tuple(m.strip() for m in options.methods.split(",") if m.strip())
        results = {"stream": str(options.cli), "load_1min_at_start": round(__import__("os").getloadavg()[0], 1),
                   "cli": run_cli(options.cli, presets, query_file, methods=methods,
                                  out=workdir / "out" if options.out else None)}
        if not options.skip_reference:
            results["reference_one_window"] = reference_one_window(options.cli)
        for preset, row in results["cli"].items():
            if "reference_one_window" in results:  # wall time is noisy on a shared machine; CPU time less so
                reference = results["reference_one_window"]
                row["ratio_to_one_rdflib_window"] = round(row["seconds"] / reference["seconds"], 2)
                row["cpu_ratio_to_one_rdflib_window"] = round(row["cpu_s"] / max(reference["cpu_s"], 0.1), 2)
        if options.json:
            Path(options.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
        print(json.dumps(results, indent=2))
        return 0
    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="rspwb-bench-oracle-"))
    workdir.mkdir(parents=True, exist_ok=True)
    presets = tuple(p.strip() for p in options.presets.split(",") if p.strip())
    results = run_benchmark(SMALL if options.small else BIG, workdir, reference=not options.skip_reference,
                            presets=presets)
    if options.json:
        Path(options.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
