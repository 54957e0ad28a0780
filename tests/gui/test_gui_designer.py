"""Designer: model round trips with undo/redo (no Qt), and the view in sync both ways."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from rsp_workbench.errors import UserError
from rsp_workbench.gui.designer.model import MISSING, DesignerModel, parse_path, path_text
from tests.paths import DATA as TEST_DATA, ROOT

DATA = TEST_DATA / "experiments"


def test_path_text_round_trip() -> None:
    assert path_text(("engines", 0, "semantics", "report")) == "engines[0].semantics.report"
    assert parse_path("engines[0].semantics.report") == ("engines", 0, "semantics", "report")


@pytest.mark.slow
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
    assert model.undo() and model.get(("name",)) == "renamed" and model.yaml_error is None  # the broken text first
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


@pytest.fixture
def designer(qtbot, no_leaks):  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.designer.view import DesignerView

    view = DesignerView()
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show()
    yield view
    view.close()


@pytest.mark.gui
def test_form_edit_updates_yaml_and_undo_redo(designer, qtbot) -> None:  # type: ignore[no-untyped-def]
    designer.general.name_edit.setText("from-the-form")
    designer.general.name_edit.editingFinished.emit()
    assert "name: from-the-form" in designer.yaml_edit.toPlainText()
    designer.undo_action.trigger()
    assert "name: new-experiment" in designer.yaml_edit.toPlainText()
    assert designer.general.name_edit.text() == "new-experiment"
    designer.redo_action.trigger()
    assert designer.general.name_edit.text() == "from-the-form"


@pytest.mark.gui
def test_yaml_edit_updates_form(designer, qtbot) -> None:  # type: ignore[no-untyped-def]
    text = designer.yaml_edit.toPlainText().replace("preset: csparql", "preset: cqels")
    designer.yaml_edit.setPlainText(text)
    designer.flush_pending_edits()
    assert designer.engines.preset_combo.currentText() == "cqels"
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
    assert designer.general.name_edit.text() == "new-experiment"


@pytest.mark.gui
def test_generator_params_and_flow_preview(designer) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QLineEdit

    stations = designer.findChild(QLineEdit, "param_stations")
    assert stations is not None and stations.text() == "10"
    stations.setText("abc")
    stations.editingFinished.emit()
    assert stations in designer.invalid_widgets()
    designer.model.set(("stream", "flow"), {"shape": "step", "initial": 1, "step": 2, "every": 5, "period": "1s"})
    xs, ys = designer.streams.flow_curve.getData()
    assert xs is not None and len(ys) > 1 and max(ys) > min(ys)


@pytest.mark.gui
def test_open_and_save(designer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    source = DATA / "full.yaml"
    assert designer.open_file(source) is None
    assert designer.queries.query_list.count() == 2 and designer.engines.engine_list.count() == 2
    copy = tmp_path / "copy.yaml"
    designer.ask_save_path = lambda: str(copy)
    assert designer.save_as()
    from rsp_workbench.experiment import load_experiment
    from rsp_workbench.gui.designer.save_as_paths import path_fields

    saved, original = yaml.safe_load(copy.read_text()), yaml.safe_load(source.read_text())
    moved = [item.field for item in designer.model.moved_paths]
    assert moved == list(path_fields(original))  # every relative path follows the file …
    for field in moved:
        for data in (saved, original):
            node = data
            for key in field[:-1]:
                node = node[key]
            node[field[-1]] = "(path)"
    assert saved == original  # … and nothing else changed
    before, after = load_experiment(source), load_experiment(copy)  # the same files from the new folder
    assert [q.file.resolve() for q in after.queries if q.file] == [q.file.resolve() for q in before.queries if q.file]
    assert [s.file.resolve() for s in after.static] == [s.file.resolve() for s in before.static]


# ------------------------------------------------------------------ model helpers for the new forms

SAMPLES = sorted((ROOT / "sample_experiments").glob("*/*.yaml"))


def test_query_windows_are_located_in_every_syntax() -> None:
    from rsp_workbench.gui.designer.window_clauses import query_windows, set_window_value

    text = (
        "FROM STREAM <http://ex.org/s> [RANGE ${WSIZE} STEP ${WSLIDE}]\n"
        "FROM NAMED WINDOW :w1 ON <http://ex.org/t> [RANGE PT5S STEP PT2S]\n"
        "FROM STREAM <http://ex.org/u> [RANGE 10s TUMBLING]\n"
        "WHERE { STREAM <http://ex.org/v> [RANGE 5s] { ?s ?p ?o } }\n"
        "FROM NAMED STREAM <http://ex.org/w> [NOW - 10 S SLIDE 5 S]\n"
    )
    windows = query_windows(text)
    assert [(w.stream, w.size, w.slide) for w in windows] == [
        ("<http://ex.org/s>", "${WSIZE}", "${WSLIDE}"), ("<http://ex.org/t>", "PT5S", "PT2S"),
        ("<http://ex.org/u>", "10s", None), ("<http://ex.org/v>", "5s", None), ("<http://ex.org/w>", "10 S", "5 S"),
    ]
    assert windows[0].variable(windows[0].size) == "WSIZE" and windows[1].variable("PT5S") is None
    assert "[RANGE PT9S STEP PT2S]" in set_window_value(text, windows[1], "size", "PT9S")
    assert "[RANGE 10s STEP 2s]" in set_window_value(text, windows[2], "slide", "2s")
    assert "[RANGE 5s STEP 1s]" in set_window_value(text, windows[3], "slide", "1s")
    assert "[RANGE PT5S]" in set_window_value(text, windows[1], "slide", "")
    assert "[NOW - 20 S SLIDE 5 S]" in set_window_value(text, windows[4], "size", "20 S")


def test_engine_type_change_drops_what_the_new_type_rejects() -> None:
    from rsp_workbench.gui.designer.model import engine_with_type

    secret = {"id": "e", "type": "secret", "preset": "cqels", "faults": {"late_purge": True}}
    eviction = engine_with_type(secret, "eviction")
    assert eviction["parameters"] == {"strategy": "fifo", "cache_size": 100} and eviction["faults"]
    external = engine_with_type(eviction, "external")
    assert "parameters" not in external and "faults" not in external and external["preset"] == "cqels"


def test_command_text_round_trip() -> None:
    from rsp_workbench.gui.designer.model import command_text, parse_command

    command = ["python3", "my engine.py", "--rate", "${RATE}"]
    assert parse_command(command_text(command)) == command
    assert parse_command("[a, b]") == ["a", "b"]
    assert parse_command("  ") is MISSING
    assert parse_command("python3 'unclosed") == "python3 'unclosed"  # the loader reports it at the field


# ------------------------------------------------------------------ the new widgets, both directions


def _yaml(designer) -> dict:  # type: ignore[no-untyped-def]
    return yaml.safe_load(designer.yaml_edit.toPlainText())


def _type_yaml(designer, text: str) -> None:  # type: ignore[no-untyped-def]
    designer.yaml_edit.setPlainText(text)
    designer.flush_pending_edits()


def _choose(combo, text: str) -> None:  # type: ignore[no-untyped-def]
    index = combo.findText(text)
    assert index >= 0, f"{text!r} not offered: {[combo.itemText(i) for i in range(combo.count())]}"
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def _type_line(edit, text: str) -> None:  # type: ignore[no-untyped-def]
    edit.setText(text)
    edit.editingFinished.emit()


@pytest.mark.gui
def test_sizes_table_both_ways(designer) -> None:  # type: ignore[no-untyped-def]
    designer.model.set(("sizes",), {"smoke": {"repetitions": 1}, "full": {}})
    table = designer.general.sizes_table.table
    assert [table.item(r, 0).text() for r in range(table.rowCount())] == ["smoke", "full"]
    table.item(0, 1).setText("{variables: {WSIZE: 5s}, repetitions: 2}")
    assert _yaml(designer)["sizes"] == {"smoke": {"variables": {"WSIZE": "5s"}, "repetitions": 2}, "full": {}}
    assert designer.model.validation.ok
    _type_yaml(designer, designer.yaml_edit.toPlainText().replace("full: {}", "full: {repetitions: 3}"))
    assert table.item(1, 1).text() == "{repetitions: 3}"
    table.item(1, 1).setText("{repetitions: 0}")
    assert designer.general.sizes_table in designer.invalid_widgets() and "sizes.full.repetitions" in designer.error_label.text()


@pytest.mark.gui
def test_cases_table_both_ways(designer) -> None:  # type: ignore[no-untyped-def]
    cases = designer.variables.cases_table
    cases.column_edit.setText("WSLIDE")
    cases.add_column_button.click()
    assert _yaml(designer)["cases"] == [{"WSLIDE": ""}]
    cases.table.item(0, 0).setText("5s")
    cases.add_case_button.click()
    cases.table.item(1, 0).setText("2s")
    assert _yaml(designer)["cases"] == [{"WSLIDE": "5s"}, {"WSLIDE": "2s"}]
    assert designer.model.validation.ok and "2 variable combination(s)" in designer.variables.combinations_label.text()
    _type_yaml(designer, designer.yaml_edit.toPlainText().replace("WSLIDE: 2s", "WSLIDE: 1s"))
    assert cases.table.item(1, 0).text() == "1s"
    cases.table.setCurrentCell(0, 0)
    cases.remove_case_button.click()
    assert _yaml(designer)["cases"] == [{"WSLIDE": "1s"}]
    designer.model.set(("sweep",), {"WSLIDE": ["1s", "2s"]})  # from sweep and cases: the loader says no
    assert cases.table in designer.invalid_widgets()


@pytest.mark.gui
def test_engine_parameters_form_follows_the_type(designer) -> None:  # type: ignore[no-untyped-def]
    _choose(designer.engines.engine_type_combo, "eviction")
    assert _yaml(designer)["engines"][0]["parameters"] == {"strategy": "fifo", "cache_size": 100}
    widgets = designer.engines.engine_param_widgets
    assert {"strategy", "cache_size", "seed", "training"} <= set(widgets)
    _type_line(widgets["cache_size"], "-1")
    assert widgets["cache_size"] in designer.invalid_widgets()
    assert "engines[0].parameters.cache_size" in designer.error_label.text()
    assert "positive integer" in widgets["cache_size"].toolTip()
    _type_line(widgets["cache_size"], "${CACHE}")
    designer.model.set(("variables", "CACHE"), 50)
    assert designer.model.validation.ok
    _choose(widgets["strategy"], "lru")
    assert _yaml(designer)["engines"][0]["parameters"]["strategy"] == "lru"
    _type_yaml(designer, designer.yaml_edit.toPlainText().replace("strategy: lru", "strategy: random"))
    assert designer.engines.engine_param_widgets["strategy"].currentText() == "random"
    designer.undo()
    designer.undo()
    assert designer.engines.engine_param_widgets["strategy"].currentText() == "fifo"


@pytest.mark.gui
def test_engine_parameters_come_from_ENGINE_PARAMETERS(designer, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.experiment import runs

    monkeypatch.setitem(runs.ENGINE_PARAMETERS, "secret", {**runs.ENGINE_PARAMETERS["secret"], "warp_ms": ("duration", False)})
    designer.refresh()
    edit = designer.engines.engine_param_widgets["warp_ms"]
    _type_line(edit, "250ms")
    assert _yaml(designer)["engines"][0]["parameters"] == {"warp_ms": "250ms"}
    assert designer.model.validation.ok


@pytest.mark.gui
def test_external_engine_warns_and_takes_a_command(designer) -> None:  # type: ignore[no-untyped-def]
    designer.show_section("engines")
    assert not designer.engines.external_warning.isVisible()
    designer.model.set(("engines", 0, "faults", "late_purge"), True)
    _choose(designer.engines.engine_type_combo, "external")
    assert designer.engines.external_warning.isVisible() and "confirmation" in designer.engines.external_warning.text()
    assert not designer.engines.faults_box.isEnabled() and "faults" not in _yaml(designer)["engines"][0]
    command = designer.engines.engine_param_widgets["command"]
    assert command in designer.invalid_widgets()  # required
    _type_line(command, "python3 engines/echo.py --name 'two words'")
    assert _yaml(designer)["engines"][0]["parameters"]["command"] == ["python3", "engines/echo.py", "--name", "two words"]
    env = designer.engines.engine_param_widgets["env"]
    env.add_button.click()
    env.table.item(0, 1).setText("1")
    assert _yaml(designer)["engines"][0]["parameters"]["env"] == {"NAME1": 1}
    assert designer.model.validation.ok and designer.model.validation.experiment.requires_confirmation
    _type_line(designer.engines.engine_param_widgets["startup_timeout"], "soon")
    assert "engines[0].parameters.startup_timeout" in designer.error_label.text()


@pytest.mark.gui
def test_unknown_engine_parameter_marks_the_parameters_box(designer) -> None:  # type: ignore[no-untyped-def]
    designer.model.set(("engines", 0, "parameters", "cache_sise"), 3)
    assert designer.engines.parameters_box in designer.invalid_widgets()
    assert "unknown secret engine parameter" in designer.error_label.text()


@pytest.mark.gui
def test_window_table_edits_variables_and_literals(designer) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    table = designer.queries.window_table
    assert table.item(0, 1).text() == "10s" and table.item(0, 2).text() == "10s"
    table.item(0, 1).setText("20s")  # ${WSIZE}: the variable changes, the query text does not
    assert _yaml(designer)["variables"]["WSIZE"] == "20s"
    assert "${WSIZE}" in _yaml(designer)["queries"][0]["text"]
    designer.model.set(("queries", 0, "text"), "REGISTER QUERY q1 AS SELECT ?s FROM STREAM <http://ex.org/s> "
                       "[RANGE 4s STEP 2s] WHERE { ?s ?p ?o }\n")
    table.item(0, 2).setText("1s")
    assert "[RANGE 4s STEP 1s]" in _yaml(designer)["queries"][0]["text"]
    designer.undo()
    assert "[RANGE 4s STEP 2s]" in designer.queries.query_edit.toPlainText()
    designer.model.set(("sweep",), {"WSIZE": ["5s", "10s"]})
    designer.model.set(("queries", 0, "text"), "REGISTER QUERY q1 AS SELECT ?s FROM STREAM <http://ex.org/s> "
                       "[RANGE ${WSIZE} STEP 1s] WHERE { ?s ?p ?o }\n")
    assert table.item(0, 1).text().startswith("swept:") and not table.item(0, 1).flags() & Qt.ItemFlag.ItemIsEditable


@pytest.mark.gui
def test_run_settings_both_ways(designer) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QComboBox, QLineEdit

    _choose(designer.findChild(QComboBox, "oracle_system"), "cqels")
    _choose(designer.findChild(QComboBox, "oracle_semantics_border"), "closed")
    _type_line(designer.findChild(QLineEdit, "oracle_t0"), "0s")
    _choose(designer.findChild(QComboBox, "stand_mode"), "absolute-time")
    _type_line(designer.findChild(QLineEdit, "stand_time_scale"), "2.5")
    _type_line(designer.findChild(QLineEdit, "spark_master"), "local[2]")
    _type_line(designer.oracle.sampling_edit, "250ms")
    data = _yaml(designer)
    assert data["oracle"] == {"system": "cqels", "semantics": {"border": "closed"}, "t0": "0s"}
    assert data["stand"] == {"mode": "absolute-time", "time_scale": 2.5}
    assert data["spark"] == {"master": "local[2]"} and data["kpis"]["sampling"] == "250ms"
    assert designer.model.validation.ok and designer.model.validation.experiment.spark_master == "local[2]"
    _type_yaml(designer, designer.yaml_edit.toPlainText().replace("time_scale: 2.5", "time_scale: 0"))
    scale = designer.findChild(QLineEdit, "stand_time_scale")
    assert scale.text() == "0" and scale in designer.invalid_widgets()
    _type_yaml(designer, designer.yaml_edit.toPlainText().replace("border: closed", "border: open-closed"))
    assert designer.findChild(QComboBox, "oracle_semantics_border").currentText() == "open-closed"


@pytest.mark.gui
def test_stand_batch_field_both_ways(designer) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QLineEdit

    batch = designer.findChild(QLineEdit, "stand_batch")
    assert batch.text() == "" and batch.placeholderText().startswith("256")
    _type_line(batch, "1")
    assert _yaml(designer)["stand"] == {"batch": 1} and designer.model.validation.experiment.stand.batch == 1
    _type_yaml(designer, designer.yaml_edit.toPlainText().replace("batch: 1", "batch: 2000"))
    assert batch.text() == "2000" and batch in designer.invalid_widgets()
    assert "at most 1024" in str(designer.model.validation.error)


@pytest.mark.gui
def test_flow_seed_and_description_fields(designer) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QLineEdit

    _choose(designer.streams.flow_combo, "poisson")
    seed = designer.findChild(QLineEdit, "flow_seed")
    assert seed is not None and "run's seed" in seed.placeholderText()
    _type_line(seed, "7")
    assert _yaml(designer)["stream"]["flow"]["seed"] == 7
    designer.general.description_edit.setPlainText("line one\nline two")
    designer.flush_pending_edits()
    assert _yaml(designer)["description"] == "line one\nline two"
    designer.undo()
    assert designer.general.description_edit.toPlainText() == ""


@pytest.mark.gui
def test_undo_redo_across_the_new_widgets(designer) -> None:  # type: ignore[no-untyped-def]
    start = designer.model.raw
    designer.general.sizes_table.add_button.click()
    designer.variables.cases_table.column_edit.setText("TEMP")
    designer.variables.cases_table.add_column_button.click()
    _choose(designer.engines.engine_type_combo, "eviction")
    _type_line(designer.engines.engine_param_widgets["cache_size"], "10")
    from PySide6.QtWidgets import QLineEdit

    _type_line(designer.findChild(QLineEdit, "spark_master"), "local[1]")
    end = designer.model.raw
    for _ in range(5):
        designer.undo_action.trigger()
    assert designer.model.raw == start and not designer.model.dirty
    assert designer.variables.cases_table.table.rowCount() == 0 and designer.engines.engine_type_combo.currentText() == "secret"
    for _ in range(5):
        designer.redo_action.trigger()
    assert designer.model.raw == end
    assert designer.engines.engine_param_widgets["cache_size"].text() == "10"


@pytest.mark.gui
@pytest.mark.parametrize("sample", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_samples_open_without_spurious_changes(designer, sample: Path) -> None:  # type: ignore[no-untyped-def]
    """Opening a sample and leaving every field (focus out) changes nothing: not dirty, same text."""
    from PySide6.QtWidgets import QLineEdit

    assert designer.open_file(sample) is None  # validity is tests/experiment/test_samples.py's business
    engines = len(designer.model.get(("engines",)))
    queries = len(designer.model.get(("queries",)))
    for index in range(max(engines, queries)):
        designer.engines.select_engine(min(index, engines - 1))
        designer.queries.select_query(min(index, queries - 1))
        for edit in designer.findChildren(QLineEdit):
            edit.editingFinished.emit()
        designer.flush_pending_edits()
    assert not designer.model.dirty and not designer.model.can_undo
    assert designer.yaml_edit.toPlainText() == sample.read_text(encoding="utf-8")
    assert yaml.safe_load(designer.yaml_edit.toPlainText()) == yaml.safe_load(sample.read_text(encoding="utf-8"))


@pytest.mark.gui
def test_untouched_fields_keep_their_yaml_types(designer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Leaving or editing a neighbouring field must not turn "10" into 10 or {file: x} into x."""
    from PySide6.QtWidgets import QLineEdit

    (tmp_path / "a.ttl").write_text("")
    (tmp_path / "b.ttl").write_text("")
    text = (
        'name: "2024"\n'
        "variables:\n  N: '10'\n  WSIZE: 5s\n"
        "stream:\n  generator: sg1\n  params:\n    stations: '3'\n"
        "static:\n- file: a.ttl\n- b.ttl\n"
        "queries:\n- id: q\n  text: SELECT * WHERE { ?s ?p ?o }\n"
        "engines:\n- id: e\n  type: secret\n"
    )
    path = tmp_path / "types.yaml"
    path.write_text(text)
    designer.open_file(path)
    for edit in designer.findChildren(QLineEdit):
        edit.editingFinished.emit()
    assert not designer.model.dirty and designer.yaml_edit.toPlainText() == text
    designer.variables.variables_table.table.item(1, 1).setText("6s")  # the other row is re-read, not re-parsed
    designer.static.static_table.item(1, 1).setText("http://ex.org/g")
    data = _yaml(designer)
    assert data["name"] == "2024" and data["variables"] == {"N": "10", "WSIZE": "6s"}
    assert data["static"] == [{"file": "a.ttl"}, {"file": "b.ttl", "graph": "http://ex.org/g"}]
    assert data["stream"]["params"]["stations"] == "3"


