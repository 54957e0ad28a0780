"""Eviction: recall vs binding-cache size per eviction strategy (eviction strategies paper, Figs. 1-3).

Log x axis (cache size), one line per strategy (colour) and data shape (line style, e.g.
uniform vs bursty rate).
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtWidgets import QVBoxLayout, QWidget

from rsp_workbench.gui.qt import pg
from rsp_workbench.gui.results.common import DASHES, SYMBOLS, ResultsView, engine_colours, log_ticks, new_chart, style_plot
from rsp_workbench.results.view_data import BundleData, RecallCurve


class EvictionView(ResultsView):
    """Recall vs cache size, one line per strategy × data shape."""

    title = "Eviction"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultsEviction")
        self.curves: tuple[RecallCurve, ...] = ()
        self.add_export_buttons()
        self.chart = new_chart()
        self.chart.setObjectName("evictionChart")
        self.plot = self.chart.addPlot(title="recall vs binding-cache size")
        style_plot(self.plot, bottom="cache size (bindings per join partner, log)", left="recall")
        self.plot.setLogMode(x=True, y=False)
        self.plot.setYRange(-0.02, 1.05, padding=0)
        self.legend = self.plot.addLegend(offset=(-10, -40), labelTextSize="9pt")
        self.items: list[pg.PlotDataItem] = []
        layout = QVBoxLayout(self.body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.chart)

    def set_data(self, data: BundleData) -> None:
        self.curves = data.eviction
        if not self.curves:
            self.show_message("No eviction runs in this bundle: no run has a cache_size engine parameter "
                              "(see sample_experiments/eviction/).")
            return
        self.show_content()
        strategies = list(dict.fromkeys(c.strategy for c in self.curves))
        shapes = list(dict.fromkeys(c.shape for c in self.curves))
        colours = engine_colours(strategies)
        self.legend.clear()
        for index, curve in enumerate(self.curves):
            while len(self.items) <= index:
                item = pg.PlotDataItem()
                self.plot.addItem(item)
                self.items.append(item)
            colour = colours[curve.strategy]
            shape = shapes.index(curve.shape)
            self.items[index].setData(curve.cache_size, curve.recall,
                                      pen=pg.mkPen(colour, width=2, style=DASHES[shape % len(DASHES)]),
                                      symbol=SYMBOLS[shape % len(SYMBOLS)], symbolSize=8, symbolBrush=colour,
                                      symbolPen=None)
            self.items[index].setVisible(True)
            self.legend.addItem(self.items[index], curve.label)
        for item in self.items[len(self.curves):]:
            item.setData([], [])
            item.setVisible(False)
        sizes = sorted({float(s) for c in self.curves for s in c.cache_size if s > 0})
        ticks = [(math.log10(s), f"{s:,g}") for s in sizes] if len(sizes) <= 12 else log_ticks(sizes)
        self.plot.getAxis("bottom").setTicks([ticks, []])
        self.plot.enableAutoRange(axis="x")
        self.plot.setYRange(-0.02, 1.05, padding=0)
        self.status.setText(f"{len(strategies)} strategies × {len(shapes)} data shape(s), cache sizes "
                            f"{', '.join(f'{s:g}' for s in sizes)}; repetitions averaged")

    def chart_widget(self) -> QWidget:
        return self.chart

    def csv_table(self) -> tuple[list[str], list[list[Any]]]:
        header = ["strategy", "shape", "cache_size", "recall"]
        rows = [[c.strategy, c.shape, float(s), float(r)] for c in self.curves for s, r in zip(c.cache_size, c.recall)]
        return header, rows


__all__ = ["EvictionView"]
