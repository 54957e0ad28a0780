"""Defects a new user hit in the desktop app, one test each."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("PySide6")
from tests.gui.support import write_bundle  # noqa: E402
from tests.gui.support import shown_main_window

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, settings, tmp_path, no_leaks):  # type: ignore[no-untyped-def]
    samples = tmp_path / "samples"
    samples.mkdir()
    yield from shown_main_window(qtbot, settings, samples)


@pytest.mark.slow
def test_open_results_shows_the_results_tab(window, qtbot, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    bundle = write_bundle(tmp_path / "bundle", "b", [{"case": 0, "repetition": 0, "engine": "e1", "query": "q1",
                                                      "variables": {}}])
    monkeypatch.setattr(window.runs, "selected_entry", lambda: SimpleNamespace(bundle=bundle))
    window.tabs.setCurrentWidget(window.runs)
    window.runs.queue.open_button.setEnabled(True)
    window.runs.queue.open_button.click()
    assert window.tabs.currentWidget() is window.results
    assert window.results.folder == bundle


def test_teaching_coupon_defaults_show_rspql_example_10() -> None:
    """The coupon example opens with the rspql preset first: evaluations at 8 s and 16 s (paper's rows)."""
    from rsp_workbench.core.semantics import PRESETS
    from rsp_workbench.gui.teaching.model import TeachingModel

    assert "rspql" in PRESETS
    model = TeachingModel("coupon")
    assert model.columns[0].preset == "rspql"
    rows = model.emissions(0)
    assert [t for t, _, _ in rows] == [8000, 16_000]
    assert [len(bindings) for _, _, bindings in rows] == [2, 1]
    rooms = TeachingModel("rooms")
    rooms.set_example("coupon")  # untouched default columns follow the example
    assert [c.preset for c in rooms.columns][0] == "rspql"


# --------------------------------------------------------------------------- item 9: Runs tab


def test_runs_cancel_keeps_oracle_total_and_drops_the_eta(tmp_path: Path) -> None:
    """After Cancel the bars say "cancelled" (no stale ETA) and the oracle still counts /N, not /N−1."""
    from tests.gui.support import entry_for, event
    from rsp_workbench.gui.runs.model import CANCELLED

    entry = entry_for(tmp_path)
    entry.start(0.0)
    entry.apply(event("validate", total=3, data={"streams": 1}), 0.0)
    entry.apply(event("stream", done=0, total=1), 0.0)
    entry.apply(event("engine", run_id="r1", data={"engine": "csparql", "stimuli": 5}), 1.0)
    entry.apply(event("oracle", run_id="r1"), 3.0)
    entry.apply(event("run-done", run_id="r1", done=1, total=3, data={"run_id": "r1", "status": "ok"}), 4.0)
    entry.apply(event("engine", run_id="r2", data={"engine": "csparql", "stimuli": 5}), 4.0)
    assert entry.stage_text("engines", 5.0) == "1/3 · ETA 0:03"
    entry.request_cancel(5.0)
    assert "ETA" not in entry.stage_text("engines", 5.0)
    entry.apply(event("run-done", run_id="r2", done=2, total=3, data={"run_id": "r2", "status": "cancelled"}), 6.0)
    entry._end(6.0)
    entry.status = CANCELLED
    assert entry.stages["oracle"].expected == 3
    assert entry.stage_text("oracle", 100.0) == "cancelled · 1 of 3 finished"
    assert entry.stage_text("engines", 100.0) == "cancelled · 1 of 3 finished"


def test_runs_source_counts_runs_at_the_chosen_size(qtbot, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    """The run count above the queue follows the Size combo (not always the full experiment)."""
    from tests.gui.support import rooms_experiment
    from rsp_workbench.gui.runs.view import RunManagerView
    from rsp_workbench.gui.tasks import TaskRegistry

    path = rooms_experiment(tmp_path)
    path.write_text(path.read_text(encoding="utf-8").replace("sizes:\n  smoke: {}",
                                                             "repetitions: 4\nsizes:\n  smoke: {repetitions: 1}"),
                    encoding="utf-8")
    view = RunManagerView(TaskRegistry(), None, results_dir=tmp_path / "results")
    qtbot.addWidget(view)
    view.form.file_edit.setText(str(path))
    view.form.refresh_source()
    assert view.form.size_combo.currentData() == "smoke"
    assert "1 run " in view.form.source_label.text() + " "
    view.form.size_combo.setCurrentIndex(view.form.size_combo.findData(None))
    assert "4 runs" in view.form.source_label.text()


def test_runs_header_counts_the_engine_runs_of_the_chosen_size(qtbot, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QListWidgetItem

    from tests.gui.support import event, rooms_experiment
    from rsp_workbench.experiment import load_experiment
    from rsp_workbench.gui.runs.queue_panel import ID_ROLE
    from rsp_workbench.gui.runs.view import RunManagerView
    from rsp_workbench.gui.runs.model import RunRequest
    from rsp_workbench.gui.tasks import TaskRegistry

    view = RunManagerView(TaskRegistry(), None, results_dir=tmp_path / "results")
    qtbot.addWidget(view)
    entry = view.model.enqueue(RunRequest(load_experiment(rooms_experiment(tmp_path)), tmp_path / "out", "smoke"))
    item = QListWidgetItem()
    item.setData(ID_ROLE, entry.ident)
    view.queue.queue_list.addItem(item)
    view.queue.queue_list.setCurrentItem(item)
    entry.start(0.0)
    entry.apply(event("validate", total=1, data={"streams": 1}), 0.0)  # run_experiment counts at the size
    view._redraw(force=True)
    assert "size smoke · 1 engine run ·" in view.detail.header.text()


def test_runs_generation_progress_stays_on_one_line(qtbot, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    """A long stream message is elided to the bar's width on one line; the tooltip has all of it."""
    from tests.gui.support import entry_for, event
    from rsp_workbench.gui.runs.view import RunManagerView
    from rsp_workbench.gui.tasks import TaskRegistry

    view = RunManagerView(TaskRegistry(), None, results_dir=tmp_path / "results")
    qtbot.addWidget(view)
    view.resize(1024, 700)
    view.show()
    qtbot.waitExposed(view)
    entry = entry_for(tmp_path)
    entry.start(0.0)
    long = "generating stream " + "/very/long/path/" * 20 + "stations.trig\n(LSD, 50 stations)"
    entry.apply(event("validate", total=1, data={"streams": 2}), 0.0)
    entry.apply(event("stream", message=long, done=0, total=2), 0.0)
    view.detail.redraw_stages(entry)
    bar = view.detail.stage_bars["generate"]
    assert "\n" not in bar.format()
    assert bar.fontMetrics().horizontalAdvance(bar.format()) <= bar.contentsRect().width()
    assert "stations.trig" in bar.toolTip()


# --------------------------------------------------------------------------- item 13: Timeline


def _graph_stream() -> object:
    """Two lanes, one event every second, each event a graph of three triples (same lane, same instant)."""
    from rsp_workbench.results.stream_lanes import StreamLanes
    from rsp_workbench.streams.model import StreamElement

    return StreamLanes.from_elements([
        StreamElement(f"<http://ex.org/sensor{k}>", f"<http://ex.org/p{p}>", '"1"', i * 1000)
        for i in range(20) for k in range(2) for p in range(3)])


def test_timeline_fields_are_whole_at_1024_and_the_view_fits(qtbot, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.results.timeline.view import TimelineView

    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(1024, 700)
    view.show()
    qtbot.waitExposed(view)
    view.size_edit.setText("10000ms")
    view.slide_edit.setText("10000ms")
    view.t0_edit.setText("10000ms")
    assert view.minimumSizeHint().width() <= 1024
    assert view.width() <= 1024
    for edit in (view.size_edit, view.slide_edit, view.t0_edit):
        assert edit.width() >= edit.fontMetrics().horizontalAdvance(edit.text()) + 8


def test_timeline_jump_starts_at_the_data_not_before_it(qtbot, no_leaks) -> None:  # type: ignore[no-untyped-def]
    """A jump to an early divergence (5 s, windows of 5 s) shows from the stream's start, not from −15 s."""
    from rsp_workbench.gui.results.timeline.view import TimelineView

    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(1024, 700)
    view.show()
    view.size_edit.setText("5s")
    view.slide_edit.setText("5s")
    view.show_lanes(_graph_stream())  # type: ignore[arg-type]
    view.jump_to(5000)
    lo, hi = view.timeline.time_range()
    assert -1000 < lo <= 0 and hi - lo == pytest.approx(40_000)


def test_timeline_csv_counts_a_graphs_triples_in_one_row(qtbot, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    import csv

    from rsp_workbench.gui.results.timeline.view import TimelineView

    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(1024, 700)
    view.show()
    view.show_lanes(_graph_stream())  # type: ignore[arg-type]
    view.timeline.set_time_range(0, 4500)
    view.timeline.refresh()
    assert view.timeline._shown["mode"] == "points"
    rows = [row for row in csv.reader(open(view.timeline.export_csv(tmp_path / "t.csv"), encoding="utf-8"))
            if row[0] == "element"]
    assert len(rows) == len({tuple(row) for row in rows})  # no identical rows
    assert ["element", "sensor0", "1000", "1000", "3"] in rows
    assert sum(int(row[4]) for row in rows) == 3 * 2 * 5  # 5 instants × 2 lanes × 3 triples in 0…4.5 s


# --------------------------------------------------------------------------- item 4: 1024×700


@pytest.mark.slow
def test_every_tab_fits_1024_with_long_bundle_paths(window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A long bundle path in Runs and Results never widens the window; the run table's verdict shows."""
    from PySide6.QtWidgets import QListWidgetItem

    from tests.gui.support import rooms_experiment
    from rsp_workbench.experiment import load_experiment
    from rsp_workbench.gui.runs.queue_panel import ID_ROLE
    from rsp_workbench.gui.runs.model import RunRequest
    from rsp_workbench.results.reader import open_bundle

    deep = tmp_path / ("a_very_long_folder_name_for_the_results_of_experiments_" * 3) / "and_another_long_level_2026"
    bundle = write_bundle(deep / "rooms-experiment-with-a-long-name-20261124-101010", "rooms",
                          [{"case": 0, "repetition": r, "engine": "csparql-with-a-long-engine-name",
                            "query": "rooms", "variables": {}} for r in range(3)])
    window.resize(1024, 700)
    entry = window.runs.model.enqueue(RunRequest(load_experiment(rooms_experiment(tmp_path)), bundle))
    item = QListWidgetItem()
    item.setData(ID_ROLE, entry.ident)
    window.runs.queue.queue_list.addItem(item)
    entry.start(0.0)
    entry.finish(open_bundle(bundle), 5.0)
    window.runs.queue.queue_list.setCurrentItem(item)
    window.results.open_bundle(bundle)
    qtbot.waitUntil(lambda: window.results.folder == bundle, timeout=10_000)
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        qtbot.wait(20)
        assert window.width() <= 1024, window.tabs.tabText(index)
        assert window.tabs.currentWidget().minimumSizeHint().width() <= 1024, window.tabs.tabText(index)
    window.tabs.setCurrentWidget(window.runs)
    qtbot.wait(20)
    table = window.runs.detail.run_table
    assert table.rowCount() == 3 and table.isVisible()
    from rsp_workbench.gui.runs.run_detail import VERDICT_COLUMN

    verdict_right = table.columnViewportPosition(VERDICT_COLUMN) + table.columnWidth(VERDICT_COLUMN)
    assert 0 <= table.columnViewportPosition(VERDICT_COLUMN) and verdict_right <= table.viewport().width()
    assert table.item(0, VERDICT_COLUMN).text() == "correct"
    assert window.runs.detail.header.isVisible() and bundle.name[-15:] in window.runs.detail.header.text()
    assert str(bundle) in window.runs.detail.header.toolTip()
    window.results.tabs.setCurrentWidget(window.results.timeline_view)
    window.tabs.setCurrentWidget(window.results)
    qtbot.wait(20)
    assert window.width() <= 1024


# --------------------------------------------------------------------------- item 6: Teaching


@pytest.fixture
def coupon_window(window, qtbot):  # type: ignore[no-untyped-def]
    """The Teaching tab at 1280×820 on the coupon example at 8 s (its busiest instant)."""
    window.resize(1280, 820)
    window.tabs.setCurrentWidget(window.teaching)
    window.teaching.model.set_example("coupon")
    window.teaching.model.set_time(8000)
    qtbot.wait(50)
    return window


@pytest.mark.slow
def test_teaching_point_labels_are_whole_and_never_overlap(coupon_window) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.teaching.view import label_levels

    assert label_levels([2.0, 2.0, 5.0, 7.0], [1.0, 1.0, 1.0, 1.0], 0.1) == [0, 1, 0, 0]
    labels = coupon_window.teaching.timeline._labels
    texts = [label.textItem.toPlainText() for label in labels]
    assert ':alice "10% discount on"' in texts and ":diana :a" in texts and ":eve :b" in texts
    rects = [label.sceneBoundingRect() for label in labels]
    for i, a in enumerate(rects):
        for j in range(i + 1, len(rects)):
            assert not a.intersects(rects[j]), (texts[i], texts[j])


@pytest.mark.slow
def test_teaching_panels_fit_1280x820_break_between_names_and_speak_seconds(coupon_window) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QTextDocument
    from PySide6.QtWidgets import QScrollArea

    teaching = coupon_window.teaching
    scroll = next(area for area in teaching.findChildren(QScrollArea) if area.widget().findChild(type(teaching.column_widgets[0])))
    assert scroll.verticalScrollBar().maximum() == 0 and scroll.horizontalScrollBar().maximum() == 0
    for column in teaching.column_widgets:
        readout = column.readout
        plain = readout.text()
        shown = plain.replace("\u2060", "").replace("&nbsp;", " ")
        assert " ms" not in shown and re.search(r"[\[(]\d+ s, \d+ s[\])]", shown)  # e.g. [8 s, 10 s)
        document = QTextDocument()
        document.setDefaultFont(readout.font())
        document.setHtml(plain)
        document.setTextWidth(readout.contentsRect().width())
        document.size()  # lays it out
        block = document.begin()
        while block.isValid():
            layout, text = block.layout(), block.text()
            for index in range(layout.lineCount() - 1):  # every line but a paragraph's last
                line = layout.lineAt(index)
                assert text[line.textStart() + line.textLength() - 1] in " \u2028", text  # at a space or <br> only
            block = block.next()
    assert teaching.t0_spins[0].suffix() == " s" and teaching.t0_spins[0].value() == 1.0
    teaching.t0_spins[1].setValue(2)
    assert teaching.model.t0 == (1000, 2000)


def test_teaching_yabench_preset_says_the_t0_fields_override_its_t0(qtbot, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.teaching.view import TeachingView
    from rsp_workbench.gui.teaching.model import TeachingModel

    model = TeachingModel("rooms", ["yabench-window-close", "csparql"])
    assert model.t0_note(0) is None  # t0 fields at 0: what the preset fixes
    view = TeachingView(model)
    qtbot.addWidget(view)
    view.resize(1280, 760)
    view.show()
    view.t0_spins[0].setValue(2)
    assert model.t0 == (2000,) and model.answer(0).evaluations[0].time == 12_000  # the fields are honoured
    assert "fixes t0 = 0 s" in (model.t0_note(0) or "") and model.t0_note(1) is None
    assert "fixes t0 = 0 s" in view.column_widgets[0].readout.text()
    assert "fixes t0" not in view.column_widgets[1].readout.text()
    view.close()
