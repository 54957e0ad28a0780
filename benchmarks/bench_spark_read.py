"""Benchmark: ``rspwb oracle --method spark`` on a YABench text stream, the driver's memory apart.

SG1 at ``--scale`` × YABench BIG (10,000 stations × scale, 1 s, 30 s: 2.1 M triples × scale)
is generated as YABench text into ``--workdir`` (removed afterwards unless ``--keep``; one already
there, kept by an earlier run, is used and left), then
``rspwb oracle --stream S --query Q --system yabench-content-change --t0 all --json --method
spark`` runs end to end in a subprocess (JVM start included) for each ``--checkout`` given
(default: this one; another checkout, e.g. the main branch's, for a before/after pair: its
code is put first on PYTHONPATH, this interpreter runs it). Reported per run: wall time, the
peak RSS of the whole process tree (JVM and Python workers included) and of the Python driver
alone (the ``rspwb`` process), sampled every 0.1 s, the path that ran and a digest of the
JSON output (equal digests: equal answers).

    python3 benchmarks/bench_spark_read.py --scale 1 --checkout /work/main --checkout .
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_oracle import QUERY  # noqa: E402

HERE = Path(__file__).resolve().parents[1]


def stream_path(workdir: Path, scale: float) -> Path:
    return workdir / f"sg1_x{scale:g}.stream"


def generate(workdir: Path, scale: float) -> Path:
    """The SG1 stream at ``scale`` × BIG as YABench text (this checkout's generator), unless it exists."""
    path = stream_path(workdir, scale)
    if not path.exists():
        stations = int(10_000 * scale)
        subprocess.run([sys.executable, "-m", "rsp_workbench.cli.main", "generate", "--generator", "sg1",
                        "--param", f"stations={stations}", "--param", "interval=1s", "--param", "duration=30s",
                        "--param", "seed=1", "--format", "yabench", "--out", str(path), "--force"],
                       check=True, cwd=HERE, stdout=subprocess.DEVNULL)
    return path


def measure(command: list[str], checkout: Path) -> dict[str, Any]:
    """Wall time, peak RSS of the process tree and of its root (the driver), output digest."""
    import psutil

    env = {**os.environ, "PYTHONPATH": str(checkout)}
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=checkout, env=env)
    digest = hashlib.sha256()
    facts: dict[str, Any] = {}

    def consume() -> None:
        data = process.stdout.read() if process.stdout else b""
        digest.update(data)
        try:
            out = json.loads(data)
            if not isinstance(out, dict):
                raise ValueError("not the command's JSON object")
            facts.update({"method": out.get("method"), "engine": out.get("engine"),
                          "t0_candidates": out.get("t0_candidates"), "windows_t0_0": len(out.get("windows") or []),
                          "answers_sha256": hashlib.sha256(json.dumps(out.get("windows"), sort_keys=True)
                                                           .encode()).hexdigest()[:16]})
        except ValueError:
            facts["output_head"] = data[:200].decode(errors="replace")

    errors: list[bytes] = []  # read while it runs: a pipe left full (64 kB of a Java stack trace) blocks the child
    readers = [threading.Thread(target=consume, daemon=True),
               threading.Thread(target=lambda: errors.append(process.stderr.read() if process.stderr else b""),
                                daemon=True)]
    for reader in readers:
        reader.start()
    root = psutil.Process(process.pid)
    tree_peak = driver_peak = 0
    while process.poll() is None:
        total = 0
        try:
            for member in [root, *root.children(recursive=True)]:
                try:
                    rss = member.memory_info().rss
                except psutil.Error:
                    continue
                total += rss
                if member.pid == root.pid:
                    driver_peak = max(driver_peak, rss)
        except psutil.Error:
            pass
        tree_peak = max(tree_peak, total)
        time.sleep(0.1)
    seconds = round(time.perf_counter() - started, 1)
    for reader in readers:
        reader.join()
    error = b"".join(errors).decode(errors="replace")
    return {"seconds": seconds, "tree_peak_mb": round(tree_peak / 2**20), "driver_peak_mb": round(driver_peak / 2**20),
            "exit": process.returncode, "output_sha256": digest.hexdigest()[:16], "stderr_tail": error[-300:],
            "load_1min": round(os.getloadavg()[0], 1), **facts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="× YABench BIG (10,000 stations)")
    parser.add_argument("--checkout", type=Path, action="append", default=None,
                        help="a checkout whose code runs the command (repeat for before/after); default this one")
    parser.add_argument("--preset", default="yabench-content-change")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the generated stream")
    parser.add_argument("--json", metavar="FILE")
    options = parser.parse_args(argv)
    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="rspwb-bench-spark-read-"))
    workdir.mkdir(parents=True, exist_ok=True)
    generated = not stream_path(workdir, options.scale).exists()  # a stream kept by an earlier run stays
    try:
        started = time.perf_counter()
        stream = generate(workdir, options.scale)
        results: dict[str, Any] = {"scale": options.scale, "stream_bytes": stream.stat().st_size,
                                   "generate_s": round(time.perf_counter() - started, 1), "runs": {}}
        query = workdir / "q.rq"
        query.write_text(QUERY, encoding="utf-8")
        for checkout in options.checkout or [HERE]:
            command = [sys.executable, "-m", "rsp_workbench.cli.main", "oracle", "--stream", str(stream), "--query",
                       str(query), "--system", options.preset, "--t0", "all", "--json", "--method", "spark"]
            row = measure(command, checkout.resolve())
            results["runs"][str(checkout)] = row
            print(json.dumps({str(checkout): row}), flush=True)
        if options.json:
            Path(options.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
        print(json.dumps(results, indent=2))
    finally:
        if not options.keep and options.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
        elif not options.keep and generated:
            stream_path(workdir, options.scale).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
