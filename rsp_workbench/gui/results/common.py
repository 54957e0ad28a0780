"""What every Results view shares: engine colours, the data-or-message stack and export.

One export path for all views (PNG, SVG, CSV): a pyqtgraph chart goes through pyqtgraph's
``ImageExporter`` (so the PNG can be wider than the screen); any other widget (tables) is
grabbed. SVG renders the widget through ``QSvgGenerator``, as the window timeline does,
because pyqtgraph 0.14's ``SVGExporter`` fails on PySide6 6.12 (it cannot parse the
generator's path data).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.gui.qt import pg

# Okabe-Ito + Tableau hues: distinct for colour-blind readers, engine order = colour order.
PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#8c564b", "#7f7f7f",
           "#bcbd22", "#17becf")
SYMBOLS = ("o", "s", "t", "d", "+", "star", "h", "p", "t1", "x")
DASHES = (Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine)
BAND_BRUSHES = ((96, 125, 139, 38), (96, 125, 139, 12))  # alternating window bands


def engine_colours(engines: Sequence[str]) -> dict[str, str]:
    """Engine → colour, by order of first appearance in the bundle (the same in every view)."""
    return {engine: PALETTE[i % len(PALETTE)] for i, engine in enumerate(engines)}


# ---------------------------------------------------------------------- export


def export_png(widget: QWidget, path: str | Path, width: int | None = None) -> Path:
    """PNG of a chart (pyqtgraph scene, optionally ``width`` px wide) or of any widget."""
    target = Path(path)
    if isinstance(widget, pg.GraphicsView):
        from pyqtgraph.exporters import ImageExporter

        exporter = ImageExporter(widget.scene())
        if width:
            exporter.parameters()["width"] = width
        exporter.export(str(target))
    else:
        widget.grab().save(str(target))
    return target


def export_svg(widget: QWidget, path: str | Path, title: str = "RSP Workbench") -> Path:
    """SVG of a widget (vector for pyqtgraph charts: the scene paints into the generator)."""
    from PySide6.QtCore import QPoint, QRect, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator
    from PySide6.QtWidgets import QGraphicsView

    size = widget.size()
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(QSize(size.width(), size.height()))
    generator.setViewBox(QRect(0, 0, size.width(), size.height()))
    generator.setTitle(title)
    painter = QPainter(generator)
    try:
        if isinstance(widget, QGraphicsView):
            widget.render(painter)  # the scene as vectors
        else:
            widget.render(painter, QPoint())
    finally:
        painter.end()
    return Path(path)


def export_csv(path: str | Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """``rows`` may be made as they are written (a quality export of a content-change run has millions)."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(["" if value is None else value for value in row] for row in rows)
    return Path(path)


# ---------------------------------------------------------------------- base view


def run_inline(name: str, read: Callable[[], Any], deliver: Callable[[Any], None]) -> None:
    deliver(read())


class ResultsView(QWidget):
    """A chart over bundle data, or a short message saying why there is nothing to show.

    Subclasses fill ``self.controls`` (selectors), put their chart in ``self.body`` and
    implement :meth:`chart_widget` and :meth:`csv_table`; export comes from here.
    """

    title = "results"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controls = QHBoxLayout()
        self.export_buttons: dict[str, QPushButton] = {}
        self.message = QLabel()
        self.message.setObjectName("resultsMessage")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setStyleSheet("color: #555; font-size: 13px; padding: 24px")
        self.body = QWidget()
        self.stack = QStackedWidget()
        self.stack.addWidget(self.message)
        self.stack.addWidget(self.body)
        self.status = QLabel()
        self.status.setStyleSheet("color: #555")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(self.controls)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.status)
        self.ask_save_path: Callable[[str], str | None] = self._ask_save_path
        self.export_dir: Path | None = None  # the open bundle's folder (the browser sets it)
        # how per-run files are read: inline by default; the browser swaps in its task runner
        self.submit: Callable[[str, Callable[[], Any], Callable[[Any], None]], None] = run_inline
        self._ticket = 0
        self.show_message("Open a result bundle to see this view.")

    def request(self, name: str, read: Callable[[], Any], apply: Callable[[Any], None]) -> None:
        """Read through :attr:`submit` and apply the result unless a newer request superseded it."""
        self._ticket += 1
        ticket = self._ticket

        def deliver(result: Any) -> None:
            if ticket == self._ticket:
                apply(result)

        self.submit(name, read, deliver)

    def add_export_buttons(self) -> None:
        """PNG…/SVG…/CSV… at the right end of the controls (call after adding the selectors)."""
        self.controls.addStretch(1)
        for kind in ("png", "svg", "csv"):
            button = QPushButton(f"{kind.upper()}…")
            button.setObjectName(f"export{kind.upper()}")
            button.setToolTip(f"Export this view as {kind.upper()}")
            button.clicked.connect(getattr(self, f"_export_{kind}"))
            self.controls.addWidget(button)
            self.export_buttons[kind] = button

    # ------------------------------------------------------------------ state
    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)
        for button in self.export_buttons.values():
            button.setEnabled(False)

    def show_content(self) -> None:
        self.stack.setCurrentWidget(self.body)
        for button in self.export_buttons.values():
            button.setEnabled(True)

    @property
    def has_data(self) -> bool:
        return self.stack.currentWidget() is self.body

    # ------------------------------------------------------------------ export
    def chart_widget(self) -> QWidget:
        raise NotImplementedError

    def csv_table(self) -> tuple[list[str], Iterable[Sequence[Any]]]:
        raise NotImplementedError

    def export_png(self, path: str | Path, width: int | None = None) -> Path:
        return export_png(self.chart_widget(), path, width)

    def export_svg(self, path: str | Path) -> Path:
        return export_svg(self.chart_widget(), path, f"RSP Workbench: {self.title}")

    def export_csv(self, path: str | Path) -> Path:
        header, rows = self.csv_table()
        return export_csv(path, header, rows)

    @Slot()
    def _export_png(self) -> None:
        self._export("png")

    @Slot()
    def _export_svg(self) -> None:
        self._export("svg")

    @Slot()
    def _export_csv(self) -> None:
        self._export("csv")

    def _export(self, kind: str) -> None:
        path = self.ask_save_path(kind)
        if not path:
            return
        {"png": self.export_png, "svg": self.export_svg, "csv": self.export_csv}[kind](path)
        self.status.setText(f"exported {path}")

    def export_start(self, kind: str) -> Path:
        """Where an export is offered: in the open bundle's folder (not the program's), named after the view."""
        name = self.title.lower().replace(" ", "-").replace("×", "x")
        return (self.export_dir or Path.cwd()) / f"{name}.{kind}"

    def _ask_save_path(self, kind: str) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self, f"Export {kind.upper()}", str(self.export_start(kind)), f"*.{kind}")
        return path or None


