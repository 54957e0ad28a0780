"""Results › Compare with…, Re-run and File › Import YABench folder… in the real window (offscreen)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from tests.gui.support import rooms_experiment, shown_main_window, write_bundle  # noqa: E402
from tests.results.yabench_folder import build_test_folder  # noqa: E402

pytestmark = pytest.mark.gui

RUN = "case0-rep0-csparql-q1"


@pytest.fixture
def window(qtbot, settings, tmp_path, no_leaks, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("RSPWB_RESULTS_DIR", str(tmp_path / "results"))
    (tmp_path / "samples").mkdir()
    yield from shown_main_window(qtbot, settings, tmp_path / "samples")


def changed_copy(bundle: Path, target: Path) -> Path:
    """The real bundle with the C-SPARQL run's second window recalled at 0.25 (and its mean with it)."""
    shutil.copytree(bundle, target)
    oracle = target / "runs" / RUN / "oracle.json"
    document = json.loads(oracle.read_text())
    document["windows"][1]["recall"] = 0.25
    oracle.write_text(json.dumps(document))
    windows = target / "runs" / RUN / "windows.parquet"  # what Bundle.windows reads first
    if windows.is_file():
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pq.read_table(windows)
        recall = table.column("recall").to_pylist()
        recall[1] = 0.25
        pq.write_table(table.set_column(table.schema.get_field_index("recall"), "recall",
                                        pa.array(recall, table.schema.field("recall").type)), windows)
    summary = json.loads((target / "summary.json").read_text())
    for row in summary["runs"]:
        if row["run_id"] == RUN:
            row["recall"] = 0.123
    (target / "summary.json").write_text(json.dumps(summary))
    return target


def wait_for(qtbot, task) -> None:  # type: ignore[no-untyped-def]
    if task is not None:
        qtbot.waitUntil(lambda: not task.is_running(), timeout=30_000)
        qtbot.wait(50)


