"""Window timeline: lanes and binning (no Qt), a 200k-element stream loads fast, zooms, selects, exports."""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest

from workbench.core.semantics import BorderConvention
from workbench.core.windows import WindowSpec
from workbench.gui.timeline_data import StreamLanes, lane_key, windows_in_range
from workbench.streams.model import StreamElement


def test_lane_keys() -> None:
    assert lane_key("<http://knoesis.wright.edu/ssw/Observation_AirTemperature_A12_1000>") == "A12"
    assert lane_key("<http://knoesis.wright.edu/ssw/System_A7>") == "A7"
    assert lane_key("<http://example.org/m1>") == "m1"


def test_bin_counts_are_exact() -> None:
    lanes = StreamLanes.from_arrays(np.array([0, 1, 5, 9, 10, 3]), np.array([0, 0, 0, 0, 0, 1]), ["a", "b"])
    edges, counts = lanes.bin_counts(0, 10, 2)
    assert list(edges) == [0, 5, 10]
    assert list(counts[0]) == [2, 2] and list(counts[1]) == [1, 0]


def test_windows_in_range() -> None:
    spec = WindowSpec(10_000, 5_000, 0, BorderConvention.CLOSED_OPEN)
    windows = windows_in_range(spec, 20_000, 30_000)
    assert [(w.open, w.close) for w in windows] == [(10_000, 20_000), (15_000, 25_000), (20_000, 30_000), (25_000, 35_000), (30_000, 40_000)]
    assert windows_in_range(spec, 0, 10**9, limit=100) == []


def sg1_like(count: int, stations: int = 20) -> list[StreamElement]:
    return [
        StreamElement(f"<http://knoesis.wright.edu/ssw/Observation_AirTemperature_A{i % stations}_{(i // stations) * 100}>",
                      "<http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#result>", '"1"', (i // stations) * 100 + i % stations)
        for i in range(count)
    ]


pytest.importorskip("PySide6")
from tests.test_gui_support import no_leaks  # noqa: E402,F401


@pytest.mark.gui
def test_timeline_200k_loads_fast_zooms_selects_and_exports(qtbot, tmp_path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from workbench.gui.timeline import TimelineView

    elements = sg1_like(200_000)
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    started = time.monotonic()
    view.show_lanes(StreamLanes.from_elements(elements), "sg1-like")
    load_seconds = time.monotonic() - started
    assert load_seconds < 5.0
    timeline = view.timeline
    assert timeline.lanes.names[:2] == ["A0", "A1"] and timeline.lanes.count == 200_000
    assert timeline._shown["mode"] == "density"
    started = time.monotonic()
    for step in range(20):
        timeline.set_time_range(step * 10_000, step * 10_000 + 200_000)
        timeline.refresh()
    assert (time.monotonic() - started) / 20 < 0.1
    timeline.set_time_range(30_000, 31_000)
    timeline.refresh()
    assert timeline._shown["mode"] == "points" and 0 < timeline._shown["in_view"] <= 300
    window = timeline.select_at(35_500)
    assert window is not None and (window.open, window.close) == (30_000, 40_000)
    assert timeline.content_table.rowCount() == 1000  # 2000 elements, first 1000 listed
    a, b = frozenset({("x", "<a>")}), frozenset({("x", "<b>")})
    timeline.set_window_bindings({(30_000, 40_000): (Counter({a: 1, b: 1}), Counter({a: 1, frozenset({("x", "<c>")}): 1}))})
    statuses = [status for status, _ in timeline.binding_rows()]
    assert sorted(statuses) == ["extra", "missing", "ok"]
    timeline.add_engine_emissions("engine-1", range(10_000, 1_000_000, 10_000))
    timeline.set_reconstructed_borders("engine-1", [(o + 50, o + 10_050) for o in range(0, 1_000_000, 10_000)], (50, 50))
    for kind, export in (("png", timeline.export_png), ("svg", timeline.export_svg), ("csv", timeline.export_csv)):
        path = export(tmp_path / f"timeline.{kind}")
        assert path.stat().st_size > 100
    csv_text = (tmp_path / "timeline.csv").read_text()
    assert "emission,engine-1" in csv_text and "reconstructed (start +50, end +50)" in csv_text
    view.close()


@pytest.mark.gui
def test_timeline_reads_a_stream_file_in_the_background(qtbot, tmp_path, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from workbench.gui.tasks import TaskRegistry
    from workbench.gui.timeline import TimelineView
    from workbench.streams.writers import write_stream

    path = tmp_path / "s.stream"
    write_stream(path, sg1_like(2000), "yabench")
    registry = TaskRegistry()
    view = TimelineView(registry)
    qtbot.addWidget(view)
    view.show()
    task = view.open_stream(str(path))
    qtbot.waitUntil(lambda: view.timeline.lanes.count == 2000, timeout=10_000)
    assert task.wait(2000)
    view.close()
