"""The HTML report (``rspwb report DIR --html FILE``): self-contained, failed runs shown as failed
with their reason, charts downsampled to what a reader can see, and rendered by a real browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rsp_workbench.results.html_report import render_report, write_report
from rsp_workbench.results.reader import open_bundle
from rsp_workbench.results.svg_charts import Series, line_chart, nice_ticks, peak_downsample
from tests.api.support import build_bundle, build_published


def test_peak_downsampling_keeps_the_extremes_of_each_column() -> None:
    x = np.arange(10, dtype=float)
    y = np.array([0, 5, 1, 1, 9, 2, 3, 3, 3, 7], dtype=float)
    # 10 points into 2 columns: [0, 4.5) holds 0, 5, 1, 1, 9 → (0, 9); [4.5, 9] holds 2, 3, 3, 3, 7 → (2, 7)
    xs, ys = peak_downsample(x, y, 2)
    assert ys.tolist() == [0, 9, 2, 7]
    assert xs.tolist() == [2.0, 2.0, 7.0, 7.0]  # each column's middle
    few_x, few_y = peak_downsample(x[:3], np.array([1.0, np.nan, 2.0]), 2)  # few points: kept, NaN dropped
    assert few_x.tolist() == [0.0, 2.0] and few_y.tolist() == [1.0, 2.0]


def test_a_chart_of_a_million_points_draws_at_most_two_per_column() -> None:
    x = np.arange(1_000_000, dtype=float)
    y = np.sin(x / 1000.0)
    y[500_000] = 40.0  # one spike among a million values still shows
    svg = line_chart([Series("s", x, y)], title="t", x_label="x", y_label="y", columns=300)
    points = re.search(r'points="([^"]*)"', svg)
    assert points is not None and len(points.group(1).split()) <= 600
    assert len(svg) < 20_000 and ">40<" in svg  # the y axis reaches the spike
    assert nice_ticks(0, 1, 4) == [0, 0.25, 0.5, 0.75, 1.0] and nice_ticks(0, 40, 4) == [0, 10, 20, 30, 40]


def test_the_report_shows_failed_runs_as_failed_with_their_reason(tmp_path: Path) -> None:
    bundle = open_bundle(build_bundle(tmp_path / "b"))
    html = render_report(bundle)
    failed = html[html.index('id="run-bad-run"'):]
    failed = failed[:failed.index("</div>")]
    assert "failed</span> — the run has no results to chart" in failed
    assert "exited with code 3 before the end of the stream" in failed and "<svg" not in failed
    judged = html[html.index('id="run-ok-run"'):html.index('id="run-bad-run"')]
    assert judged.count("<svg") == 5  # precision/recall, delay, sizes, RSS, CPU
    assert "expected at 2000 ms" in judged and "extra: ?x=&lt;http://ex.org/b&gt;" in judged
    assert "<script" not in html and "http://" not in html.replace("http://ex.org", "").replace(
        "http://www.w3.org/2000/svg", "")  # nothing to fetch
    assert "name: hand-made" in html and "<th>seed</th><td>1234</td>" in html


def test_the_first_divergence_is_drawn_on_the_windows_of_its_t0(tmp_path: Path) -> None:
    """The picture of the hand-made run's first divergence (t0 0, expected and engine at 2000 ms) with a
    1 s tumbling window: from the stream's start to one window after the evaluation, hand-checked."""
    root = build_bundle(tmp_path / "b")
    spec_file = root / "runs" / "ok-run" / "run-spec.json"
    spec = json.loads(spec_file.read_text(encoding="utf-8"))
    spec.update(syntax="csparql", query_text="REGISTER QUERY q AS SELECT ?x FROM STREAM <http://ex.org/s> "
                                             "[RANGE 1s STEP 1s] WHERE { ?x <http://ex.org/p> ?y }")
    spec_file.write_text(json.dumps(spec), encoding="utf-8")
    html = render_report(open_bundle(root))
    judged = html[html.index('id="run-ok-run"'):html.index('id="run-bad-run"')]
    picture = judged[judged.index("first divergence, closest t0 = 0 ms"):]
    picture = picture[:picture.index("</svg>")]
    assert re.findall(r"<title>window (-?\d+)–(\d+) ms</title>", picture) == [("0", "1000"), ("1000", "2000"), ("2000", "3000")]
    assert "expected evaluation at 2000 ms" in picture and "engine&#x27;s evaluation at 2000 ms" in picture
    assert judged.count("<svg") == 6  # the picture beside the five charts


def test_a_published_folder_reports_its_config_and_runs(tmp_path: Path) -> None:
    bundle = open_bundle(build_published(tmp_path / "Experiment_1"))
    html = render_report(bundle)
    assert html.count('class="run"') == 4 and "cqels: config.json" in html and "REGISTER QUERY" in html


def test_writing_the_report_refuses_a_folder(tmp_path: Path) -> None:
    from rsp_workbench.errors import UserError

    bundle = open_bundle(build_bundle(tmp_path / "b"))
    with pytest.raises(UserError, match="is a folder"):
        write_report(bundle, tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="headless Chromium (Debian's chromium) is not installed")
def test_chromium_renders_the_report(tmp_path: Path) -> None:
    """A real browser draws the page at 1024 px: the PNG has the summary table's and the charts' ink."""
    write_report(open_bundle(build_bundle(tmp_path / "b")), tmp_path / "report.html")
    png = tmp_path / "report.png"
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={png}",
                    "--window-size=1024,2000", (tmp_path / "report.html").as_uri()],
                   check=True, capture_output=True, timeout=120)
    from PySide6.QtGui import QImage

    image = QImage(str(png))
    assert (image.width(), image.height()) == (1024, 2000)
    coloured = sum(1 for y in range(0, 2000, 8) for x in range(0, 1024, 8)
                   if image.pixelColor(x, y).saturation() > 80)
    assert coloured > 50  # verdict badges and chart lines, not a blank page


def test_boxes_pool_neighbouring_windows_beyond_sixty() -> None:
    from rsp_workbench.results.html_report import MAX_BOXES, _pooled_boxes

    values = [(float(i), float(i) + 1.0) for i in range(130)]  # 130 windows, two repetitions each
    boxes = _pooled_boxes(values, None)
    assert len(boxes) == 44 <= MAX_BOXES  # ceil(130 / 60) = 3 windows a box
    assert (boxes[0].low, boxes[0].high, boxes[0].label) == (0.0, 3.0, "1")  # windows 1-3: values 0, 1, 1, 2, 2, 3
    assert (boxes[-1].low, boxes[-1].high) == (129.0, 130.0)  # the last box holds window 130 alone


def test_box_and_scatter_charts_draw_one_mark_each() -> None:
    from rsp_workbench.results.svg_charts import Box, Point, box_chart, scatter_chart

    svg = box_chart([Box("5", 0.1, 0.2, 0.5, 0.8, 0.9), Box("10", 1.0, 1.0, 1.0, 1.0, 1.0)], title="t", x_label="x",
                    y_label="y", y_range=(0.0, 1.0))
    assert svg.count("<rect") == 1 + 2 and ">5<" in svg and ">10<" in svg
    svg = scatter_chart([Point("a (N=1)", 10, 40, 8, 12, 35, 46), Point("b (N=1)", 20, 30, 20, 20, 30, 30)],
                        title="t", x_label="latency", y_label="MB")
    assert svg.count("<circle") == 2 and "a (N=1)" in svg
