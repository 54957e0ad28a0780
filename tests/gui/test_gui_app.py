"""The desktop app's main window opens with the app name and version (offscreen)."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

pytestmark = pytest.mark.gui


@pytest.mark.slow
def test_main_window_shows_name_and_version(qtbot, tmp_path, settings, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QLabel

    from rsp_workbench import APP_NAME, __version__
    from rsp_workbench.gui.app import build_main_window

    window = build_main_window(spark_warmup=False, settings=settings, samples_dir=tmp_path)
    qtbot.addWidget(window)
    window.show()
    assert window.windowTitle() == f"{APP_NAME} {__version__}"
    label = window.findChild(QLabel, "appTitle")
    assert APP_NAME in label.text() and __version__ in label.text()
    assert window.grab().save(str(tmp_path / "main.png"))
    window.close()
