"""The Qt-free models of the GUI's rooms: what the views show, computed without a display."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rsp_workbench.core.semantics import BorderConvention
from rsp_workbench.core.windows import WindowSpec
from rsp_workbench.errors import UserError
from rsp_workbench.gui.text import escape_html, plural


def test_shared_texts() -> None:
    assert escape_html("<a & b>") == "&lt;a &amp; b&gt;"
    assert escape_html("it's \"x\"") == "it's \"x\""  # quotes stay: labels, not attributes
    assert [plural(n, "run") for n in (0, 1, 2, 1024)] == ["0 runs", "1 run", "2 runs", "1,024 runs"]


# --------------------------------------------------------------------------- library


class DictSettings:
    """QSettings' three calls the library uses, over a dict."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.synced = 0

    def value(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def setValue(self, key: str, value: Any) -> None:  # noqa: N802
        self.values[key] = value

    def sync(self) -> None:
        self.synced += 1


def test_recent_files_newest_first_once_each_at_most_twelve(tmp_path: Path) -> None:
    from rsp_workbench.gui.library.model import MAX_RECENT, add_recent_file, recent_files

    settings = DictSettings()
    assert recent_files(settings) == []
    settings.values["library/recent_files"] = str(tmp_path / "one.yaml")  # QSettings gives a lone value as a str
    assert recent_files(settings) == [str(tmp_path / "one.yaml")]
    for name in ("a", "b", "a"):
        add_recent_file(settings, tmp_path / f"{name}.yaml")
    assert recent_files(settings) == [str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"), str(tmp_path / "one.yaml")]
    for index in range(20):
        add_recent_file(settings, tmp_path / f"{index}.yaml")
    assert len(recent_files(settings)) == MAX_RECENT == 12 and recent_files(settings)[0] == str(tmp_path / "19.yaml")
    assert settings.synced == 23


def test_library_finds_the_sample_experiments() -> None:
    from rsp_workbench.gui.library.model import default_samples_dir

    assert (default_samples_dir() / "csrbench" / "csrbench.yaml").is_file()


# --------------------------------------------------------------------------- runs


def test_queue_line_stage_clock_and_engine_run_cells(tmp_path: Path) -> None:
    from rsp_workbench.gui.runs.model import (
        EngineRunTrace,
        elapsed_text,
        engine_run_cells,
        queue_item_text,
        verdict_colour,
    )
    from tests.gui.support import entry_for

    entry = entry_for(tmp_path)
    assert queue_item_text(entry, 0.0) == f"{entry.name}\n  queued"
    assert elapsed_text(entry, 0.0) == "waiting in the queue"
    entry.start(10.0)
    assert queue_item_text(entry, 75.0) == f"{entry.name}\n  running"  # no ETA before a stage has a rate
    assert elapsed_text(entry, 75.0) == "elapsed 1:05"
    entry.request_cancel(80.0)
    assert elapsed_text(entry, 3_700.0) == "elapsed 1:01:30"
    trace = EngineRunTrace("case0-rep0-e-q", engine="e", stimuli=5, stimuli_done=3, responses=2, peak_rss_mb=37.44)
    assert engine_run_cells(trace) == ("case0-rep0-e-q", "running", "e", "2", "3/5", "37.4")
    trace.verdict, trace.stimuli, trace.peak_rss_mb = "incorrect", None, None
    assert engine_run_cells(trace) == ("case0-rep0-e-q", "incorrect", "e", "2", "3", "")
    assert (verdict_colour("correct"), verdict_colour("incorrect"), verdict_colour("skipped")) == ("#2e7d32", "#c62828", "#000")


# --------------------------------------------------------------------------- probe


def test_probe_targets_from_the_dialog_keys() -> None:
    from rsp_workbench.gui.probe.model import builtin_engines, probe_target, takes_fault_knob

    keys = [key for _, key in builtin_engines()]
    assert "preset:csparql" in keys and "builtin:secret" in keys
    assert [takes_fault_knob(k) for k in ("preset:cqels", "builtin:secret", "builtin:naive", "experiment:e")] == \
        [True, True, False, False]
    target = probe_target("preset:csparql", "border_drift", None)
    assert target.label and not target.external
    with pytest.raises(UserError, match="designer's experiment is not valid"):
        probe_target("experiment:e", None, None)


# --------------------------------------------------------------------------- timeline


def test_timeline_rows_hand_checked() -> None:
    from rsp_workbench.gui.results.timeline.model import WINDOW_ROW_HEIGHT, RowLayout

    spec = WindowSpec(size=10_000, slide=4_000, t0=0, border=BorderConvention.CLOSED_OPEN)
    rows = RowLayout(lanes=3, spec=spec, engines=("e1", "e2"), reconstructed=("e1",))
    assert rows.window_rows() == 4  # ⌈10/4⌉ windows overlap, one row more
    assert rows.window_row_y(0) == pytest.approx(3.3) and rows.window_row_y(5) == pytest.approx(3.3 + WINDOW_ROW_HEIGHT)
    assert rows.marker_rows() == [(-0.8, "expected ET"), (-1.3, "e1"), (-1.8, "e2")]
    assert rows.reconstructed_row_y("e1", 0) == pytest.approx(3.3 + 5.4 * WINDOW_ROW_HEIGHT)
    top, bottom = rows.extent()
    assert top == pytest.approx(-2.2) and bottom == pytest.approx(3.3 + 8.4 * WINDOW_ROW_HEIGHT + 0.5)
    assert RowLayout(lanes=3, spec=None).extent() == pytest.approx((-1.2, 3.4))


def test_window_marks_fill_the_inclusive_ends() -> None:
    from rsp_workbench.gui.results.timeline.model import RowLayout, window_marks

    spec = WindowSpec(size=2_000, slide=2_000, t0=0, border=BorderConvention.CLOSED_OPEN)
    windows = [spec.closing_at(2_000), spec.closing_at(4_000)]
    marks = window_marks(windows, RowLayout(lanes=1, spec=spec))
    assert marks.bars[0].tolist() == [0.0, 2.0, 2.0, 4.0]  # exact borders: no gap where border drift is studied
    assert marks.borders[0].tolist() == [0.0, 0.0, 2.0, 2.0, 4.0, 4.0]
    assert marks.borders[1].tolist() == [-0.5, 0.5] * 3
    assert marks.inclusive_ends[0].tolist() == [0.0, 2.0]  # [open, close): the opens belong
    assert marks.exclusive_ends[0].tolist() == [2.0, 4.0]


def test_markers_in_view_and_bindings_rows() -> None:
    from rsp_workbench.gui.results.timeline.model import binding_status_rows, compact_term, mapping_text, markers_in_view

    times = np.arange(0, 100, 10, dtype=np.int64)
    assert markers_in_view(times, 15.0, 50.0).tolist() == [20, 30, 40, 50]
    assert markers_in_view(times, 0.0, 90.0, limit=5).tolist() == [0, 20, 40, 60, 80]
    a, b, c = (frozenset({("x", f"<http://ex.org/{n}>")}) for n in "abc")
    rows = binding_status_rows(Counter({a: 2, b: 1}), Counter({a: 1, c: 1}))
    assert rows == [("missing", a), ("missing", b), ("extra", c), ("ok", a)]
    assert mapping_text(a) == "?x=<http://ex.org/a>" and mapping_text(a, compact=True) == "?x=a"
    assert compact_term('"5"^^<http://www.w3.org/2001/XMLSchema#integer>') == '"5"^^xsd:integer'