@pytest.mark.slow
def test_compare_with_shows_the_differing_run_and_window(window, qtbot, real_bundle: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    browser = window.results
    assert not browser.compare_button.isEnabled() and not browser.rerun_button.isEnabled()
    wait_for(qtbot, browser.open_bundle(real_bundle))
    other = changed_copy(real_bundle, tmp_path / "other")
    view = browser.compare_view
    view.ask_folder = lambda: str(other)
    task = browser.compare_with()  # the header's button: the Compare tab asks for bundle B
    assert browser.tabs.currentWidget() is view and task is not None and view.cancel_button.isVisibleTo(view)
    wait_for(qtbot, task)
    qtbot.waitUntil(lambda: view.windows is not None, timeout=30_000)
    comparison = view.comparison
    assert comparison is not None and comparison.paired_by == "run id" and len(comparison.runs) == 4
    assert comparison.differing == 1 and not view.cancel_button.isVisibleTo(view)
    row = next(i for i, run in enumerate(comparison.runs) if run.run_a == RUN)
    recall = view.run_cell(row, "recall")
    assert recall.endswith("→ 0.123") and view.runs_table.item(row, 5).background().color().name() == "#ffe08a"
    assert "(1 judged differently)" in view.status.text()

    view.runs_table.selectRow(row)
    qtbot.waitUntil(lambda: view.windows is not None and view.window_caption.text().startswith(RUN), timeout=30_000)
    windows = view.windows
    assert windows.differs["recall"].tolist().count(True) == 1 and "(1 differ)" in view.window_caption.text()
    model = view.window_model
    assert model.rowCount() == len(windows) > 1 and model.cell(1, 5) == "0.250"  # recall B of the second window
    assert model.data(model.index(1, 5), 8).color().name() == "#ffe08a"  # 8: BackgroundRole
    view.only_differing.setChecked(True)
    assert model.rowCount() == 1 and model.cell(0, 5) == "0.250"
    view.export_csv(tmp_path / "compare.csv")
    assert "recall A,recall B" in (tmp_path / "compare.csv").read_text()


def test_bundle_b_is_read_on_a_task_with_progress_and_cancel(window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Hand-written bundles: B is read on the window's tasks (Cancel shown meanwhile); the chosen
    pair's windows side by side, the differing cell highlighted, "only differing windows" filters."""
    runs = [{"case": 0, "repetition": 0, "engine": e, "query": "q1", "variables": {}} for e in ("cqels", "csparql")]
    a, b = write_bundle(tmp_path / "a", "a", [dict(r) for r in runs]), write_bundle(tmp_path / "b", "b", [dict(r) for r in runs])
    for folder, recall in ((a, 1.0), (b, 0.5)):
        for engine in ("cqels", "csparql"):
            windows = [{"start": s, "end": s + 2000, "precision": 1.0, "recall": recall if (s, engine) == (2000, "cqels") else 1.0,
                        "actual_size": 1, "expected_size": 1, "window_triples": 3, "delay": 0} for s in (0, 2000, 4000)]
            (folder / "runs" / f"case0-rep0-{engine}-q1" / "oracle.json").write_text(json.dumps({"windows": windows}))
    browser = window.results
    wait_for(qtbot, browser.open_bundle(a))
    view = browser.compare_view
    task = view.compare_with(b)
    assert task is not None and view.cancel_button.isVisibleTo(view) and view.progress.isVisibleTo(view)
    wait_for(qtbot, task)
    qtbot.waitUntil(lambda: view.windows is not None, timeout=30_000)
    assert not view.cancel_button.isVisibleTo(view) and view.comparison.summary_text().startswith("2 run(s) in both (0 judged differently)")
    assert view.window_caption.text().startswith("case0-rep0-cqels-q1 (A) and case0-rep0-cqels-q1 (B): 3 windows")
    model = view.window_model
    assert model.rowCount() == 3 and model.cell(1, 4) == "1.000" and model.cell(1, 5) == "0.500"
    assert model.data(model.index(1, 5), 8).color().name() == "#ffe08a" and model.data(model.index(0, 5), 8) is None
    view.only_differing.setChecked(True)
    assert model.rowCount() == 1 and model.cell(0, 0) == "2"
    view.runs_table.selectRow(1)  # csparql: no window differs
    qtbot.waitUntil(lambda: view.window_caption.text().startswith("case0-rep0-csparql-q1"), timeout=30_000)
    assert model.rowCount() == 0 and "(0 differ)" in view.window_caption.text()

    wait_for(qtbot, browser.open_bundle(b))  # a new bundle A: nothing of the previous pair's windows stays
    assert view.windows is None and model.rowCount() == 0 and not view.plot.listDataItems()
    qtbot.waitUntil(lambda: view.windows is not None, timeout=30_000)  # its first pair, read afresh
    assert view.window_caption.text().startswith("case0-rep0-cqels-q1 (A) and case0-rep0-cqels-q1 (B): 3 windows: 3 in both (0 differ)")


def test_an_own_bundle_beside_a_published_folder(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Without tasks (read at once): a published folder as B, its runs paired with the own ones by
    engine, test and repetition; a folder that is no bundle is refused and the comparison stays."""
    published = build_test_folder(tmp_path / "cqels")
    own = write_bundle(tmp_path / "own", "own", [
        {"case": 0, "repetition": r, "engine": "cqels", "query": "q1", "variables": {"TEST": "small"}} for r in (0, 1)])
    browser.open_bundle(own)
    view = browser.compare_view
    view.compare_with(published)
    assert view.has_data and view.comparison.paired_by == "engine, YABench test and repetition"
    assert [view.run_cell(i, "run") for i in range(2)] == ["case0-rep0-cqels-q1 ↔ cqels-small-rep1",
                                                           "case0-rep1-cqels-q1 ↔ cqels-small-rep2"]
    assert "<b>A</b> <code>" in view.names.text() and "/cqels</code>" in view.names.text()  # elided in the middle
    assert view.names.toolTip() == f"A: {own}\nB: {published}"
    (tmp_path / "empty").mkdir()
    assert view.compare_with(tmp_path / "empty") is None and "Not compared" in view.status.text() and view.has_data
    browser.open_bundle(published)  # a new bundle A: compared with B again (itself now)
    assert view.comparison.a.published and view.comparison.differing == 0


def test_rerun_queues_the_bundles_experiment_into_a_new_bundle(window, qtbot, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    started: list[object] = []
    monkeypatch.setattr(window.runs, "start_next", lambda: started.append(True))  # queued, not run here
    real_bundle = write_bundle(tmp_path / "bundle", "tiny-rooms", [
        {"case": 0, "repetition": 0, "engine": "csparql", "query": "rooms", "variables": {}}])
    manifest = json.loads((real_bundle / "manifest.json").read_text())
    (real_bundle / "manifest.json").write_text(json.dumps({**manifest, "seed": 7}))
    (real_bundle / "experiment.yaml").write_text("seed: 7\n" + rooms_experiment(tmp_path).read_text())
    browser = window.results
    wait_for(qtbot, browser.open_bundle(real_bundle))
    browser.rerun_button.click()
    entry = window.runs.model.get(1)
    assert entry is not None and started and window.tabs.currentWidget() is window.runs
    request = entry.request
    original = json.loads((real_bundle / "manifest.json").read_text())
    assert request.size is None and request.experiment.seed == original["seed"] == 7
    assert request.experiment.raw == browser.data.bundle.experiment().raw
    assert request.out_dir.parent == Path(window.runs.form.results_dir()) and request.out_dir != real_bundle
    assert request.source == f"re-run of {real_bundle}"
    window.runs.remove_selected() if window.runs.selected_entry() else None


def test_rerun_of_a_published_folder_says_why_not(window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    browser = window.results
    browser.open_bundle(build_test_folder(tmp_path / "cqels"))
    browser.rerun_button.click()
    assert window.error_box is not None and "published YABench folder holds no experiment" in window.error_box.text()
    assert window.runs.model.get(1) is None and window.tabs.currentWidget() is not window.runs
    window.error_box.close()


def test_import_yabench_folder_writes_what_the_cli_writes_and_opens_it(window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.cli.main import main

    folder = build_test_folder(tmp_path / "csparql", enginename="csparql", policy="onwindowclose")
    importer = window.yabench_import
    importer.ask_folder = lambda: str(folder)
    importer.ask_out = lambda suggested: str(tmp_path / "gui" / "exp.yaml")
    (tmp_path / "gui").mkdir()
    window.import_action.trigger()
    out = tmp_path / "gui" / "exp.yaml"
    assert window.designer.model.file == out and window.tabs.currentWidget() is window.designer
    assert (tmp_path / "gui" / "queries" / "csparql.rq").is_file()
    assert "imported as" in window.statusBar().toolTip() and "not mapped" in window.statusBar().toolTip()
    assert main(["import", "yabench-config", str(folder), "--out", str(tmp_path / "cli" / "exp.yaml")]) == 0
    assert (tmp_path / "cli" / "exp.yaml").read_text() == out.read_text()  # the same code path

    asked: list[Path] = []
    importer.ask_replace = lambda path: asked.append(path) is not None and False
    out.unlink()
    assert window.import_yabench() is None and asked == [tmp_path / "gui" / "queries" / "csparql.rq"]
    assert not out.exists()  # declined: nothing written

    importer.ask_folder = lambda: str(tmp_path / "gui")  # no config.json
    assert window.import_yabench() is None
    assert window.error_box is not None and "config.json" in window.error_box.text()
    window.error_box.close()


def test_the_library_offers_the_import(window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    calls: list[bool] = []
    window.yabench_import.ask_folder = lambda: calls.append(True)  # the user closes the dialog
    window.library.import_button.click()
    assert calls == [True] and window.designer.model.file is None


@pytest.mark.slow
def test_a_rerun_reproduces_the_bundle(window, qtbot, real_bundle: Path) -> None:  # type: ignore[no-untyped-def]
    """The re-run's new bundle holds the same experiment and judges every run alike (same seed, same stream)."""
    from rsp_workbench.gui.results.model import compare_bundles
    from rsp_workbench.results.reader import open_bundle

    browser = window.results
    wait_for(qtbot, browser.open_bundle(real_bundle))
    entry = window.results.rerun_button.click() or window.runs.model.get(1)
    assert entry is not None
    qtbot.waitUntil(lambda: entry.status in ("ok", "failed", "cancelled"), timeout=240_000)
    assert entry.status == "ok" and entry.bundle is not None and entry.bundle != real_bundle
    again = Path(entry.bundle)
    assert (again / "experiment.yaml").read_text() == (real_bundle / "experiment.yaml").read_text()
    comparison = compare_bundles(open_bundle(real_bundle), open_bundle(again))
    assert [run.side for run in comparison.runs] == ["both"] * 4
    for run in comparison.runs:
        judged = dict(zip(("verdict", "precision", "recall", "windows", "responses"), run.cells))
        assert not any(cell.differs for cell in judged.values()), (run.run_a, judged)