def new_chart() -> pg.GraphicsLayoutWidget:
    chart = pg.GraphicsLayoutWidget()
    chart.setBackground("w")
    return chart


def style_plot(plot: Any, *, bottom: str = "", left: str = "", units_bottom: str | None = None) -> None:
    """House look: light grid, no auto-SI prefixes on the axes (values are in their own units)."""
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.hideButtons()
    if bottom:
        plot.setLabel("bottom", bottom, units=units_bottom)
    if left:
        plot.setLabel("left", left)
    for name in ("bottom", "left"):
        plot.getAxis(name).enableAutoSIPrefix(False)


def log_ticks(values: Sequence[float]) -> list[tuple[float, str]]:
    """Ticks for a log axis spanning ``values``: (log10 position, label in linear units).

    1×, 2×, 3× and 5× of each decade; when the data span too little for three of those
    (e.g. 36–39 MB), evenly spaced round values instead, so that a narrow log axis still reads."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    if not positive:
        return []
    lo, hi = min(positive), max(positive)
    if hi <= lo * (1 + 1e-9):
        return [(math.log10(lo), f"{lo:,.4g}")]
    ticks = [m * 10.0 ** e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
             for m in (1, 2, 3, 5)]
    chosen = [t for t in ticks if lo <= t <= hi]
    if len(chosen) < 3:
        raw = (hi - lo) / 4
        magnitude = 10.0 ** math.floor(math.log10(raw))
        step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
        first = math.floor(lo / step) * step
        chosen = [first + i * step for i in range(int((hi - first) / step) + 2)]
    return [(math.log10(t), f"{t:,.6g}") for t in chosen if t > 0]


class RunGroupView(ResultsView):
    """A view over one run group (case × repetition × query) of the bundle, chosen in a combo box.

    Subclasses implement :meth:`_on_group_changed` (draw the group at that combo index).
    """

    def __init__(self, combo_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: Any = None
        self.colours: dict[str, str] = {}
        self.group_combo = QComboBox()
        self.group_combo.setObjectName(combo_name)
        self.group_combo.setMinimumContentsLength(28)
        self.group_combo.currentIndexChanged.connect(self._on_group_changed)
        self.controls.addWidget(QLabel("runs"))
        self.controls.addWidget(self.group_combo)

    def set_data(self, data: Any) -> None:
        from rsp_workbench.results.view_data import engines_of, run_groups

        self.data = data
        self.colours = engine_colours(engines_of(data.bundle.rows))
        groups = run_groups(data.bundle)
        self.group_combo.blockSignals(True)
        self.group_combo.clear()
        for key, label in groups:
            self.group_combo.addItem(label, key)
        self.group_combo.blockSignals(False)
        if not groups:
            self.show_message("This bundle has no runs.")
            return
        self._on_group_changed(0)

    def _on_group_changed(self, index: int) -> None:
        raise NotImplementedError



RATIO_TICKS = [(v / 10, f"{v / 10:.1f}".replace("0.0", "0")) for v in range(0, 11, 2)]  # 0, 0.2, …, 1.0
RATIO_RANGE = (-0.1, 1.1)  # room for half a label beyond 0 and 1 (pyqtgraph drops a label that overflows its axis)


def ratio_axis(plot: Any) -> None:
    """A 0–1 axis (precision, recall) with every tick labelled, 1.0 included: pyqtgraph hides a
    label that reaches past the axis end, and at 1024 px the top label was the one that went."""
    axis = plot.getAxis("left")
    axis.setTicks([RATIO_TICKS, []])
    axis.setStyle(hideOverlappingLabels=False)
    plot.setYRange(*RATIO_RANGE, padding=0)
