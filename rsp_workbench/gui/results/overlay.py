"""Overlay: any runs of several bundles — the workbench's own and published YABench folders —
in one chart, e.g. the published CQELS precision per window against the
``cqels`` preset's, or the memory of a real engine against its model.

Left, the bundles and their runs with a check box each (the bundle open in the browser is
added by itself; "Add bundle…" adds others, own or published); right, the chosen quantity
of every checked run: a colour per run, a line style per bundle. Export as every view.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, Slot
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
from rsp_workbench.gui.fit import fit_samples
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
        self.legend = self.plot.addLegend(offset=(-10, 10), labelTextSize="8pt")
        self.items: list[pg.PlotDataItem] = []
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
        while item.parent() is not None:
            item = item.parent()
        index = self.tree.indexOfTopLevelItem(item)
        checked = {(b.folder, r) for b, r in self.checked_runs()}
        self.pinned.discard(self.bundles[index].folder)
        del self.bundles[index]
        self._fill_tree(checked)
        self.redraw()

    # ------------------------------------------------------------------ drawing
    def redraw(self) -> None:
        metric = overlay_metric(self.metric_combo.currentData())
        style_plot(self.plot, bottom="application time (window end)" if metric.axis == "window"
                   else "time since engine start", units_bottom="s",
                   left=metric.label + (f" ({metric.unit})" if metric.unit else ""))
        self.legend.clear()
        self.drawn = []
        problems: list[str] = []
        missing: list[str] = []
        for bundle, run_id in self.checked_runs():
            row = bundle.row(run_id)
            if row is None:
                continue
            try:
                found = overlay_series(bundle, row, metric.key)
            except UserError as error:
                problems.append(str(error))
                continue
            if found is None:
                missing.append(run_id)
                continue
            self.drawn.append((bundle, dict(row), *found))
        folders = list(dict.fromkeys(b.folder for b, *_ in self.drawn))
        for index, (bundle, row, x, y) in enumerate(self.drawn):
            while len(self.items) <= index:
                item = pg.PlotDataItem(connect="finite")
                self.plot.addItem(item)
                self.items.append(item)
            colour = PALETTE[index % len(PALETTE)]
            style = DASHES[folders.index(bundle.folder) % len(DASHES)]
            keep = np.isfinite(y)
            self.items[index].setData(x[keep], y[keep], pen=pg.mkPen(colour, width=2, style=style), symbol="o",
                                      symbolSize=5, symbolPen=None, symbolBrush=colour)
            self.items[index].setVisible(True)
            self.legend.addItem(self.items[index], f"{bundle.name} · {row.get('engine')} · {row.get('run_id')}")
        for item in self.items[len(self.drawn):]:
            item.setData([], [])
            item.setVisible(False)
        if self.drawn:
            floor = None if metric.key == "delay" else 0.0
            fit_samples(self.plot, [x for *_, x, _ in self.drawn], [y for *_, y in self.drawn], y_floor=floor)
            if metric.key in ("precision", "recall"):
                self.plot.setYRange(-0.02, 1.05, padding=0)
        notes = [f"{plural(len(self.drawn), 'run')} of {plural(len(folders), 'bundle')}"]
        if missing:
            notes.append(f"no {metric.label} in {', '.join(missing)}")
        notes += problems
        self.status.setText(escape_html("; ".join(notes)) if self.bundles else "")

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
