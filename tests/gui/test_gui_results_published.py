"""Results browser on a published YABench folder and the Results defects of
a new user's session, each test failing before its fix."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")

from tests.results.yabench_folder import P_HEADER, build_test_folder, build_two_engines  # noqa: E402
from tests.paths import DATA

pytestmark = pytest.mark.gui


@pytest.fixture
def published(tmp_path: Path) -> Path:
    return build_two_engines(tmp_path / "experiment")


@pytest.mark.slow
def test_a_published_folder_opens_in_every_view(browser, published: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    browser.open_bundle(published)
    assert browser.data is not None and browser.data.bundle.published
    assert "published" in browser.title.text() and "4 runs" in browser.title.text()
    problems = browser.problems.text()  # missing pieces shown as missing
    assert "ORACLE_small&lt;n&gt; missing for n = 3" in problems and browser.problems.isVisible()
    assert "P_small_agg missing" in problems + browser.problems.toolTip()
    summary = browser.summary_view
    assert summary.table.rowCount() == 4 and summary.cell(0, "engine") == "cqels"
    assert summary.cell(0, "status") == "published" and summary.cell(0, "peak RSS MB") == "106.2"

    quality = browser.quality_view
    assert quality.has_data and [s.engine for s in quality.series] == ["cqels", "csparql"]
    assert [b.engine for b in quality.boxplots] == ["cqels", "csparql"]
    x, y = quality.curves[0].delay.getData()
    assert list(x) == [5.0, 10.0, 15.0] and list(y) == [73.0, 97.0, 134.0]
    quality.export_csv(tmp_path / "quality.csv")
    assert "cqels-small-rep1" in (tmp_path / "quality.csv").read_text()

    resources = browser.resources_view
    assert resources.has_data and [s.engine for s in resources.series] == ["cqels", "csparql"]
    assert list(resources.curves[0]["rss_mb"].getData()[1]) == [4.98, 79.16, 106.2]
    matrix = browser.matrix_view
    assert matrix.table.rowCount() == 2 and "published" in matrix.table.item(0, 0).text()

    assert browser.show_run("cqels-small-rep1") is False  # no stream: said, not a broken timeline
    assert "published YABench folder" in browser.timeline_view.status.text()


@pytest.mark.slow
def test_quality_boxplots_are_whole_and_titled_in_words(browser, published: Path) -> None:  # type: ignore[no-untyped-def]
    """Item 7: the boxes of the last window stuck out past the plot's right edge; the title said BOXPLOTS_."""
    browser.open_bundle(published)
    quality = browser.quality_view
    plot = quality.box_plot["precision"]
    assert "BOXPLOTS_" not in plot.titleLabel.text and "across 2 repetitions" in plot.titleLabel.text
    (low, high), _ = plot.getViewBox().viewRange()
    for slot in quality.box_items["precision"]:
        xs, width = slot.boxes.opts["x"], slot.boxes.opts["width"]
        assert low <= min(xs) - width / 2 and max(xs) + width / 2 <= high
    assert "whole ms" in quality.delay_plot.toolTip()  # what a delay (and 0 ms) means


