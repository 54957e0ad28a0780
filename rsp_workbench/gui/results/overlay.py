"""Overlay: any runs of several bundles — the workbench's own and published YABench folders —
in one chart, e.g. the published CQELS precision per window against the
``cqels`` preset's, or the memory of a real engine against its model.

Left, the bundles and their runs with a check box each (the bundle open in the browser is
added by itself; "Add bundle…" adds others, own or published); right, the chosen quantity
of every checked run: a colour per run, a line style per bundle. Export as every view.

A run's series is read on a background task (the browser's registry) and kept; what is drawn
is thinned to the plot's pixels (:func:`~rsp_workbench.gui.fit.thin_to_pixels`) and thinned
again when the view is zoomed, so a run of 210 k windows ticks without freezing the window.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QLabel,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.errors import UserError
from rsp_workbench.gui.qt import pg
from rsp_workbench.gui.fit import fit_samples, thin_to_pixels
from rsp_workbench.gui.results.common import DASHES, PALETTE, ResultsView, new_chart, style_plot
from rsp_workbench.gui.text import escape_html, plural
from rsp_workbench.results.bundle import Bundle
from rsp_workbench.results.reader import not_a_bundle, open_bundle
from rsp_workbench.results.view_data import (
    OVERLAY_METRICS,
    overlay_metric,
    overlay_series,
)

RUN_ROLE = Qt.ItemDataRole.UserRole
SYMBOL_LIMIT = 400  # points drawn with a symbol each; more are a line only
SeriesKey = tuple[Path, str, str]  # (bundle folder, run id, metric)


class OverlayView(ResultsView):
    """Checked runs of the listed bundles, one quantity, one chart."""

    title = "Overlay"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultsOverlay")
        self.bundles: list[Bundle] = []
        self.pinned: set[Path] = set()  # added with "Add bundle…": they stay
        self.drawn: list[tuple[Bundle, dict[str, Any], np.ndarray, np.ndarray]] = []
        self.add_button = QPushButton("Add bundle…")
        self.add_button.setObjectName("overlayAddBundle")
        self.add_button.setToolTip("Add another result bundle or a published YABench test folder to pick runs from")
        self.add_button.clicked.connect(self._add_dialog)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Remove the selected bundle from this list")
        self.remove_button.clicked.connect(self._remove_selected)
        self.metric_combo = QComboBox()
        self.metric_combo.setObjectName("overlayMetric")
        for metric in OVERLAY_METRICS:
            self.metric_combo.addItem(metric.label, metric.key)
        self.metric_combo.currentIndexChanged.connect(lambda _: self.redraw())
        self.controls.addWidget(self.add_button)
        self.controls.addWidget(self.remove_button)
        self.controls.addWidget(QLabel("show"))
        self.controls.addWidget(self.metric_combo)
        self.add_export_buttons()

        self.tree = QTreeWidget()
        self.tree.setObjectName("overlayRuns")
        self.tree.setHeaderLabels(["bundle / run", "engine"])
        self.tree.itemChanged.connect(self._on_item_changed)
        self.chart = new_chart()
        self.chart.setObjectName("overlayChart")
        self.plot = self.chart.addPlot()
        # the legend under the chart, not over the curves (precision sits at 1.0, right where it was)
        self.legend = pg.LegendItem(labelTextSize="8pt", colCount=2)
        self.chart.nextRow()
        self.chart.addItem(self.legend)
        self.plot.setMouseEnabled(x=True, y=False)  # the wheel zooms in time; the value axis stays fitted
        self.items: list[pg.PlotDataItem] = []
        self.tasks: Any = None  # the browser's TaskRegistry: series are read off the GUI thread
        self.series: dict[SeriesKey, tuple[np.ndarray, np.ndarray] | None] = {}
        self.pending: dict[SeriesKey, Any] = {}  # series being read → their task
        self.series_problems: dict[SeriesKey, str] = {}
        self._thin_timer = QTimer(self)
        self._thin_timer.setSingleShot(True)
        self._thin_timer.setInterval(50)
        self._thin_timer.timeout.connect(self._draw_items)
        self.plot.getViewBox().sigXRangeChanged.connect(lambda *_: self._thin_timer.start())
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.tree)
        splitter.addWidget(self.chart)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([300, 700])
        layout = QVBoxLayout(self.body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)
        self.show_message("Open a result bundle (or add one here) and tick the runs to compare.")

    # ------------------------------------------------------------------ bundles
    def set_data(self, data: Any) -> None:
        """The browser's bundle joins the list (replacing an older read of the same folder); bundles
        the browser showed before leave it unless they were added here or have ticked runs."""
        checked = self.checked_runs()
        keep = {b.folder for b, _ in checked} | self.pinned
        self.bundles = [b for b in self.bundles if b.folder in keep]
        self.add_loaded(data.bundle, checked)

    def add_bundle(self, path: str | Path) -> Bundle | None:
        """Add a bundle folder (own or published); a folder that is none is said in the status line."""
        refused = not_a_bundle(path)
        if refused is not None:
            self.status.setText(f"not added: {refused}")
            return None
        bundle = open_bundle(path, partial=True)
        self.pinned.add(bundle.folder)
        self.add_loaded(bundle)
        return bundle

    def add_loaded(self, bundle: Bundle, checked: list[tuple[Bundle, str]] | None = None) -> None:
        """Add (or refresh) a bundle; the ticked runs stay ticked (``checked``: as before a change of the list)."""
        checked = self.checked_runs() if checked is None else checked
        self.bundles = [b for b in self.bundles if b.folder != bundle.folder] + [bundle]
        for key in [k for k in (*self.series, *self.series_problems) if k[0] == bundle.folder]:
            self.series.pop(key, None)  # a new read of the folder: its runs may have changed
            self.series_problems.pop(key, None)
        self._fill_tree({(b.folder, r) for b, r in checked})
        self.show_content()
        self.redraw()

    def _fill_tree(self, checked: set[tuple[Path, str]]) -> None:
        self.tree.blockSignals(True)
        self.tree.clear()
        for index, bundle in enumerate(self.bundles):
            kind = "published YABench" if bundle.published else bundle.status
            top = QTreeWidgetItem([f"{bundle.name} ({kind})", ""])
            top.setToolTip(0, str(bundle.folder))
            top.setData(0, RUN_ROLE, index)
            self.tree.addTopLevelItem(top)
            for row in bundle.rows:
                run_id = str(row.get("run_id"))
                child = QTreeWidgetItem([run_id, str(row.get("engine"))])
                child.setData(0, RUN_ROLE, (index, run_id))
                child.setCheckState(0, Qt.CheckState.Checked if (bundle.folder, run_id) in checked
                                    else Qt.CheckState.Unchecked)
                top.addChild(child)
            top.setExpanded(True)
        self.tree.resizeColumnToContents(0)
        self.tree.blockSignals(False)

    def run_item(self, folder: Path, run_id: str) -> QTreeWidgetItem | None:
        for index, bundle in enumerate(self.bundles):
            if bundle.folder == Path(folder):
                top = self.tree.topLevelItem(index)
                for child in range(top.childCount()):
                    if top.child(child).data(0, RUN_ROLE)[1] == run_id:
                        return top.child(child)
        return None

    def set_checked(self, folder: str | Path, run_id: str, checked: bool = True) -> None:
        item = self.run_item(Path(folder), run_id)
        if item is None:
            raise KeyError(f"{run_id} is not a run of {folder}")
        item.setCheckState(0, Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)

    def checked_runs(self) -> list[tuple[Bundle, str]]:
        found = []
        for index in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(index)
            for child in range(top.childCount()):
                item = top.child(child)
                if item.checkState(0) == Qt.CheckState.Checked:
                    bundle_index, run_id = item.data(0, RUN_ROLE)
                    found.append((self.bundles[bundle_index], run_id))
        return found

    @Slot(QTreeWidgetItem, int)
    def _on_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        self.redraw()

    @Slot()
    def _add_dialog(self) -> None:
        start = str(self.bundles[-1].folder.parent) if self.bundles else str(Path.cwd())
        path = QFileDialog.getExistingDirectory(self, "Add a result bundle or a YABench test folder", start)
        if path:
            self.add_bundle(path)

    @Slot()
    def _remove_selected(self) -> None:
        item = self.tree.currentItem()
        if item is None:
            return
        while (parent := item.parent()) is not None:
            item = parent
        index = self.tree.indexOfTopLevelItem(item)
        checked = {(b.folder, r) for b, r in self.checked_runs()}
        self.pinned.discard(self.bundles[index].folder)
        del self.bundles[index]
        self._fill_tree(checked)
        self.redraw()

    # ------------------------------------------------------------------ drawing
    def _series(self, bundle: Any, row: dict[str, Any], key: str) -> tuple[np.ndarray, np.ndarray] | None:
        """A run's series sorted by x with its missing values dropped, read once (on a task when the
        view has a registry: None until it arrives, then the chart is redrawn)."""
        cache_key = (bundle.folder, str(row.get("run_id")), key)
        if cache_key in self.series:
            return self.series[cache_key]
        if cache_key in self.pending:
            return None

        def read() -> tuple[np.ndarray, np.ndarray] | None:
            found = overlay_series(bundle, row, key)
            if found is None:
                return None
            x, y = found
            keep = np.isfinite(y) & np.isfinite(x)
            order = np.argsort(x[keep], kind="stable")
            return x[keep][order], y[keep][order]

        if self.tasks is None:
            self._store(cache_key, read)
            return self.series.get(cache_key)
        task = self.tasks.start(f"overlay {cache_key[1]}", lambda state: read(), user_work=False)
        task.finished.connect(lambda result, k=cache_key: self._on_series_read(k, result))
        task.failed.connect(lambda error, trace, k=cache_key: self._on_series_failed(k, error))
        self.pending[cache_key] = task
        return None

    def _store(self, key: SeriesKey, read: Any) -> None:
        try:
            self.series[key] = read()
        except UserError as error:
            self.series_problems[key] = str(error)

    def _on_series_read(self, key: SeriesKey, result: Any) -> None:
        self.pending.pop(key, None)
        self.series[key] = result
        self.redraw()

    def _on_series_failed(self, key: SeriesKey, error: BaseException) -> None:
        self.pending.pop(key, None)
        self.series_problems[key] = str(error) if isinstance(error, UserError) else f"{type(error).__name__}: {error}"
        self.redraw()

    def busy(self) -> bool:
        """Series of ticked runs are still being read."""
        return bool(self.pending)

    def redraw(self) -> None:
        metric = overlay_metric(self.metric_combo.currentData())
        style_plot(self.plot, bottom="application time (window end)" if metric.axis == "window"
                   else "time since engine start", units_bottom="s",
                   left=metric.label + (f" ({metric.unit})" if metric.unit else ""))
        self.legend.clear()
        self.drawn = []
        problems: list[str] = []
        missing: list[str] = []
        reading: list[str] = []
        checked = self.checked_runs()
        for bundle, run_id in checked:
            row = bundle.row(run_id)
            if row is None:
                continue
            found = self._series(bundle, dict(row), metric.key)
            key = (bundle.folder, run_id, metric.key)
            if key in self.series_problems:
                problems.append(self.series_problems[key])
            elif key in self.pending:
                reading.append(run_id)
            elif found is None:
                missing.append(run_id)
            else:
                self.drawn.append((bundle, dict(row), *found))
        if self.drawn:  # the range first: what is drawn is thinned to it
            floor = None if metric.key == "delay" else 0.0
            fit_samples(self.plot, [x for *_, x, _ in self.drawn], [y for *_, y in self.drawn], y_floor=floor)
            if metric.key in ("precision", "recall"):
                self.plot.setYRange(-0.02, 1.05, padding=0)
        self._draw_items()
        folders = {b.folder for b, _ in checked}
        runs = sum(len(b.rows) for b in self.bundles)
        notes = [f"{len(checked)} of {plural(runs, 'run')} ticked in {plural(len(self.bundles), 'bundle')}"
                 + (f" ({plural(len(self.drawn), 'run')} of {plural(len(folders), 'bundle')} drawn)" if checked else "")]
        if reading:
            notes.append(f"reading {', '.join(reading)} …")
        if missing:
            notes.append(f"no {metric.label} in {', '.join(missing)}")
        notes += problems
        self.status.setText(escape_html("; ".join(notes)) if self.bundles else "")
        if reading:
            self.chart.setCursor(Qt.CursorShape.BusyCursor)
        else:
            self.chart.unsetCursor()

    @Slot()
    def _draw_items(self) -> None:
        """The drawn runs, thinned to the pixels of the visible x range (symbols only when few)."""
        lo, hi = self.plot.getViewBox().viewRange()[0]
        pixels = max(100, int(self.plot.getViewBox().width()))
        folders = list(dict.fromkeys(b.folder for b, *_ in self.drawn))
        for index, (bundle, row, x, y) in enumerate(self.drawn):
            while len(self.items) <= index:
                item = pg.PlotDataItem(connect="finite")
                self.plot.addItem(item)
                self.items.append(item)
            colour = PALETTE[index % len(PALETTE)]
            style = DASHES[folders.index(bundle.folder) % len(DASHES)]
            shown_x, shown_y = thin_to_pixels(x, y, pixels, lo, hi)
            few = int(np.searchsorted(x, hi, "right") - np.searchsorted(x, lo, "left")) <= SYMBOL_LIMIT
            self.items[index].setData(shown_x, shown_y, pen=pg.mkPen(colour, width=2, style=style),
                                      symbol="o" if few else None, symbolSize=5, symbolPen=None, symbolBrush=colour)
            self.items[index].setVisible(True)
            if self.legend.getLabel(self.items[index]) is None:
                self.legend.addItem(self.items[index], f"{bundle.name} · {row.get('engine')} · {row.get('run_id')}")
        for item in self.items[len(self.drawn):]:
            item.setData([], [])
            item.setVisible(False)

    # ------------------------------------------------------------------ export
    def chart_widget(self) -> QWidget:
        return self.chart

    def csv_table(self) -> tuple[list[str], list[list[Any]]]:
        metric = overlay_metric(self.metric_combo.currentData())
        header = ["bundle", "run_id", "engine", "metric", "x_s", "value"]
        rows = [[str(bundle.folder), row.get("run_id"), row.get("engine"), metric.key, float(a), float(b)]
                for bundle, row, x, y in self.drawn for a, b in zip(x, y) if np.isfinite(b)]
        return header, rows


__all__ = ["OverlayView"]