# ------------------------------------------------------------------ several streams (`streams:`)

COUPON = ROOT / "sample_experiments" / "teaching" / "coupon.yaml"


def test_model_switches_one_stream_and_several_as_one_undo_step() -> None:
    """`stream:` ↔ `streams: {IRI of the first window: …}`, sizes included, never both keys, one undo step each."""
    model = DesignerModel()
    model.set(("sizes",), {"smoke": {"stream": {"params": {"duration": "5s"}}}})
    one = copy.deepcopy(model.raw)
    assert model.use_several_streams()
    assert "stream" not in model.raw and list(model.raw)[4] == "streams"  # where `stream` was
    assert model.raw["streams"] == {"http://ex.org/s": one["stream"]}
    assert model.raw["sizes"] == {"smoke": {"streams": {"http://ex.org/s": {"params": {"duration": "5s"}}}}}
    assert model.validation.ok and model.validation.experiment.named_streams
    several = copy.deepcopy(model.raw)
    assert model.undo() and model.raw == one
    assert model.redo() and model.raw == several
    model.add_stream("http://ex.org/t")
    with pytest.raises(UserError, match="remove streams until one is left"):
        model.use_one_stream()
    model.remove_stream("http://ex.org/t")
    assert model.use_one_stream() and model.raw == one and "streams" not in model.raw
    assert model.undo() and model.raw == several


