"""Run > Probe engine…: the dialog probes off the GUI thread, shows the answer, cancels cleanly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
from tests.gui.support import shown_main_window
from tests.paths import DATA as TEST_DATA

pytestmark = pytest.mark.gui
DATA = TEST_DATA / "experiments"
FEW = ("borders", "empty", "r2s")  # enough to tell C-SPARQL from SPARQLstream and CQELS, in seconds


@pytest.fixture
def window(qtbot, settings, tmp_path, no_leaks):  # type: ignore[no-untyped-def]
    samples = tmp_path / "samples"
    shutil.copytree(DATA, samples)
    yield from shown_main_window(qtbot, settings, samples)


@pytest.mark.slow
def test_probe_dialog_names_the_engine_and_its_fault(window, qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    from rsp_workbench.probe.runner import ProbeRunOptions

    window.open_experiment(str(DATA / "full.yaml"))
    qtbot.keyClick(window, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    dialog = window.probe_dialog
    assert dialog is not None and dialog.isVisible()
    names = [dialog.engine_combo.itemText(i) for i in range(dialog.engine_combo.count())]
    assert names[:2] == ["csparql (preset)", "cqels (preset)"] and "secret (engine)" in names
    assert any(": " in name for name in names)  # the designer's experiment's engines are offered too
    dialog.options = ProbeRunOptions(probes=FEW)
    dialog.select_engine("preset", "csparql")
    dialog.fault_combo.setCurrentIndex(dialog.fault_combo.findData("late_purge"))
    with qtbot.waitSignal(dialog.finishedProbe, timeout=60_000) as blocker:
        task = dialog.start()
        assert task is not None and not dialog.start_button.isEnabled() and dialog.cancel_button.isEnabled()
    inference = blocker.args[0]
    assert inference.preset == "csparql" and [f.fault for f in inference.faults] == ["late_purge"]
    qtbot.waitUntil(lambda: dialog.task is None and dialog.start_button.isEnabled())
    assert "csparql" in dialog.headline.text() and "late_purge" in dialog.headline.text()
    assert dialog.parameters_table.rowCount() == len(inference.parameters)
    assert [dialog.probes_table.item(r, 0).text() for r in range(dialog.probes_table.rowCount())] == list(FEW)
    assert "evidence" in dialog.details.toPlainText()
    dialog.grab().save(str(tmp_path / "probe-dialog.png"))


@pytest.mark.slow
def test_probe_dialog_cancel_stops_the_engines(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.probe.runner import ProbeRunOptions

    dialog = window.open_probe_dialog()
    dialog.options = ProbeRunOptions(workers=1)
    dialog.select_engine("preset", "cqels")
    progressed: list[str] = []
    dialog.start()
    dialog.task.progress.connect(lambda fraction, message: progressed.append(message))
    qtbot.waitUntil(lambda: bool(progressed), timeout=30_000)  # the first probe finished
    dialog.cancel()
    qtbot.waitUntil(lambda: dialog.task is None, timeout=30_000)
    assert dialog.inference is not None
    statuses = [o.status for o in dialog.inference.observations]
    assert statuses[0] == "ok" and "cancelled" in statuses
    assert "Cancelled" in dialog.status.text()


@pytest.mark.slow
def test_external_engine_needs_confirmation(window, qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import sys

    from rsp_workbench.experiment import load_experiment

    experiment = load_experiment(DATA / "full.yaml")
    from dataclasses import replace

    from rsp_workbench.experiment.model import EngineSpec

    external = EngineSpec("mine", "external", experiment.engines[0].semantics,
                          parameters={"command": [sys.executable, "-c", "pass"]})
    experiment = replace(experiment, engines=(*experiment.engines, external))
    from rsp_workbench.gui.probe.view import ProbeDialog

    dialog = ProbeDialog(window.tasks, lambda: experiment, window)
    qtbot.addWidget(dialog)
    asked: list[str] = []
    dialog.ask_confirm = lambda question: asked.append(question) or False
    dialog.select_engine("experiment", "mine")
    assert dialog.start() is None and dialog.task is None
    assert "runs an external program" in asked[0] and "not confirmed" in dialog.status.text()
