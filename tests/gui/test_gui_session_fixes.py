"""The High and Medium defects of a new user's session in the app, each pinned by a test that
failed before its fix (offscreen Qt)."""

from __future__ import annotations

import shutil
from pathlib import Path

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
    assert "No run shown" in view.status.text()
    assert browser.show_run(browser.data.bundle.rows[0]["run_id"]) is (other == "own")
    if other == "own":
        assert view.bundle == str(second)
