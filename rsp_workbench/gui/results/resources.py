"""Resources: RSS, CPU and threads over time per engine run (``P_*.csv``; YABench Fig. 4a-c).

Three stacked plots with linked x axes; the engines of one run group overlaid.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QVBoxLayout, QWidget

from rsp_workbench.errors import UserError
from rsp_workbench.gui.qt import pg
from rsp_workbench.gui.fit import fit_samples
from rsp_workbench.gui.results.common import RunGroupView, new_chart, style_plot
from rsp_workbench.gui.text import escape_html, plural
from rsp_workbench.results.view_data import ResourceSeries, read_resources, read_runs, rows_in_group

METRICS = (("rss_mb", "RSS (MB)"), ("cpu_percent", "CPU (% of one core)"), ("threads", "threads"))


class ResourcesView(RunGroupView):
    """Memory, CPU and threads of the engines of one run group over their run time."""

    title = "Resources"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("resourcesGroup", parent)
        self.setObjectName("resultsResources")
        self.series: list[ResourceSeries] = []
        self.add_export_buttons()
        self.chart = new_chart()
        self.chart.setObjectName("resourcesChart")
        self.plots: dict[str, Any] = {}
        for row, (key, label) in enumerate(METRICS):
            plot = self.chart.addPlot(row=row, col=0)
            style_plot(plot, left=label, bottom="time since engine start" if row == len(METRICS) - 1 else "",
                       units_bottom="s" if row == len(METRICS) - 1 else None)
            if row:
                plot.setXLink(self.plots[METRICS[0][0]])
            self.plots[key] = plot
        self.legend = self.plots["rss_mb"].addLegend(offset=(10, 10), labelTextSize="8pt")
        self.curves: list[dict[str, pg.PlotDataItem]] = []
        layout = QVBoxLayout(self.body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.chart)

    @Slot(int)
    def _on_group_changed(self, index: int) -> None:
        if self.data is None or index < 0:
            return
        bundle = self.data.bundle
        rows = rows_in_group(bundle, self.group_combo.itemData(index))
        self.request("resources", lambda: read_runs(bundle, rows, read_resources), self._apply)

    def _apply(self, result: tuple[list[ResourceSeries], list[UserError]]) -> None:
        series, problems = result
        self.series = series
        notes = [escape_html(str(p)) for p in problems]
        if not series:
            self.show_message("No performance samples (P_*.csv) for these runs: the runs did not start, "
                              "or the experiment did not collect memory/CPU."
                              + ("<br>" + "<br>".join(notes) if notes else ""))
            return
        self.show_content()
        self.legend.clear()
        for index, run in enumerate(series):
            while len(self.curves) <= index:
                items = {key: pg.PlotDataItem() for key, _ in METRICS}
                for key, item in items.items():
                    self.plots[key].addItem(item)
                self.curves.append(items)
            colour = self.colours.get(run.engine, "#333")
            few = len(run.time_s) <= 60
            for key, _ in METRICS:
                item = self.curves[index][key]
                item.setData(run.time_s, getattr(run, key), pen=pg.mkPen(colour, width=2),
                             symbol="o" if few else None, symbolSize=5, symbolPen=None, symbolBrush=colour)
                item.setVisible(True)
            self.legend.addItem(self.curves[index]["rss_mb"], run.engine)
        for items in self.curves[len(series):]:
            for item in items.values():
                item.setData([], [])
                item.setVisible(False)
        for key, plot in self.plots.items():
            fit_samples(plot, [s.time_s for s in series], [getattr(s, key) for s in series])
        peak = ", ".join(f"{s.engine} {s.rss_mb.max():.1f} MB" for s in series if len(s.rss_mb))
        count = sum(len(s.time_s) for s in series)
        self.status.setText("; ".join(notes) if notes else f"peak RSS: {peak}; {plural(count, 'sample')}")

    def chart_widget(self) -> QWidget:
        return self.chart

    def csv_table(self) -> tuple[list[str], list[list[Any]]]:
        header = ["run_id", "engine", "time_s", "rss_mb", "cpu_percent", "threads"]
        rows = [[s.run_id, s.engine, float(t), float(r), float(c), int(n)]
                for s in self.series for t, r, c, n in zip(s.time_s, s.rss_mb, s.cpu_percent, s.threads)]
        return header, rows
