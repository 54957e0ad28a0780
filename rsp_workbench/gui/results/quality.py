"""Quality: YABench's report charts (YABench Sect. 6, Figs. 3 and 6).

Left column, one run group (case × repetition × query) with its engines overlaid: precision
and recall per window over application time, the windows as alternating bands; delay of
result delivery per window; expected vs actual result size per window. Right column,
across the repetitions of the case (``BOXPLOTS_*``): boxplots of precision, recall and
delay per window, engines side by side.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QComboBox, QLabel, QVBoxLayout, QWidget

from rsp_workbench.errors import UserError
from rsp_workbench.gui.qt import pg
from rsp_workbench.gui.results.common import (
    BAND_BRUSHES,
    RATIO_RANGE,
    RunGroupView,
    new_chart,
    ratio_axis,
    style_plot,
)
from rsp_workbench.gui.text import escape_html
from rsp_workbench.results.view_data import (
    WindowBoxplots,
    WindowSeries,
    box_stats,
    case_variables,
    read_runs,
    read_window_series,
    rows_in_group,
)

ALL_ENGINES = "all engines"
BOX_METRICS = ("precision", "recall", "delay")
DELAY_MEANING = ("delay = when the engine's answer arrived − when the window's report became due on the stand "
                 "(YABench Sect. 3.4), in whole ms; 0 ms: within the same millisecond. No point: the window was "
                 "not reported.")


def _finite(x: np.ndarray, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """The points with a value: unknown values (NaN, e.g. the delay of an unreported window)
    are left out, so an all-unknown series draws nothing instead of breaking autorange."""
    values = np.asarray(y, dtype=float)
    keep = np.isfinite(values)
    return np.asarray(x)[keep], values[keep]


@dataclass
class _EngineCurves:
    """The plot items of one engine slot (created once, updated with setData)."""

    precision: pg.PlotDataItem
    recall: pg.PlotDataItem
    delay: pg.PlotDataItem
    actual: pg.PlotDataItem
    expected: pg.PlotDataItem

    def items(self) -> tuple[pg.PlotDataItem, ...]:
        return (self.precision, self.recall, self.delay, self.actual, self.expected)


@dataclass
class _EngineBoxes:
    boxes: pg.BarGraphItem
    whiskers: pg.PlotDataItem
    medians: pg.PlotDataItem


class QualityView(RunGroupView):
    """Per-window precision/recall/delay/sizes of a run group, and YABench boxplots across repetitions."""

    title = "Quality"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("qualityGroup", parent)
        self.setObjectName("resultsQuality")
        self.series: list[WindowSeries] = []
        self.boxplots: list[WindowBoxplots] = []
        self.engine_combo = QComboBox()
        self.engine_combo.setObjectName("qualityEngine")
        self.engine_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)  # "all engines" whole
        self.engine_combo.currentIndexChanged.connect(self._on_engine_changed)
        self.controls.addWidget(QLabel("engine"))
        self.controls.addWidget(self.engine_combo)
        self.add_export_buttons()

        self.chart = new_chart()
        self.chart.setObjectName("qualityChart")
        self.pr_plot = self.chart.addPlot(row=0, col=0, title="precision (solid) and recall (dashed) per window")
        self.delay_plot = self.chart.addPlot(row=1, col=0, title="delay of result delivery per window")
        self.delay_plot.setToolTip(DELAY_MEANING)
        self.size_plot = self.chart.addPlot(row=2, col=0, title="actual (solid) vs expected (dashed) result size")
        style_plot(self.pr_plot, left="precision / recall")
        style_plot(self.delay_plot, left="delay (ms)")
        style_plot(self.size_plot, bottom="application time (window end)", units_bottom="s", left="bindings")
        ratio_axis(self.pr_plot)
        self.pr_plot.setLimits(yMin=RATIO_RANGE[0], yMax=RATIO_RANGE[1])
        self.delay_plot.setXLink(self.pr_plot)
        self.size_plot.setXLink(self.pr_plot)
        for plot in (self.pr_plot, self.delay_plot, self.size_plot):  # a content-change run: millions of windows
            plot.setClipToView(True)
            plot.setDownsampling(auto=True, mode="peak")
        self.legend = self.pr_plot.addLegend(offset=(-10, -10), labelTextSize="8pt")
        self.bands = pg.BarGraphItem(x0=np.zeros(0), x1=np.zeros(0), y0=0.0, height=1.05, pen=None)
        self.bands.setZValue(-20)
        self.pr_plot.addItem(self.bands)
        self.curves: list[_EngineCurves] = []

        self.box_plot = {}
        for row, metric in enumerate(BOX_METRICS):
            plot = self.chart.addPlot(row=row, col=1)
            style_plot(plot, left=f"{metric}" + (" (ms)" if metric == "delay" else ""),
                       bottom="window" if metric == "delay" else "")
            if metric != "delay":
                ratio_axis(plot)
            self.box_plot[metric] = plot
        self.box_plot["recall"].setXLink(self.box_plot["precision"])
        self.box_plot["delay"].setXLink(self.box_plot["precision"])
        self.box_items: dict[str, list[_EngineBoxes]] = {metric: [] for metric in BOX_METRICS}
        self.box_extent: tuple[float, float] | None = None
        self._box_column_out = False
        self.box_plot["delay"].setToolTip(DELAY_MEANING)
        layout = self.chart.ci.layout
        layout.setColumnStretchFactor(0, 3)
        layout.setColumnStretchFactor(1, 2)
        body = QVBoxLayout(self.body)
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.chart)

    # ------------------------------------------------------------------ data in
    def select_group(self, index: int) -> None:
        self.group_combo.setCurrentIndex(index)

    @Slot(int)
    def _on_group_changed(self, index: int) -> None:
        if self.data is None or index < 0:
            return
        group = self.group_combo.itemData(index)
        bundle = self.data.bundle
        rows = rows_in_group(bundle, group)
        self.status.setText(f"reading the per-window quality of {len(rows)} run(s) …")
        self.request(f"quality {group}", lambda: read_runs(bundle, rows, read_window_series), self._apply_series)

    def _apply_series(self, result: tuple[list[WindowSeries], list[UserError]]) -> None:
        series, problems = result
        self.series = series
        group = self.group_combo.currentData()
        self.boxplots = [b for b in (self.data.boxplots if self.data else ())
                         if group is not None and (b.case, b.query) == (group[0], group[2])]
        self.engine_combo.blockSignals(True)
        current = self.engine_combo.currentText()
        self.engine_combo.clear()
        self.engine_combo.addItem(ALL_ENGINES)
        for engine in dict.fromkeys([s.engine for s in series] + [b.engine for b in self.boxplots]):
            self.engine_combo.addItem(engine)
        position = self.engine_combo.findText(current)
        self.engine_combo.setCurrentIndex(max(0, position))
        self.engine_combo.blockSignals(False)
        notes = [escape_html(str(p)) for p in problems]
        if not series and not self.boxplots:
            self.show_message("No per-window quality in this run group: the oracle measured no windows "
                              "(e.g. a recall-only experiment, or runs that did not finish)."
                              + ("<br>" + "<br>".join(notes) if notes else ""))
            return
        self.show_content()
        self.redraw()
        repetitions = max((b.repetitions for b in self.boxplots), default=0)
        self.status.setText("; ".join(notes) if notes else
                            f"{len(series)} run(s), {sum(len(s) for s in series):,} windows; "
                            + (f"boxplots over {repetitions} repetitions" if repetitions > 1 else
                               "no boxplots: " + ("one repetition, no spread" if repetitions else
                                                  "no repetitions recorded")))

    @Slot(int)
    def _on_engine_changed(self, index: int) -> None:
        if self.series or self.boxplots:
            self.redraw()

    def visible_engines(self) -> list[str]:
        chosen = self.engine_combo.currentText()
        engines = list(dict.fromkeys([s.engine for s in self.series] + [b.engine for b in self.boxplots]))
        return engines if chosen in ("", ALL_ENGINES) else [e for e in engines if e == chosen]

    # ------------------------------------------------------------------ drawing
    def _curve_slot(self, index: int) -> _EngineCurves:
        while len(self.curves) <= index:
            curves = _EngineCurves(
                pg.PlotDataItem(connect="finite"), pg.PlotDataItem(connect="finite"),
                pg.PlotDataItem(connect="finite"), pg.PlotDataItem(connect="finite"),
                pg.PlotDataItem(connect="finite"),
            )
            self.pr_plot.addItem(curves.precision)
            self.pr_plot.addItem(curves.recall)
            self.delay_plot.addItem(curves.delay)
            self.size_plot.addItem(curves.actual)
            self.size_plot.addItem(curves.expected)
            self.curves.append(curves)
        return self.curves[index]

    def _box_slot(self, metric: str, index: int) -> _EngineBoxes:
        items = self.box_items[metric]
        while len(items) <= index:
            boxes = _EngineBoxes(pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=0.1),
                                 pg.PlotDataItem(connect="pairs"), pg.PlotDataItem(connect="pairs"))
            for item in (boxes.whiskers, boxes.boxes, boxes.medians):
                self.box_plot[metric].addItem(item)
            items.append(boxes)
        return items[index]

    def redraw(self) -> None:
        engines = self.visible_engines()
        shown = [s for s in self.series if s.engine in engines]
        self.legend.clear()
        for index, series in enumerate(shown):
            colour = self.colours.get(series.engine, "#333")
            curves = self._curve_slot(index)
            x = series.positions() / 1000.0
            dense = len(series) > 200
            symbol = {} if dense else {"symbolSize": 5, "symbolPen": None, "symbolBrush": colour}
            curves.precision.setData(*_finite(x, series.precision), pen=pg.mkPen(colour, width=2), symbol=None if dense else "o",
                                     **symbol)
            curves.recall.setData(*_finite(x, series.recall), pen=pg.mkPen(colour, width=2, style=Qt.PenStyle.DashLine),
                                  symbol=None if dense else "t", **symbol)
            curves.delay.setData(*_finite(x, series.delay), pen=None if dense else pg.mkPen(colour, width=1.5), symbol="o",
                                 symbolSize=4 if dense else 5, symbolPen=None, symbolBrush=colour)
            curves.actual.setData(*_finite(x, series.actual_size), pen=pg.mkPen(colour, width=2), symbol=None if dense else "o",
                                  **symbol)
            curves.expected.setData(*_finite(x, series.expected_size),
                                    pen=pg.mkPen(colour, width=1.5, style=Qt.PenStyle.DashLine))
            for item in curves.items():
                item.setVisible(True)
            self.legend.addItem(curves.precision, series.engine)
        for curves in self.curves[len(shown):]:
            for item in curves.items():
                item.setData([], [])
                item.setVisible(False)
        self._draw_bands(shown)
        self._draw_boxplots([b for b in self.boxplots if b.engine in engines])
        if shown or self.box_extent is not None:
            self._fit_time_axis(shown)
            self.pr_plot.setYRange(*RATIO_RANGE, padding=0)

    def _fit_time_axis(self, shown: Sequence[WindowSeries]) -> None:
        """The shared time axis spans every window band, point and box (the boxes of the last
        window stick out past its end; autorange of the left column alone would clip them)."""
        lows = [float(s.start.min()) / 1000.0 for s in shown if len(s)] + [
            float(s.positions().min()) / 1000.0 for s in shown if len(s)]
        highs = [float(s.positions().max()) / 1000.0 for s in shown if len(s)]
        if self.box_extent is not None:
            lows.append(self.box_extent[0])
            highs.append(self.box_extent[1])
        if not lows or not highs:
            self.pr_plot.enableAutoRange(axis="x")
            return
        low, high = min(lows), max(highs)
        if high <= low:  # one window end only: a second either side
            low, high = low - 1.0, high + 1.0
        self.pr_plot.setXRange(low, high, padding=0.03)

    def _draw_bands(self, shown: Sequence[WindowSeries]) -> None:
        windows = sorted({w for s in shown for w in s.windows()})
        if not windows:
            self.bands.setOpts(x0=np.zeros(0), x1=np.zeros(0), y0=0.0, height=1.05, brushes=[])
            return
        x0 = np.asarray([w[0] for w in windows], dtype=float) / 1000.0
        x1 = np.asarray([w[1] for w in windows], dtype=float) / 1000.0
        brushes = [pg.mkBrush(*BAND_BRUSHES[i % 2]) for i in range(len(windows))]
        self.bands.setOpts(x0=x0, x1=x1, y0=0.0, height=1.05, brushes=brushes, pen=None)

    def _show_box_column(self, shown: bool) -> None:
        """Take the boxplots out of the chart's grid, or put them back (a hidden plot keeps its room)."""
        if self._box_column_out != shown:
            return
        grid = self.chart.ci.layout
        for row, metric in enumerate(BOX_METRICS):
            plot = self.box_plot[metric]
            if shown:
                grid.addItem(plot, row, 1)
            else:
                grid.removeItem(plot)
            plot.setVisible(shown)
        self._box_column_out = not shown
        grid.setColumnStretchFactor(1, 2 if shown else 0)

    def _draw_boxplots(self, boxplots: Sequence[WindowBoxplots]) -> None:
        """One box per window and engine (q1–q3, median, min–max whiskers); at the window's time when
        the borders are known (ORACLE_<engine>_1), so that the column lines up with the left one."""
        repetitions = max((b.repetitions for b in boxplots), default=0)
        note = f"across {repetitions} repetitions"
        # one value per box is no distribution: the column goes (the status line says why) instead
        # of three blank panels, and the left column takes the width
        spread = repetitions >= 2
        if not spread:
            boxplots = []
        self._show_box_column(spread)
        positions = [b.positions() for b in boxplots]
        on_time = bool(boxplots) and all(p is not None for p in positions)
        edges: list[float] = []  # the outermost box edges: the x range must show them whole
        for metric in BOX_METRICS:
            plot = self.box_plot[metric]
            plot.setXLink(self.pr_plot if on_time else (self.box_plot["precision"] if metric != "precision" else None))
            plot.setTitle(f"{metric} {note}" if metric == "precision" else metric)
            if metric == "delay":  # the same words as the left column's axis when they share it
                plot.setLabel("bottom", "application time (window end)" if on_time else "window (number)",
                              units="s" if on_time else None)
            for index, boxplot in enumerate(boxplots):
                colour = self.colours.get(boxplot.engine, "#333")
                where = positions[index]
                centres = (where / 1000.0) if on_time and where is not None else np.arange(1, len(boxplot.precision) + 1,
                                                                                           dtype=float)
                distinct = np.unique(centres)
                spacing = float(np.min(np.diff(distinct))) if len(distinct) > 1 else 1.0
                width = 0.5 * spacing / len(boxplots)
                offset = (index - (len(boxplots) - 1) / 2) * width
                xs, lows, heights, whiskers, medians = [], [], [], [], []
                for centre, values in zip(centres, boxplot.metric(metric)):
                    stats = box_stats(values)
                    if stats is None:
                        continue
                    x = float(centre) + offset
                    cap = width * 0.25
                    xs.append(x)
                    lows.append(stats.q1)
                    heights.append(stats.q3 - stats.q1)
                    whiskers += [(x, stats.minimum), (x, stats.q1), (x, stats.q3), (x, stats.maximum),
                                 (x - cap, stats.minimum), (x + cap, stats.minimum),
                                 (x - cap, stats.maximum), (x + cap, stats.maximum)]
                    medians += [(x - width * 0.45, stats.median), (x + width * 0.45, stats.median)]
                    edges += [x - width * 0.5, x + width * 0.5]
                slot = self._box_slot(metric, index)
                slot.boxes.setOpts(x=np.asarray(xs), y0=np.asarray(lows), height=np.asarray(heights), width=width * 0.9,
                                   brush=pg.mkBrush(pg.mkColor(colour).lighter(160)), pen=pg.mkPen(colour, width=1))
                w = np.asarray(whiskers, dtype=float).reshape(-1, 2)
                m = np.asarray(medians, dtype=float).reshape(-1, 2)
                slot.whiskers.setData(w[:, 0], w[:, 1], pen=pg.mkPen(colour, width=1))
                slot.medians.setData(m[:, 0], m[:, 1], pen=pg.mkPen(pg.mkColor(colour).darker(160), width=2.5))
                for item in (slot.boxes, slot.whiskers, slot.medians):
                    item.setVisible(True)
            for slot in self.box_items[metric][len(boxplots):]:
                slot.boxes.setOpts(x=np.zeros(0), y0=np.zeros(0), height=np.zeros(0))
                slot.whiskers.setData([], [])
                slot.medians.setData([], [])
                for item in (slot.boxes, slot.whiskers, slot.medians):
                    item.setVisible(False)
            plot.enableAutoRange(axis="y")  # no range left from the bundle shown before
            if metric in ("precision", "recall"):
                plot.setYRange(*RATIO_RANGE, padding=0)
        self.box_extent = (min(edges), max(edges)) if edges and on_time else None
        if boxplots and not on_time:
            count = max(len(b.precision) for b in boxplots)
            self.box_plot["precision"].setXRange(0.4, count + 0.6, padding=0)

    # ------------------------------------------------------------------ export
    def chart_widget(self) -> QWidget:
        return self.chart

    def csv_table(self) -> tuple[list[str], Iterable[Sequence[Any]]]:
        """Per window of the shown runs, then the per-repetition values of the boxplots (``;``-joined);
        each row ends with its case's values of the variables that vary across the bundle.

        The rows are made as the file is written, from whole columns (no list per window first)."""
        header = ["kind", "source", "engine", "window", "start_ms", "end_ms", "precision", "recall",
                  "actual_size", "expected_size", "window_triples", "delay_ms"]
        engines = self.visible_engines()
        series = [s for s in self.series if s.engine in engines]
        boxplots = [b for b in self.boxplots if b.engine in engines]
        rows = self.data.bundle.rows if self.data is not None else ()
        names = case_variables(rows)
        by_run = {r.get("run_id"): r.get("variables") or {} for r in rows}
        by_case = {r.get("case"): r.get("variables") or {} for r in rows}

        def values(variables: Any) -> tuple[Any, ...]:
            return tuple(variables.get(name) for name in names)

        def window_rows(run: WindowSeries) -> Iterator[Sequence[Any]]:
            extra = values(by_run.get(run.run_id, {}))
            return ((*row, *extra) for row in _window_rows(run))

        repetitions = ((*row, *values(by_case.get(b.case, {}))) for b in boxplots for row in _repetition_rows(b))
        return header + names, itertools.chain(itertools.chain.from_iterable(map(window_rows, series)), repetitions)