def test_model_adds_renames_and_removes_streams_with_their_size_overrides() -> None:
    model = DesignerModel()
    model.load(COUPON)
    assert model.stream_iris() == ["http://example.org/S_nearby", "http://example.org/S_coupon"]
    assert model.window_iris() == [("coupon", 0, "http://example.org/S_nearby"), ("coupon", 1, "http://example.org/S_coupon")]
    model.set(("sizes", "smoke"), {"streams": {"http://example.org/S_coupon": {"format": "nquads"}}})
    assert model.rename_stream("http://example.org/S_coupon", "<http://example.org/S_deals>") == "http://example.org/S_deals"
    assert model.stream_iris() == ["http://example.org/S_nearby", "http://example.org/S_deals"]  # same place
    assert model.raw["sizes"]["smoke"] == {"streams": {"http://example.org/S_deals": {"format": "nquads"}}}
    error = model.validation.error  # the query still reads S_coupon: located at the window's line
    assert error is not None and error.field == "queries[0].text"
    assert "window over <http://example.org/S_coupon>" in error.message
    assert model.shown_text().splitlines()[error.line - 1].strip().startswith("FROM NAMED WINDOW :w2 ON :S_coupon")
    assert model.suggested_stream_iri() == "http://example.org/S_coupon"
    assert model.add_stream() == "http://example.org/S_coupon" and model.validation.ok
    with pytest.raises(UserError, match="already declared"):
        model.add_stream("http://example.org/S_nearby")
    assert model.remove_stream("http://example.org/S_deals")
    assert "sizes" in model.raw and model.raw["sizes"]["smoke"] == {}
    assert model.undo() and model.stream_iris()[1] == "http://example.org/S_deals"


