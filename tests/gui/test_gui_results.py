"""Results browser: reading result bundles (rsp_workbench.results.view_data) and the views over them.

One real bundle is made once per session by running a tiny YABench-like experiment (two
engines, two repetitions, absolute time: ~5 s); the Heaven grid and the eviction sweep
are hand-written bundles in the documented layout (docs/result-bundle.md) with numbers
chosen to test the 5 % dominance rule exactly.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rsp_workbench.results.bundle import MANIFEST, SUMMARY, read_json
from rsp_workbench.files import write_json_atomic
from rsp_workbench.errors import UserError
from rsp_workbench.results.reader import open_bundle
from rsp_workbench.results.view_data import (
    EVEN,
    MatrixCell,
    box_stats,
    correctness_matrix,
    dominance_grid,
    dominant,
    eviction_curves,
    grid_axes,
    heaven_points,
    parse_boxplots,
    parse_performance,
    bundle_data,
    read_resources,
    read_window_series,
    run_groups,
    rows_in_group,
    window_positions,
)


# Heaven grid: STIM × WINDOW (UNIS a relabelling of STIM); latency ms and peak RSS MB per repetition.
HEAVEN_NUMBERS = {
    # (STIM, WINDOW): {engine: ([latency rep0, rep1], [memory rep0, rep1])}
    (1, "100ms"): {"naive": ([1.0, 1.0], [30.0, 30.0]), "incremental": ([2.0, 2.0], [30.5, 30.5])},   # N / —
    (1, "1s"): {"naive": ([10.0, 10.0], [40.0, 46.0]), "incremental": ([9.6, 9.6], [40.0, 40.0])},    # — / I
    (10, "100ms"): {"naive": ([5.0, 5.0], [50.0, 50.0]), "incremental": ([4.0, 4.0], [52.6, 52.6])},  # I / N
}


@pytest.fixture
def heaven_bundle(tmp_path: Path) -> Path:
    runs = []
    for case, ((stim, window), engines) in enumerate(HEAVEN_NUMBERS.items()):
        for engine, (latencies, memory) in engines.items():
            for repetition in range(2):
                runs.append({"case": case, "repetition": repetition, "engine": engine, "engine_type": engine,
                             "query": "materialisation", "verdict": "incorrect",
                             "variables": {"STIMULI": 30, "STIM": stim, "WINDOW": window, "UNIS": {1: 1, 10: 3}[stim]},
                             "latency_ms_mean": latencies[repetition], "peak_rss_mb": memory[repetition]})
    return write_bundle(tmp_path / "heaven", "heaven-grid", runs)


EVICTION_RECALL = {("fifo", "uniform"): [0.1, 0.5, 1.0], ("likelihood", "uniform"): [0.3, 0.8, 1.0],
                   ("fifo", "bursty"): [0.05, 0.3, 0.9], ("likelihood", "bursty"): [0.2, 0.6, 1.0]}


@pytest.fixture
def eviction_bundle(tmp_path: Path) -> Path:
    runs = []
    case = {}
    for (strategy, profile), recalls in EVICTION_RECALL.items():
        for cache, recall in zip((10, 100, 1000), recalls):
            key = (profile, cache)
            case.setdefault(key, len(case))
            runs.append({"case": case[key], "repetition": 0, "engine": strategy, "engine_type": "eviction",
                         "query": "chain", "verdict": "recall", "recall": recall, "precision": 1.0,
                         "variables": {"PROFILE": profile, "BURST_EVERY": "2s" if profile == "bursty" else "0s",
                                       "CACHE": cache},
                         "latency_ms_mean": 1.0, "peak_rss_mb": 30.0,
                         "_run": {"parameters": {"strategy": strategy, "cache_size": cache}}})
    return write_bundle(tmp_path / "eviction", "eviction-sweep", runs)


# ---------------------------------------------------------------------- data extraction (no Qt)


@pytest.mark.slow
def test_real_bundle_reads_into_rows_matrix_boxplots_and_series(real_bundle: Path) -> None:
    data = bundle_data(open_bundle(real_bundle, partial=True))
    assert data.problems == () and data.bundle.status == "ok"
    assert len(data.bundle.rows) == 4
    assert set(data.matrix.engines) == {"cqels", "csparql"} and data.matrix.queries == ("q1",)
    cell = data.matrix.cell("cqels", "q1")
    assert cell is not None and len(cell.verdicts) == 2
    assert {b.engine for b in data.boxplots} == {"cqels", "csparql"}
    assert all(b.repetitions == 2 and b.group == "case0-q1" for b in data.boxplots)
    assert {p.engine for p in data.heaven} == {"cqels", "csparql"} and all(p.runs == 2 for p in data.heaven)
    assert data.eviction == ()
    rows = rows_in_group(data.bundle, run_groups(data.bundle)[0][0])
    assert [r["repetition"] for r in rows] == [0, 0]
    for row in rows:
        series = read_window_series(data.bundle, row)
        oracle = read_json(real_bundle / "runs" / row["run_id"] / "oracle.json")
        assert series is not None and len(series) == len(oracle["windows"])
        assert series.precision.tolist() == [w["precision"] for w in oracle["windows"]]
        assert series.expected_size.tolist() == [w["expected_size"] for w in oracle["windows"]]
        resources = read_resources(data.bundle, row)
        assert resources is not None and len(resources.time_s) == row["kpi_samples"]


def test_window_positions_spread_the_evaluations_of_one_window() -> None:
    start = np.array([0, 0, 0, 0, 5000])
    end = np.array([5000, 5000, 5000, 5000, 10000])
    assert window_positions(start, end).tolist() == [1250.0, 2500.0, 3750.0, 5000.0, 10000.0]


def test_dominance_needs_more_than_five_percent() -> None:
    assert dominant({"naive": 100.0, "incremental": 94.0}) == "incremental"  # 100 > 94 × 1.05 = 98.7
    assert dominant({"naive": 100.0, "incremental": 96.0}) is None  # 96 × 1.05 = 100.8: within 5 %
    assert dominant({"naive": 105.0, "incremental": 100.0}) is None  # exactly 5 %: not more than 5 %
    assert dominant({"naive": 105.1, "incremental": 100.0}) == "incremental"
    assert dominant({"a": 10.0, "b": 20.0, "c": 10.4}) is None  # the best must dominate every other one
    assert dominant({"a": 10.0, "b": 20.0, "c": 10.6}) == "a"
    assert dominant({"a": 10.0}) is None


def test_heaven_grid_and_dominance_tables(heaven_bundle: Path) -> None:
    bundle = open_bundle(heaven_bundle, partial=True)
    assert grid_axes(bundle.rows) == ["STIM", "WINDOW"]  # UNIS relabels STIM; STIMULI does not vary
    points = heaven_points(bundle)
    naive = next(p for p in points if p.engine == "naive" and dict(p.cell) == {"STIM": 1, "WINDOW": "1s"})
    assert (naive.memory_mb, naive.memory_min, naive.memory_max, naive.runs) == (43.0, 40.0, 46.0, 2)
    latency = dominance_grid(points, "latency", "STIM", "WINDOW")
    memory = dominance_grid(points, "memory", "STIM", "WINDOW")
    assert latency.rows == (1, 10) and latency.columns == ("100ms", "1s")  # durations in time order
    assert latency.cell(1, "100ms") == "naive" and latency.cell(1, "1s") == EVEN and latency.cell(10, "100ms") == "incremental"
    assert memory.cell(1, "100ms") == EVEN and memory.cell(1, "1s") == "incremental" and memory.cell(10, "100ms") == "naive"
    assert latency.cell(10, "1s") == ""  # not run


def test_eviction_curves_per_strategy_and_shape(eviction_bundle: Path) -> None:
    curves = {c.label: c for c in eviction_curves(open_bundle(eviction_bundle, partial=True))}
    assert set(curves) == {"fifo (uniform)", "likelihood (uniform)", "fifo (bursty)", "likelihood (bursty)"}
    assert curves["likelihood (bursty)"].cache_size.tolist() == [10.0, 100.0, 1000.0]
    assert curves["likelihood (bursty)"].recall.tolist() == [0.2, 0.6, 1.0]


def test_matrix_cell_text_aggregates_runs() -> None:
    assert MatrixCell("e", "q", ("a", "b", "c"), ("correct",) * 3).text == "3/3 ✓"
    cell = MatrixCell("e", "q", ("a", "b", "c"), ("correct", "incorrect", "incorrect"))
    assert cell.text == "1/3 ✓ 2 ✗" and cell.state == "incorrect"
    assert MatrixCell("e", "q", ("a",), ("incorrect",)).text == "✗"
    timeout = MatrixCell("e", "q", ("a", "b"), ("timeout", "timeout"))
    assert timeout.text == "2/2 timeout" and timeout.state == "timeout"
    assert MatrixCell("e", "q", ("a", "b"), ("correct", "failed")).text == "1/2 ✓ 1 failed"


def test_matrix_carries_the_first_divergence(real_bundle: Path) -> None:
    bundle = open_bundle(real_bundle, partial=True)
    matrix = correctness_matrix(bundle)
    for cell in matrix.cells.values():
        if "incorrect" in cell.verdicts:
            oracle = read_json(real_bundle / "runs" / str(cell.divergence_run) / "oracle.json")
            assert cell.divergence_t_ms == oracle["first_divergence"]["expected_time"]
            assert oracle["first_divergence"]["reason"] in (cell.divergence or "")


def test_boxplots_and_performance_errors_name_file_and_line() -> None:
    boxplots = parse_boxplots("cqels\n1.0,0.5;1.0,1.0;10,20\n0.9,0.8;1.0,0.7;\n")
    assert boxplots.engine == "cqels" and boxplots.precision == ((1.0, 0.5), (0.9, 0.8)) and boxplots.delay[1] == ()
    stats = box_stats([1.0, 2.0, 3.0, 4.0, 5.0])
    assert stats is not None and (stats.minimum, stats.median, stats.maximum) == (1.0, 3.0, 5.0)
    with pytest.raises(UserError) as error:
        parse_boxplots("cqels\n1.0;1.0;1\n1.0;x;2\n", file="BOXPLOTS_cqels")
    assert str(error.value).startswith("BOXPLOTS_cqels:3: recalls:")
    with pytest.raises(UserError) as error:
        parse_performance("time,rss_mem,cpu_percent,mem_percent,threads\n0.1,5,1,0.1,1\n0.6,oops,1,0.1,1\n", file="P_x.csv")
    assert str(error.value).startswith("P_x.csv:3: rss_mem:")
    with pytest.raises(UserError, match="header lacks"):
        parse_performance("t,rss\n", file="P_x.csv")


def test_corrupt_and_partial_bundles_say_what_is_wrong(real_bundle: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(real_bundle, broken)
    (broken / SUMMARY).write_text('{"name": "x",\n "runs": [\n  {"run_id": oops}\n]}\n', encoding="utf-8")
    bundle = open_bundle(broken, partial=True)
    assert len(bundle.rows) == 4  # rebuilt from the run folders
    assert any(str(p).startswith(f"{broken / SUMMARY}:3:") for p in bundle.problems), bundle.problems

    (broken / MANIFEST).unlink()
    bundle = open_bundle(broken, partial=True)
    assert any("no manifest.json" in str(p) for p in bundle.problems)
    assert len(bundle.rows) == 4 and bundle.status == "unreadable"

    running = tmp_path / "running"
    shutil.copytree(real_bundle, running)
    manifest = read_json(running / MANIFEST)
    write_json_atomic(running / MANIFEST, {**manifest, "status": "running"})
    (running / SUMMARY).unlink()
    run_id = manifest["runs"][1]["run_id"]
    (running / "runs" / run_id / "oracle.json").write_text('{"verdict": "correct",\n  "windows": [}', encoding="utf-8")
    bundle = open_bundle(running, partial=True)
    assert bundle.status == "running" and any("still running" in n for n in bundle.notes)
    assert any(str(p).startswith(f"{running / 'runs' / run_id / 'oracle.json'}:2:") for p in bundle.problems)
    assert bundle.row(run_id)["status"] == "unreadable"
    with pytest.raises(UserError, match="no such directory"):
        open_bundle(tmp_path / "nowhere", partial=True)


# ---------------------------------------------------------------------- the views (Qt)

pytest.importorskip("PySide6")
from PySide6.QtCore import Qt  # noqa: E402

from tests.gui.support import write_bundle  # noqa: F401


def exported(view: Any, folder: Path, name: str) -> list[list[str]]:
    """Export PNG, SVG and CSV of a view; check the files; return the CSV rows."""
    png, svg, table = folder / f"{name}.png", folder / f"{name}.svg", folder / f"{name}.csv"
    view.export_png(png)
    view.export_svg(svg)
    view.export_csv(table)
    assert png.stat().st_size > 1000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert svg.read_text(encoding="utf-8").lstrip().startswith("<?xml") and "<svg" in svg.read_text(encoding="utf-8")
    with table.open(encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


@pytest.mark.slow
@pytest.mark.gui
def test_browser_shows_a_real_bundle_in_every_view(browser, real_bundle: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    browser.open_bundle(real_bundle)
    data = browser.data
    assert data is not None and "tiny-yabench" in browser.title.text() and "ok" in browser.title.text()
    assert not browser.problems.isVisible()
    assert str(real_bundle) in browser.recent_bundles()

    summary = browser.summary_view
    assert summary.table.rowCount() == 4
    for r, row in enumerate(data.bundle.rows):
        assert summary.cell(r, "engine") == row["engine"] and summary.cell(r, "verdict") == row["verdict"]
        assert summary.cell(r, "peak RSS MB") == f"{row['peak_rss_mb']:.4g}"
    rows = exported(summary, tmp_path, "summary")
    assert rows[0][0] == "run_id" and len(rows) == 5

    quality = browser.quality_view
    assert quality.has_data and {s.engine for s in quality.series} == {"cqels", "csparql"}
    for index, series in enumerate(quality.series):
        x, y = quality.curves[index].precision.getData()
        assert np.allclose(x, series.positions() / 1000.0) and np.allclose(y, series.precision)
        assert np.allclose(quality.curves[index].expected.getData()[1], series.expected_size)
    assert quality.bands.opts["x0"].size == len({w for s in quality.series for w in s.windows()})
    assert "2 repetitions" in quality.box_plot["precision"].titleLabel.text
    box_x = quality.box_items["precision"][0].boxes.opts["x"]
    assert len(box_x) == len(data.boxplots[0].precision)
    rows = exported(quality, tmp_path, "quality")
    windows = [r for r in rows[1:] if r[0] == "window"]
    assert len(windows) == sum(len(s) for s in quality.series)
    first = quality.series[0]
    assert windows[0][1:4] == [first.run_id, first.engine, "1"] and float(windows[0][6]) == first.precision[0]
    assert sum(r[0] == "repetitions" for r in rows) == sum(len(b.precision) for b in data.boxplots)
    quality.engine_combo.setCurrentText("csparql")
    assert quality.visible_engines() == ["csparql"]
    assert {r[2] for r in exported(quality, tmp_path, "quality-csparql")[1:]} == {"csparql"}

    resources = browser.resources_view
    assert resources.has_data and len(resources.series) == 2
    x, y = resources.curves[0]["rss_mb"].getData()
    assert np.allclose(x, resources.series[0].time_s) and np.allclose(y, resources.series[0].rss_mb)
    assert resources.plots["threads"].getViewBox().linkedView(0) is resources.plots["rss_mb"].getViewBox()
    rows = exported(resources, tmp_path, "resources")
    assert rows[0] == ["run_id", "engine", "time_s", "rss_mb", "cpu_percent", "threads"]
    assert len(rows) - 1 == sum(len(s.time_s) for s in resources.series)

    matrix = browser.matrix_view
    assert matrix.table.rowCount() == 2 and matrix.table.columnCount() == 1
    for r, engine in enumerate(data.matrix.engines):
        assert matrix.table.item(r, 0).text() == data.matrix.cell(engine, "q1").text
    rows = exported(matrix, tmp_path, "matrix")
    assert {r[0] for r in rows[1:]} == {"cqels", "csparql"}

    heaven = browser.heaven_view
    assert heaven.has_data
    x, y = heaven.scatter["cqels"].getData()
    point = next(p for p in data.heaven if p.engine == "cqels")
    assert np.allclose(10 ** x, [point.latency_ms]) and np.allclose(10 ** y, [point.memory_mb])
    assert len(exported(heaven, tmp_path, "heaven")) > 2

    eviction = browser.eviction_view
    assert not eviction.has_data and "No eviction runs" in eviction.message.text()
    assert not eviction.export_buttons["png"].isEnabled()


@pytest.mark.slow
@pytest.mark.gui
def test_clicking_an_incorrect_cell_opens_the_timeline(browser, real_bundle: Path, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    browser.open_bundle(real_bundle)
    matrix = browser.matrix_view
    engines = browser.data.matrix.engines
    bad = [i for i, e in enumerate(engines) if "incorrect" in browser.data.matrix.cell(e, "q1").verdicts]
    good = [i for i, e in enumerate(engines) if set(browser.data.matrix.cell(e, "q1").verdicts) == {"correct"}]
    assert bad, "the faulty engine (border_drift) of the tiny experiment must be judged incorrect"
    cell = browser.data.matrix.cell(engines[bad[0]], "q1")
    assert cell.divergence_run and "closest t0" in matrix.table.item(bad[0], 0).toolTip()
    calls: list[tuple[str, Any]] = []
    monkeypatch.setattr(browser.timeline_view, "load_bundle_run", lambda path, run: calls.append((path, run)),
                        raising=False)
    monkeypatch.setattr(browser.timeline_view, "jump_to", lambda t: calls.append(("jump", t)), raising=False)
    with qtbot.waitSignal(matrix.divergenceRequested) as signal:
        rect = matrix.table.visualItemRect(matrix.table.item(bad[0], 0))
        qtbot.mouseClick(matrix.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert signal.args == [cell.divergence_run, cell.divergence_t_ms]
    assert browser.tabs.currentWidget() is browser.timeline_view
    assert calls == [(str(real_bundle), cell.divergence_run), ("jump", cell.divergence_t_ms)]
    if good:
        assert not matrix.click_cell(good[0], 0)  # a ✓ cell requests nothing


@pytest.mark.gui
def test_a_divergence_opens_on_the_real_timeline(browser, real_bundle: Path) -> None:  # type: ignore[no-untyped-def]
    browser.open_bundle(real_bundle)
    cell = next((c for c in browser.data.matrix.cells.values() if c.divergence_run), None)
    assert cell is not None, "the faulty engine (border_drift) of the tiny experiment must be judged incorrect"
    browser.show_divergence(cell.divergence_run, cell.divergence_t_ms)  # no task registry: loads inline
    assert browser.tabs.currentWidget() is browser.timeline_view
    assert browser.timeline.lanes.count > 0
    lo, hi = browser.timeline.time_range()
    assert lo <= cell.divergence_t_ms <= hi


@pytest.mark.gui
def test_heaven_dashboard_and_dominance_tables(browser, real_bundle: Path, heaven_bundle: Path,  # type: ignore[no-untyped-def]
                                               tmp_path: Path) -> None:
    browser.open_bundle(real_bundle)  # another bundle's engines must not linger in the chart
    browser.open_bundle(heaven_bundle)
    view = browser.heaven_view
    assert set(view.scatter) == {"naive", "incremental"}
    assert browser.recent_bundles()[:2] == [str(heaven_bundle), str(real_bundle)]
    assert view.has_data and view.row_combo.currentText() == "STIM" and view.column_combo.currentText() == "WINDOW"
    assert view.table_rows("latency") == [["naive", EVEN], ["incremental", ""]]
    assert view.table_rows("memory") == [[EVEN, "incremental"], ["naive", ""]]
    assert len(view.scatter["naive"].getData()[0]) == 3
    bars = view.bars["naive"].opts
    index = [p for p in view.points if p.engine == "naive"].index(
        next(p for p in view.points if p.engine == "naive" and dict(p.cell)["WINDOW"] == "1s" and dict(p.cell)["STIM"] == 1))
    assert np.isclose(10 ** (bars["y"][index] + bars["top"][index]), 46.0)  # max over the repetitions
    view.cell_combo.setCurrentIndex(1)
    assert len(view.scatter["naive"].getData()[0]) == 1
    rows = exported(view, tmp_path, "heaven")
    assert ["dominance latency", "naive", "STIM=1, WINDOW=100ms"] == rows[[r[0] for r in rows].index("dominance latency")][:3]
    assert browser.eviction_view.has_data is False


@pytest.mark.gui
def test_eviction_view_draws_recall_against_cache_size(browser, eviction_bundle: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    browser.open_bundle(eviction_bundle)
    view = browser.eviction_view
    assert view.has_data and len(view.curves) == 4 and view.plot.getAxis("bottom").logMode
    for item, curve in zip(view.items, view.curves):
        x, y = item.getData()  # log mode: x is log10 of the cache size
        assert np.allclose(x, np.log10(curve.cache_size)) and np.allclose(y, curve.recall)
    rows = exported(view, tmp_path, "eviction")
    assert rows[0] == ["strategy", "shape", "cache_size", "recall"] and ["fifo", "bursty", "100.0", "0.3"] in rows
    assert not browser.quality_view.has_data and "no windows" in browser.quality_view.message.text()


@pytest.mark.slow
@pytest.mark.gui
def test_corrupt_bundle_shows_file_and_line(browser, real_bundle: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    broken = tmp_path / "broken"
    shutil.copytree(real_bundle, broken)
    (broken / SUMMARY).write_text('{\n  "runs": [\n    nope\n', encoding="utf-8")
    browser.open_bundle(broken)
    assert browser.problems.isVisible()
    assert f"{broken / SUMMARY}:3:" in browser.problems.text()
    assert browser.summary_view.table.rowCount() == 4  # what could be read
    browser.open_bundle(tmp_path / "no-such-bundle")  # refused: the broken bundle stays shown
    assert "no such directory" in browser.open_error.text() and browser.data.bundle.folder == broken
    empty = tmp_path / "empty"
    empty.mkdir()
    browser.open_bundle(empty)
    assert "no manifest.json" in browser.open_error.text() and browser.summary_view.table.rowCount() == 4


@pytest.mark.slow
@pytest.mark.gui
def test_big_bundles_are_read_off_the_gui_thread(qtbot, settings, real_bundle: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.results.browser import ResultsBrowser
    from rsp_workbench.gui.tasks import TaskRegistry

    registry = TaskRegistry()
    widget = ResultsBrowser(registry, settings)
    qtbot.addWidget(widget)
    widget.inline_runs = 0
    with qtbot.waitSignal(widget.bundleLoaded, timeout=20_000):
        task = widget.open_bundle(real_bundle)
        assert task is not None
    qtbot.waitUntil(lambda: bool(widget.quality_view.series), timeout=20_000)
    assert widget.summary_view.table.rowCount() == 4
    registry.wait_all(10_000)
    qtbot.waitUntil(lambda: not registry.running(), timeout=10_000)
    widget.timeline.close()
    widget.close()


@pytest.mark.gui
def test_main_window_results_tab_is_the_browser(qtbot, settings, tmp_path: Path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.main_window import MainWindow
    from rsp_workbench.gui.results.browser import ResultsBrowser
    from rsp_workbench.gui.results.timeline.plot import WindowTimeline
    from rsp_workbench.gui.results.timeline.view import TimelineView

    window = MainWindow(settings=settings, samples_dir=tmp_path, spark_warmup=False)
    qtbot.addWidget(window)
    assert isinstance(window.results, ResultsBrowser)
    assert isinstance(window.results.timeline_view, TimelineView) and isinstance(window.results.timeline, WindowTimeline)
    assert window.tabs.tabText(window.tabs.indexOf(window.results)) == "Results"
    window.close()


@pytest.mark.gui
def test_quality_csv_rows_are_the_same_in_chunks(real_bundle: Path) -> None:
    """The quality export makes its window rows a chunk at a time (a content-change run has millions)."""
    from rsp_workbench.gui.results.quality import _window_rows

    bundle = open_bundle(real_bundle, partial=True)
    series = read_window_series(bundle, bundle.rows[0])
    assert series is not None and len(series) > 3
    whole = [list(row) for row in _window_rows(series, chunk=10**6)]
    assert [list(row) for row in _window_rows(series, chunk=2)] == whole
    assert whole[0][:4] == ["window", series.run_id, series.engine, 1] and len(whole) == len(series)
    assert [row[3] for row in whole] == list(range(1, len(series) + 1))


@pytest.mark.gui
def test_export_report_writes_the_html_of_the_open_bundle(qtbot, browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Results → Export report…: disabled until a bundle is open; writes `rspwb report --html`'s file where
    the user says, and says so; a place it cannot write is one status line, nothing else."""
    from tests.api.support import build_bundle

    assert not browser.report_button.isEnabled()
    browser.open_bundle(build_bundle(tmp_path / "b"))
    assert browser.report_button.isEnabled()
    messages: list[str] = []
    browser.statusMessage.connect(messages.append)
    suggested: list[Path] = []
    target = tmp_path / "out" / "report.html"
    target.parent.mkdir()
    browser.ask_report_path = lambda path: (suggested.append(path), str(target))[1]
    browser.report_button.click()
    assert suggested == [tmp_path / "b" / "b-report.html"]  # offered in the bundle's folder
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>") and "hand-made" in target.read_text()
    assert messages == [f"report written: {target}"]
    browser.ask_report_path = lambda path: str(tmp_path / "out")  # a folder: not writable as a file
    browser.report_button.click()
    assert len(messages) == 2 and messages[1].startswith("the report was not written:")
    browser.ask_report_path = lambda path: None  # cancelled: nothing happens
    browser.report_button.click()
    assert len(messages) == 2