def test_a_single_sample_is_a_readable_chart(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Item 8: one sample gave axes of −10…10 s, RSS below 0 MB and "1 samples"."""
    folder = build_test_folder(tmp_path / "one")
    (folder / "results" / "performance" / "P_small1").write_text(f"CQELS\n{P_HEADER}0.5,79.16,216.6,0.76,23\n")
    browser.open_bundle(folder)
    resources = browser.resources_view
    assert resources.has_data and "1 sample" in resources.status.text() and "1 samples" not in resources.status.text()
    (x_low, x_high), (y_low, y_high) = resources.plots["rss_mb"].getViewBox().viewRange()
    assert 0.0 <= x_low < 0.5 < x_high <= 2.0
    assert 0.0 <= y_low < 79.16 < y_high <= 79.16 * 1.5
    for key in ("cpu_percent", "threads"):
        assert resources.plots[key].getViewBox().viewRange()[1][0] >= 0.0


def test_opening_a_folder_that_is_no_bundle_keeps_the_one_shown(browser, published: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Item 11: the loaded bundle was replaced by an "unreadable" placeholder."""
    browser.open_bundle(published)
    other = tmp_path / "just-a-folder"
    other.mkdir()
    assert browser.open_bundle(other) is None
    assert browser.data is not None and browser.data.bundle.folder == published and browser.folder == published
    assert browser.summary_view.table.rowCount() == 4 and browser.quality_view.has_data
    assert browser.open_error.isVisible() and "Not opened" in browser.open_error.text()
    assert str(other) in browser.open_error.text() and "not a result bundle" in browser.open_error.text()
    browser.open_bundle(tmp_path / "missing")
    assert "no such directory" in browser.open_error.text() and browser.data.bundle.folder == published
    browser.open_bundle(published)  # a good one clears the message
    assert not browser.open_error.isVisible()


@pytest.mark.slow
def test_app_path_argument_opens_bundles_in_results_and_says_missing_files(qtbot, settings, published: Path,  # type: ignore[no-untyped-def]
                                                                           tmp_path: Path, no_leaks) -> None:
    """Item 12: a bundle folder became the Library's sample list; a missing file opened a blank
    template with the error in the status bar for 5 s."""
    from rsp_workbench.gui.main_window import MainWindow

    window = MainWindow(settings=settings, samples_dir=tmp_path, spark_warmup=False)
    qtbot.addWidget(window)
    window.show()
    window.open_path(published / "cqels")
    assert window.tabs.currentWidget() is window.results
    assert window.results.data is not None and window.results.data.bundle.folder == published / "cqels"
    missing = tmp_path / "nope.yaml"
    window.open_path(missing)
    assert window.error_box is not None and window.error_box.isVisible()
    assert str(missing) in window.error_box.text() and "no such file" in window.error_box.text()
    # the status bar elides a long message in the middle (the file name stays) and holds it whole in its tooltip
    assert missing.name in window.statusBar().currentMessage() and str(missing) in window.statusBar().toolTip()
    qtbot.wait(5200)  # still there after the old 5 s
    assert missing.name in window.statusBar().currentMessage() and str(missing) in window.statusBar().toolTip()
    assert window.designer.model.file is None  # no blank template posing as the file
    window.error_box.close()
    samples = tmp_path / "samples"
    samples.mkdir()
    window.open_path(samples)  # any other folder is still the library
    assert window.tabs.currentWidget() is window.library
    window.results.timeline.close()
    window.close()


@pytest.mark.slow
def test_overlay_puts_runs_of_own_and_published_bundles_in_one_chart(browser, published: Path, real_bundle: Path,  # type: ignore[no-untyped-def]
                                                                      tmp_path: Path) -> None:
    """The published CQELS precision per window against the cqels preset's; then their memory."""
    from rsp_workbench.results.view_data import read_resources, read_window_series

    browser.open_bundle(published)
    overlay = browser.overlay_view
    assert [b.folder for b in overlay.bundles] == [published]
    assert overlay.add_bundle(tmp_path) is None and "not added" in overlay.status.text()
    own = overlay.add_bundle(real_bundle)
    assert own is not None and [b.folder for b in overlay.bundles] == [published, real_bundle]
    overlay.set_checked(published, "cqels-small-rep1")
    overlay.set_checked(real_bundle, "case0-rep0-cqels-q1")
    assert overlay.has_data and len(overlay.drawn) == 2
    mine = read_window_series(own, own.row("case0-rep0-cqels-q1"))
    x, y = overlay.items[1].getData()
    assert np.allclose(x, mine.positions() / 1000.0) and np.allclose(y, mine.precision)
    assert list(overlay.items[0].getData()[1]) == [1.0, 0.5, 1.0]  # ORACLE_small1's precisions
    assert overlay.items[0].opts["pen"].style() != overlay.items[1].opts["pen"].style()  # one line style per bundle

    overlay.metric_combo.setCurrentIndex(overlay.metric_combo.findData("rss_mb"))
    samples = read_resources(own, own.row("case0-rep0-cqels-q1"))
    assert np.allclose(overlay.items[1].getData()[1], samples.rss_mb)
    assert list(overlay.items[0].getData()[1]) == [4.98, 79.16, 106.2]
    overlay.export_csv(tmp_path / "overlay.csv")
    lines = (tmp_path / "overlay.csv").read_text().splitlines()
    assert lines[0] == "bundle,run_id,engine,metric,x_s,value" and len(lines) == 1 + 3 + len(samples.rss_mb)
    overlay.export_png(tmp_path / "overlay.png")
    assert (tmp_path / "overlay.png").stat().st_size > 1000

    browser.open_bundle(real_bundle)  # the bundles and ticks stay when the browser opens another
    assert [b.folder for b in overlay.bundles] == [published, real_bundle] and len(overlay.drawn) == 2
    assert {r for _, r in overlay.checked_runs()} == {"cqels-small-rep1", "case0-rep0-cqels-q1"}
    overlay.set_checked(published, "cqels-small-rep1", False)
    other = build_test_folder(tmp_path / "other")
    browser.open_bundle(other)  # the browser's previous bundle (nothing ticked, not added here) leaves
    assert [b.folder for b in overlay.bundles] == [real_bundle, other]


@pytest.mark.slow
def test_results_fit_a_1024_by_700_window(qtbot, settings, published: Path, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    """At 1024×700 the window stayed 1181 px wide: the timeline sub-tab's minimum width widened it."""
    from rsp_workbench.gui.main_window import MainWindow

    window = MainWindow(settings=settings, samples_dir=tmp_path, spark_warmup=False)
    qtbot.addWidget(window)
    window.show()
    window.open_path(published)
    window.resize(1024, 700)
    qtbot.waitUntil(lambda: window.width() == 1024, timeout=2000)
    results = window.results
    for view in (results.quality_view, results.resources_view, results.overlay_view):
        results.tabs.setCurrentWidget(view)
        assert view.width() <= 1024 and all(button.isVisible() for button in view.export_buttons.values())
    window.results.timeline.close()
    window.close()


def test_runs_live_chart_with_one_sample(qtbot, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    """Item 8 in the Runs tab: the first live sample drew on −10…10 s with RSS below 0 MB, "1 samples"."""
    from rsp_workbench.experiment import load_experiment
    from rsp_workbench.gui.runs.view import RunManagerView
    from rsp_workbench.gui.runs.model import EngineRunTrace, ExperimentRun, RunRequest
    from rsp_workbench.gui.tasks import TaskRegistry

    view = RunManagerView(TaskRegistry(), None, results_dir=tmp_path / "results")
    qtbot.addWidget(view)
    experiment = load_experiment(DATA / "experiments" / "full.yaml")
    entry = ExperimentRun(1, RunRequest(experiment, tmp_path / "out"))
    trace = entry.engine_runs["case0-rep0-e-q"] = EngineRunTrace("case0-rep0-e-q")
    trace.add_sample({"time": 0.5, "rss_mb": 37.4, "cpu_percent": 12.0})
    view.detail.redraw_chart(entry)
    assert "1 sample" in view.detail.live_label.text() and "1 samples" not in view.detail.live_label.text()
    (x_low, x_high), (y_low, y_high) = view.detail.rss_plot.getViewBox().viewRange()
    assert 0.0 <= x_low < 0.5 < x_high <= 2.0 and 0.0 <= y_low < 37.4 < y_high <= 37.4 * 1.5
    view.close()
