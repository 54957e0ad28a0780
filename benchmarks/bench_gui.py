"""Benchmark: window timeline pan/zoom frames per second with 2 million stream elements.

Offscreen. Each frame = one programmatic range change (alternating pans and zooms) +
``refresh()`` (what the 20 Hz timer runs) + a full repaint of the widget via ``grab()``.
Also reports the longest single frame, i.e. how long the GUI thread is blocked.
Run ``python benchmarks/bench_gui.py [--elements N] [--frames N] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--elements", type=int, default=2_000_000)
    parser.add_argument("--frames", type=int, default=120)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    from workbench.core.semantics import BorderConvention
    from workbench.core.windows import WindowSpec
    from workbench.gui.timeline import WindowTimeline, synthetic_lanes

    started = time.perf_counter()
    lanes = synthetic_lanes(args.elements, stations=20, interval_ms=100)
    build_s = time.perf_counter() - started
    timeline = WindowTimeline()
    timeline.resize(1400, 800)
    timeline.show()
    started = time.perf_counter()
    timeline.load(lanes)
    timeline.set_window_spec(WindowSpec(10_000, 5_000, 0, BorderConvention.CLOSED_OPEN))
    app.processEvents()
    load_s = time.perf_counter() - started
    lo, hi = lanes.span
    span = hi - lo
    frames = []
    for frame in range(args.frames):
        width = span / (2 ** (frame % 12))  # zoom levels from everything to 1/2048 of the stream
        centre = lo + span * ((frame * 0.037) % 1.0)  # pans
        t0 = time.perf_counter()
        timeline.set_time_range(centre - width / 2, centre + width / 2)
        timeline.refresh()
        timeline.grab()
        app.processEvents()
        frames.append(time.perf_counter() - t0)
    total = sum(frames)
    result = {
        "elements": lanes.count,
        "lanes": len(lanes.names),
        "frames": len(frames),
        "fps": len(frames) / total,
        "mean_frame_ms": 1000 * total / len(frames),
        "max_frame_ms": 1000 * max(frames),
        "build_lanes_s": build_s,
        "load_s": load_s,
    }
    timeline.close()
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"timeline with {result['elements']:,} elements in {result['lanes']} lanes: "
              f"{result['fps']:.1f} frames/s (mean {result['mean_frame_ms']:.1f} ms, max {result['max_frame_ms']:.1f} ms "
              f"per pan/zoom incl. repaint); load {result['load_s']:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
