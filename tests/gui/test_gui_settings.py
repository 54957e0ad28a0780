"""Settings…: Spark master, results folder and recent-list size, validated, stored, or left alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.gui.support import shown_main_window

pytestmark = pytest.mark.gui

@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user settings file (``$XDG_CONFIG_HOME/rsp-workbench/settings.yaml``), with another key to keep."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("RSPWB_SPARK_MASTER", raising=False)
    monkeypatch.delenv("RSPWB_RESULTS_DIR", raising=False)
    path = tmp_path / "config" / "rsp-workbench" / "settings.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("spark:\n  master: local[2]\nother: kept\n", encoding="utf-8")
    return path


@pytest.fixture
def dialog(qtbot, settings, config, no_leaks):  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.library.settings_dialog import SettingsDialog

    widget = SettingsDialog(settings, config)
    qtbot.addWidget(widget)
    yield widget
    widget.close()


def test_the_dialog_shows_the_stored_settings(dialog, config: Path) -> None:  # type: ignore[no-untyped-def]
    assert dialog.master_edit.text() == "local[2]"
    assert dialog.results_edit.text() == ""
    assert dialog.recent_spin.value() == 12


def test_the_spark_master_field_names_its_environment_override(dialog) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QLabel

    assert any("RSPWB_SPARK_MASTER" in label.text() for label in dialog.findChildren(QLabel))


@pytest.mark.parametrize(("field", "value", "message"), [
    ("master", "localhost", "Spark master: 'localhost' is not a master URL"),
    ("results", "relative/folder", "Results folder: 'relative/folder' is not an absolute path"),
    ("results", "FILE", "exists and is not a folder"),
    ("recent", 0, "Recent-list size: '0' is not a whole number from 1 to 50"),
])
def test_a_wrong_field_is_named_and_nothing_is_stored(dialog, settings, config: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                      field: str, value: Any, message: str) -> None:
    before = config.read_text(encoding="utf-8")
    if field == "master":
        dialog.master_edit.setText(value)
    elif field == "results":
        if value == "FILE":
            value = str(tmp_path / "a-file")
            Path(value).write_text("x")
        dialog.results_edit.setText(value)
    else:
        dialog.recent_spin.setValue(value)
    dialog.show()
    dialog.accept()
    assert dialog.isVisible() and dialog.saved is None
    assert message in dialog.error.text() and dialog.error.isVisibleTo(dialog)
    assert config.read_text(encoding="utf-8") == before
    assert settings.value("runs/results_dir") is None and settings.value("library/recent_size") is None


def test_ok_stores_every_field_and_keeps_the_files_other_keys(dialog, settings, config: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.experiment.spark_master import resolve_master

    dialog.master_edit.setText("local[4]")
    dialog.results_edit.setText(str(tmp_path / "bundles"))
    dialog.recent_spin.setValue(3)
    dialog.accept()
    assert dialog.saved is not None and dialog.result() == dialog.DialogCode.Accepted
    assert yaml.safe_load(config.read_text(encoding="utf-8")) == {"other": "kept", "spark.master": "local[4]"}
    assert resolve_master() == "local[4]"  # what the pipeline will use
    assert settings.value("runs/results_dir") == str(tmp_path / "bundles")
    assert int(settings.value("library/recent_size")) == 3


def test_cancel_changes_nothing(dialog, settings, config: Path) -> None:  # type: ignore[no-untyped-def]
    before = config.read_text(encoding="utf-8")
    dialog.master_edit.setText("local[8]")
    dialog.recent_spin.setValue(5)
    dialog.reject()
    assert dialog.saved is None and config.read_text(encoding="utf-8") == before
    assert settings.value("library/recent_size") is None


def test_the_recent_list_keeps_as_many_as_the_setting_says(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.library.model import add_recent_file

    settings.setValue("library/recent_size", 3)
    for index in range(6):
        kept = add_recent_file(settings, tmp_path / f"{index}.yaml")
    assert kept == [str((tmp_path / f"{index}.yaml").resolve()) for index in (5, 4, 3)]


@pytest.fixture
def window(qtbot, settings, tmp_path: Path, config, no_leaks):  # type: ignore[no-untyped-def]
    (tmp_path / "samples").mkdir()
    yield from shown_main_window(qtbot, settings, tmp_path / "samples")


def test_file_settings_opens_with_ctrl_comma_and_redirects_new_runs(window, settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QKeySequence

    assert window.settings_action.shortcut() == QKeySequence("Ctrl+,")
    assert window.settings_action.text().replace("&", "") == "Settings…"

    class Accepting:  # the dialog, answered: OK with a new results folder
        saved = object()

        def exec(self) -> int:
            settings.setValue("runs/results_dir", str(tmp_path / "elsewhere"))
            return 1

    window.settings_dialog = lambda: Accepting()
    window.settings_action.trigger()
    assert window.runs.form.results_dir() == tmp_path / "elsewhere"


def test_the_recent_bundles_keep_as_many_as_the_setting_says(browser, settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    settings.setValue("library/recent_size", 2)
    for name in ("a", "b", "c"):
        browser._remember(str(tmp_path / name))
    assert browser.recent_bundles() == [str(tmp_path / "c"), str(tmp_path / "b")]
