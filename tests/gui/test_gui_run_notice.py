"""A long run that ends while the window is in the background is announced: a tray message, else
the taskbar entry flashes; a short run, or one ending in front of the user, is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsp_workbench.errors import UserError
from rsp_workbench.gui.runs.model import (
    CANCELLED,
    FAILED,
    NOTIFY_AFTER_S,
    OK,
    RunQueue,
    finish_message,
    finish_notice,
)
from tests.gui.support import entry_for


def _ended(tmp_path: Path, status: str, took: float):  # type: ignore[no-untyped-def]
    entry = entry_for(tmp_path)
    entry.start(100.0)
    entry.status, entry.finished = status, 100.0 + took
    return entry


@pytest.mark.parametrize(("active", "tray", "took", "status", "notice"), [
    (False, True, 60.0, OK, "tray"),
    (False, False, 60.0, OK, "alert"),
    (False, True, 60.0, FAILED, "tray"),
    (False, False, 60.0, CANCELLED, "alert"),
    (True, True, 60.0, OK, ""),  # the user is looking
    (False, True, NOTIFY_AFTER_S - 1, OK, ""),  # a short run
])
def test_who_is_told_that_a_run_ended(tmp_path: Path, active: bool, tray: bool, took: float,
                                      status: str, notice: str) -> None:
    assert finish_notice(_ended(tmp_path, status, took), window_active=active, tray_available=tray) == notice


def test_the_message_names_the_run_its_outcome_and_duration(tmp_path: Path) -> None:
    entry = _ended(tmp_path, FAILED, 75.0)
    entry.error = "engine csparql crashed"
    assert finish_message(entry) == (f"Run failed: {entry.name}", "after 1:15; engine csparql crashed")


@pytest.fixture
def view(qtbot, tmp_path, no_leaks):  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.runs.view import RunManagerView
    from rsp_workbench.gui.tasks import TaskRegistry

    manager = RunManagerView(TaskRegistry(), None, results_dir=tmp_path / "results")
    qtbot.addWidget(manager)
    yield manager
    manager.close()


@pytest.mark.gui
@pytest.mark.parametrize(("tray", "kind"), [(True, "tray"), (False, "alert")])
def test_the_runs_tab_announces_a_long_run_ending_in_the_background(view, tmp_path: Path, tray: bool, kind: str) -> None:  # type: ignore[no-untyped-def]
    told: list[tuple[str, str, str]] = []
    view.notify = lambda *notice: told.append(notice)
    view.window_active = lambda: False
    view.tray_available = lambda: tray
    view.model = RunQueue()
    entry = view.model.enqueue(entry_for(tmp_path).request)
    times = iter([0.0, 120.0, 120.0, 120.0, 120.0, 120.0])
    view.clock = lambda: next(times)
    entry.start(view.clock())
    view._on_failed(UserError("no engine"), "")
    assert told == [(kind, f"Run failed: {entry.name}", "after 2:00; no engine")]


@pytest.mark.gui
def test_without_a_tray_the_taskbar_entry_flashes(view, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QApplication

    alerted: list[object] = []
    monkeypatch.setattr(QApplication, "alert", staticmethod(lambda widget, ms=0: alerted.append(widget)))
    view.notify("alert", "Run finished: x", "after 1:00")
    assert alerted == [view.window()]
