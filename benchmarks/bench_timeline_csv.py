"""The timeline's per-window CSV of a long run: ``python benchmarks/bench_timeline_csv.py [WINDOWS]``
(default 1,000,000; YABench BIG has 2.1 M). Builds the oracle's per-window columns in memory and
writes them as the Timeline's CSV button does (``write_window_csv``); prints windows and seconds.
"""

from __future__ import annotations

import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rsp_workbench.gui.results.timeline.model import write_window_csv  # noqa: E402


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    rng = np.random.default_rng(7)
    start = np.arange(count, dtype=np.int64) * 1000
    expected = rng.integers(0, 20, count).astype(float)
    recall = np.where(expected > 0, rng.choice([1.0, 0.5, 0.9], count), 1.0)
    columns = {"start": start, "end": start + 5000, "precision": np.ones(count), "recall": recall,
               "expected_size": expected, "actual_size": expected, "window_triples": np.full(count, 175.0),
               "reconstructed_start": np.full(count, np.nan), "reconstructed_end": np.full(count, np.nan)}
    run = types.SimpleNamespace(run_id="case0-rep0-e-q", engine="e", windows=columns)
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        path = write_window_csv(Path(tmp) / "timeline.csv", [run])
        took = time.perf_counter() - began
        print(f"{count:,} windows, {path.stat().st_size / 1e6:.0f} MB CSV in {took:.1f} s")


if __name__ == "__main__":
    main()