@pytest.mark.gui
def test_coupon_opens_clean_and_its_stream_tab_changes_nothing(designer) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QLineEdit

    assert designer.open_file(COUPON) is None
    designer.show_section("stream")
    assert designer.streams.several_streams_radio.isChecked() and designer.streams.streams_box.isVisible()
    assert [designer.streams.stream_list.item(i).text() for i in range(designer.streams.stream_list.count())] == [
        "http://example.org/S_nearby", "http://example.org/S_coupon"]
    for row in (0, 1):
        designer.streams.stream_list.setCurrentRow(row)
        for edit in designer.findChildren(QLineEdit):
            edit.editingFinished.emit()
    assert designer.streams.stream_iri == "http://example.org/S_coupon"
    assert designer.streams.stream_file_edit.text() == "s_coupon.nq" and "window 2" in designer.streams.stream_readers_label.text()
    assert not designer.model.dirty and not designer.model.can_undo
    assert designer.yaml_edit.toPlainText() == COUPON.read_text(encoding="utf-8")
    reads = [designer.queries.window_table.item(row, 3).text() for row in range(2)]
    assert reads == ["✔ S_nearby (file s_nearby.nq)", "✔ S_coupon (file s_coupon.nq)"]


@pytest.mark.gui
def test_switch_to_several_streams_and_back_in_the_view(designer) -> None:  # type: ignore[no-untyped-def]
    start = _yaml(designer)
    designer.streams.several_streams_radio.click()
    data = _yaml(designer)
    assert "stream" not in data and data["streams"] == {"http://ex.org/s": start["stream"]}
    assert designer.streams.stream_list.count() == 1 and designer.streams.stream_iri == "http://ex.org/s"
    assert designer.streams.one_stream_radio.isEnabled() and designer.model.validation.ok
    designer.streams.add_stream_button.click()  # a generated stream over a fresh IRI, selected
    assert designer.streams.stream_iri == "http://example.org/stream" and designer.streams.stream_list.currentRow() == 1
    assert not designer.streams.one_stream_radio.isEnabled()
    designer.streams.remove_stream_button.click()
    designer.streams.one_stream_radio.click()
    assert _yaml(designer) == start and designer.streams.one_stream_radio.isChecked() and not designer.streams.streams_box.isVisible()
    designer.undo()
    assert set(_yaml(designer)) >= {"streams"} and "stream" not in _yaml(designer)
    designer.undo()
    designer.undo()
    designer.undo()
    assert _yaml(designer) == start and not designer.model.dirty


