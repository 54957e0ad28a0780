"""The Low defects of a new user's session in the app that the first round left, each pinned by a
test that failed before its fix (offscreen Qt): widths at 1024 px, chart ranges, labels, exports."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

pytestmark = pytest.mark.gui


# ---------------------------------------------------------------------- runs: what a stopped stage says


def test_a_cancelled_stage_says_what_happened_and_how_many_finished() -> None:
    from rsp_workbench.gui.runs.model import StageProgress

    stage = StageProgress("engines", total=2)
    stage.start(0.0, "r1")
    stage.stop(3.0)  # cancelled while the first engine run ran
    assert stage.text(5.0, "cancelled") == "cancelled · 0 of 2 finished"
    stage.start(5.0, "r2")
    stage.complete(6.0)
    assert stage.text(7.0, "failed") == "failed · 1 of 2 finished"
    assert StageProgress("generate").text(7.0, "cancelled") == "cancelled"
    assert StageProgress("generate", done=3).text(7.0, "cancelled") == "cancelled · 3 finished"
    stage.start(7.0, "r3")
    stage.complete(8.0)
    assert stage.text(9.0, "cancelled") == "2/2 · done"  # a stage that finished says so, whatever came after


# ---------------------------------------------------------------------- eviction runs: a verdict, not "recall"


def test_a_bounded_memory_run_reads_complete_or_partial() -> None:
    from rsp_workbench.gui.runs.model import EngineRunTrace, engine_run_cells, verdict_colour
    from rsp_workbench.gui.text import verdict_text

    assert verdict_text("recall", 1.0) == "complete"
    assert verdict_text("recall", 0.8333) == "partial · recall 0.833"
    assert verdict_text("recall", 0.004) == "partial · recall 0.004"  # not 0.00
    assert verdict_text("correct", 0.5) == "correct" and verdict_text(None) == ""
    trace = EngineRunTrace("case0-rep0-fifo-chain", engine="fifo")
    trace.set_row({"status": "ok", "verdict": "recall", "recall": 0.5})
    cells = engine_run_cells(trace)
    assert cells[1] == "partial · recall 0.5" and verdict_colour(cells[1]) == verdict_colour("partial") != "#000"


def test_the_summary_names_an_eviction_runs_verdict(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.gui.support import write_bundle

    runs = [{"case": 0, "repetition": 0, "engine": strategy, "engine_type": "eviction", "query": "chain",
             "verdict": "recall", "recall": recall, "precision": 1.0, "variables": {"CACHE": 10}}
            for strategy, recall in (("fifo", 0.25), ("likelihood", 1.0))]
    browser.open_bundle(write_bundle(tmp_path / "eviction", "eviction-sweep", runs))
    view = browser.summary_view
    assert [view.cell(r, "verdict") for r in range(2)] == ["partial · recall 0.25", "complete"]
    assert "recall)" not in browser.title.text() and "1 complete, 1 partial" in browser.title.text()


# ---------------------------------------------------------------------- teaching at 1024 px


@pytest.fixture
def teaching(qtbot, no_leaks):  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.teaching.view import TeachingView

    view = TeachingView()
    qtbot.addWidget(view)
    view.resize(1016, 640)  # a 1024×700 window less its frame, menu, tabs and status bar
    view.show()
    qtbot.waitExposed(view)
    yield view
    view.close()


def _scene_rects_of_bands(timeline) -> list:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QRectF

    view_box = timeline.getPlotItem().getViewBox()
    rects = []
    for bars in (timeline.windows, timeline.active):
        for x0, width, y0, height in zip(*(bars.opts[k] for k in ("x0", "width", "y0", "height"))):
            rects.append((y0, view_box.mapViewToScene(QRectF(x0, y0, width, height)).boundingRect()))
    return rects


@pytest.mark.parametrize("example", ["rooms", "coupon"])
def test_teaching_labels_keep_off_the_markers_and_the_lanes(teaching, qtbot, example: str) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QPointF

    teaching.model.set_example(example)
    qtbot.wait(50)
    timeline = teaching.timeline
    view_box = timeline.getPlotItem().getViewBox()
    markers = [view_box.mapViewToScene(QPointF(p.pos().x(), p.pos().y())) for p in timeline.evaluations.points()]
    assert markers and timeline._labels
    lowest_lane = max(m.y() for m in markers)  # scene y grows downwards: the evaluation row nearest the streams
    lanes = sorted({round(m.y()) for m in markers})
    assert all(upper + 13 <= lower for upper, lower in zip(lanes, lanes[1:]))  # one marker high each, no overlap
    for label in timeline._labels:
        rect = label.sceneBoundingRect()
        assert not any(rect.adjusted(-7, -7, 7, 7).contains(m) for m in markers), label.toPlainText()
        assert rect.top() >= lowest_lane + 6, label.toPlainText()  # below the evaluation lanes, not across one
        own_row = label.pos().y()
        for y0, band in _scene_rects_of_bands(timeline):
            if y0 > own_row:  # a band of a stream drawn above this label's stream
                assert not rect.intersects(band), label.toPlainText()


def test_teaching_shows_the_four_columns_without_scrolling_sideways_at_1024(teaching) -> None:  # type: ignore[no-untyped-def]
    scroll = teaching.columns_scroll
    assert scroll.horizontalScrollBar().maximum() == 0
    assert all(w.narrow for w in teaching.column_widgets)
    last = teaching.column_widgets[-1]
    assert last.mapTo(scroll.viewport(), last.rect().bottomRight()).x() <= scroll.viewport().width()
    teaching.resize(1400, 760)  # wide enough again: two parameters a row
    assert not any(w.narrow for w in teaching.column_widgets)


# ---------------------------------------------------------------------- results: the header at 1024 px


def test_the_results_header_stays_one_line_at_1024(browser, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    from tests.gui.support import write_bundle

    verdicts = ("correct", "incorrect", "error", "timeout", "failed")
    runs = [{"case": i, "repetition": 0, "engine": f"engine-{i}", "query": "q", "verdict": v, "variables": {}}
            for i, v in enumerate(verdicts)]
    deep = tmp_path / "a-rather-long-folder-name-for-results" / "of-the-sweep-over-window-sizes-2026"
    bundle = write_bundle(deep / "bundle-of-a-long-experiment-name", "an-experiment-with-a-rather-long-name-too", runs)
    browser.resize(1016, 640)
    browser.open_bundle(bundle)
    qtbot.wait(20)
    one_line = browser.title.fontMetrics().lineSpacing() + 8
    assert browser.title.height() <= one_line and browser.title.minimumSizeHint().width() < 1016
    tabs_at = browser.tabs.y()
    assert "…" in browser.title.text() and browser.title.toolTip() == str(bundle)
    assert "5 runs (1 correct, 1 error, 1 failed, 1 incorrect, 1 timeout)" in browser.title.text()
    browser.resize(3000, 640)
    qtbot.wait(20)
    assert "…" not in browser.title.text() and browser.tabs.y() == tabs_at  # wider: the whole path, same place


# ---------------------------------------------------------------------- results: boxplots


def _one_repetition(bundle: Path, target: Path) -> Path:
    """The bundle with each BOXPLOTS_ line cut to its first repetition (what a 1-repetition run writes)."""
    import shutil

    shutil.copytree(bundle, target)
    for file in target.glob("yabench/*/BOXPLOTS_*"):
        lines = file.read_text(encoding="utf-8").splitlines()
        cut = [";".join(part.split(",")[0] for part in line.split(";")) for line in lines[1:]]
        file.write_text("\n".join([lines[0], *cut]) + "\n", encoding="utf-8")
    return target


def _drawn_tick_labels(axis) -> list[str]:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QImage, QPainter

    image = QImage(200, 200, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        return [text for _, _, text in axis.generateDrawSpecs(painter)[2]]
    finally:
        painter.end()


def test_one_repetition_drops_the_boxplot_column_and_ratio_axes_show_0_and_1(browser, real_bundle: Path, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    browser.resize(1016, 640)
    quality = browser.quality_view
    browser.open_bundle(real_bundle)
    browser.tabs.setCurrentWidget(quality)
    qtbot.wait(20)
    assert all(plot.isVisible() for plot in quality.box_plot.values())
    assert quality.box_plot["precision"].width() > 0 and "2 repetitions" in quality.status.text()
    browser.open_bundle(_one_repetition(real_bundle, tmp_path / "one"))
    qtbot.wait(20)
    assert not any(plot.isVisible() for plot in quality.box_plot.values())  # no blank panels
    assert quality.pr_plot.width() > 0.9 * quality.chart.width()  # the left column takes the room
    assert "one repetition, no spread" in quality.status.text()
    assert {"0", "1.0"} <= set(_drawn_tick_labels(quality.pr_plot.getAxis("left")))
    browser.open_bundle(real_bundle)  # back to two repetitions: the column again, ranged afresh
    qtbot.wait(20)
    assert all(plot.isVisible() for plot in quality.box_plot.values())
    assert quality.box_plot["precision"].width() > 0.2 * quality.chart.width()
    low, high = quality.box_plot["recall"].viewRange()[1]
    assert low <= 0 and high >= 1.0
    assert {"0", "1.0"} <= set(_drawn_tick_labels(quality.box_plot["recall"].getAxis("left")))
    assert quality.box_plot["delay"].getAxis("bottom").labelText == quality.size_plot.getAxis("bottom").labelText


# ---------------------------------------------------------------------- results: latency × memory


def test_latency_memory_keeps_its_title_and_every_bar_inside_the_frame(browser, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    import math

    from tests.gui.support import write_bundle

    numbers = {"naive": ([1.0, 9.0], [30.0, 60.0]), "incremental": ([2.0, 2.5], [31.0, 32.0])}
    runs = [{"case": 0, "repetition": rep, "engine": engine, "engine_type": engine, "query": "q", "verdict": "correct",
             "variables": {"STIM": 1}, "latency_ms_mean": latencies[rep], "peak_rss_mb": memory[rep]}
            for engine, (latencies, memory) in numbers.items() for rep in range(2)]
    browser.resize(1016, 640)
    browser.open_bundle(write_bundle(tmp_path / "heaven", "heaven-grid", runs))
    view = browser.heaven_view
    browser.tabs.setCurrentWidget(view)
    qtbot.wait(20)
    plot = view.plot
    # the plot fits the chart (a long title made it wider, cutting the title, the right ticks and the bars there)
    assert plot.titleLabel.item.boundingRect().width() <= plot.width() <= view.chart.viewport().width()
    (x_low, x_high), (y_low, y_high) = plot.viewRange()
    bars = [(math.log10(lo), math.log10(hi)) for lo, hi in ((1.0, 9.0), (2.0, 2.5))]
    memory = [(math.log10(lo), math.log10(hi)) for lo, hi in ((30.0, 60.0), (31.0, 32.0))]
    x_margin, y_margin = 0.03 * (x_high - x_low), 0.03 * (y_high - y_low)  # a marker's half width stays inside
    assert all(x_low + x_margin <= lo and hi <= x_high - x_margin for lo, hi in bars)
    assert all(y_low + y_margin <= lo and hi <= y_high - y_margin for lo, hi in memory)


# ---------------------------------------------------------------------- runs: the live chart


def test_a_lone_live_sample_gets_its_own_time_scale_and_one_time_axis_in_seconds(qtbot, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.runs.run_detail import RunDetail
    from tests.gui.support import entry_for, event

    entry = entry_for(tmp_path)
    entry.start(0.0)
    entry.apply(event("validate", total=2, data={"streams": 1}), 0.0)
    entry.apply(event("engine", run_id="r1", data={"engine": "csparql", "stimuli": 5}), 1.0)
    entry.apply(event("kpi", run_id="r1", data={"time": 0.05, "rss_mb": 38.5, "cpu_percent": 20.0}), 1.1)
    detail = RunDetail(lambda: 2.0)
    qtbot.addWidget(detail)
    detail.resize(1000, 470)  # the Runs tab at 1024×700
    detail.show()
    detail.show_run(entry, force=True)
    low, high = detail.rss_plot.viewRange()[0]
    assert low == 0.0 and 0.09 <= high <= 0.11  # the sample in the middle of 0…0.1 s, not at the start of 0…1 s
    for at in (0.15, 0.25):
        entry.apply(event("kpi", run_id="r1", data={"time": at, "rss_mb": 39.0, "cpu_percent": 20.0}), 1.2)
    detail.show_run(entry, force=True)
    qtbot.wait(20)
    assert not detail.rss_plot.getAxis("bottom").style["showValues"]  # the RSS plot shows no time values
    time_axis = detail.cpu_plot.getAxis("bottom")
    assert "(s)" in time_axis.labelString() and time_axis.autoSIPrefixScale == 1.0  # seconds, never ms
    detail.close()


# ---------------------------------------------------------------------- timeline export


def test_the_timeline_csv_has_one_row_per_window_whatever_the_zoom(browser, real_bundle: Path, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    import csv
    import json

    browser.open_bundle(real_bundle)
    cell = next(c for c in browser.data.matrix.cells.values() if c.divergence_run)
    browser.show_divergence(cell.divergence_run, cell.divergence_t_ms)
    view = browser.timeline_view
    qtbot.waitUntil(lambda: bool(view.runs), timeout=30_000)
    oracle = json.loads((real_bundle / "runs" / cell.divergence_run / "oracle.json").read_text(encoding="utf-8"))
    files = []
    for zoom, name in (((0, 1000), "near.csv"), ((0, 60_000), "far.csv")):
        view.timeline.set_time_range(*zoom)
        view.timeline.refresh()
        view.ask_save_path = lambda kind, name=name: str(tmp_path / name)
        view._export("csv")
        files.append((tmp_path / name).read_text(encoding="utf-8"))
    assert files[0] == files[1]  # not what the pixels hold: the same file at any zoom
    rows = list(csv.DictReader(files[0].splitlines()))
    assert len(rows) == len(oracle["windows"]) and {r["run_id"] for r in rows} == {cell.divergence_run}
    for row, window in zip(rows, oracle["windows"]):
        assert (int(row["start_ms"]), int(row["end_ms"])) == (window["start"], window["end"])
        assert (int(row["expected"]), int(row["actual"])) == (window["expected_size"], window["actual_size"])
        matched = round(window["recall"] * window["expected_size"]) if window["expected_size"] else 0
        assert int(row["missing"]) == window["expected_size"] - matched
        assert int(row["extra"]) == window["actual_size"] - matched
        assert row["verdict"] == ("ok" if int(row["missing"]) == int(row["extra"]) == 0 else "diverging")
    assert any(row["verdict"] == "diverging" for row in rows)  # the run diverges somewhere


def test_the_exported_timeline_picture_has_a_title_and_a_legend(browser, real_bundle: Path, tmp_path: Path, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    browser.open_bundle(real_bundle)
    cell = next(c for c in browser.data.matrix.cells.values() if c.divergence_run)
    browser.show_divergence(cell.divergence_run, cell.divergence_t_ms)
    view = browser.timeline_view
    qtbot.waitUntil(lambda: bool(view.runs), timeout=30_000)
    from rsp_workbench.gui.results.timeline import export, plot

    timeline = view.timeline
    seen: dict[str, object] = {}

    def spy(shown, title: str):  # type: ignore[no-untyped-def]
        seen["title"] = title
        return export.captioned(shown, title)

    monkeypatch.setattr(plot, "captioned", spy)
    names = [name for _, name in export.legend_entries(timeline)]
    assert "expected window" in names and "expected evaluation" in names
    assert any(name.endswith(": emissions") for name in names)
    view.ask_save_path = lambda kind: str(tmp_path / f"t.{kind}")
    view._export("png")
    assert (tmp_path / "t.png").stat().st_size > 1000
    assert cell.divergence_run in str(seen["title"]) and "—" in str(seen["title"])
    assert timeline.item.titleLabel.text == "" or not timeline.item.titleLabel.isVisible()  # gone after the export


# ---------------------------------------------------------------------- sweep cases: their variables


SWEEP = [{"case": case, "repetition": 0, "engine": "csparql", "query": "q", "verdict": "correct",
          "variables": {"WSIZE": size, "RATE": rate, "TEMP": 50.0}}
         for case, (size, rate) in enumerate([("1s", 10), ("1s", 100), ("5s", 10), ("5s", 100)])]


def test_the_summary_shows_each_cases_variables_in_the_table_and_the_csv(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import copy
    import csv

    from tests.gui.support import write_bundle

    browser.open_bundle(write_bundle(tmp_path / "sweep", "a-sweep", copy.deepcopy(SWEEP)))
    view = browser.summary_view
    assert [view.cell(r, "case variables") for r in range(4)] == [
        "WSIZE=1s, RATE=10", "WSIZE=1s, RATE=100", "WSIZE=5s, RATE=10", "WSIZE=5s, RATE=100"]  # TEMP is the same
    rows = list(csv.DictReader(open(view.export_csv(tmp_path / "summary.csv"), encoding="utf-8")))
    assert [(r["case"], r["WSIZE"], r["RATE"]) for r in rows] == [("0", "1s", "10"), ("1", "1s", "100"),
                                                                 ("2", "5s", "10"), ("3", "5s", "100")]
    assert "TEMP" not in rows[0] and "variables" not in rows[0]


def test_the_quality_csv_gives_each_window_its_cases_variables(qtbot, no_leaks) -> None:  # type: ignore[no-untyped-def]
    import types

    import numpy as np

    from rsp_workbench.gui.results.quality import QualityView
    from rsp_workbench.results.view_data import WindowSeries

    view = QualityView()
    qtbot.addWidget(view)
    rows = [{**row, "run_id": f"case{row['case']}-rep0-csparql-q"} for row in SWEEP]
    view.data = types.SimpleNamespace(bundle=types.SimpleNamespace(rows=rows))
    one = np.ones(2)
    view.series = [WindowSeries(f"case{case}-rep0-csparql-q", "csparql", np.array([0.0, 1000.0]),
                                np.array([1000.0, 2000.0]), one, one, one, one, one, np.array([5.0, np.nan]))
                   for case in (1, 2)]
    header, table = view.csv_table()
    table = list(table)
    assert header[-2:] == ["WSIZE", "RATE"]
    assert [tuple(row[-2:]) for row in table] == [("1s", 100)] * 2 + [("5s", 10)] * 2
    assert [row[1] for row in table] == ["case1-rep0-csparql-q"] * 2 + ["case2-rep0-csparql-q"] * 2


# ---------------------------------------------------------------------- designer: a table cell edited with its editor


@pytest.mark.slow
def test_editing_a_variable_in_its_cell_commits_without_a_qt_warning(qtbot, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QtMsgType, Qt, qInstallMessageHandler
    from PySide6.QtWidgets import QApplication, QLineEdit

    from rsp_workbench.gui.designer.fields import MappingTable
    from rsp_workbench.gui.designer.view import DesignerView
    from tests.paths import DATA

    view = DesignerView()
    qtbot.addWidget(view)
    view.resize(1000, 650)
    view.show()
    view.open_file(DATA / "experiments" / "full.yaml")
    view.show_section("variables")
    table = next(t.table for t in view.findChildren(MappingTable) if t.table.rowCount() and t.isVisible())
    name = table.item(0, 0).text()
    messages: list[str] = []

    def keep(kind: QtMsgType, context: object, message: str) -> None:
        messages.append(message)

    previous = qInstallMessageHandler(keep)
    try:
        for key, text in ((Qt.Key.Key_Return, "7s"), (Qt.Key.Key_Tab, "9s")):  # the two ways a cell is committed
            item = table.item(0, 1)
            table.setCurrentItem(item)
            table.editItem(item)
            qtbot.waitUntil(lambda: isinstance(QApplication.focusWidget(), QLineEdit))
            editor = QApplication.focusWidget()
            editor.selectAll()
            qtbot.keyClicks(editor, text)
            qtbot.keyClick(editor, key)
            qtbot.wait(50)
            assert view.model.get(("variables", name)) == text
    finally:
        qInstallMessageHandler(previous)
    assert not [m for m in messages if "commitData" in m or "does not belong" in m], messages
    view.close()


# ---------------------------------------------------------------------- probe dialog: whole column headers


def test_the_probe_dialogs_column_headers_are_whole_at_1024(qtbot, no_leaks) -> None:  # type: ignore[no-untyped-def]
    """The new user saw a cut header in the probe table; not reproduced since (1100×700 and the
    1024×700 screen's 1008×652, Xvfb and offscreen). Pinned here: after a probe at the small screen's
    size, no header of the dialog's three tables is narrower than its text."""
    from PySide6.QtWidgets import QApplication

    from rsp_workbench.gui.probe.view import ProbeDialog
    from rsp_workbench.gui.tasks import TaskRegistry
    from rsp_workbench.probe.infer import ProbeInference, ProbeObservation

    dialog = ProbeDialog(TaskRegistry())
    qtbot.addWidget(dialog)
    dialog.resize(1008, 652)
    dialog.show()
    observations = tuple(ProbeObservation(f"p{i}", "ok") for i in range(3))
    dialog._on_finished([ProbeInference(engine="csparql", preset="csparql", overrides={}, parameters={}, undetermined={},
                                        explained=True, faults=(), unexplained=(), observations=observations, probes=())])
    dialog._on_done()
    for table in (dialog.parameters_table, dialog.probes_table, dialog.side_by_side.table):
        if table is dialog.side_by_side.table:
            dialog.tabs.setCurrentWidget(dialog.side_by_side)
        QApplication.processEvents()
        header = table.horizontalHeader()
        metrics = header.fontMetrics()
        cut = [(table.horizontalHeaderItem(i).text(), header.sectionSize(i))
               for i in range(table.columnCount())
               if header.sectionSize(i) < metrics.horizontalAdvance(table.horizontalHeaderItem(i).text())]
        assert cut == [], f"{table.objectName()}: {cut}"