def _window_rows(series: WindowSeries, chunk: int = 65_536) -> Iterator[Sequence[Any]]:
    """One CSV row per window of a run, a chunk of windows at a time (columns to Python numbers in
    a few C loops, never the whole run's rows at once)."""
    for first in range(0, len(series), chunk):
        part = slice(first, first + chunk)
        start, end, actual, expected, triples = (np.asarray(getattr(series, k)[part]).astype(np.int64).tolist()
                                                 for k in ("start", "end", "actual_size", "expected_size",
                                                           "window_triples"))
        delay = [None if d != d else int(d) for d in series.delay[part].tolist()]  # NaN: not reported
        count = len(start)
        yield from zip(itertools.repeat("window", count), itertools.repeat(series.run_id, count),
                       itertools.repeat(series.engine, count), range(first + 1, first + count + 1), start, end,
                       series.precision[part].astype(float).tolist(), series.recall[part].astype(float).tolist(),
                       actual, expected, triples, delay)


def _repetition_rows(boxplot: WindowBoxplots) -> Iterator[Sequence[Any]]:
    for i, (p, r, d) in enumerate(zip(boxplot.precision, boxplot.recall, boxplot.delay), start=1):
        yield ["repetitions", boxplot.group, boxplot.engine, i, None, None, ";".join(map(str, p)),
               ";".join(map(str, r)), None, None, None, ";".join(f"{v:g}" for v in d)]
