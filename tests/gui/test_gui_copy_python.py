"""Results → Copy Python: the copied lines run and open the bundle shown, whatever its path's characters."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui


def test_the_copied_python_opens_the_bundle(qtbot, browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QApplication

    from tests.api.support import build_bundle

    assert not browser.copy_python_button.isEnabled()
    folder = build_bundle(tmp_path / "it's a \"quoted\" \\ bündle")
    browser.open_bundle(folder)
    assert browser.copy_python_button.isEnabled()
    messages: list[str] = []
    browser.statusMessage.connect(messages.append)
    browser.copy_python_button.click()
    text = QApplication.clipboard().text()
    assert text.startswith("import rsp_workbench as rsp\n") and "rsp.open_bundle(" in text
    namespace: dict[str, object] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(text, "<clipboard>", "exec"), namespace)  # noqa: S102 - the point of the test
    bundle = namespace["bundle"]
    assert bundle.folder == folder.resolve()  # type: ignore[attr-defined]
    assert namespace["runs"].num_rows == len(bundle.runs())  # type: ignore[attr-defined]
    assert messages and messages[-1].startswith("copied:")
