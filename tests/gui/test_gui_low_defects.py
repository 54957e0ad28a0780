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
    assert verdict_text("recall", 0.8333) == "partial · recall 0.83"
    assert verdict_text("correct", 0.5) == "correct" and verdict_text(None) == ""
    trace = EngineRunTrace("case0-rep0-fifo-chain", engine="fifo")
    trace.set_row({"status": "ok", "verdict": "recall", "recall": 0.5})
    cells = engine_run_cells(trace)
    assert cells[1] == "partial · recall 0.50" and verdict_colour(cells[1]) == verdict_colour("partial") != "#000"


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
