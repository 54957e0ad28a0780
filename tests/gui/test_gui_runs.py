"""The Runs tab: queue, per-stage progress with ETA, live KPIs, cancel, failures, confirmation, closing.

Real runs of a tiny experiment (the CSRBench rooms stream: 5 statements) through
``run_experiment``; an absolute-time run takes a few seconds, a real-time one 25 s, which
leaves time to cancel it. Misbehaving engines are inline Python programs (``external``).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import psutil
import pytest

from rsp_workbench.results.reader import open_bundle
from rsp_workbench.errors import UserError
from rsp_workbench.gui.runs.model import (
    CANCELLED,
    FAILED,
    OK,
    QUEUED,
    RUNNING,
    ExperimentRun,
    RunQueue,
    RunRequest,
    StageProgress,
    bundle_folder,
    default_size,
)
from rsp_workbench.pipeline.run_task import ExperimentProgress


def engine_children() -> set[int]:
    return {child.pid for child in psutil.Process().children(recursive=True)}


# --------------------------------------------------------------------------- model (no Qt)


def test_stage_eta_from_measured_rate() -> None:
    stage = StageProgress("engines", total=4)
    assert stage.eta_s(0.0) is None and stage.text(0.0) == "0/4"
    stage.start(0.0)
    assert stage.text(1.0) == "0/4 · running"
    stage.complete(10.0)  # 10 s per run
    stage.start(10.0)
    assert stage.eta_s(13.0) == pytest.approx(3 * 10.0 - 3.0)  # 3 left, the current one 3 s in
    assert stage.text(13.0) == "1/4 · ETA 0:27"
    stage.stop(14.0)  # cancelled: busy time kept, not counted as done
    assert stage.done == 1 and not stage.active
    stage.skip_one()
    assert stage.expected == 3 and stage.remaining == 2


def test_events_fold_into_stages_traces_and_log(tmp_path: Path) -> None:
    entry = entry_for(tmp_path)
    entry.start(0.0)
    entry.apply(event("validate", total=2, data={"streams": 1}), 0.0)
    entry.apply(event("stream", done=0, total=1), 1.0)
    entry.apply(event("engine", run_id="r1", data={"engine": "csparql", "stimuli": 5}), 3.0)
    assert entry.stages["generate"].done == 1 and entry.stages["generate"].busy_s == 2.0
    entry.apply(event("kpi", run_id="r1", data={"time": 0.1, "rss_mb": 30.0, "cpu_percent": 50.0, "threads": 2,
                                               "responses": 1, "stimuli_done": 2}), 3.1)
    entry.apply(event("oracle", run_id="r1"), 5.0)
    entry.apply(event("run-done", run_id="r1", done=1, total=2,
                      data={"run_id": "r1", "engine": "csparql", "status": "ok", "verdict": "correct", "responses": 3}), 6.0)
    assert (entry.stages["engines"].done, entry.stages["oracle"].done) == (1, 1)
    # the second engine run fails: no oracle event, so the oracle stage expects one item less
    entry.apply(event("engine", run_id="r2", data={"engine": "crash", "stimuli": 5}), 6.0)
    # engines: 1 left × 2 s/run − 1 s in; oracle: 1 left × 1 s/run
    assert entry.eta_s(7.0) == pytest.approx((2.0 - 1.0) + 1.0)
    entry.apply(event("run-done", run_id="r2", done=2, total=2,
                      data={"run_id": "r2", "engine": "crash", "status": "failed", "error": "boom"}), 7.0)
    assert entry.stages["engines"].done == 2 and entry.stages["oracle"].expected == 1
    assert entry.stages["oracle"].text(7.0) == "1/1 · done"
    trace = entry.engine_runs["r1"]
    assert trace.times == [0.1] and trace.rss_mb == [30.0] and trace.verdict == "correct" and trace.responses == 3
    assert entry.engine_runs["r2"].error == "boom"
    assert any("[2/2]" in line for line in entry.log) and not any("kpi" in line for line in entry.log)


def test_queue_runs_in_order_one_at_a_time(tmp_path: Path) -> None:
    from rsp_workbench.experiment import load_experiment

    experiment = load_experiment(rooms_experiment(tmp_path))
    runs = RunQueue()
    first, second, third = (runs.enqueue(RunRequest(experiment, tmp_path / str(i))) for i in range(3))
    assert runs.next_to_start() is first
    first.start(0.0)
    assert runs.next_to_start() is None and runs.running() is first
    with pytest.raises(ValueError):
        runs.remove(first.ident)
    runs.remove(second.ident)
    first.status = OK
    assert runs.next_to_start() is third and runs.queued() == [third]


def test_bundle_folders_and_default_size(tmp_path: Path) -> None:
    from datetime import datetime

    when = datetime(2025, 1, 2, 3, 4, 5)
    folder = bundle_folder(tmp_path, "my exp/1", when)
    assert folder.name == "my_exp_1-20250102-030405"
    folder.mkdir()
    assert bundle_folder(tmp_path, "my exp/1", when).name == "my_exp_1-20250102-030405-2"
    assert default_size(("smoke", "full"), None) == "smoke"
    assert default_size(("smoke", "full"), "full") == "full"
    assert default_size((), "full") is None


# --------------------------------------------------------------------------- the view

pytest.importorskip("PySide6")
from rsp_workbench.gui.runs.run_detail import VERDICT_COLUMN  # noqa: E402
from tests.gui.support import QUERY, ROOMS, entry_for, event, rooms_experiment  # noqa: F401


@pytest.fixture
def view(qtbot, tmp_path, no_leaks):  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.runs.view import RunManagerView
    from rsp_workbench.gui.tasks import TaskRegistry

    tasks = TaskRegistry()
    manager = RunManagerView(tasks, None, results_dir=tmp_path / "results")
    errors: list[tuple[str, str]] = []
    manager.show_error = lambda title, text: errors.append((title, text))
    manager.errors = errors  # type: ignore[attr-defined]
    qtbot.addWidget(manager)
    manager.resize(1300, 800)
    manager.show()
    yield manager
    tasks.cancel_all(timeout_ms=20_000)
    qtbot.waitUntil(lambda: not manager.is_running(), timeout=30_000)
    manager.close()


def wait_done(qtbot, manager, entry, timeout: int = 60_000) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: entry.status in (OK, FAILED, CANCELLED) and not manager.is_running(), timeout=timeout)


@pytest.mark.slow
@pytest.mark.gui
def test_run_shows_stages_live_kpis_and_emits_the_bundle(view, qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = rooms_experiment(tmp_path)
    with qtbot.waitSignal(view.bundleReady, timeout=60_000) as ready:
        entry = view.enqueue_file(path)
        assert entry is not None and entry.request.size == "smoke"  # smoke is the default size
        assert entry.request.out_dir.parent == tmp_path / "results"
    assert ready.args == [str(entry.request.out_dir)]
    assert entry.status == OK, entry.error
    stages = entry.stages
    assert (stages["engines"].done, stages["engines"].total) == (1, 1)
    assert (stages["oracle"].done, stages["oracle"].total) == (1, 1)
    assert stages["generate"].expected == 0  # a stream file: nothing to generate
    trace = entry.engine_runs["case0-rep0-csparql-rooms"]
    assert trace.times and max(trace.rss_mb) > 1.0  # live samples of the engine process arrived
    assert trace.responses == 3 and trace.verdict == "correct"
    summary = open_bundle(entry.request.out_dir)
    assert summary.status == "ok" and summary.rows[0]["responses"] == trace.responses
    # the view drew it
    assert view.detail.stage_bars["engines"].format().startswith("1/1 · done")
    assert view.detail.stage_bars["oracle"].format().startswith("1/1 · done")
    assert "responses <b>3</b>" in view.detail.live_label.text()
    assert view.detail.rss_curve.getData()[0] is not None and len(view.detail.rss_curve.getData()[0]) == len(trace.times)
    assert view.detail.run_table.rowCount() == 1 and view.detail.run_table.item(0, VERDICT_COLUMN).text() == "correct"
    log = view.detail.log_pane.toPlainText()
    assert "csparql on rooms" in log and "oracle" in log and "finished: ok" in log
    assert view.detail.error_label.isHidden()
    assert "ok" in view.queue.queue_list.item(0).text()
    view.grab().save(str(tmp_path / "runs.png"))


@pytest.mark.slow
@pytest.mark.gui
def test_cancel_stops_the_engine_and_marks_the_bundle(view, qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    before = engine_children()
    entry = view.enqueue_file(rooms_experiment(tmp_path, mode="real-time"))  # the stream lasts 25 s
    queued = view.enqueue_file(rooms_experiment(tmp_path, name="second"))
    assert entry is not None and queued is not None and queued.status == QUEUED
    qtbot.waitUntil(lambda: any(t.times for t in entry.engine_runs.values()), timeout=30_000)
    engine = engine_children() - before
    assert engine  # the engine process runs
    assert entry.status == RUNNING and view.queue.cancel_button.isEnabled()
    view.queue.queue_list.setCurrentRow(0)
    with qtbot.waitSignal(view.bundleReady, timeout=20_000) as ready:
        view.cancel_selected()
        assert "cancelling" in view.queue.queue_list.item(0).text()
    assert ready.args == [str(entry.request.out_dir)]
    assert entry.status == CANCELLED
    assert not any(psutil.pid_exists(pid) for pid in engine)  # the cancelled engine process is gone
    summary = open_bundle(entry.request.out_dir)
    assert summary.status == "cancelled" and summary.rows[0]["status"] == "cancelled"
    assert entry.engine_runs["case0-rep0-csparql-rooms"].status == "cancelled"
    # the queue goes on with the next run
    wait_done(qtbot, view, queued)
    assert queued.status == OK
    assert not (engine_children() - before)


@pytest.mark.slow
@pytest.mark.gui
def test_external_engine_needs_confirmation_and_a_crash_shows_its_error(view, qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    crash = json.dumps([sys.executable, "-c", "import sys; sys.stderr.write('engine blew up\\n'); sys.exit(3)"])
    path = rooms_experiment(tmp_path, engines=f"""
        - {{id: csparql, type: secret, preset: csparql}}
        - id: crash
          type: external
          parameters: {{command: {crash}}}
        """)
    questions: list[str] = []
    view.ask_confirm = lambda question: questions.append(question) or False
    assert view.enqueue_file(path) is None  # declined: nothing queued, nothing runs
    assert questions and "engine blew up" in questions[0] and sys.executable in questions[0]
    assert view.model.entries == [] and not view.is_running() and view.queue.queue_list.count() == 0
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())

    view.ask_confirm = lambda question: True
    entry = view.enqueue_file(path)
    assert entry is not None and entry.request.confirmed
    wait_done(qtbot, view, entry)
    assert entry.status == FAILED
    assert "case0-rep0-crash-rooms" in entry.error and "engine blew up" in entry.error
    view.queue.queue_list.setCurrentRow(0)
    text = view.detail.error_label.text()
    assert not view.detail.error_label.isHidden() and "engine blew up" in text
    assert "case0-rep0-csparql-rooms (correct)" in text  # what completed is kept
    assert open_bundle(entry.request.out_dir).status == "failed"


@pytest.mark.slow
@pytest.mark.gui
def test_invalid_experiment_reports_file_and_field(view, qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    missing = json.dumps(["/nonexistent/engine-program"])
    path = rooms_experiment(tmp_path, engines=f"""
        - id: ghost
          type: external
          parameters: {{command: {missing}}}
        """)
    view.ask_confirm = lambda question: True
    entry = view.enqueue_file(path)
    assert entry is not None
    wait_done(qtbot, view, entry)
    assert entry.status == FAILED and "not found" in entry.error and "engines.ghost" in entry.error
    assert entry.bundle is None  # rejected before anything was written
    view.queue.queue_list.setCurrentRow(0)
    assert "not found" in view.detail.error_label.text()
    view.form.file_edit.setText(str(tmp_path / "nope.yaml"))
    assert view.enqueue_selected_source() is None
    assert view.errors and "nope.yaml" in view.errors[-1][1]


@pytest.mark.slow
@pytest.mark.gui
def test_ctrl_r_runs_the_designers_edits_and_closing_asks_then_stops(qtbot, settings, tmp_path, no_leaks,
                                                                     monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    from rsp_workbench.gui.main_window import MainWindow

    monkeypatch.setenv("RSPWB_RESULTS_DIR", str(tmp_path / "results"))
    window = MainWindow(settings=settings, samples_dir=tmp_path, spark_warmup=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.open_experiment(str(rooms_experiment(tmp_path, mode="real-time")))
    window.designer.model.set(("name",), "edited-in-designer")  # unsaved
    before = engine_children()
    try:
        with qtbot.waitActive(window):  # window shortcuts need the active window
            window.activateWindow()
        qtbot.keyClick(window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
        assert window.tabs.currentWidget() is window.runs
        entry = window.runs.model.entries[0]
        assert entry.name == "edited-in-designer" and entry.request.out_dir.parent == tmp_path / "results"
        qtbot.waitUntil(lambda: any(t.times for t in entry.engine_runs.values()), timeout=30_000)
        window.designer.model._saved_raw = window.designer.model.raw  # no save prompt

        questions: list[str] = []
        window.ask_close = lambda question: questions.append(question) or False
        window.close()
        assert questions and "edited-in-designer" in questions[0]
        assert window.isVisible() and window.runs.is_running()
        window.ask_close = lambda question: True
        window.close()
        assert not window.isVisible()
        assert not (engine_children() - before)  # the engine process was stopped before the window went
        qtbot.waitUntil(lambda: entry.status == CANCELLED, timeout=30_000)
        assert open_bundle(entry.request.out_dir).status == "cancelled"
    finally:  # never leave a window (or a save prompt) behind
        window.designer.model._saved_raw = window.designer.model.raw
        window.ask_close = lambda question: True
        window.close()


def test_designer_experiment_must_be_valid(tmp_path: Path) -> None:
    from rsp_workbench.gui.designer.model import DesignerModel
    from rsp_workbench.gui.runs.model import experiment_from_designer

    model = DesignerModel()
    model.load(rooms_experiment(tmp_path))
    assert experiment_from_designer(model).name == "tiny-rooms"
    model.set(("engines",), "nope")
    with pytest.raises(UserError) as error:
        experiment_from_designer(model)
    assert "engines" in str(error.value)
