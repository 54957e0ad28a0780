"""Benchmark: the oracle's memory on the adversarial stream shapes (many windows per element, unsorted input, skewed joins).

``rspwb oracle --t0 all --json`` end to end (JVM included) on an SG1 stream and three reshaped
copies of it, reporting wall time, CPU and the peak RSS of the whole process tree:

- ``sorted``: the SG1 stream as generated (the yardstick);
- ``unsorted``: the same observations shuffled (7-line groups kept): refused up front with the
  file and line, before any work;
- ``own-timestamp``: every observation its own timestamp (one ms apart), so every element is an
  evaluation under content change;
- ``whole-stream-window``: a sliding window wider than the stream (RANGE 60 s STEP 1 s over 30 s),
  so every window holds the whole stream seen so far.

``python benchmarks/bench_oracle_shapes.py [--stations 1000] [--presets cqels,yabench-content-change]
[--workdir DIR] [--json FILE]`` (1,000 stations = YABench MEDIUM, 210 k triples).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_oracle import tree_peak  # noqa: E402

QUERY = Path(__file__).resolve().parents[1] / "sample_experiments" / "yabench" / "queries" / "q1.rq"
GROUP = 7  # lines per SG1 observation in the YABench text format


def generate(workdir: Path, stations: int) -> Path:
    """The SG1 stream (YABench Exp. 1 parameters) at ``stations`` stations, 30 s."""
    path = workdir / f"sg1-{stations}.stream"
    if not path.exists():
        from rsp_workbench.cli.main import main as rspwb

        code = rspwb(["generate", "--generator", "sg1", "--param", f"stations={stations}", "--param", "interval=1s",
                      "--param", "duration=30s", "--param", "seed=1430236906", "--format", "yabench",
                      "--out", str(path), "--quiet"])
        if code:
            raise SystemExit(f"generate failed ({code})")
    return path


def reshaped(source: Path, shape: str) -> Path:
    """``source`` with its observations shuffled (``unsorted``) or one ms apart (``own-timestamp``)."""
    target = source.with_name(f"{source.stem}-{shape}.stream")
    if target.exists():
        return target
    lines = source.read_text().splitlines()
    groups = [lines[i:i + GROUP] for i in range(0, len(lines), GROUP)]
    if shape == "unsorted":
        random.Random(1).shuffle(groups)
    else:
        groups = [[_retimed(line, k) for line in group] for k, group in enumerate(groups)]
    with open(target, "w") as out:
        for group in groups:
            out.write("\n".join(group) + "\n")
    return target


def _retimed(line: str, t: int) -> str:
    """A YABench line (``S P O "t" .``) with the timestamp ``t``."""
    return line.rpartition(' "')[0] + f' "{t}" .'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stations", type=int, default=1000)
    parser.add_argument("--presets", default="cqels,yabench-content-change")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", metavar="FILE")
    options = parser.parse_args(argv)
    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="bench-shapes-"))
    workdir.mkdir(parents=True, exist_ok=True)
    stream = generate(workdir, options.stations)
    cases = {
        "sorted": (stream, ("WSIZE=5s", "WSLIDE=5s")),
        "unsorted": (reshaped(stream, "unsorted"), ("WSIZE=5s", "WSLIDE=5s")),
        "own-timestamp": (reshaped(stream, "own-timestamp"), ("WSIZE=5s", "WSLIDE=5s")),
        "whole-stream-window": (stream, ("WSIZE=60s", "WSLIDE=1s")),
    }
    results: dict[str, Any] = {"stations": options.stations, "load": os.getloadavg(), "runs": {}}
    for preset in options.presets.split(","):
        for name, (path, sizes) in cases.items():
            variables = [arg for size in ("TEMP=50.0", *sizes) for arg in ("--var", size)]
            command = [sys.executable, "-m", "rsp_workbench.cli.main", "oracle", "--stream", str(path), "--stream-format",
                       "yabench", "--query", str(QUERY), *variables, "--system", preset, "--t0", "all", "--json"]
            with open(os.devnull, "w") as sink:
                row = tree_peak(command, stdout=sink)
            row["message"] = row.pop("stderr_tail").strip().splitlines()[-1:] if row["exit"] else []
            results["runs"][f"{preset}/{name}"] = row
            print(f"{preset:24} {name:20} exit {row['exit']}  {row['seconds']:7.1f} s  cpu {row['cpu_s']:7.1f} s  "
                  f"peak {row['peak_rss_mb']:6} MB  {' '.join(row['message'])}", flush=True)
    results["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if options.json:
        Path(options.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
