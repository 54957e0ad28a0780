"""What huge engine messages cost the host: peak RSS of the ``rspwb`` process tree, disk, SIGTERM latency.

An engine (``tests/data/engines/faulty_engine.py big-responses SIZE``) answers each of the
five stimuli of a small stream with one response line binding an IRI of SIZE MB. The run is
a real ``rspwb run`` (this checkout's launcher); psutil samples the RSS of its whole process
tree (rspwb, the engine) every 20 ms. With ``--sigterm-after S`` the run is sent SIGTERM after
S seconds and the time until it exits is measured (it must stay prompt, whatever the engine writes).

Usage::

    python3 benchmarks/bench_huge_lines.py --size-mb 45
    python3 benchmarks/bench_huge_lines.py --size-mb 45 --sigterm-after 3
    python3 benchmarks/bench_huge_lines.py --size-mb 45 --max-message-mb 100   # let the lines through
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "tests" / "data" / "engines" / "faulty_engine.py"
STREAM = "".join(f'<http://ex.org/m{i}> <http://ex.org/detectedAt> <http://ex.org/r{i}> "{1000 * i}" .\n'
                 for i in range(1, 6))


def tree_rss(root: psutil.Process) -> int:
    """RSS (bytes) of ``root`` and all its descendants now."""
    total = 0
    try:
        members = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    for process in members:
        try:
            total += process.memory_info().rss
        except psutil.Error:
            continue
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=45)
    parser.add_argument("--sigterm-after", type=float, default=None)
    parser.add_argument("--max-message-mb", type=int, default=None)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        (folder / "s.stream").write_text(STREAM, encoding="utf-8")
        limit = f", max_message_mb: {options.max_message_mb}" if options.max_message_mb else ""
        (folder / "exp.yaml").write_text(f"""\
name: huge-lines
stream: {{file: s.stream, format: yabench}}
queries:
  - id: q
    text: |
      REGISTER QUERY q AS SELECT ?x FROM STREAM <http://s> [RANGE 10s STEP 10s]
      WHERE {{ ?x <http://ex.org/detectedAt> ?r }}
engines:
  - id: e
    type: external
    parameters:
      command: ["{sys.executable}", "{ENGINE}", "big-responses", "{options.size_mb}"]
stand: {{mode: absolute-time, timeout: 120s{limit}}}
""", encoding="utf-8")
        started = time.monotonic()
        child = subprocess.Popen([str(ROOT / "rspwb"), "run", "exp.yaml", "--out", "out", "--yes", "--quiet"],
                                 cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        root = psutil.Process(child.pid)
        peak = 0
        signalled: float | None = None
        while child.poll() is None:
            peak = max(peak, tree_rss(root))
            if options.sigterm_after is not None and signalled is None \
                    and time.monotonic() - started > options.sigterm_after:
                signalled = time.monotonic()
                child.send_signal(signal.SIGTERM)
            time.sleep(0.02)
        ended = time.monotonic()
        _, err = child.communicate()
        disk = sum(path.stat().st_size for path in (folder / "out").rglob("*") if path.is_file())
        print(json.dumps({
            "size_mb": options.size_mb, "exit_code": child.returncode, "wall_s": round(ended - started, 2),
            "peak_tree_rss_mb": round(peak / (1 << 20), 1), "bundle_mb": round(disk / (1 << 20), 1),
            "sigterm_to_exit_s": None if signalled is None else round(ended - signalled, 2),
            "stderr": err.strip()[-300:],
        }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
