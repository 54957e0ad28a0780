"""Benchmark: window timeline pan/zoom frames per second with 2 million stream elements, and
how long the GUI thread is blocked while an experiment runs.

Offscreen. Frames: each frame = one programmatic range change (alternating pans and zooms)
+ ``refresh()`` (what the 20 Hz timer runs) + a full repaint of the whole timeline widget
(plot and side panel) via ``grab()`` + ``processEvents()`` (which paints the widget's
pending update a second time, as a shown window would). Reports frames/s and mean/max
frame time on the wall clock, and the GUI thread's CPU time per frame (``thread_time``),
which does not depend on what else the machine is doing.

Run stalls: runs a real experiment (``--run-experiment FILE``, default the small teaching
example) as the Runs tab does (``execute_request``: a worker thread of the GUI's
``TaskRegistry`` drives ``run_experiment`` in a child process and forwards its events),
its progress feeding a progress bar, while a 10 ms ``QTimer`` heartbeat in the GUI
thread records its ticks; the longest stall is the largest gap between ticks minus
10 ms. The experiment runs twice: "cold" (the first run of the process) and "warm" (the steady
state). Then the
first run of the bundle is loaded into the timeline twice (``TimelineView.load_bundle_run``,
off the GUI thread) and measured the same way.

``python benchmarks/bench_gui.py [--elements N] [--frames N] [--run-experiment FILE]
[--size smoke] [--no-run] [--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("RSPWB_NO_SPARK_WARMUP", "1")
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_EXPERIMENT = ROOT / "sample_experiments" / "teaching" / "rooms.yaml"
HEARTBEAT_MS = 10


def measure_frames(app: Any, elements: int, frames: int) -> dict[str, Any]:
    """Pan/zoom frames on a synthetic SG1-shaped stream (20 lanes)."""
    from rsp_workbench.core.semantics import BorderConvention
    from rsp_workbench.core.windows import WindowSpec
    from rsp_workbench.gui.results.timeline.model import synthetic_lanes
    from rsp_workbench.gui.results.timeline.plot import WindowTimeline

    started = time.perf_counter()
    lanes = synthetic_lanes(elements, stations=20, interval_ms=100)
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
    walls, cpus = [], []
    for frame in range(frames):
        width = span / (2 ** (frame % 12))  # zoom levels from everything to 1/2048 of the stream
        centre = lo + span * ((frame * 0.037) % 1.0)  # pans
        wall, cpu = time.perf_counter(), time.thread_time()
        timeline.set_time_range(centre - width / 2, centre + width / 2)
        timeline.refresh()
        timeline.grab()
        app.processEvents()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.thread_time() - cpu)
    timeline.close()
    return {
        "elements": lanes.count,
        "lanes": len(lanes.names),
        "frames": len(walls),
        "fps": len(walls) / sum(walls),
        "mean_frame_ms": 1000 * statistics.fmean(walls),
        "max_frame_ms": 1000 * max(walls),
        "cpu_fps": len(cpus) / sum(cpus),
        "mean_frame_cpu_ms": 1000 * statistics.fmean(cpus),
        "max_frame_cpu_ms": 1000 * max(cpus),
        "build_lanes_s": build_s,
        "load_s": load_s,
    }


def _gui_classes() -> tuple[type, type]:
    """QObject/QWidget subclasses with @Slot methods (defined after the QApplication exists)."""
    from PySide6.QtCore import QObject, Qt, QTimer, Slot
    from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout, QWidget

    class Heartbeat(QObject):
        """A 10 ms timer in the GUI thread; the gaps between its ticks are the GUI thread's stalls."""

        def __init__(self) -> None:
            super().__init__()
            self.ticks: list[float] = []
            self.timer = QTimer(self)
            self.timer.setTimerType(Qt.TimerType.PreciseTimer)
            self.timer.setInterval(HEARTBEAT_MS)
            self.timer.timeout.connect(self.tick)

        @Slot()
        def tick(self) -> None:
            self.ticks.append(time.perf_counter())

        def start(self) -> None:
            self.ticks = [time.perf_counter()]
            self.timer.start()

        def stop(self) -> dict[str, Any]:
            self.timer.stop()
            self.ticks.append(time.perf_counter())
            gaps = [1000 * (b - a) for a, b in zip(self.ticks, self.ticks[1:])]
            ordered = sorted(gaps)
            return {
                "ticks": len(gaps),
                "max_stall_ms": max(0.0, max(gaps) - HEARTBEAT_MS) if gaps else 0.0,
                "p99_gap_ms": ordered[int(0.99 * (len(ordered) - 1))] if gaps else 0.0,
                "stalls_over_100ms": sum(1 for g in gaps if g - HEARTBEAT_MS > 100),
            }

    class RunProgress(QWidget):
        """What the GUI shows of a run: a progress bar and the last message (fed by queued signals)."""

        def __init__(self) -> None:
            super().__init__()
            self.bar = QProgressBar()
            self.bar.setRange(0, 1000)
            self.label = QLabel("")
            self.events = 0
            layout = QVBoxLayout(self)
            layout.addWidget(self.bar)
            layout.addWidget(self.label)

        @Slot(float, str)
        def show_progress(self, fraction: float, message: str) -> None:
            self.events += 1
            self.bar.setValue(int(1000 * max(0.0, min(1.0, fraction))))
            self.label.setText(message)

    return Heartbeat, RunProgress


