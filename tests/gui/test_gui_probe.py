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


# --- every installed engine type, several probes side by side as a SECRET table --------------------


def _inference(engine: str, preset: str, parameters: dict, *, overrides: dict | None = None,
               fault: str | None = None, unexplained: str | None = None, ran: int = 2):  # type: ignore[no-untyped-def]
    """A hand-made answer of `rspwb probe` (what the side-by-side table shows of it)."""
    from collections import Counter

    from rsp_workbench.oracle.verdict import Divergence
    from rsp_workbench.probe.battery import battery
    from rsp_workbench.probe.infer import FaultFinding, ProbeInference, ProbeObservation, Unexplained

    observations = tuple(ProbeObservation(name, "ok" if i < ran else "failed", error=None if i < ran else "boom")
                         for i, name in enumerate(("borders", "gap")))
    missing = Unexplained(unexplained, "…", Divergence(0, 0, 1000, 1000, Counter(), Counter(), "different", 0), "…") \
        if unexplained else None
    return ProbeInference(
        engine=engine, preset=preset, overrides=overrides or {}, parameters=parameters, undetermined={},
        explained=missing is None, faults=(FaultFinding(fault, ("borders",), "…"),) if fault else (),
        unexplained=(missing,) if missing else (), observations=observations,
        probes=tuple(p for p in battery() if p.name in ("borders", "gap")))


PARAMETERS = {"border": "closed-open", "report": "window-close", "tick": "time", "batch_size": 1, "r2s": "rstream",
              "empty_notification": True, "leading_partial": True, "t0": None, "alignment": "first-element",
              "grouping": "evaluation", "time_unit": "ms"}


def test_a_secret_row_says_each_parameter_and_what_explains_the_engine(tmp_path: Path) -> None:
    from rsp_workbench.gui.probe.model import SECRET_COLUMNS, secret_row, write_secret_csv

    snapshot = secret_row(_inference("esper window=time", "esper-time-snapshot", PARAMETERS, fault="border_drift"))
    assert dict(zip(SECRET_COLUMNS, snapshot.cells)) == {
        "engine": "esper window=time", "border": "closed-open", "t0": "first element (hidden)",
        "report": "window-close", "tick": "time", "R2S": "rstream", "empty notification": "true",
        "grouping": "evaluation", "explained by": "esper-time-snapshot, fault border_drift"}
    assert snapshot.explained and not snapshot.partial and snapshot.overridden == frozenset()
    fixed = dict(PARAMETERS, t0=300, alignment="fixed", tick="batch", batch_size=2)
    odd = secret_row(_inference("secret", "csparql", fixed, overrides={"t0": 300, "tick": "batch", "batch_size": 2},
                                unexplained="gap", ran=1))
    cells = dict(zip(SECRET_COLUMNS, odd.cells))
    assert (cells["t0"], cells["tick"]) == ("fixed 300 ms", "batch of 2")
    assert cells["explained by"] == "csparql + {t0: 300, tick: batch, batch_size: 2}; unexplained: gap (1 of 2 probes ran)"
    assert not odd.explained and odd.partial and odd.overridden == {"t0", "tick"}
    path = write_secret_csv(tmp_path / "side.csv", [snapshot, odd])
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == ",".join(SECRET_COLUMNS) and lines[1].startswith("esper window=time,closed-open,")
    assert len(lines) == 3


def test_only_installed_engine_types_are_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    """A program engine whose build is missing is left out, by the stand's own check."""
    import rsp_workbench.engines as engines
    from rsp_workbench.errors import UserError
    from rsp_workbench.gui.probe.model import builtin_engines, combination_choices

    real = engines.program_command

    def missing_rsprs(config):  # type: ignore[no-untyped-def]
        if config.type == "rsprs":
            raise UserError("engine type rsprs is not installed")
        return ["true"]

    monkeypatch.setattr(engines, "program_command", missing_rsprs)
    keys = [key for _, key in builtin_engines()]
    assert "builtin:esper" in keys and "builtin:rspjs" in keys and "builtin:rsprs" not in keys
    assert "builtin:secret" in keys and "preset:rsprs" in keys  # the secret engine under rsp-rs's preset stays
    monkeypatch.setattr(engines, "program_command", real)
    labels = [label for label, _ in combination_choices("builtin:esper")]
    assert labels == ["default", "window=time, output=all", "window=time", "stream=rstream", "reference_point=0",
                      "every combination"]
    assert [label for label, _ in combination_choices("preset:cqels")] == ["default"]


def test_the_side_by_side_table_exports_csv_png_and_svg(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QImage

    from rsp_workbench.gui.probe.side_by_side import SideBySide

    panel = SideBySide()
    qtbot.addWidget(panel)
    panel.resize(500, 200)  # narrower than the table: the exports still hold every column
    panel.add(_inference("esper window=time", "esper-time-snapshot", PARAMETERS, fault="border_drift"))
    panel.add(_inference("rsprs", "rsprs", PARAMETERS, unexplained="gap"))
    assert panel.table.rowCount() == 2 and panel.export_buttons["png"].isEnabled()
    assert panel.table.item(1, 8).text() == "rsprs; unexplained: gap"
    for kind in ("csv", "png", "svg"):
        panel.ask_save_path = lambda kind, kind_=kind: str(tmp_path / f"side.{kind_}")
        panel.export_buttons[kind].click()
    assert (tmp_path / "side.csv").read_text(encoding="utf-8").count("\n") == 3
    image = QImage(str(tmp_path / "side.png"))
    assert image.width() > 500 and image.height() > 40
    svg = (tmp_path / "side.svg").read_text(encoding="utf-8")
    assert "rsprs; unexplained: gap" in svg or "unexplained" in svg
    panel.clear()
    assert panel.table.rowCount() == 0 and not panel.export_buttons["csv"].isEnabled()


@pytest.mark.slow
def test_probe_dialog_probes_every_combination_side_by_side(window, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every combination a type declares, one task, one row each (two of the secret engine's here:
    the declared combinations of Esper start a JVM per probe)."""
    import rsp_workbench.probe.runner as runner
    from rsp_workbench.probe.runner import ProbeRunOptions

    monkeypatch.setattr(runner, "parameter_combinations", lambda name: [{}, {"t0": 300}])
    dialog = window.open_probe_dialog()
    dialog.options = ProbeRunOptions(probes=("borders", "first-element"))
    dialog.select_engine("builtin", "secret")
    dialog.select_combination("every combination")
    with qtbot.waitSignal(dialog.finishedProbes, timeout=120_000) as blocker:
        dialog.start()
    inferences = blocker.args[0]
    assert [i.engine for i in inferences] == ["secret", "secret t0=300"]
    qtbot.waitUntil(lambda: dialog.task is None)
    assert dialog.tabs.currentWidget() is dialog.side_by_side
    table = dialog.side_by_side.table
    assert [table.item(r, 0).text() for r in range(table.rowCount())] == ["secret", "secret t0=300"]
    assert table.item(0, 2).text() == "registration (hidden)" and table.item(1, 2).text() == "fixed 300 ms"
