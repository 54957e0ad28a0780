"""What an exported window timeline says about itself: a title naming the run and a legend of its marks.

The window shows the run's caption and explains its colours beside the plot; a PNG or SVG leaves
them behind, so the export puts both on the picture for the moment it is drawn.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

from rsp_workbench.core.windows import WindowSpec
from rsp_workbench.gui.qt import pg


def export_to(timeline: Any, kind: str, path: str | Path, runs: Sequence[Any]) -> Path:
    """A ``WindowTimeline`` as ``kind`` (png, svg: titled by the runs shown; csv: their windows)."""
    if kind == "csv":
        return Path(timeline.export_csv(path, runs))
    exported = timeline.export_png if kind == "png" else timeline.export_svg
    return Path(exported(path, title=export_title(runs, timeline.spec)))


def export_title(runs: Sequence[Any], spec: WindowSpec | None) -> str:
    """The run shown and its overlays (``BundleRun``s: engine, query, verdict), or the window."""
    if runs:
        return "; ".join(f"{'overlay ' if index else ''}{run.run_id}: {run.engine} on {run.query_id} — "
                         f"{run.verdict or run.status}" for index, run in enumerate(runs))
    return "window timeline" + (f" · ω={spec.size} ms β={spec.slide} ms" if spec is not None else "")


def legend_entries(timeline: Any) -> list[tuple[Any, str]]:
    """Each kind of mark a ``WindowTimeline`` draws now, once, with its name."""
    entries: list[tuple[Any, str]] = []
    marks = ((timeline.points, "stream element"), (timeline.density, "stream elements (per pixel)"),
             (timeline.window_bars, "expected window"), (timeline.diverging_bars, "diverging window (measured)"),
             (timeline.expected_markers, "expected evaluation"))
    for item, name in marks:
        x, _ = item.getData()
        if item.isVisible() and x is not None and len(x):
            entries.append((item, name))
    entries += [(item, f"{engine}: emissions") for engine, item in timeline.engine_items.items() if item.isVisible()]
    entries += [(line, f"{engine}: reconstructed borders") for engine, (line, _) in timeline.reconstructed_items.items()
                if line.isVisible()]
    return entries


@contextmanager
def captioned(timeline: Any, title: str) -> Iterator[None]:
    """A title and a legend on the timeline's plot while it is exported; both gone afterwards."""
    plot = timeline.item
    legend = pg.LegendItem(offset=(-10, 10), labelTextSize="8pt", brush=pg.mkBrush(255, 255, 255, 230))
    legend.setParentItem(plot.getViewBox())
    for item, name in legend_entries(timeline):
        legend.addItem(item, name)
    plot.setTitle(title or None)
    plot.layout.activate()  # the title's row now, not at the next event: the export draws at once
    try:
        yield
    finally:
        plot.setTitle(None)
        plot.layout.activate()
        if legend.scene() is not None:
            legend.scene().removeItem(legend)
