"""Benchmark: Results › Compare on a long run, window by window.

Reads the largest run of BUNDLE and of a second bundle (the same one when not given) and aligns
their windows (`rsp_workbench.gui.results.model.read_window_comparison`: what the Compare tab's task
does when a pair of runs is selected), then prints the time of each step. Time the whole process
with peak RSS through ``farm-bench``; make a long run with ``bench_bundle_read.py --make-from
SMALL_BUNDLE --windows N --out DIR``.

``python benchmarks/bench_compare.py BUNDLE [OTHER]``
"""

from __future__ import annotations

import argparse
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("bundle")
    parser.add_argument("other", nargs="?")
    args = parser.parse_args()
    from rsp_workbench.gui.results.model import compare_bundles, read_window_comparison
    from rsp_workbench.results.reader import open_bundle

    started = time.perf_counter()
    a = open_bundle(args.bundle, partial=True)
    b = open_bundle(args.other or args.bundle, partial=True)
    comparison = compare_bundles(a, b)
    opened = time.perf_counter()
    def size(row: dict) -> int:  # the run with the largest oracle.json (a published run: the most windows)
        oracle = a.folder / "runs" / str(row["run_id"]) / "oracle.json"
        return oracle.stat().st_size if oracle.is_file() else int(row.get("windows") or 0)

    run = max(a.rows, key=size)
    pair = next(c for c in comparison.runs if c.run_a == run["run_id"] and c.run_b)
    steps: list[tuple[float, str]] = []
    windows = read_window_comparison(a, str(pair.run_a), b, str(pair.run_b),
                                     progress=lambda fraction, message: steps.append((time.perf_counter(), message)))
    done = time.perf_counter()
    assert windows is not None
    print(f"open + pair: {opened - started:.2f} s; {comparison.summary_text()}")
    for (at, message), (after, _) in zip(steps, [*steps[1:], (done, "")]):
        print(f"{message}: {after - at:.2f} s")
    print(f"{windows.summary_text()}; windows compared in {done - opened:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