@pytest.mark.gui
def test_a_stream_generator_parameter_edits_its_own_stream(designer) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QLineEdit

    designer.streams.several_streams_radio.click()
    designer.streams.add_stream_button.click()
    _type_line(designer.streams.stream_iri_edit, "http://ex.org/t")  # rename the new one
    assert designer.model.stream_iris() == ["http://ex.org/s", "http://ex.org/t"]
    stations = designer.findChild(QLineEdit, "param_stations")
    _type_line(stations, "abc")
    assert _yaml(designer)["streams"]["http://ex.org/t"]["params"]["stations"] == "abc"
    assert _yaml(designer)["streams"]["http://ex.org/s"]["params"]["stations"] == 10
    # not a number: the field of the shown stream is marked
    assert stations in designer.invalid_widgets() and "streams.http://ex.org/t.params.stations" in designer.error_label.text()
    designer.streams.stream_list.setCurrentRow(0)  # the other stream: its own value, the error marks the list
    assert stations.text() == "10" and designer.streams.streams_box in designer.invalid_widgets()
    assert designer.streams.stream_list.item(1).toolTip() == designer.model.validation.error.message
    _choose(designer.streams.flow_combo, "constant")
    assert _yaml(designer)["streams"]["http://ex.org/s"]["flow"] == {"shape": "constant"}
    designer.undo()
    designer.undo()
    assert _yaml(designer)["streams"]["http://ex.org/t"]["params"]["stations"] == 10


