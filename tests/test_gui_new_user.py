"""Defects a new user hit in the desktop app (issue: the app as researchers use it), one test each."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("PySide6")
from tests.test_gui_results import write_bundle  # noqa: E402
from tests.test_gui_support import no_leaks, settings  # noqa: E402,F401

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, settings, tmp_path, no_leaks):  # type: ignore[no-untyped-def]
    from workbench.gui.main_window import MainWindow

    samples = tmp_path / "samples"
    samples.mkdir()
    main = MainWindow(settings=settings, samples_dir=samples, spark_warmup=False)
    qtbot.addWidget(main)
    main.show()
    qtbot.waitExposed(main)
    yield main
    main.designer.model._saved_raw = main.designer.model.raw  # no save prompt on teardown
    main.close()


def test_open_results_shows_the_results_tab(window, qtbot, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    bundle = write_bundle(tmp_path / "bundle", "b", [{"case": 0, "repetition": 0, "engine": "e1", "query": "q1",
                                                      "variables": {}}])
    monkeypatch.setattr(window.runs, "selected_entry", lambda: SimpleNamespace(bundle=bundle))
    window.tabs.setCurrentWidget(window.runs)
    window.runs.open_button.setEnabled(True)
    window.runs.open_button.click()
    assert window.tabs.currentWidget() is window.results
    assert window.results.folder == bundle


def test_teaching_coupon_defaults_show_rspql_example_10() -> None:
    """The coupon example opens with the rspql preset first: evaluations at 8 s and 16 s (paper's rows)."""
    from workbench.core.semantics import PRESETS
    from workbench.gui.teaching_model import TeachingModel

    assert "rspql" in PRESETS
    model = TeachingModel("coupon")
    assert model.columns[0].preset == "rspql"
    rows = model.emissions(0)
    assert [t for t, _, _ in rows] == [8000, 16_000]
    assert [len(bindings) for _, _, bindings in rows] == [2, 1]
    rooms = TeachingModel("rooms")
    rooms.set_example("coupon")  # untouched default columns follow the example
    assert [c.preset for c in rooms.columns][0] == "rspql"
