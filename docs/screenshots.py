"""Regenerate a screenshot of each view into docs/ (offscreen): ``python docs/screenshots.py [GROUP…]``
(groups: library, designer — with the library —, teaching, probe, runs, timeline, results, compare; default all).

Writes docs/gui-library.png, gui-designer.png, gui-designer-invalid.png, gui-designer-stream.png,
gui-designer-streams.png, gui-designer-queries.png, gui-designer-query-file.png, gui-designer-variables.png,
gui-designer-1024.png,
gui-teaching.png, gui-teaching-coupon.png, gui-probe.png, gui-probe-side-by-side.png, gui-runs.png, gui-runs-done.png,
gui-timeline.png, gui-timeline-export.png (the timeline's PNG export: title and legend), gui-results-compare.png,
gui-results-compare-published.png, gui-designer-imported.png
(the coupon, finished-run, timeline, results-summary, quality, latency × memory and compare shots also at
1024×700: ``*-1024.png``) and
gui-results-*.png (the Results
browser on smoke-size runs of the samples, a YABench-layout folder made from one of them, and the
Overlay of both). No Spark is started.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["RSPWB_NO_SPARK_WARMUP"] = "1"
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DOCS = ROOT / "docs"
SAMPLE = ROOT / "tests" / "data" / "experiments" / "full.yaml"


def designer_shots(window: Any, shot: Callable[[str], None]) -> None:
    """The designer at the default window size (1280×820): engines, stream, several streams (the
    coupon example's ``streams:``), variables (cases), queries (windows table), and an inline error
    (eviction ``cache_size: -1``)."""
    size = window.size()
    window.resize(1280, 820)
    window.tabs.setCurrentWidget(window.designer)
    designer = window.designer
    window.open_experiment(str(SAMPLE))
    designer.show_section("engines")
    shot("gui-designer.png")
    designer.show_section("stream")
    shot("gui-designer-stream.png")
    window.open_experiment(str(ROOT / "sample_experiments" / "teaching" / "coupon.yaml"))
    designer.show_section("stream")
    shot("gui-designer-streams.png")
    window.open_experiment(str(SAMPLE))
    designer.queries.select_query(1)
    designer.show_section("queries")
    shot("gui-designer-queries.png")
    designer.queries.select_query(0)  # a query file, edited in place: the parser's error on its line
    text = designer.queries.query_edit.toPlainText()
    designer.queries.query_edit.setPlainText(text.replace("[RANGE ${WSIZE}", "[RANGE ${WSIZE}x"))
    designer.flush_pending_edits()
    shot("gui-designer-query-file.png")
    designer.queries.tools.forget()
    window.open_experiment(str(ROOT / "sample_experiments" / "heaven" / "heaven.yaml"))
    designer.show_section("variables")
    shot("gui-designer-variables.png")
    window.open_experiment(str(ROOT / "sample_experiments" / "eviction" / "eviction.yaml"))
    designer.engines.select_engine(1)
    designer.model.set(("engines", 1, "parameters", "cache_size"), -1)
    designer.show_section("engines")
    shot("gui-designer-invalid.png")
    designer.model.undo()
    designer.model._saved_raw = designer.model.raw
    window.resize(size)
    designer_small_shot()


def designer_small_shot() -> None:
    """The designer alone at 1024×640 (a 1024×700 window less menu, tabs and status bar): the
    stream section, the widest form, fits without scrolling sideways (gui-designer-1024.png)."""
    from PySide6.QtWidgets import QApplication

    from rsp_workbench.gui.designer.view import DesignerView

    view = DesignerView()
    view.resize(1024, 640)
    view.show()
    view.open_file(SAMPLE)
    view.show_section("stream")
    for _ in range(3):
        QApplication.processEvents()
    view.grab().save(str(DOCS / "gui-designer-1024.png"))
    print(DOCS / "gui-designer-1024.png")
    view.close()


# Results browser screenshots: (sample experiment, bundle folder name, sub-tab, file).
RESULTS_SHOTS = (
    ("yabench/experiment1.yaml", "yabench-experiment1", "summary_view", "gui-results-summary.png"),
    ("yabench/experiment1.yaml", "yabench-experiment1", "quality_view", "gui-results-quality.png"),
    ("csrbench/csrbench.yaml", "csrbench", "matrix_view", "gui-results-matrix.png"),
    ("heaven/heaven.yaml", "heaven", "resources_view", "gui-results-resources.png"),
    ("heaven/heaven.yaml", "heaven", "heaven_view", "gui-results-heaven.png"),
    ("eviction/eviction.yaml", "eviction", "eviction_view", "gui-results-eviction.png"),
)


def results_shots(window: Any, shot: Callable[[str], None], tmp: Path) -> None:
    """The Results browser on smoke-size bundles of the samples (run here, ~3 min on two cores;
    set RSPWB_SCREENSHOT_BUNDLES=DIR to keep them in DIR and reuse them next time)."""
    from rsp_workbench.results.reader import open_bundle
    from rsp_workbench.experiment import load_experiment
    from rsp_workbench.pipeline.run_experiment import run_experiment

    folder = Path(os.environ.get("RSPWB_SCREENSHOT_BUNDLES") or tmp / "bundles")
    window.tabs.setCurrentWidget(window.results)
    size = window.size()
    window.resize(1280, 820)  # the default window size
    for sample, name, view, file in RESULTS_SHOTS:
        bundle = folder / name
        if not (bundle / "manifest.json").is_file() or open_bundle(bundle).status != "ok":
            shutil.rmtree(bundle, ignore_errors=True)
            run_experiment(load_experiment(ROOT / "sample_experiments" / sample), bundle, size="smoke", assume_yes=True)
        show_bundle(window, bundle)
        window.results.tabs.setCurrentWidget(getattr(window.results, view))
        if view == "quality_view":  # the drifting C-SPARQL windows, both repetitions as boxplots
            window.results.quality_view.engine_combo.setCurrentText("csparql")
        if view == "resources_view":  # the largest Heaven cell: the most samples at smoke size
            window.results.resources_view.group_combo.setCurrentIndex(3)
        shot(file)
    show_bundle(window, folder / "heaven")  # one repetition: no boxplot column
    window.results.tabs.setCurrentWidget(window.results.quality_view)
    shot("gui-results-quality-one-repetition.png")
    published_shots(window, shot, folder)
    window.resize(size)


def show_bundle(window: Any, bundle: Path) -> None:
    """Open ``bundle`` in the Results browser and wait until it is shown."""
    from PySide6.QtWidgets import QApplication

    if window.results.folder != bundle:
        task = window.results.open_bundle(bundle)  # a Task when the bundle is read in the background
        while task is not None and (task.is_running() or window.results.data is None
                                    or window.results.data.bundle.folder != bundle):
            task.wait(100)
            QApplication.processEvents()


def yabench_layout(bundle: Path, target: Path) -> Path:
    """The experiment-1 smoke bundle's own files laid out as YABench's runner lays out a test
    folder per engine (config.json, engine.query, results/oracle, results/performance), so the
    screenshots show a YABench folder opened directly; P_smoke_agg is left out, as published
    folders often lack it."""
    manifest = json.loads((bundle / "manifest.json").read_text())
    shutil.rmtree(target, ignore_errors=True)
    for engine in ("cqels", "csparql"):
        folder = target / engine
        (folder / "results" / "oracle").mkdir(parents=True)
        (folder / "results" / "performance").mkdir(parents=True)
        runs = [r for r in manifest["runs"] if r["engine"] == engine]
        spec = json.loads((bundle / "runs" / runs[0]["run_id"] / "run-spec.json").read_text())
        policy = "oncontentchange" if engine == "cqels" else "onwindowclose"
        config = {"generator": "SG1", "enginename": engine, "seed": str(manifest["seed"]),
                  "vars": {k: str(v) for k, v in spec["variables"].items() if k in ("TEMP", "WSIZE", "WSLIDE")}
                  | {"WPOLICY": policy},
                  "graceful": "false", "interval": "1s", "duration": "10s",
                  "tests": [{"name": "smoke", "stations": str(spec["variables"]["STATIONS"]), "runs": len(runs)}]}
        (folder / "config.json").write_text(json.dumps(config, indent=2))
        (folder / "engine.query").write_text(spec["query_text"])
        for n, run in enumerate(runs, start=1):
            shutil.copy(bundle / "yabench" / "case0-q1" / f"ORACLE_{engine}_{n}",
                        folder / "results" / "oracle" / f"ORACLE_smoke{n}")
            samples = (bundle / "runs" / run["run_id"] / f"P_{engine}.csv").read_text()
            (folder / "results" / "performance" / f"P_smoke{n}").write_text(f"{engine.upper()}\n{samples}")
        shutil.copy(bundle / "yabench" / "case0-q1" / f"BOXPLOTS_{engine}",
                    folder / "results" / "oracle" / "BOXPLOTS_smoke")
    return target


def published_shots(window: Any, shot: Callable[[str], None], bundles: Path) -> None:
    """A YABench-layout folder opened in Results (summary with what is missing, quality, at
    1280×820 and 1024×700), and the Overlay of its CQELS run against the workbench's own."""
    own = bundles / "yabench-experiment1"
    published = yabench_layout(own, bundles / "yabench-published" / "Experiment_1")
    browser = window.results
    size = window.size()
    window.resize(1280, 820)
    browser.open_bundle(published)
    browser.tabs.setCurrentWidget(browser.summary_view)
    shot("gui-results-published.png")
    browser.tabs.setCurrentWidget(browser.quality_view)
    window.resize(1024, 700)
    shot("gui-results-published-quality-1024.png")
    window.resize(1280, 820)
    overlay = browser.overlay_view
    overlay.add_bundle(own)
    overlay.set_checked(published, "cqels-smoke-rep1")
    overlay.set_checked(own, "case0-rep0-cqels-q1")
    overlay.set_checked(own, "case0-rep0-csparql-q1")
    overlay.metric_combo.setCurrentIndex(overlay.metric_combo.findData("recall"))
    browser.tabs.setCurrentWidget(overlay)
    shot("gui-results-overlay.png")
    window.resize(size)


def timeline_shots(window: Any, shot: Callable[[str], None], tmp: Path) -> None:
    """The window timeline on a run of YABench Exp. 4 (gracious, smoke size, ~15 s to run): the CQELS
    run (late purge) at its first divergence with the C-SPARQL run (border drift) overlaid, both
    runs' reconstructed borders, and the clicked window's missing/extra bindings; then a synthetic
    2-million-element stream zoomed out (gui-timeline-overview.png)."""
    from PySide6.QtWidgets import QApplication

    from rsp_workbench.results.reader import open_bundle
    from rsp_workbench.experiment import load_experiment
    from rsp_workbench.gui.results.timeline.model import synthetic_lanes
    from rsp_workbench.pipeline.run_experiment import run_experiment

    bundle = Path(os.environ.get("RSPWB_SCREENSHOT_BUNDLES") or tmp / "bundles") / "yabench-experiment4-gracious"
    if not (bundle / "manifest.json").is_file() or open_bundle(bundle).status != "ok":
        shutil.rmtree(bundle, ignore_errors=True)
        run_experiment(load_experiment(ROOT / "sample_experiments" / "yabench" / "experiment4-gracious.yaml"), bundle,
                       size="smoke", assume_yes=True)
    window.tabs.setCurrentWidget(window.results)
    browser = window.results
    view = browser.timeline_view  # the Results browser's Timeline tab

    def settle() -> None:
        while view.tasks is not None and view.tasks.running():
            for task in view.tasks.running():
                task.wait(100)
            QApplication.processEvents()
        QApplication.processEvents()

    if browser.folder != bundle:
        browser.open_bundle(bundle)
        settle()
    cqels = "case0-rep0-cqels-q6"
    # the run's first divergence, as the correctness matrix passes it
    first = json.loads((bundle / "runs" / cqels / "oracle.json").read_text())["first_divergence"]["expected_time"]
    browser.show_run(cqels, first)  # loads off the GUI thread, then jumps and selects the window
    settle()
    view.load_bundle_run(bundle, "case0-rep0-csparql-q6", overlay=True)
    settle()
    settle()  # the selected window's bindings
    shot("gui-timeline.png")
    from rsp_workbench.gui.results.timeline.export import export_to

    print(export_to(view.timeline, "png", DOCS / "gui-timeline-export.png", view.runs))  # titled, with a legend
    view.size_edit.setText("10s")
    view.slide_edit.setText("5s")
    view.show_lanes(synthetic_lanes(2_000_000, stations=12, interval_ms=100), "synthetic 2M")
    view.timeline.set_time_range(0, 2_000_000 * 100 // 12)
    view.timeline.refresh()
    shot("gui-timeline-overview.png")


def runs_shots(window: Any, shot: Callable[[str], None], tmp: Path) -> None:
    """The Runs tab while the designer's experiment runs (Ctrl+R on the rooms example, switched to
    real-time at 5× speed so each engine run lasts ~5 s): stages with ETA, live RSS/CPU of the
    running engine, the log; then the finished run (~20 s in all)."""
    import time

    from PySide6.QtWidgets import QApplication

    runs = window.runs
    runs.form.results_edit.setText(str(tmp / "run-results"))
    window.open_experiment(str(ROOT / "sample_experiments" / "teaching" / "rooms.yaml"))
    window.designer.model.set(("stand",), {"mode": "real-time", "time_scale": 5})
    window.run_designer_experiment()
    entry = runs.model.entries[-1]

    def wait(condition: Callable[[], bool], timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition() and time.monotonic() < deadline:
            QApplication.processEvents()
            time.sleep(0.02)

    second = "case0-rep0-cqels-rooms"
    wait(lambda: second in entry.engine_runs and len(entry.engine_runs[second].times) >= 25)
    shot("gui-runs.png")
    wait(lambda: not runs.is_running())
    shot("gui-runs-done.png")
    window.designer.model.undo()
    window.designer.model._saved_raw = window.designer.model.raw


SMALL_SHOTS = ("gui-teaching-coupon.png", "gui-runs-done.png", "gui-timeline.png", "gui-results-summary.png",
               "gui-results-quality.png", "gui-results-heaven.png", "gui-results-quality-one-repetition.png",
               "gui-results-compare.png")
GROUPS = ("library", "designer", "teaching", "probe", "runs", "timeline", "results", "compare")


def ran_bundle(bundle: Path, experiment: Any, size: str | None = "smoke") -> Path:
    """``bundle``, run from ``experiment`` (a file, or an Experiment) unless a finished one is there already."""
    from rsp_workbench.experiment import load_experiment
    from rsp_workbench.pipeline.run_experiment import run_experiment
    from rsp_workbench.results.reader import open_bundle

    if not (bundle / "manifest.json").is_file() or open_bundle(bundle).status != "ok":
        shutil.rmtree(bundle, ignore_errors=True)
        loaded = load_experiment(experiment) if isinstance(experiment, Path) else experiment
        run_experiment(loaded, bundle, size=size, assume_yes=True)
    return bundle


def compare_shots(window: Any, shot: Callable[[str], None], tmp: Path) -> None:
    """Results › Compare: YABench Exp. 1 at smoke size (C-SPARQL with border drift) beside the same
    experiment without the fault, the drifting run's windows side by side (also at 1024×700); File ›
    Import YABench folder… on a YABench-layout folder, the experiment in the designer; then that
    experiment's own run compared with the folder it was imported from (~2 min in all)."""
    import time

    from PySide6.QtWidgets import QApplication

    from rsp_workbench.experiment import loads_experiment

    def wait(condition: Callable[[], bool], timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition() and time.monotonic() < deadline:
            QApplication.processEvents()
            time.sleep(0.02)

    folder = Path(os.environ.get("RSPWB_SCREENSHOT_BUNDLES") or tmp / "bundles")
    sample = ROOT / "sample_experiments" / "yabench" / "experiment1.yaml"
    own = ran_bundle(folder / "yabench-experiment1", sample)
    text = sample.read_text().replace("faults: {border_drift: true}", "faults: {border_drift: false}")
    other = ran_bundle(folder / "yabench-experiment1-no-drift",
                       loads_experiment(text.replace("name: yabench-experiment-1\n", "name: yabench-experiment-1-no-drift\n"),
                                        file=sample, base_dir=sample.parent))
    size = window.size()
    window.resize(1280, 820)
    browser, view = window.results, window.results.compare_view
    window.tabs.setCurrentWidget(browser)
    browser.open_bundle(own)
    wait(lambda: browser.data is not None and browser.data.bundle.folder == own)
    browser.tabs.setCurrentWidget(view)
    view.compare_with(other)
    wait(lambda: view.comparison is not None and view.comparison.b.folder == other and view.windows is not None)
    view.runs_table.selectRow(3)  # case0-rep1-csparql-q1: precision and recall differ
    wait(lambda: view.task is None and view.windows is not None and view.window_caption.text().startswith("case0-rep1-csparql"))
    shot("gui-results-compare.png")
    window.resize(1280, 820)  # shot() left the window at its own size after the 1024×700 one

    published = yabench_layout(own, folder / "yabench-published" / "Experiment_1")
    imported = tmp / "imported" / "exp1-csparql.yaml"
    window.yabench_import.ask_folder = lambda: str(published / "csparql")
    window.yabench_import.ask_out = lambda suggested: str(imported)
    window.import_yabench()
    window.designer.show_section("general")
    shot("gui-designer-imported.png")
    rerun = ran_bundle(folder / "yabench-csparql-imported", imported, size=None)
    window.tabs.setCurrentWidget(browser)
    browser.open_bundle(rerun)
    view.compare_with(published / "csparql")
    wait(lambda: view.comparison is not None and view.comparison.b.published and view.windows is not None)
    view.runs_table.selectRow(1)
    wait(lambda: view.task is None and view.windows is not None and view.window_caption.text().startswith("case0-rep1"))
    shot("gui-results-compare-published.png")
    window.resize(size)


def probe_shot(window: Any) -> None:
    """Run > Probe engine… on the secret engine under the C-SPARQL preset with its border_drift
    fault knob on: the inferred preset, the fault with its evidence (~15 s: fourteen engine runs);
    then the side-by-side SECRET table of it, the CQELS preset, the RSP-JS engine (when installed)
    and the secret engine under two of the Esper presets (the Esper engine itself starts a JVM per
    probe: minutes)."""
    from rsp_workbench.gui.probe.model import installed

    dialog = window.open_probe_dialog()
    dialog.select_engine("preset", "csparql")
    dialog.fault_combo.setCurrentIndex(dialog.fault_combo.findData("border_drift"))
    dialog.resize(1100, 700)
    _probe_and_wait(dialog, 1800)  # a fault: every candidate judged on every probe (minutes under load)
    path = DOCS / "gui-probe.png"
    dialog.grab().save(str(path))
    print(path)
    dialog.fault_combo.setCurrentIndex(0)
    for kind, name, combination in (("preset", "cqels", None), ("builtin", "rspjs", None),
                                    ("preset", "esper-time-batch", None), ("preset", "esper-time-snapshot", None)):
        if kind == "builtin" and not installed(name):
            continue
        dialog.select_engine(kind, name)
        if combination:
            dialog.select_combination(combination)
        _probe_and_wait(dialog, 1800)
    dialog.tabs.setCurrentWidget(dialog.side_by_side)
    path = DOCS / "gui-probe-side-by-side.png"
    dialog.grab().save(str(path))
    print(path)
    dialog.close()


def _probe_and_wait(dialog: Any, seconds: float = 180) -> None:
    import time

    from PySide6.QtWidgets import QApplication

    dialog.start()
    deadline = time.monotonic() + seconds
    while dialog.task is not None and time.monotonic() < deadline:
        QApplication.processEvents()
        time.sleep(0.02)
    for _ in range(3):
        QApplication.processEvents()


def main() -> int:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    import rsp_workbench.gui.qt  # noqa: F401
    from rsp_workbench.gui.main_window import MainWindow

    with tempfile.TemporaryDirectory() as tmp:
        settings = QSettings(str(Path(tmp) / "settings.ini"), QSettings.Format.IniFormat)
        samples = ROOT / "sample_experiments"
        if not any(samples.glob("**/*.yaml")):
            samples = SAMPLE.parent
        window = MainWindow(settings=settings, samples_dir=samples, spark_warmup=False)
        window.resize(1400, 900)
        window.show()

        def shot(name: str) -> None:
            for _ in range(3):
                app.processEvents()
            path = DOCS / name
            window.grab().save(str(path))
            print(path)
            if name in SMALL_SHOTS:  # the same view at the smallest supported size, 1024×700
                window.resize(1024, 700)
                for _ in range(3):
                    app.processEvents()
                small = DOCS / name.replace(".png", "-1024.png")
                window.grab().save(str(small))
                print(small)
                window.resize(1400, 900)

        groups = set(sys.argv[1:]) or set(GROUPS)  # e.g. `python3 docs/screenshots.py results`
        unknown = groups - set(GROUPS)
        if unknown:
            raise SystemExit(f"unknown screenshot group(s) {', '.join(sorted(unknown))}; known: {', '.join(GROUPS)}")
        if "library" in groups or "designer" in groups:
            window.library.select_path(samples / "csrbench" / "csrbench.yaml")  # its description on the right
            window.tabs.setCurrentWidget(window.library)
            shot("gui-library.png")
        if "designer" in groups:
            designer_shots(window, shot)
        if "teaching" in groups:
            window.tabs.setCurrentWidget(window.teaching)
            window.teaching.model.set_example("rooms")
            window.teaching.model.set_time(10_000)
            shot("gui-teaching.png")
            window.teaching.model.set_example("coupon")
            window.teaching.model.override(3, border="open-closed", empty_notification=False)
            window.teaching.model.set_time(8_000)
            shot("gui-teaching-coupon.png")
        if "probe" in groups:
            probe_shot(window)
        if "runs" in groups:
            runs_shots(window, shot, Path(tmp))
        if "timeline" in groups:
            timeline_shots(window, shot, Path(tmp))
        if "results" in groups:
            results_shots(window, shot, Path(tmp))
        if "compare" in groups:
            compare_shots(window, shot, Path(tmp))
        window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