@pytest.mark.gui
def test_undeclared_window_iri_is_marked_inline(designer) -> None:  # type: ignore[no-untyped-def]
    assert designer.open_file(COUPON) is None
    designer.show_section("stream")
    designer.streams.stream_list.setCurrentRow(1)
    _type_line(designer.streams.stream_iri_edit, "http://example.org/S_deals")
    assert designer.model.stream_iris()[1] == "http://example.org/S_deals"
    assert designer.queries.query_edit in designer.invalid_widgets()
    assert "queries[0].text: query coupon has a window over &lt;http://example.org/S_coupon&gt;" in designer.error_label.text()
    cell = designer.queries.window_table.item(1, 3)
    assert cell.text() == "✖ not declared in streams" and "S_coupon" in cell.toolTip()
    assert designer.queries.window_table.item(0, 3).text().startswith("✔ S_nearby")
    designer.undo()
    assert designer.model.validation.ok and not designer.invalid_widgets() and not designer.model.dirty


def test_library_describes_every_stream() -> None:
    """The library summary lists each stream of a `streams:` experiment with its IRI, not just the first."""
    from rsp_workbench.gui.library.model import describe_experiment

    valid, text = describe_experiment(COUPON)
    assert valid and "<b>Streams</b> (2" in text
    assert "&lt;http://example.org/S_nearby&gt;: file s_nearby.nq (nquads)" in text
    assert "&lt;http://example.org/S_coupon&gt;: file s_coupon.nq (nquads)" in text
    valid, text = describe_experiment(DATA / "full.yaml")
    assert valid and "<b>Stream</b>: generator sg1" in text


# ------------------------------------------------------------------ defects a new user hit

def _changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    """(old line, new line) pairs that differ, for two texts with the same number of lines."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old) == len(new), f"{len(old)} lines became {len(new)}"
    return [(a, b) for a, b in zip(old, new) if a != b]


@pytest.mark.slow
@pytest.mark.gui
@pytest.mark.parametrize("sample", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_a_form_edit_changes_only_its_own_line(designer, sample: Path) -> None:  # type: ignore[no-untyped-def]
    """Comments, blank lines, flow style and folded text survive a form edit."""
    text = sample.read_text(encoding="utf-8")
    assert designer.open_file(sample) is None
    name = designer.model.get(("name",))
    _type_line(designer.general.name_edit, f"{name}-edited")
    changed = _changed_lines(text, designer.yaml_edit.toPlainText())
    assert changed == [(f"name: {name}\n", f"name: {name}-edited\n")]
    last = len(designer.model.get(("engines",))) - 1
    engine_id = designer.model.get(("engines", last, "id"))
    designer.engines.select_engine(last)
    designer.engines.findChild(type(designer.general.name_edit), "engine_id").setText("renamed")
    designer.engines.findChild(type(designer.general.name_edit), "engine_id").editingFinished.emit()
    changed = _changed_lines(text, designer.yaml_edit.toPlainText())
    assert len(changed) == 2 and changed[1][1] == changed[1][0].replace(engine_id, "renamed", 1)
    assert designer.model.validation.ok or "renamed" not in str(designer.model.validation.error)
    designer.undo()
    designer.undo()
    assert designer.yaml_edit.toPlainText() == text and not designer.model.dirty


ANNOTATED = """\
# an experiment with everything a reformatting would lose
name: annotated        # trailing comment
description: >
  Folded text that a dumper would turn
  into one long quoted line.

seed: 1   # the seed

variables: {WSIZE: 10s, WSLIDE: 10s}   # flow style
stream:
  generator: sg1
  params: {stations: 10, interval: 1s, duration: 60s}

