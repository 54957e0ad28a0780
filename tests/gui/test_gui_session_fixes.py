"""The High and Medium defects of a new user's session in the app, each pinned by a test that
failed before its fix (offscreen Qt)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")

from tests.results.yabench_folder import build_two_engines  # noqa: E402

pytestmark = pytest.mark.gui


def _show_a_diverging_run(browser, bundle: Path) -> None:  # type: ignore[no-untyped-def]
    browser.open_bundle(bundle)
    cell = next(c for c in browser.data.matrix.cells.values() if c.divergence_run)
    browser.show_divergence(cell.divergence_run, cell.divergence_t_ms)
    assert browser.timeline.lanes.count > 0 and browser.timeline.engine_items and browser.timeline.diverging


@pytest.mark.parametrize("other", ["own", "published"])
def test_opening_another_bundle_clears_the_timeline(browser, real_bundle: Path, tmp_path: Path, other: str) -> None:  # type: ignore[no-untyped-def]
    _show_a_diverging_run(browser, real_bundle)
    if other == "own":
        second = tmp_path / "second"
        shutil.copytree(real_bundle, second)
    else:
        second = build_two_engines(tmp_path / "experiment")
    browser.open_bundle(second)
    view = browser.timeline_view
    assert browser.timeline.lanes.count == 0
    assert not browser.timeline.engine_items and not browser.timeline.diverging
    assert view.runs == [] and view.bundle is None and not view.run_bar.isVisible()
    assert "No run shown" in view.status.text() and browser.timeline.spec is None
    assert ("started ?" not in browser.title.text()) and (other == "published" or "started 20" in browser.title.text())
    assert browser.show_run(browser.data.bundle.rows[0]["run_id"]) is (other == "own")
    if other == "own":
        assert view.bundle == str(second)


# ---------------------------------------------------------------------- the designer: saving, undo, opening

DATA = Path(__file__).resolve().parents[1] / "data" / "experiments"


@pytest.fixture
def designer(qtbot, no_leaks):  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.designer.view import DesignerView

    view = DesignerView()
    view.errors_shown = []
    view.show_error = lambda title, text: view.errors_shown.append(text)
    qtbot.addWidget(view)
    view.resize(1000, 650)
    view.show()
    yield view
    view.close()


def test_save_as_into_a_new_folder_creates_it(designer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    designer.model.set(("description",), "my edit")
    target = tmp_path / "not" / "yet" / "e.yaml"
    designer.ask_save_path = lambda: str(target)
    assert designer.save_as()
    assert "my edit" in target.read_text(encoding="utf-8") and not designer.model.dirty
    assert designer.model.file == target and designer.errors_shown == []


def test_a_save_that_cannot_write_says_why_and_keeps_the_edit(designer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    designer.model.set(("description",), "my edit")
    designer.ask_save_path = lambda: str(blocker / "e.yaml")  # its folder cannot be created: an OSError
    assert designer.save_as() is False
    assert len(designer.errors_shown) == 1 and str(blocker / "e.yaml") in designer.errors_shown[0]
    assert "nothing was written" in designer.errors_shown[0]
    assert designer.model.dirty and designer.model.file is None
    assert designer.model.get(("description",)) == "my edit"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_one_undo_after_invalid_yaml_keeps_the_form_edit(designer) -> None:  # type: ignore[no-untyped-def]
    designer.model.set(("description",), "a valid form edit")
    designer.yaml_edit.setPlainText(designer.model.yaml_text() + "oops: [\n")
    designer.flush_pending_edits()
    assert designer.model.yaml_error is not None and designer.undo_action.isEnabled()
    designer.undo()
    assert designer.model.yaml_error is None and "oops" not in designer.yaml_edit.toPlainText()
    assert designer.model.get(("description",)) == "a valid form edit" and designer.model.dirty
    assert "•" in designer.file_label.text()
    designer.undo()
    assert designer.model.get(("description",)) != "a valid form edit"


def test_a_negative_window_size_is_blamed_on_the_variable() -> None:
    from rsp_workbench.gui.designer.model import DesignerModel

    model = DesignerModel()
    model.load(DATA / "full.yaml")
    model.set(("variables", "WSIZE"), "-5s")
    error = model.validation.error
    assert error is not None and error.field == "variables.WSIZE"
    assert error.message == "window size must be positive (variables.WSIZE = -5s)" and error.line == 8
    model.set(("variables", "WSIZE"), "0s")
    assert model.validation.error.message == "window size must be positive (variables.WSIZE = 0s)"
    model.set(("variables", "WSIZE"), "5s")
    model.set(("variables", "WSLIDE"), "soon")
    assert model.validation.error.field == "variables.WSLIDE" and "window slide" in model.validation.error.message


def test_a_negative_window_size_marks_the_variable_not_the_query(designer) -> None:  # type: ignore[no-untyped-def]
    designer.open_file(DATA / "full.yaml")
    designer.model.set(("variables", "WSIZE"), "-5s")
    marked = designer.invalid_widgets()
    assert marked and all(widget in {b.widget for b in designer.variables.bindings} for widget in marked)
    assert "variables.WSIZE = -5s" in designer.error_label.text()


def test_a_file_that_is_no_experiment_is_refused(qtbot, settings, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from tests.gui.support import shown_main_window

    samples = tmp_path / "samples"
    shutil.copytree(DATA, samples)
    readme = tmp_path / "README.md"
    readme.write_text("# A readme\n\nSome words: and a colon.\n\n- a list\n", encoding="utf-8")
    for main in shown_main_window(qtbot, settings, tmp_path / "none"):
        main.open_experiment(str(DATA / "full.yaml"))
        before = main.designer.model.yaml_text()
        main.open_experiment(str(readme))
        assert main.designer.model.file == DATA / "full.yaml" and main.designer.model.yaml_text() == before
        assert "not an experiment file" in main.error_box.text() and str(readme) in main.error_box.text()
        assert str(readme) not in main.library.entries()
        main.error_box.close()
        broken = tmp_path / "broken.yaml"  # an experiment file that does not parse still opens, with its error
        broken.write_text("name: [oops\n", encoding="utf-8")
        main.open_experiment(str(broken))
        assert main.designer.model.file == broken and main.designer.model.yaml_error is not None


@pytest.mark.slow
def test_a_library_sample_opens_as_a_template(qtbot, settings, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from tests.gui.support import shown_main_window

    samples = tmp_path / "samples"
    shutil.copytree(DATA, samples)
    sample = samples / "full.yaml"
    shipped = sample.read_text(encoding="utf-8")
    for main in shown_main_window(qtbot, settings, samples):
        main.open_experiment(str(sample))
        designer = main.designer
        assert designer.model.template and "sample" in designer.file_label.text()
        designer.model.set(("description",), "changed")
        asked: list[bool] = []
        designer.ask_save_path = lambda: asked.append(True) or None  # the user cancels the dialog
        assert designer.save() is False and asked == [True]
        assert sample.read_text(encoding="utf-8") == shipped
        copy = tmp_path / "mine" / "full.yaml"
        designer.ask_save_path = lambda: str(copy)
        assert designer.save() and "changed" in copy.read_text(encoding="utf-8")
        assert sample.read_text(encoding="utf-8") == shipped and not designer.model.template
        designer.model.set(("description",), "changed again")
        designer.ask_save_path = lambda: asked.append(True) or None
        assert designer.save() and len(asked) == 1  # the copy is the user's own: Ctrl+S writes it


# ---------------------------------------------------------------------- probe, window sizes, runs log


def _partial_inference() -> object:
    from rsp_workbench.probe.infer import ProbeInference, ProbeObservation

    observations = tuple(ProbeObservation(f"p{i}", "ok") for i in range(2))
    observations += tuple(ProbeObservation(f"q{i}", "cancelled", error="cancelled") for i in range(7))
    return ProbeInference(engine="csparql", preset="csparql", overrides={}, parameters={}, undetermined={},
                          explained=True, faults=(), unexplained=(), observations=observations, probes=())


def test_a_cancelled_probe_is_partial() -> None:
    from rsp_workbench.gui.probe.model import details_text, headline_html

    inference = _partial_inference()
    headline = headline_html(inference)  # type: ignore[arg-type]
    assert "partial: 2 of 9 probes ran" in headline and "explains every probe" not in headline
    assert "#2e7d32" not in headline  # not in green
    assert "probe q0 cancelled\n" in details_text(inference) + "\n"  # type: ignore[arg-type]
    assert "cancelled: cancelled" not in details_text(inference)  # type: ignore[arg-type]


def test_a_cancelled_probe_keeps_its_progress(qtbot, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.probe.view import ProbeDialog
    from rsp_workbench.gui.tasks import TaskRegistry

    dialog = ProbeDialog(TaskRegistry())
    qtbot.addWidget(dialog)
    dialog.progress.setRange(0, 100)  # as start() does
    dialog._on_progress(2 / 9, "[2/9] probe p1")
    dialog._on_progress(9 / 9, "[9/9] probe q6 cancelled")  # the runner counts cancelled probes as done
    dialog._on_finished([_partial_inference()])  # the task delivers one inference per probed engine
    dialog._on_done()
    assert dialog.progress.value() == 22 and "partial" in dialog.headline.text()


@pytest.mark.slow
def test_windows_fit_the_available_screen(qtbot, settings, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QRect, QSize

    from rsp_workbench.gui.fit import size_for_screen
    from tests.gui.support import shown_main_window

    assert size_for_screen(QSize(1280, 820), QRect(0, 0, 1024, 700)) == QSize(1008, 652)
    assert size_for_screen(QSize(1280, 820), QRect(0, 0, 1920, 1080)) == QSize(1280, 820)
    for main in shown_main_window(qtbot, settings, tmp_path):
        available = main.screen().availableGeometry()  # offscreen: 800×800, below the window's minimum width
        assert main.width() <= max(available.width(), main.minimumSizeHint().width())
        assert main.height() <= available.height()
        dialog = main.open_probe_dialog()
        assert dialog.width() <= available.width() and dialog.height() <= available.height()
        dialog.close()


def test_the_runs_log_never_scrolls_sideways(qtbot, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.runs.run_detail import RunDetail
    from tests.gui.support import entry_for

    detail = RunDetail(lambda: 0.0)
    qtbot.addWidget(detail)
    detail.resize(600, 500)
    detail.show()
    entry = entry_for(tmp_path)
    entry.note(0.0, "short line")
    detail.show_run(entry, force=True)
    entry.note(1.0, "engine csparql: " + "a very long line of engine output " * 20)
    detail.show_run(entry, force=True)
    assert detail.log_pane.horizontalScrollBar().value() == 0
    assert detail.log_pane.horizontalScrollBar().maximum() == 0  # lines wrap: all of each is readable
    detail.close()


# ---------------------------------------------------------------------- the overlay of a long run


def _long_published_run(folder: Path, windows: int) -> Path:
    from tests.results.yabench_folder import build_test_folder

    build_test_folder(folder)
    starts = [i * 1000 for i in range(windows)]
    (folder / "results" / "oracle" / "ORACLE_small1").write_text(
        "".join(f"{0.5 if i % 7 == 0 else 1.0},1.0,10,10,175,{s},{s + 5000},{70 + i % 50}\n"
                for i, s in enumerate(starts)), encoding="utf-8")
    return folder


@pytest.mark.slow
def test_ticking_a_run_of_210k_windows_keeps_the_window_responsive(qtbot, settings, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    import time

    from rsp_workbench.gui.results.browser import ResultsBrowser
    from rsp_workbench.gui.tasks import TaskRegistry

    folder = _long_published_run(tmp_path / "long", 210_000)
    registry = TaskRegistry()
    browser = ResultsBrowser(registry, settings)
    qtbot.addWidget(browser)
    browser.resize(1024, 640)
    browser.show()
    with qtbot.waitSignal(browser.bundleLoaded, timeout=60_000):
        browser.open_bundle(folder)
    overlay = browser.overlay_view
    browser.tabs.setCurrentWidget(overlay)
    run_id = next(r["run_id"] for r in browser.data.bundle.rows if r.get("oracle_file", "").endswith("ORACLE_small1"))
    started = time.thread_time()
    overlay.set_checked(folder, run_id)
    assert time.thread_time() - started < 0.5  # the GUI thread only starts the read
    assert overlay.busy() and "reading" in overlay.status.text()
    qtbot.waitUntil(lambda: not overlay.busy(), timeout=30_000)
    qtbot.wait(300)  # the task's end: the registry's deferred garbage collection (its cost grows with the process)
    started = time.thread_time()
    overlay.redraw()  # what a tick of a read run costs the GUI thread: fit, thin, draw and paint
    overlay.chart.repaint()
    x, y = overlay.items[0].getData()
    assert time.thread_time() - started < 0.5
    pixels = int(overlay.plot.getViewBox().width())
    assert 100 < len(x) <= 2 * max(100, pixels) + 2 and set(np.unique(y)) == {0.5, 1.0}  # dips kept
    assert overlay.items[0].opts["symbol"] is None and "reading" not in overlay.status.text()
    overlay.plot.setXRange(1000.0, 1100.0, padding=0)  # zoomed in: every window there, with its symbol
    qtbot.waitUntil(lambda: len(overlay.items[0].getData()[0]) < 200, timeout=30_000)
    x, y = overlay.items[0].getData()
    assert overlay.items[0].opts["symbol"] == "o" and np.all(np.diff(x) > 0)
    started = time.thread_time()
    overlay.set_checked(folder, run_id, False)
    overlay.set_checked(folder, run_id, True)  # read once: a second tick is at once
    assert not overlay.busy() and time.thread_time() - started < 0.5
    registry.cancel_all(timeout_ms=10_000)
    browser.timeline.close()
    browser.close()


# ---------------------------------------------------------------------- query files edited in the app


@pytest.fixture
def experiment_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "exp"
    shutil.copytree(DATA, folder)
    return folder / "full.yaml"


def test_a_query_file_is_edited_checked_and_saved(designer, experiment_copy: Path) -> None:  # type: ignore[no-untyped-def]
    designer.open_file(experiment_copy)
    queries, tools = designer.queries, designer.queries.tools
    queries.select_query(0)
    query_file = experiment_copy.parent / "queries" / "q1.rq"
    saved = query_file.read_text(encoding="utf-8")
    assert not queries.query_edit.isReadOnly() and queries.query_edit.toPlainText() == saved
    assert not tools.save_button.isHidden() and not tools.save_button.isEnabled()
    broken = saved.replace("[RANGE ${WSIZE}", "[RANGE")
    queries.query_edit.setPlainText(broken)
    designer.flush_pending_edits()
    assert "line 4" in tools.check_label.text() and "RANGE" in tools.check_label.text()
    assert designer.model.validation.ok  # the experiment reads the file as saved
    assert "•" in designer.file_label.text() and tools.save_button.isEnabled()
    assert query_file.read_text(encoding="utf-8") == saved
    queries.query_edit.setPlainText(saved)  # typed back to the file as saved: nothing to save
    assert tools.unsaved_files() == [] and "•" not in designer.file_label.text()
    edited = saved.replace("${TEMP}", "${TEMP} && ?v < 100")
    queries.query_edit.setPlainText(edited)
    designer.flush_pending_edits()
    assert "✔ parses as C-SPARQL" in tools.check_label.text()
    assert tools.save()
    assert query_file.read_text(encoding="utf-8") == edited and tools.unsaved_files() == []
    assert "•" not in designer.file_label.text() and designer.model.validation.ok


def test_a_query_file_is_translated_and_its_syntax_follows_on_save(designer, experiment_copy: Path) -> None:  # type: ignore[no-untyped-def]
    designer.open_file(experiment_copy)
    queries, tools = designer.queries, designer.queries.tools
    queries.select_query(0)
    tools.dialect_combo.setCurrentText("cqels")
    assert tools.translate()
    text = queries.query_edit.toPlainText()
    assert "STREAM <http://ex.org/s> [RANGE 5s SLIDE 5s]" in text and "✔ parses as CQELS-QL" in tools.check_label.text()
    assert designer.model.get(("queries", 0, "syntax")) == "csparql"  # not before the file is saved
    assert designer.save()  # Ctrl+S saves the edited query file, then the experiment
    assert (experiment_copy.parent / "queries" / "q1.rq").read_text(encoding="utf-8") == text
    assert designer.model.get(("queries", 0, "syntax")) == "cqels" and designer.model.validation.ok
    assert "syntax: cqels" in experiment_copy.read_text(encoding="utf-8")


def test_an_inline_query_is_translated_in_one_undo_step(designer, experiment_copy: Path) -> None:  # type: ignore[no-untyped-def]
    designer.open_file(experiment_copy)
    queries, tools = designer.queries, designer.queries.tools
    queries.select_query(1)
    before = designer.model.get(("queries", 1))
    tools.dialect_combo.setCurrentText("rspql")
    assert tools.translate()
    after = designer.model.get(("queries", 1))
    assert after["syntax"] == "rspql" and "FROM NAMED WINDOW" in after["text"] and designer.model.validation.ok
    designer.undo()
    assert designer.model.get(("queries", 1)) == before


def test_a_sample_query_file_is_saved_to_a_new_place(designer, experiment_copy: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    designer.open_file(experiment_copy, template=True)
    queries, tools = designer.queries, designer.queries.tools
    queries.select_query(0)
    query_file = experiment_copy.parent / "queries" / "q1.rq"
    saved = query_file.read_text(encoding="utf-8")
    queries.query_edit.setPlainText(saved.replace("${TEMP}", "42"))
    designer.flush_pending_edits()
    target = tmp_path / "mine" / "q1.rq"
    tools.ask_save_path = lambda file: str(target)
    assert tools.save()
    assert query_file.read_text(encoding="utf-8") == saved and "42" in target.read_text(encoding="utf-8")
    assert designer.model.get(("queries", 0, "file")) == str(target)


@pytest.mark.slow
def test_the_window_title_names_the_file_and_unsaved_edits(qtbot, settings, experiment_copy: Path, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from tests.gui.support import shown_main_window

    for main in shown_main_window(qtbot, settings, tmp_path / "none"):
        main.open_experiment(str(experiment_copy))
        assert main.windowTitle().startswith("full.yaml — RSP Workbench")
        main.designer.model.set(("description",), "edited")
        assert main.windowTitle().startswith("full.yaml * — ")


def test_timeline_exports_are_offered_in_the_bundle_folder(tmp_path: Path) -> None:
    from rsp_workbench.gui.results.timeline.view import export_start

    assert export_start("png", str(tmp_path / "bundle")) == tmp_path / "bundle" / "timeline.png"
    assert export_start("csv", None) == Path.cwd() / "timeline.csv"


# ---------------------------------------------------------------------- help, status bar, small texts


def test_help_menu_about_box_and_f1_list_the_shortcuts(qtbot, settings, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench import __version__
    from tests.gui.support import shown_main_window

    for main in shown_main_window(qtbot, settings, tmp_path):
        menus = [action.text().replace("&", "") for action in main.menuBar().actions()]
        assert menus[-1] == "Help" and main.shortcuts_action.shortcut().toString() == "F1"
        rows = dict(main.shortcut_rows())
        assert rows["Ctrl+R"].endswith("Run the designer's experiment") and rows["Ctrl+3"].endswith("Runs")
        assert rows["F1"].endswith("Keyboard shortcuts")
        about = main.about_text()
        assert __version__ in about and settings.fileName() in about and str(tmp_path) in about
        assert str(main.runs.form.results_dir()) in about and "docs" in about
        box = main.show_shortcuts()
        assert "Ctrl+Shift+P" in box.text()
        box.close()
        box = main.show_about()
        box.close()


def test_a_long_status_message_keeps_both_ends(qtbot, settings, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from tests.gui.support import shown_main_window

    for main in shown_main_window(qtbot, settings, tmp_path):
        text = "saved /a/very/long/" + "folder/" * 60 + "e.yaml; rewrote 2 relative path(s) (Undo reverts)"
        main.designer.statusMessage.emit(text)
        bar = main.statusBar()
        shown = bar.currentMessage()
        assert bar.fontMetrics().horizontalAdvance(shown) < bar.width()
        assert shown.startswith("saved /a/very") and shown.endswith("(Undo reverts)") and "…" in shown
        assert bar.toolTip() == text


def test_not_a_bundle_names_the_folder_once(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    other = tmp_path / "just-a-folder"
    other.mkdir()
    browser.open_bundle(other)
    said = browser.title.text() + browser.problems.text()
    assert said.count("just-a-folder") == 1 and "not a result bundle" in said


def test_the_readme_gives_the_runs_tab_its_shortcut() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "| Runs (Ctrl+3) |" in readme and "Runs (Ctrl+R)" not in readme


def test_not_a_bundle_beside_a_shown_bundle_names_the_folder_once(browser, real_bundle: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    browser.open_bundle(real_bundle)
    other = tmp_path / "just-a-folder"
    other.mkdir()
    browser.open_bundle(other)
    assert browser.open_error.text().count("just-a-folder") == 1


def test_a_probe_report_can_be_copied(qtbot, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QApplication

    from rsp_workbench.gui.probe.view import ProbeDialog
    from rsp_workbench.gui.tasks import TaskRegistry

    dialog = ProbeDialog(TaskRegistry())
    qtbot.addWidget(dialog)
    assert not dialog.copy_button.isEnabled()
    dialog._on_finished([_partial_inference()])  # the task delivers one inference per probed engine
    assert dialog.copy_button.isEnabled()
    text = dialog.copy_report()
    assert QApplication.clipboard().text() == text and "preset: csparql" in text and "probes: 2 of 9 ran" in text


def test_the_spark_master_hint_names_the_variable_that_wins() -> None:
    from rsp_workbench.gui.designer.oracle import OracleSection
    from rsp_workbench.gui.designer.model import DesignerModel

    section = OracleSection(DesignerModel())
    master = next(b.widget for b in section.bindings if b.widget.objectName() == "spark_master")
    assert master.placeholderText().startswith("$RSPWB_SPARK_MASTER, else the settings")
    assert "$SPARK_MASTER" not in master.placeholderText()


def test_the_library_lists_file_names_under_whole_group_titles(qtbot, settings, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.library.view import LibraryView

    for folder in ("real-engines", "teaching"):
        (tmp_path / folder).mkdir()
        shutil.copy(DATA / "full.yaml", tmp_path / folder / "rooms.yaml")
    view = LibraryView(settings, tmp_path)
    qtbot.addWidget(view)
    samples = view.tree.topLevelItem(0)
    assert samples.isFirstColumnSpanned() and view.tree.topLevelItem(1).isFirstColumnSpanned()
    assert [samples.child(i).text(0) for i in range(samples.childCount())] == ["rooms.yaml", "rooms.yaml"]
    assert [samples.child(i).text(1) for i in range(samples.childCount())] == ["real-engines", "teaching"]


@pytest.mark.slow
def test_a_timeline_export_keeps_the_run_caption(browser, real_bundle: Path, tmp_path: Path, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.results.timeline import view as timeline_view

    _show_a_diverging_run(browser, real_bundle)
    view = browser.timeline_view
    caption = view.status.text()
    view.ask_save_path = lambda kind: str(tmp_path / f"t.{kind}")
    monkeypatch.setattr(timeline_view, "EXPORT_NOTE_MS", 50)
    view._export("csv")
    assert view.status.text().startswith(caption) and "exported" in view.status.text()
    qtbot.waitUntil(lambda: view.status.text() == caption, timeout=2000)


def test_an_external_engine_whose_program_is_missing_is_invalid_while_designing(tmp_path: Path) -> None:
    from rsp_workbench.gui.designer.model import DesignerModel

    model = DesignerModel()
    model.load(DATA / "full.yaml")
    engines = list(model.get(("engines",)))
    engines.append({"id": "mine", "type": "external", "preset": "cqels",
                    "parameters": {"command": ["no-such-engine-program", "--port", "0"]}})
    model.set(("engines",), engines)
    error = model.validation.error
    assert error is not None and error.field == f"engines[{len(engines) - 1}].parameters.command"
    assert "'no-such-engine-program' is not found on PATH" in error.message
    model.set(("engines", len(engines) - 1, "parameters", "command"), [str(tmp_path / "missing.sh")])
    assert "does not exist" in model.validation.error.message
    model.set(("engines", len(engines) - 1, "parameters", "command"), ["python3", "-c", "pass"])
    assert model.validation.ok, model.validation.error


@pytest.mark.slow
def test_the_open_file_is_reloaded_when_it_changes_on_disk(designer, experiment_copy: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    designer.open_file(experiment_copy)
    said: list[str] = []
    designer.statusMessage.connect(said.append)
    text = experiment_copy.read_text(encoding="utf-8")
    experiment_copy.write_text(text.replace("repetitions: 2", "repetitions: 3"), encoding="utf-8")
    qtbot.waitUntil(lambda: designer.model.get(("repetitions",)) == 3, timeout=30_000)
    assert any("reloaded" in s for s in said) and not designer.model.dirty
    designer.model.set(("description",), "my edit")  # unsaved edits are never thrown away
    experiment_copy.write_text(text, encoding="utf-8")
    qtbot.waitUntil(lambda: any("changed on disk; your unsaved edits are kept" in s for s in said), timeout=30_000)
    assert designer.model.get(("description",)) == "my edit" and designer.model.get(("repetitions",)) == 3
    said.clear()
    assert designer.save()  # our own save is no change on disk
    qtbot.wait(600)
    assert not any("disk" in s for s in said)


def test_a_long_designer_error_does_not_push_the_forms_down(designer, qtbot) -> None:  # type: ignore[no-untyped-def]
    designer.resize(700, 650)
    qtbot.wait(50)
    top = designer.sections.mapTo(designer, designer.sections.rect().topLeft()).y()
    designer.model.set(("description",), "x")
    designer.model.set(("engines", 0, "preset"), "no-such-preset " * 40)
    qtbot.wait(50)
    label = designer.error_label  # an error of more than two lines at this width (however the loader words it)
    assert label.fontMetrics().horizontalAdvance(str(designer.model.validation.error)) > 2 * label.width()
    assert "no-such-preset" in label.toolTip()
    lines = designer.error_label.fontMetrics().lineSpacing()
    assert designer.sections.mapTo(designer, designer.sections.rect().topLeft()).y() - top <= lines + 4


def test_the_engine_stage_has_an_eta_before_its_first_run_ends(tmp_path: Path) -> None:
    from tests.gui.support import entry_for, event

    entry = entry_for(tmp_path)
    entry.start(0.0)
    entry.apply(event("validate", total=4, data={"streams": 0}), 0.0)
    entry.apply(event("engine", run_id="r1", data={"engine": "csparql", "stimuli": 100}), 0.0)
    assert entry.stage_text("engines", 1.0) == "0/4 · running"  # nothing sent yet: no pace
    entry.apply(event("kpi", run_id="r1", data={"time": 10.0, "rss_mb": 30.0, "cpu_percent": 50.0,
                                               "responses": 1, "stimuli_done": 25}), 10.0)
    # a quarter of the first run in 10 s: 40 s a run, 4 runs, 10 s spent
    assert entry.stages["engines"].eta_s(10.0) == pytest.approx(150.0)
    assert entry.stage_text("engines", 10.0) == "0/4 · ETA 2:30"


def test_stepping_the_teaching_time_says_what_happens_there(qtbot, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.teaching.view import TeachingView

    view = TeachingView()
    qtbot.addWidget(view)
    view.set_time(0)
    view.step(1)
    t = view.model.time
    assert t > 0 and view.step_note.text().startswith("▶ ")
    reasons = view.model.instant_reasons(t)
    assert reasons and view.step_note.toolTip() == "▶ " + "; ".join(reasons)
    view.model.set_time(10_000)  # the rooms example: a window of every column closes at 10 s
    assert any("a window closes" in r for r in view.model.instant_reasons(10_000))
    view.slider.setValue(3)  # moving the slider is no step: the note goes
    assert view.step_note.text() == ""
    view.close()


def test_a_growing_count_widens_its_runs_table_column(qtbot, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.runs.run_detail import RUN_COLUMNS, RunDetail
    from tests.gui.support import entry_for, event

    detail = RunDetail(lambda: 0.0)
    qtbot.addWidget(detail)
    detail.resize(1000, 600)
    detail.show()
    entry = entry_for(tmp_path)
    entry.start(0.0)
    entry.apply(event("validate", total=1, data={"streams": 0}), 0.0)
    entry.apply(event("engine", run_id="r1", data={"engine": "csparql", "stimuli": 610}), 0.0)
    detail.show_run(entry)
    entry.apply(event("kpi", run_id="r1", data={"time": 1.0, "rss_mb": 30.0, "cpu_percent": 5.0,
                                               "responses": 123456, "stimuli_done": 250}), 1.0)
    detail.show_run(entry)
    table = detail.run_table
    for name in ("stimuli", "responses"):
        column = RUN_COLUMNS.index(name)
        text = table.item(0, column).text()
        assert text in ("250/610", "123456")
        assert table.columnWidth(column) >= table.fontMetrics().horizontalAdvance(text) + 6
    detail.close()


def test_results_exports_are_offered_in_the_bundle_folder(browser, real_bundle: Path) -> None:  # type: ignore[no-untyped-def]
    assert browser.quality_view.export_start("png") == Path.cwd() / "quality.png"
    browser.open_bundle(real_bundle)
    for view in browser.views:
        assert view.export_start("csv").parent == real_bundle
    assert browser.heaven_view.export_start("svg").name == "latency-x-memory.svg"


def test_the_correctness_footer_invites_clicks_only_where_verdicts_exist(browser, real_bundle: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    browser.open_bundle(build_two_engines(tmp_path / "experiment"))
    footer = browser.matrix_view.status.text()
    assert "click a ✗" not in footer and "no run was judged" in footer
    browser.open_bundle(real_bundle)
    assert "click a ✗ cell" in browser.matrix_view.status.text()


def test_a_published_summary_names_its_tests_not_queries(browser, real_bundle: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.results.summary import SUMMARY_COLUMNS

    column = [key for _, key in SUMMARY_COLUMNS].index("query")
    browser.open_bundle(build_two_engines(tmp_path / "experiment"))
    assert browser.summary_view.table.horizontalHeaderItem(column).text() == "test (load)"
    browser.open_bundle(real_bundle)
    assert browser.summary_view.table.horizontalHeaderItem(column).text() == "query"


def test_each_t0_field_says_which_wins(designer) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QLineEdit

    designer.model.set(("engines", 0, "type"), "secret")
    designer.engines.refresh()
    fields = {name: designer.findChild(QLineEdit, name) for name in ("semantics_t0", "oracle_t0", "oracle_semantics_t0")}
    fields["parameter"] = designer.engines.engine_param_widgets["t0"]
    tips = {name: widget.toolTip() for name, widget in fields.items()}
    assert "oracle.t0 wins" in tips["semantics_t0"] and "not both" in tips["semantics_t0"]
    assert "wins over every engine's t0" in tips["oracle_t0"]
    assert "oracle.t0 (above) wins" in tips["oracle_semantics_t0"]
    assert "not together with semantics.t0" in tips["parameter"] and "oracle.t0 is unset" in tips["parameter"]


def test_the_overlay_legend_is_not_over_the_curves(browser, real_bundle: Path, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    browser.open_bundle(real_bundle)
    overlay = browser.overlay_view
    browser.tabs.setCurrentWidget(overlay)
    for row in browser.data.bundle.rows[:2]:
        overlay.set_checked(real_bundle, row["run_id"])
    qtbot.waitUntil(lambda: not overlay.busy(), timeout=10_000)  # the runs' series are read off the GUI thread
    qtbot.wait(100)  # the legend's layout follows its items
    legend = overlay.legend.sceneBoundingRect()
    assert len(overlay.legend.items) == 2 and legend.height() > 0
    assert not legend.intersects(overlay.plot.getViewBox().sceneBoundingRect())