def _run_function(experiment_file: Path, out: Path, size: str | None) -> Any:
    """The worker, as the Runs tab starts it: ``execute_request`` (the experiment in a child
    process, progress events forwarded), progress as (fraction, message)."""
    from rsp_workbench.experiment import load_experiment
    from rsp_workbench.gui.runs.model import RunRequest, execute_request

    def run(state: Any) -> Any:
        experiment = load_experiment(experiment_file)
        if size is not None and size not in experiment.sizes:
            raise SystemExit(f"{experiment_file}: no size {size!r}")

        def progress(event: Any) -> None:
            fraction = event.done / event.total if event.total else 0.0
            state.report_progress(fraction, f"{event.stage}: {event.message}")

        request = RunRequest(experiment, out, size=size, scheduler="local", confirmed=True)
        return execute_request(request, state.cancel_event, progress)

    return run


def _wait(app: Any, task: Any, timeout_s: float) -> None:
    """Run the real event loop until the task's thread has ended."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    task.done.connect(loop.quit)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    if task.is_running():
        loop.exec()
    task.wait(5000)
    app.processEvents()


def measure_run_stalls(app: Any, experiment_file: Path, size: str | None) -> dict[str, Any]:
    """GUI-thread stalls while ``run_experiment`` runs in a TaskRegistry worker, then while the
    timeline loads the bundle's first run."""
    from rsp_workbench.results.reader import open_bundle
    from rsp_workbench.gui.tasks import TaskRegistry
    from rsp_workbench.gui.results.timeline.view import TimelineView

    Heartbeat, RunProgress = _gui_classes()
    registry = TaskRegistry()
    progress = RunProgress()
    progress.resize(600, 100)
    progress.show()
    heartbeat = Heartbeat()
    result: dict[str, Any] = {"experiment": str(experiment_file), "size": size}
    with tempfile.TemporaryDirectory(prefix="rspwb-bench-gui-") as tmp:
        # twice: the first run of a process also imports (and, in a freshly edited tree, compiles)
        # the pipeline modules in the worker, which holds the GIL; the second is the steady state
        for attempt in ("cold", "warm"):
            out = Path(tmp) / f"bundle-{attempt}"
            progress.events = 0
            heartbeat.start()
            started = time.perf_counter()
            task = registry.start("run", _run_function(experiment_file, out, size))
            task.progress.connect(progress.show_progress)
            _wait(app, task, 600)
            run_s = time.perf_counter() - started
            result[f"run_{attempt}"] = {"wall_s": run_s, "progress_events": progress.events, **heartbeat.stop()}
            if task.error is not None:
                raise task.error
        summary = open_bundle(out)
        result["runs"] = len(summary.rows)
        first = next((row["run_id"] for row in summary.rows if row.get("status") == "ok"), None)
        if first is not None:
            view = TimelineView(registry)
            view.resize(1400, 800)
            view.show()
            app.processEvents()
            for attempt in ("cold", "warm"):
                heartbeat.start()
                started = time.perf_counter()
                load = view.load_bundle_run(out, first)
                _wait(app, load, 120)
                result[f"timeline_load_{attempt}"] = {"run_id": first, "wall_s": time.perf_counter() - started,
                                                      **heartbeat.stop(), "status": view.status.text()[:200]}
            view.close()
        registry.wait_all(10_000)
    progress.close()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--elements", type=int, default=2_000_000)
    parser.add_argument("--frames", type=int, default=120)
    parser.add_argument("--run-experiment", type=Path, default=DEFAULT_EXPERIMENT, metavar="FILE",
                        help="experiment run while GUI stalls are measured (default: %(default)s)")
    parser.add_argument("--size", default="smoke", help="size of that experiment (default: %(default)s)")
    parser.add_argument("--no-run", action="store_true", help="only measure frames")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    import rsp_workbench.gui.qt  # noqa: F401  (PySide6 before pyqtgraph, pyqtgraph options)

    result: dict[str, Any] = {"frames": measure_frames(app, args.elements, args.frames)}
    if not args.no_run:
        result["run_stalls"] = measure_run_stalls(app, args.run_experiment, args.size)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    f = result["frames"]
    print(f"timeline with {f['elements']:,} elements in {f['lanes']} lanes: {f['fps']:.1f} frames/s "
          f"(mean {f['mean_frame_ms']:.1f} ms, max {f['max_frame_ms']:.1f} ms per pan/zoom incl. repaint); "
          f"GUI-thread CPU {f['mean_frame_cpu_ms']:.1f} ms/frame mean, {f['max_frame_cpu_ms']:.1f} ms max "
          f"(= {f['cpu_fps']:.1f} frames/s on an idle core); load {f['load_s']:.2f} s")
    if "run_stalls" in result:
        r = result["run_stalls"]
        for attempt in ("cold", "warm"):
            run = r[f"run_{attempt}"]
            print(f"run {Path(r['experiment']).name} ({attempt}, {r['runs']} runs, {run['wall_s']:.1f} s, "
                  f"{run['progress_events']} progress events): longest GUI stall {run['max_stall_ms']:.1f} ms, "
                  f"p99 heartbeat gap {run['p99_gap_ms']:.1f} ms, {run['stalls_over_100ms']} stall(s) > 100 ms")
        for attempt in ("cold", "warm"):
            load = r.get(f"timeline_load_{attempt}")
            if load is not None:
                print(f"timeline load of {load['run_id']} ({attempt}): {load['wall_s']:.2f} s, longest GUI stall "
                      f"{load['max_stall_ms']:.1f} ms, {load['stalls_over_100ms']} stall(s) > 100 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
