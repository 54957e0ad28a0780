"""Benchmark: `rspwb check` on the CSRBench conformance set (3 engines × 7 queries × 2 matching modes).

Each code version given with ``--code NAME=ROOT`` runs in its own process (``PYTHONPATH=ROOT``,
the same interpreter), which judges the 42 answers one after the other *in process*
(``cli.main.main(["check", …])``, the command a user runs, its JSON read back): per check
the wall and CPU time and the verdict; for the process, the total and the peak RSS of its
process tree (psutil, sampled every 50 ms). A check that uses more than ``--limit`` seconds
of CPU is stopped (reported as ``> LIMIT``) and the next one runs. ``--parallel`` runs the
versions' processes at the same time (on a shared machine CPU time is the comparable
figure; wall time then includes the other versions' share).

    python3 benchmarks/bench_conformance.py --code old=/tmp/old --code main=/work/main \
        --code new=. [--data ../shared/conformance/csrbench] [--limit 60] [--parallel] [--json FILE]

The package is ``rsp_workbench`` (``workbench`` in code before the rename), found under ROOT.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

ENGINES = ("csparql", "cqels", "sparqlstream")
QUERIES = range(1, 8)
MODES = ("csrbench", "strict")


def default_data() -> Path:
    """``../shared/conformance/csrbench`` next to the repository (``/work/shared`` otherwise)."""
    near = Path(__file__).resolve().parents[1].parent / "shared" / "conformance" / "csrbench"
    return near if near.is_dir() else Path("/work/shared/conformance/csrbench")


def check_argv(data: Path, engine: str, query: int, mode: str) -> list[str]:
    """The README's command for one answer (``--json``)."""
    return ["check", "--stream", str(data / "data"), "--stream-format", "csrbench-dir", "--interval", "1000",
            "--query", str(data / f"q{query}.rq"), "--system", engine,
            "--engine-output", str(data / "answers" / f"{engine}-answer-{query}.json"),
            "--engine-output-format", "csrbench-json", "--match", mode, "--json"]


class _Stopped(Exception):
    pass


def _stop(signum: int, frame: Any) -> None:
    raise _Stopped()


def worker(package: str, data: Path, limit: float) -> None:
    """Run the 42 checks in this process; one JSON line per check on stdout."""
    import importlib

    main = importlib.import_module(f"{package}.cli.main").main
    signal.signal(signal.SIGPROF, _stop)
    out = sys.stdout
    for mode in MODES:
        for engine in ENGINES:
            for query in QUERIES:
                buffer = io.StringIO()
                wall, cpu = time.perf_counter(), time.process_time()
                verdict: Any = None
                signal.setitimer(signal.ITIMER_PROF, limit)  # CPU seconds of this process
                try:
                    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
                        code = main(check_argv(data, engine, query, mode))
                    if code == 130:  # stopped (SIGTERM, Ctrl-C): rspwb returns 130 instead of raising
                        return
                    verdict = json.loads(buffer.getvalue()).get("verdict")
                except _Stopped:
                    verdict = "stopped"
                except Exception as error:  # noqa: BLE001 - a traceback is a result here
                    verdict = f"error: {type(error).__name__}"
                finally:
                    signal.setitimer(signal.ITIMER_PROF, 0)
                row = {"mode": mode, "engine": engine, "query": query, "verdict": verdict,
                       "wall_s": round(time.perf_counter() - wall, 3), "cpu_s": round(time.process_time() - cpu, 3)}
                out.write(json.dumps(row) + "\n")
                out.flush()


def _package(root: Path) -> str:
    return "rsp_workbench" if (root / "rsp_workbench").is_dir() else "workbench"


def _tree_rss(process: Any) -> int:
    import psutil

    total = 0
    for p in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total


def measure(name: str, root: Path, data: Path, limit: float) -> dict[str, Any]:
    """One code version's 42 checks in one process: rows, total wall time, peak RSS of the tree."""
    import psutil

    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", _package(root), "--data", str(data),
               "--limit", str(limit)]
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True, cwd=str(root))
    process = psutil.Process(child.pid)
    peak = 0
    rows: list[dict[str, Any]] = []

    def read() -> None:  # the child's lines, while this thread samples its memory
        for line in child.stdout:  # type: ignore[union-attr]
            rows.append(json.loads(line))
            print(f"{name:>6} {rows[-1]}", file=sys.stderr, flush=True)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while child.poll() is None:
        with contextlib.suppress(psutil.Error):
            peak = max(peak, _tree_rss(process))
        time.sleep(0.05)
    reader.join()
    return {"name": name, "root": str(root), "package": _package(root), "rows": rows,
            "wall_s": round(time.perf_counter() - started, 2), "peak_rss_mb": round(peak / 2**20, 1),
            "returncode": child.returncode}


def _cells(runs: list[dict[str, Any]], limit: float) -> Iterator[str]:
    yield "| check | " + " | ".join(run["name"] for run in runs) + " |"
    yield "| --- |" + " ---: |" * len(runs)
    keys = [(r["mode"], r["engine"], r["query"]) for r in runs[0]["rows"]]
    for key in keys:
        cells = []
        for run in runs:
            row = next((r for r in run["rows"] if (r["mode"], r["engine"], r["query"]) == key), None)
            if row is None:
                cells.append("–")
            elif row["verdict"] == "stopped":
                cells.append(f"{row['wall_s']:.1f} s (> {limit:g} CPU, stopped)")
            else:
                cells.append(f"{row['wall_s']:.2f} s ({row['cpu_s']:.2f} CPU) {row['verdict']}")
        yield f"| {key[0]} {key[1]} Q{key[2]} | " + " | ".join(cells) + " |"
    yield ("| **all 42, one process: wall, CPU, peak RSS** | "
           + " | ".join(f"{run['wall_s']:.1f} s, {sum(r['cpu_s'] for r in run['rows']):.1f} s CPU, "
                        f"{run['peak_rss_mb']:.0f} MB" for run in runs) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", action="append", default=[], metavar="NAME=ROOT")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--limit", type=float, default=60.0, help="CPU seconds before a check is stopped")
    parser.add_argument("--parallel", action="store_true", help="run the code versions at the same time")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    data = (args.data or default_data()).resolve()
    if args.worker:
        worker(args.worker, data, args.limit)
        return 0
    codes = args.code or [f"this={Path(__file__).resolve().parents[1]}"]
    specs = [(name, Path(root).resolve()) for name, _, root in (spec.partition("=") for spec in codes)]
    if args.parallel:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(specs)) as pool:
            runs = list(pool.map(lambda spec: measure(spec[0], spec[1], data, args.limit), specs))
    else:
        runs = [measure(name, root, data, args.limit) for name, root in specs]
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; limit {args.limit:g} s of CPU per check"
          + ("; versions in parallel" if args.parallel else ""))
    for line in _cells(runs, args.limit):
        print(line)
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "load": load}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