queries:
  - id: q1
    syntax: csparql
    text: |
      REGISTER QUERY q1 AS
      SELECT ?obs ?v
      FROM STREAM <http://ex.org/s> [RANGE ${WSIZE} STEP ${WSLIDE}]
      WHERE { ?obs <http://ex.org/v> ?v }
engines:
  - {id: e1, type: secret, preset: csparql}
"""


@pytest.mark.gui
def test_form_edits_keep_comments_flow_style_and_folded_text(designer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "annotated.yaml"
    path.write_text(ANNOTATED, encoding="utf-8")
    assert designer.open_file(path) is None and designer.model.validation.ok
    _type_line(designer.general.seed_edit, "7")
    assert _changed_lines(ANNOTATED, designer.yaml_edit.toPlainText()) == [
        ("seed: 1   # the seed\n", "seed: 7   # the seed\n")]
    designer.variables.variables_table.table.item(0, 1).setText("5s")
    [(_, line)] = _changed_lines(ANNOTATED, designer.yaml_edit.toPlainText())[1:]
    assert line.startswith("variables: {WSIZE: 5s, WSLIDE: 10s} ") and line.endswith("  # flow style\n")
    designer.model.set(("engines", 0, "preset"), "cqels")
    text = designer.yaml_edit.toPlainText()
    assert "  - {id: e1, type: secret, preset: cqels}\n" in text
    assert "description: >\n  Folded text that a dumper would turn\n  into one long quoted line.\n\n" in text
    assert text.startswith("# an experiment with everything a reformatting would lose\nname: annotated        # trailing comment\n")
    designer.model.set(("queries", 0, "text"), designer.model.get(("queries", 0, "text")).replace("?v\n", "?v ?obs\n", 1))
    text = designer.yaml_edit.toPlainText()
    assert "    text: |\n      REGISTER QUERY q1 AS\n      SELECT ?obs ?v ?obs\n" in text
    saved = designer.model.save(tmp_path / "annotated.yaml")
    assert saved.read_text(encoding="utf-8") == text


def test_the_loader_still_refuses_python_tags_with_file_and_line(tmp_path: Path) -> None:
    """The designer edits with a round-trip library, but loading stays yaml.safe_load-safe."""
    model = DesignerModel()
    path = tmp_path / "evil.yaml"
    path.write_text("name: x\nseed: !!python/object/apply:os.system ['true']\n", encoding="utf-8")
    error = model.load(path)
    assert error is not None and error.file == str(path) and error.line == 2
    assert model.raw == {}


CSRBENCH = ROOT / "sample_experiments" / "csrbench" / "csrbench.yaml"


@pytest.mark.slow
@pytest.mark.gui
def test_save_as_into_another_folder_rewrites_relative_paths(designer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The saved experiment stays valid; the Windows table still finds the windows."""
    import os

    from rsp_workbench.experiment import load_experiment

    (tmp_path / "a.ttl").write_text("")
    source = tmp_path / "exp.yaml"
    source.write_text(CSRBENCH.read_text(encoding="utf-8").replace("queries:\n", "static:\n  - a.ttl\n  - {file: a.ttl, graph: http://ex.org/g}\n\nqueries:\n", 1), encoding="utf-8")
    for query in (CSRBENCH.parent / "queries").iterdir():
        (tmp_path / "queries").mkdir(exist_ok=True)
        (tmp_path / "queries" / query.name).write_text(query.read_text(encoding="utf-8"), encoding="utf-8")
    assert designer.open_file(source) is None and designer.model.validation.ok
    target = tmp_path / "elsewhere" / "deeper" / "copy.yaml"
    target.parent.mkdir(parents=True)
    designer.ask_save_path = lambda: str(target)
    assert designer.save_as()
    experiment = load_experiment(target)  # valid where it now lives
    up = os.path.join("..", "..")
    assert [query.file for query in experiment.queries][0] is not None
    saved = yaml.safe_load(target.read_text(encoding="utf-8"))
    assert saved["queries"][0]["file"] == os.path.join(up, "queries", "q1.rq")
    assert saved["static"] == [os.path.join(up, "a.ttl"), {"file": os.path.join(up, "a.ttl"), "graph": "http://ex.org/g"}]
    assert designer.model.validation.ok
    assert designer.queries.window_table.item(0, 1).text() != "" and "no window" not in designer.queries.window_table.item(0, 0).text()
    assert "rewrote 9 relative path(s)" in designer.save_message


@pytest.mark.gui
def test_a_yaml_syntax_error_clears_the_previous_run_count(designer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The counts belong to the previous file, not to the broken one."""
    assert designer.open_file(DATA / "full.yaml") is None
    assert designer.general.runs_label.text() and designer.variables.combinations_label.text()
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\nengines: [oops\n", encoding="utf-8")
    assert designer.open_file(broken) is not None
    assert "invalid YAML" in designer.error_label.text() and "broken.yaml:" in designer.error_label.text()
    assert designer.general.runs_label.text() == "— (the document is not valid)"
    assert designer.variables.combinations_label.text() == ""


HEAVEN = ROOT / "sample_experiments" / "heaven" / "heaven.yaml"


@pytest.mark.gui
@pytest.mark.parametrize("sample", [DATA / "full.yaml", COUPON, HEAVEN], ids=["full", "coupon", "heaven"])
def test_every_section_fits_1024_by_700(qtbot, no_leaks, tmp_path, sample: Path) -> None:  # type: ignore[no-untyped-def]
    """For the designer: at 1024×700 no form scrolls sideways and a long path
    does not widen the window (the window's menu, tabs and status bar take ~60 px of the 700)."""
    from PySide6.QtWidgets import QApplication

    from rsp_workbench.gui.designer.view import DesignerView

    folder = tmp_path / ("a-folder-with-a-rather-long-name-" * 6)
    folder.mkdir()
    path = folder / "experiment.yaml"
    path.write_text(sample.read_text(encoding="utf-8"), encoding="utf-8")
    view = DesignerView()
    qtbot.addWidget(view)
    view.resize(1024, 640)
    view.show()
    qtbot.waitExposed(view)
    view.open_file(path)
    for index in range(view.sections.count()):
        view.sections.setCurrentIndex(index)
        QApplication.processEvents()
        area = view.sections.widget(index)
        assert area.horizontalScrollBar().maximum() == 0, f"{view.sections.tabText(index)} scrolls sideways"
    assert view.width() == 1024 and view.minimumSizeHint().width() <= 1024
    assert view.file_label.fontMetrics().horizontalAdvance(view.file_label.text()) < 480
    assert view.file_label.toolTip() == str(path)
    view.close()


def test_moved_paths_cover_every_path_field_and_leave_the_rest(tmp_path: Path) -> None:
    """Which fields are paths (sizes and engine file/directory parameters included), and what is not moved."""
    from rsp_workbench.gui.designer.save_as_paths import moved_paths

    raw = {
        "stream": {"file": "data/s.nq"},
        "queries": [{"id": "a", "file": "q/a.rq"}, {"id": "b", "text": "SELECT"}],
        "static": ["t.ttl", {"file": "/abs/u.ttl"}, {"file": "${DATA}/v.ttl"}],
        "engines": [{"id": "x", "type": "external", "parameters": {"command": ["python3", "e.py"], "cwd": "bin"}},
                    {"id": "y", "type": "naive", "parameters": {"tbox": "o.ttl"}}],
        "sizes": {"smoke": {"streams": {"http://ex.org/s": {"file": "small.nq"}}}},
    }
    old, new = tmp_path / "a", tmp_path / "b" / "c"
    moved, changes = moved_paths(raw, old, new)
    assert [(".".join(map(str, c.field)), c.new) for c in changes] == [
        ("stream.file", "../../a/data/s.nq"), ("queries.0.file", "../../a/q/a.rq"), ("static.0", "../../a/t.ttl"),
        ("engines.0.parameters.cwd", "../../a/bin"), ("engines.1.parameters.tbox", "../../a/o.ttl"),
        ("sizes.smoke.streams.http://ex.org/s.file", "../../a/small.nq")]
    assert moved["static"][1:] == raw["static"][1:] and moved["engines"][0]["parameters"]["command"] == ["python3", "e.py"]
    assert moved_paths(raw, old, old)[1] == []
    model = DesignerModel()  # a new document: its paths are relative to the file it is first saved as
    model.set(("static",), ["t.ttl"])
    (tmp_path / "new").mkdir()
    model.save(tmp_path / "new" / "e.yaml")
    assert model.moved_paths == [] and model.get(("static",)) == ["t.ttl"]


@pytest.mark.gui
def test_an_unreadable_query_file_is_named_not_blamed_on_the_query(designer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A query file that is not where the experiment says is reported as such
    in the Windows table, not as "no window clause found"."""
    path = tmp_path / "exp.yaml"
    path.write_text(CSRBENCH.read_text(encoding="utf-8"), encoding="utf-8")  # without its queries/ folder
    designer.open_file(path)
    cell = designer.queries.window_table.item(0, 0)
    assert "no window clause" not in cell.text()
    assert cell.text() == "cannot read queries/q1.rq (paths are relative to the experiment file)"
    assert "queries[0].file" in designer.error_label.text()


def test_form_edits_keep_the_files_own_indentation() -> None:
    """Four-space mappings and ``-   item`` sequences stay as written around an edit."""
    text = ("name: x\nseed: 1\nstream:\n    generator: sg1\n    params:\n        stations: 3   # few\n"
            "queries:\n-   id: q\n    text: SELECT * WHERE { ?s ?p ?o }\nengines:\n-   id: e\n    type: secret\n")
    model = DesignerModel()
    model.load_text(text)
    model.set(("stream", "params", "stations"), 5)
    assert _changed_lines(text, model.yaml_text()) == [("        stations: 3   # few\n", "        stations: 5   # few\n")]
    model.set(("engines", 0, "preset"), "cqels")
    assert model.yaml_text().endswith("-   id: e\n    type: secret\n    preset: cqels\n")


@pytest.mark.gui
def test_report_boxes_offer_next_element(designer) -> None:  # type: ignore[no-untyped-def]
    """`window-close & next-element` (data-driven engines) round-trips through the report check boxes."""
    from PySide6.QtWidgets import QCheckBox

    def box(short: str) -> QCheckBox:
        return designer.findChild(QCheckBox, f"semantics_report_{short}")

    for short in ("override", "WC", "NE"):
        if not box(short).isChecked():
            box(short).click()
    for short in ("CC", "NC", "P"):
        if box(short).isChecked():
            box(short).click()
    assert _yaml(designer)["engines"][0]["semantics"]["report"] == "window-close & next-element"
    _type_yaml(designer, designer.yaml_edit.toPlainText().replace(
        "report: window-close & next-element", "report: next-element & wc & nc"))
    assert [short for short in ("CC", "WC", "NE", "NC", "P") if box(short).isChecked()] == ["WC", "NE", "NC"]


@pytest.mark.gui
def test_oracle_end_and_regroup_fields(designer) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QCheckBox, QLineEdit

    end = designer.findChild(QLineEdit, "oracle_end")
    _type_line(end, "last-element")
    designer.findChild(QCheckBox, "oracle_regroup").click()
    oracle = _yaml(designer)["oracle"]
    assert oracle["end"] == "last-element" and oracle["regroup"] is True
