"""Designer: model round trips with undo/redo (no Qt), and the view in sync both ways."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from workbench.gui.designer_model import MISSING, DesignerModel, parse_path, path_text

DATA = Path(__file__).parent / "data" / "experiments"


def test_path_text_round_trip() -> None:
    assert path_text(("engines", 0, "semantics", "report")) == "engines[0].semantics.report"
    assert parse_path("engines[0].semantics.report") == ("engines", 0, "semantics", "report")


def test_model_set_undo_redo_and_yaml() -> None:
    model = DesignerModel()
    model.load(DATA / "full.yaml")
    assert model.validation.ok and not model.dirty
    model.set(("engines", 1, "semantics", "border"), "closed")
    assert "border: closed" in model.yaml_text() and model.dirty
    model.set(("repetitions",), 5)
    assert model.undo() and model.get(("repetitions",)) == 2
    assert model.undo() and model.get(("engines", 1, "semantics")) is MISSING
    assert not model.dirty
    assert model.redo() and model.get(("engines", 1, "semantics", "border")) == "closed"


def test_model_yaml_edit_applies_and_invalid_yaml_does_not() -> None:
    model = DesignerModel()
    text = model.yaml_text().replace("new-experiment", "renamed")
    assert model.set_yaml_text(text) and model.get(("name",)) == "renamed"
    assert not model.set_yaml_text("name: [broken")
    assert model.get(("name",)) == "renamed" and model.yaml_error is not None and model.yaml_error.line == 1
    assert model.undo() and model.get(("name",)) == "new-experiment"


def test_model_marks_invalid_field_with_path_and_line() -> None:
    model = DesignerModel()
    model.set(("engines", 0, "semantics", "report"), "windowclose")
    error = model.validation.error
    assert error is not None and error.field == "engines[0].semantics.report" and error.line
    assert "is not one of" in error.message
    model.remove(("engines", 0, "semantics", "report"))
    assert model.validation.ok and model.get(("engines", 0, "semantics")) is MISSING


def test_model_typing_merges_into_one_undo_step() -> None:
    model = DesignerModel()
    for text in ("S", "SE", "SEL"):
        model.set(("description",), text, merge=True)
    model.undo()
    assert model.get(("description",)) is MISSING


def test_model_save_and_reload(tmp_path: Path) -> None:
    model = DesignerModel()
    model.set(("seed",), 42)
    path = model.save(tmp_path / "e.yaml")
    again = DesignerModel()
    again.load(path)
    assert again.raw == model.raw and again.validation.ok


# ------------------------------------------------------------------ the Qt view

pytest.importorskip("PySide6")
from tests.test_gui_support import no_leaks  # noqa: E402,F401


@pytest.fixture
def designer(qtbot, no_leaks):  # type: ignore[no-untyped-def]
    from workbench.gui.designer import DesignerView

    view = DesignerView()
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show()
    yield view
    view.close()


@pytest.mark.gui
def test_form_edit_updates_yaml_and_undo_redo(designer, qtbot) -> None:  # type: ignore[no-untyped-def]
    designer.name_edit.setText("from-the-form")
    designer.name_edit.editingFinished.emit()
    assert "name: from-the-form" in designer.yaml_edit.toPlainText()
    designer.undo_action.trigger()
    assert "name: new-experiment" in designer.yaml_edit.toPlainText()
    assert designer.name_edit.text() == "new-experiment"
    designer.redo_action.trigger()
    assert designer.name_edit.text() == "from-the-form"


@pytest.mark.gui
def test_yaml_edit_updates_form(designer, qtbot) -> None:  # type: ignore[no-untyped-def]
    text = designer.yaml_edit.toPlainText().replace("preset: csparql", "preset: cqels")
    designer.yaml_edit.setPlainText(text)
    designer.flush_pending_edits()
    assert designer.preset_combo.currentText() == "cqels"
    data = yaml.safe_load(designer.yaml_edit.toPlainText())
    assert data["engines"][0]["preset"] == "cqels"


@pytest.mark.gui
def test_invalid_field_is_marked_inline(designer) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QComboBox

    designer.model.set(("engines", 0, "semantics", "border"), "sideways")
    border = designer.findChild(QComboBox, "semantics_border")
    assert border in designer.invalid_widgets()
    assert "engines[0].semantics.border" in designer.error_label.text()
    assert "not one of" in border.toolTip()
    designer.undo()
    assert not designer.invalid_widgets()
    assert "valid" in designer.error_label.text()


@pytest.mark.gui
def test_invalid_yaml_is_marked_and_form_kept(designer) -> None:  # type: ignore[no-untyped-def]
    designer.yaml_edit.setPlainText("name: [oops\n")
    designer.flush_pending_edits()
    assert "invalid YAML" in designer.error_label.text()
    assert designer.name_edit.text() == "new-experiment"


@pytest.mark.gui
def test_generator_params_and_flow_preview(designer) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QLineEdit

    stations = designer.findChild(QLineEdit, "param_stations")
    assert stations is not None and stations.text() == "10"
    stations.setText("abc")
    stations.editingFinished.emit()
    assert stations in designer.invalid_widgets()
    designer.model.set(("stream", "flow"), {"shape": "step", "initial": 1, "step": 2, "every": 5, "period": "1s"})
    xs, ys = designer.flow_curve.getData()
    assert xs is not None and len(ys) > 1 and max(ys) > min(ys)


@pytest.mark.gui
def test_open_and_save(designer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    source = DATA / "full.yaml"
    assert designer.open_file(source) is None
    assert designer.query_list.count() == 2 and designer.engine_list.count() == 2
    copy = tmp_path / "copy.yaml"
    designer.ask_save_path = lambda: str(copy)
    designer.model.base_dir = DATA  # relative paths in the copy still resolve for validation
    assert designer.save_as()
    assert yaml.safe_load(copy.read_text()) == yaml.safe_load(source.read_text())
