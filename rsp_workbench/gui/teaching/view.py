"""Teaching mode: one small stream, one query, a time slider and policies side by side.

For each policy column (C-SPARQL, CQELS, SPARQLstream and a custom one by default) the
view shows at the chosen instant the scope (active window), its content, whether the
window reports, what the query returns and what the R2S operator emits; below, a
timeline draws the elements, the windows of one column as bands, the current instant
and every column's evaluation instants. All values come from
:class:`rsp_workbench.gui.teaching.model.TeachingModel` (core + oracle reference path).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import unescape
from typing import Any

from PySide6.QtCore import QEvent, Qt, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.gui.qt import pg  # PySide6 first, then pyqtgraph; bool refcount guard
from rsp_workbench.core.semantics import PRESETS
from rsp_workbench.errors import UserError
from rsp_workbench.gui.highlight import CodeEditor
from rsp_workbench.gui.teaching.model import (
    EXAMPLES,
    TeachingModel,
    format_bag,
    format_element,
    format_scope,
    seconds,
    shorten,
)
from rsp_workbench.gui.text import escape_html

COLUMN_COLOURS = ("#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00")
REPORT_CHOICES = (
    "window-close & non-empty", "window-close", "content-change", "content-change & non-empty",
    "periodic(2s)", "periodic(2s) & non-empty",
)


READOUT_MIN_WIDTH = 200
LABEL_GAP_PX = 8  # horizontal room between two point labels on one level
LABEL_ANCHOR, LABEL_STEP = 1.3, 1.1  # a point label's bottom, and each stacked level, in label heights (with margins)
LABEL_PAD_PX = 4  # px between the top label and what is drawn above it
BAND_HEIGHT, BAND_BELOW = 0.5, 0.6  # a stream's window bands: their height and how far below its elements they start
ROW_GAP = 0.7  # data units between a stream's top label and the elements of the stream above (its bands fit in it)
EVALUATION_GAP_PX, EVALUATION_ROW_PX = 4, 17  # the evaluation rows above the top stream's labels: one marker high each
MAX_LABEL_SHARE = 0.75  # of the plot's height the labels may take (a very short plot overlaps rather than vanishes)


WORD_JOINER = "\u2060"  # no line break here (Qt breaks after "?", "=", "-"… even inside a name)


def _whole(text: str) -> str:
    """Escaped text that never breaks inside (a name, a literal, one element, one mapping)."""
    joined = re.sub(r"([^\w ])", WORD_JOINER + r"\1" + WORD_JOINER, text)
    return escape_html(joined).replace(" ", "&nbsp;")


def _mapping_html(text: str) -> str:
    """One solution mapping's text: may break between ``?var=value`` pairs, never inside one."""
    return ", ".join(_whole(pair) for pair in text.split(", "))


def _element_html(element: Any) -> str:
    """One stream element's text: may break between its terms (a narrow column), never inside one."""
    terms = (shorten(element.subject), shorten(element.predicate), shorten(element.object), f"@ {seconds(element.t)}")
    return " ".join(_whole(term) for term in terms)


def _pieces(html: str) -> list[str]:
    """The unbreakable pieces of a readout's rich text (what a wrap may not split), as plain text."""
    plain = re.sub(r"<[^>]+>", " ", html.replace("&nbsp;", "\u00a0"))
    return [unescape(piece) for piece in re.split(r"[ \t\n]+", plain) if piece]  # not at U+00A0


def label_levels(starts: list[float], widths: list[float], gap: float) -> list[int]:
    """Stack level per label (in start order) so that labels on one level never overlap.

    ``starts``/``widths`` in one unit (e.g. seconds); a label goes on the lowest level whose
    previous label has ended ``gap`` before its start (two elements at 2 s: levels 0 and 1).
    """
    ends: list[float] = []
    levels = []
    for start, width in zip(starts, widths):
        level = next((i for i, end in enumerate(ends) if end + gap <= start - width / 2), len(ends))
        if level == len(ends):
            ends.append(0.0)
        ends[level] = start + width / 2
        levels.append(level)
    return levels


@dataclass(frozen=True)
class TeachingRows:
    """Where the timeline draws each stream's elements and each column's evaluations (data units)."""

    streams: tuple[float, ...]
    evaluations: tuple[float, ...]
    bottom: float
    top: float


def teaching_rows(label_levels_per_stream: list[int], columns: int, label_px: float, plot_px: float) -> TeachingRows:
    """Rows that leave each stream's stacked labels and each evaluation row their room in pixels:
    a stream's window bands (below its elements) start above the labels of the stream under it,
    the evaluation rows, one marker high each, above the top stream's labels (the labels were
    drawn over both, and squeezed rows over each other). Bands are placed in data units, labels
    and markers take pixels, so the span S solves S = units + pixels × S / plot height."""
    room_px = [(LABEL_ANCHOR - 1 + LABEL_STEP * levels) * label_px + LABEL_PAD_PX if levels else 0.0
               for levels in label_levels_per_stream]
    marker_px = EVALUATION_GAP_PX + EVALUATION_ROW_PX * columns
    units = BAND_BELOW + 0.1 + ROW_GAP * max(0, len(room_px) - 1)
    share = min(MAX_LABEL_SHARE, (sum(room_px) + marker_px) / max(plot_px, 1.0))
    per_px = units / (1.0 - share) / max(plot_px, 1.0)  # data units per pixel of the plot
    streams, y = [], 0.0
    for index, room in enumerate(room_px):
        streams.append(y)
        y += room * per_px + (ROW_GAP if index < len(room_px) - 1 else 0.0)
    evaluations = tuple(y + (EVALUATION_GAP_PX + EVALUATION_ROW_PX * (index + 0.5)) * per_px for index in range(columns))
    return TeachingRows(tuple(streams), evaluations, -BAND_BELOW - 0.1, y + marker_px * per_px)


class PolicyColumnWidget(QGroupBox):
    """One column: its SECRET parameters (editable) and what it does at the current instant."""

    def __init__(self, view: "TeachingView", index: int) -> None:
        super().__init__()
        self.view = view
        self.index = index
        self.setObjectName(f"policyColumn{index}")
        colour = COLUMN_COLOURS[index % len(COLUMN_COLOURS)]
        self.setStyleSheet(f"QGroupBox {{ border: 2px solid {colour}; border-radius: 4px; margin-top: 6px; }}")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        # two parameters a row: the readout keeps the height (no scrolling at 820 px); one a row when
        # four columns would not fit side by side (1024 px): see arrange()
        form = self.form = QGridLayout()
        form.setContentsMargins(0, 0, 0, 0)
        self.narrow = False
        self.preset = QComboBox()
        self.preset.addItems([*PRESETS, "custom"])
        self.border = QComboBox()
        self.border.addItems(["closed-open", "open-closed", "closed"])
        self.report = QComboBox()
        self.report.setEditable(True)
        self.report.addItems(REPORT_CHOICES)
        self.r2s = QComboBox()
        self.r2s.addItems(["rstream", "istream", "dstream"])
        self.tick = QComboBox()
        self.tick.addItems(["tuple", "time", "batch"])
        self.empty = QCheckBox("notify empty relations")
        self.empty.setText("notify empty")
        self.empty.setToolTip("notify empty relations (an empty evaluation is streamed)")
        self.labels = {name: QLabel(name) for name in ("Preset", "Border", "Tick", "Report", "R2S")}
        for combo, letters in ((self.preset, 6), (self.border, 9), (self.r2s, 6), (self.tick, 4), (self.report, 9)):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(letters)
        self.arrange(narrow=False)
        layout.addLayout(form)
        self.wide_width = self.minimumSizeHint().width()  # the room two parameters a row need
        self.readout = QLabel()
        self.readout.setObjectName(f"readout{index}")
        self.readout.setWordWrap(True)
        self.readout.setTextFormat(Qt.TextFormat.RichText)
        self.readout.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.readout.setMinimumWidth(READOUT_MIN_WIDTH)
        layout.addWidget(self.readout, 1)
        self.preset.activated.connect(self._on_preset)
        self.border.activated.connect(lambda _: self._override(border=self.border.currentText()))
        self.report.activated.connect(lambda _: self._override(report=self.report.currentText()))
        self.report.lineEdit().editingFinished.connect(lambda: self._override(report=self.report.currentText()))
        self.r2s.activated.connect(lambda _: self._override(r2s=self.r2s.currentText()))
        self.tick.activated.connect(lambda _: self._override(tick=self.tick.currentText()))
        self.empty.clicked.connect(lambda checked: self._override(empty_notification=bool(checked)))

    def arrange(self, narrow: bool) -> None:
        """Lay the parameters out two a row (``narrow`` False) or one a row, ``notify empty`` last:
        two a row need ~300 px, and four columns of that hid the fourth behind a scrollbar at 1024 px."""
        self.narrow = narrow
        form = self.form
        while form.count():
            form.takeAt(0)
        wide = ((0, 0, 3, "Preset", self.preset), (1, 0, 1, "Border", self.border), (1, 2, 1, "Tick", self.tick),
                (2, 0, 3, "Report", self.report), (3, 0, 1, "R2S", self.r2s))
        tall = ((0, 0, 1, "Preset", self.preset), (1, 0, 1, "Border", self.border), (2, 0, 1, "Tick", self.tick),
                (3, 0, 1, "Report", self.report), (4, 0, 1, "R2S", self.r2s))
        for row, column, span, label, widget in (tall if narrow else wide):
            form.addWidget(self.labels[label], row, column)
            form.addWidget(widget, row, column + 1, 1, span)
        if narrow:
            form.addWidget(self.empty, 5, 1)
        else:
            form.addWidget(self.empty, 3, 2, 1, 2)
        form.setColumnStretch(1, 1)
        form.setColumnStretch(3, 0 if narrow else 1)
        form.invalidate()

    @Slot(int)
    def _on_preset(self, _: int) -> None:
        self.view.model.set_preset(self.index, self.preset.currentText())

    def _override(self, **values: Any) -> None:
        try:
            self.view.model.override(self.index, **values)
        except UserError as error:
            self.view.show_message(f"{self.title()}: {error}")

    def show_column(self) -> None:
        model = self.view.model
        column = model.columns[self.index]
        semantics = column.semantics
        self.setTitle(column.label)
        for combo, value in ((self.preset, column.preset or "custom"), (self.border, semantics.border.value),
                             (self.r2s, semantics.r2s.value), (self.tick, semantics.tick.value)):
            blocked = combo.blockSignals(True)
            combo.setCurrentText(value)
            combo.blockSignals(blocked)
        blocked = self.report.blockSignals(True)
        self.report.setCurrentText(str(semantics.report))
        self.report.lineEdit().setCursorPosition(0)  # a narrow field shows the policy's start, not its end
        self.report.blockSignals(blocked)
        self.empty.setChecked(semantics.empty_notification)
        try:
            view = model.view(self.index)
            emissions = model.answer(self.index).emissions
        except UserError as error:
            self.readout.setText(f"<span style='color:#c62828'>{escape_html(str(error))}</span>")
            return
        parts = []
        note = model.t0_note(self.index)
        if note:
            parts.append(f"<span style='color:#ef6c00'>{escape_html(note)}</span>")
        for state in view.windows:
            label = "Scope" if len(view.windows) == 1 else f"Scope {_whole(state.name)}"
            scope = _whole(format_scope(state.scope)) if state.scope else "— (no active window)"
            content = "<br>".join(_element_html(e) for e in state.content) or "<i>empty</i>"
            parts.append(f"<b>{label}</b> {scope} holds:<br>{content}")
        if view.reports:
            for relation in view.returned:
                rows = "<br>".join(_mapping_html(row) for row in format_bag(relation)) or "<i>empty relation</i>"
                parts.append(f"<b>Reports</b>: <span style='color:#2e7d32'>✔ evaluates now</span>; "
                             f"<b>the query returns</b>:<br>{rows}")
        else:
            parts.append("<b>Reports</b>: <span style='color:#888'>— no evaluation now</span>")
        if view.emitted:
            for emission in view.emitted:
                rows = ("<br>".join(_mapping_html(row) for row in format_bag(emission.bindings))
                        or "<i>∅ (empty relation notified)</i>")
                parts.append(f"<b>R2S emits</b> ({semantics.r2s.value}, '{emission.operation}'):<br>{rows}")
        elif view.reports:
            parts.append(f"<b>R2S emits</b>: <span style='color:#888'>nothing ({semantics.r2s.value}: empty output not notified)</span>")
        else:
            parts.append("<b>R2S emits</b>: <span style='color:#888'>—</span>")
        history = [f"{_whole(seconds(e.time))}&nbsp;{escape_html(e.operation)} "
                   + (", ".join(_mapping_html(m) for m in format_bag(e.bindings)) or "∅")
                   for e in emissions if e.time <= model.time]
        parts.append("<b>Output so far</b>:<br>" + ("<br>".join(history) or "<i>nothing yet</i>"))
        self.readout.setText("<br>".join(parts))
        # as wide as its widest unbreakable piece, so a name never breaks (the panels scroll instead)
        widest = max((self.readout.fontMetrics().horizontalAdvance(piece)
                      for piece in _pieces(self.readout.text())), default=0)
        self.readout.setMinimumWidth(max(READOUT_MIN_WIDTH, int(widest * 1.1) + 8))


class TeachingTimeline(pg.PlotWidget):
    """Elements as points, the windows of one column as bands, the instant, evaluation markers."""

    def __init__(self, view: "TeachingView") -> None:
        super().__init__(background="w")
        self.view = view
        self.setObjectName("teachingTimeline")
        self.setMinimumHeight(220)
        self.setMouseEnabled(x=True, y=False)
        self.showGrid(x=True, y=False, alpha=0.2)
        self.setLabel("bottom", "application time", units="s")
        self.getPlotItem().hideButtons()
        self.windows = pg.BarGraphItem(x0=[], width=[], y0=[], height=[], brush=(21, 101, 192, 40), pen=(21, 101, 192, 140))
        self.active = pg.BarGraphItem(x0=[], width=[], y0=[], height=[], brush=(255, 193, 7, 110), pen=(230, 150, 0))
        self.points = pg.ScatterPlotItem(size=11, brush=pg.mkBrush("#333333"), pen=pg.mkPen("w"))
        self.evaluations = pg.ScatterPlotItem(size=13, symbol="t1")
        self.instant = pg.InfiniteLine(angle=90, movable=True, pen=pg.mkPen("#d81b60", width=2),
                                       label="t", labelOpts={"position": 0.95, "color": "#d81b60"})
        for item in (self.windows, self.active, self.points, self.evaluations, self.instant):
            self.addItem(item)
        self._labels: list[pg.TextItem] = []
        self._laid_out_for = 0.0
        self._label_probe = pg.TextItem("Xg")  # measures a label's height (never shown)
        self.instant.sigPositionChangeFinished.connect(self._on_instant_dragged)
        self.getPlotItem().getViewBox().sigResized.connect(self._on_resized)

    @Slot(object)
    def _on_instant_dragged(self, line: Any) -> None:
        step = self.view.model.example.step
        time = int(round(line.value() * 1000 / step) * step)
        self.view.set_time(max(0, min(self.view.model.example.end, time)))

    def show_model(self, column_index: int) -> None:
        model = self.view.model
        example = model.example
        for label in self._labels:
            self.removeItem(label)
        self._labels = []
        ticks = []
        xs, ys = [], []
        streams = list(example.streams)
        # seconds per pixel at the shown range: labels that would touch go on stacked levels
        per_px = (example.end / 1000 + 1.0) / max(200, self.getPlotItem().getViewBox().width() or self.width() - 120)
        metrics = self.fontMetrics()
        placed = []
        for stream in streams:
            elements = sorted(example.streams[stream], key=lambda e: e.t)
            texts = [f"{shorten(element.subject)} {shorten(element.object)}" for element in elements]
            levels = label_levels([e.t / 1000 for e in elements], [metrics.horizontalAdvance(t) * per_px for t in texts],
                                  LABEL_GAP_PX * per_px)
            placed.append((elements, texts, levels))
        plot_px = self.getPlotItem().getViewBox().height()
        self._laid_out_for = plot_px
        label_px = self._label_probe.textItem.boundingRect().height()  # the text and its document margins
        rows = teaching_rows([1 + max(levels, default=-1) for _, _, levels in placed], len(model.columns),
                             label_px, plot_px or max(100, self.height() - 60))
        for stream, (elements, texts, levels), y in zip(streams, placed, rows.streams):
            ticks.append((y, shorten(f"<{stream}>")))
            for element, text, level in zip(elements, texts, levels):
                xs.append(element.t / 1000)
                ys.append(y)
                label = pg.TextItem(text, color="#333", anchor=(0.5, LABEL_ANCHOR + LABEL_STEP * level))
                label.setPos(element.t / 1000, y)
                self.addItem(label)
                self._labels.append(label)
        self.points.setData(xs, ys)
        # windows of the chosen column: each over its stream row, stacked by index
        column = model.columns[column_index]
        from rsp_workbench.oracle.reference import window_specs

        specs = window_specs(model.query, column.semantics, model.t0)
        x0: list[float] = []
        widths: list[float] = []
        y0: list[float] = []
        heights: list[float] = []
        ax0: list[float] = []
        aw: list[float] = []
        ay0: list[float] = []
        ah: list[float] = []
        view = model.view(column_index)
        active_scopes = {(state.scope.open, state.scope.close) for state in view.windows if state.scope}
        for declaration, spec in zip(model.query.windows, specs):
            row = rows.streams[streams.index(declaration.stream)]
            lanes = max(1, -(-spec.size // spec.slide))
            for window in spec.closing_within(0, example.end + spec.size):
                if window.open > example.end:
                    continue
                lane = window.index % lanes
                height = BAND_HEIGHT / lanes
                bottom = row - BAND_BELOW + lane * height
                target = (ax0, aw, ay0, ah) if (window.open, window.close) in active_scopes else (x0, widths, y0, heights)
                target[0].append(window.open / 1000)
                target[1].append((window.close - window.open) / 1000)
                target[2].append(bottom)
                target[3].append(height * 0.85)
        self.windows.setOpts(x0=x0, width=widths, y0=y0, height=heights)
        self.active.setOpts(x0=ax0, width=aw, y0=ay0, height=ah)
        # evaluation markers: one row per column, above the streams
        ex, ey, brushes = [], [], []
        for index, y in enumerate(rows.evaluations):
            ticks.append((y, f"ET {model.columns[index].label}"))
            try:
                evaluations = model.answer(index).evaluations
            except UserError:
                continue
            for evaluation in evaluations:
                ex.append(evaluation.time / 1000)
                ey.append(y)
                brushes.append(pg.mkBrush(COLUMN_COLOURS[index % len(COLUMN_COLOURS)]))
        self.evaluations.setData(ex, ey, brush=brushes)
        self.getPlotItem().getAxis("left").setTicks([ticks])
        self.instant.setValue(model.time / 1000)
        self.setXRange(-0.5, example.end / 1000 + 0.5, padding=0)
        self.setYRange(rows.bottom, rows.top, padding=0)

    @Slot()
    def _on_resized(self) -> None:
        """The labels' room is measured in pixels: lay the rows out again for another plot height."""
        if self.view._shown and abs(self.getPlotItem().getViewBox().height() - self._laid_out_for) > 1:
            try:
                self.show_model(max(0, self.view.timeline_column.currentIndex()))
            except UserError:
                pass


class TeachingView(QWidget):
    """The teaching tab."""

    def __init__(self, model: TeachingModel | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("teaching")
        self.model = model or TeachingModel()
        self._shown = False

        top = QHBoxLayout()
        top.addWidget(QLabel("<b>Example</b>"))
        self.example_buttons: dict[str, QPushButton] = {}
        for key, factory in EXAMPLES.items():
            button = QPushButton(factory().title)
            button.setCheckable(True)
            button.setObjectName(f"example_{key}")
            button.clicked.connect(lambda _=False, k=key: self.model.set_example(k))
            self.example_buttons[key] = button
            top.addWidget(button)
        top.addSpacing(20)
        self.t0_box = QHBoxLayout()
        top.addLayout(self.t0_box)
        self.t0_spins: list[QDoubleSpinBox] = []
        top.addStretch(1)
        top.addWidget(QLabel("Windows shown for"))
        self.timeline_column = QComboBox()
        self.timeline_column.activated.connect(lambda _: self.refresh())
        top.addWidget(self.timeline_column)

        time_row = QHBoxLayout()
        self.previous_button = QPushButton("◀")
        self.previous_button.setToolTip("previous element, border or evaluation")
        self.previous_button.clicked.connect(lambda: self.step(-1))
        self.next_button = QPushButton("▶")
        self.next_button.setToolTip("next element, border or evaluation")
        self.next_button.clicked.connect(lambda: self.step(1))
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("timeSlider")
        self.slider.valueChanged.connect(self._on_slider)
        self.time_label = QLabel()
        self.time_label.setMinimumWidth(90)
        time_row.addWidget(QLabel("<b>Time</b>"))
        time_row.addWidget(self.previous_button)
        time_row.addWidget(self.slider, 2)
        time_row.addWidget(self.next_button)
        time_row.addWidget(self.time_label)
        # where ◀ ▶ stopped and why, beside the time (a line of its own pushed the panels into a scrollbar);
        # it takes the room the row has, elided, all of it in the tooltip
        self.step_note = QLabel()
        self.step_note.setObjectName("stepNote")
        self.step_note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        time_row.addWidget(self.step_note, 1)

        self.query_view = CodeEditor(language="query")
        self.query_view.setReadOnly(True)
        self.query_view.setLineWrapMode(CodeEditor.LineWrapMode.WidgetWidth)
        self.query_view.setMaximumHeight(150)
        self.description = QLabel()
        self.description.setWordWrap(True)
        self.stream_label = QLabel()
        self.stream_label.setTextFormat(Qt.TextFormat.RichText)
        self.stream_label.setAlignment(Qt.AlignmentFlag.AlignTop)
        left_inner = QWidget()
        left_layout = QVBoxLayout(left_inner)
        left_layout.setContentsMargins(0, 0, 4, 0)
        left_layout.addWidget(self.description)
        left_layout.addWidget(self.query_view)
        left_layout.addWidget(self.stream_label, 1)
        left = QScrollArea()  # text, query and stream scroll together when the panels below take the height
        left.setWidgetResizable(True)
        left.setFrameShape(QScrollArea.Shape.NoFrame)
        left.setWidget(left_inner)
        self.timeline = TeachingTimeline(self)
        upper = QSplitter(Qt.Orientation.Horizontal)
        upper.addWidget(left)
        upper.addWidget(self.timeline)
        upper.setStretchFactor(0, 2)
        upper.setStretchFactor(1, 3)

        columns_widget = QWidget()
        self.columns_layout = QHBoxLayout(columns_widget)
        self.columns_layout.setContentsMargins(0, 0, 0, 0)
        self.column_widgets = [PolicyColumnWidget(self, i) for i in range(len(self.model.columns))]
        for widget in self.column_widgets:
            self.columns_layout.addWidget(widget, 1)
        scroll = self.columns_scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(columns_widget)
        scroll.installEventFilter(self)  # its width decides how the columns lay out their parameters
        self.message = QLabel()
        self.message.setStyleSheet("color: #c62828")

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(upper)
        splitter.addWidget(scroll)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([230, 500])  # the panels first: at 1280×820 they show without scrolling
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(time_row)
        layout.addWidget(self.message)
        layout.addWidget(splitter, 1)
        self.model.subscribe(self._on_model_changed)

    # ------------------------------------------------------------------ model → view
    def showEvent(self, event: Any) -> None:  # noqa: N802
        """Compute lazily: the first evaluation imports rdflib (keeps start-up fast)."""
        super().showEvent(event)
        if not self._shown:
            self._shown = True
            self.refresh()

    def eventFilter(self, watched: Any, event: Any) -> bool:  # noqa: N802
        if watched is self.columns_scroll and event.type() == QEvent.Type.Resize:
            self.fit_columns()
        return super().eventFilter(watched, event)

    def fit_columns(self) -> None:
        """One parameter a row in every column when the columns, two a row, would not fit side by side."""
        scroll = self.columns_scroll
        available = scroll.width() - 2 * scroll.frameWidth()
        need = (sum(w.wide_width for w in self.column_widgets)
                + self.columns_layout.spacing() * (len(self.column_widgets) - 1))
        for widget in self.column_widgets:
            if widget.narrow != (need > available):
                widget.arrange(need > available)

    def _on_model_changed(self) -> None:
        if self._shown:
            self.refresh()

    def show_message(self, text: str) -> None:
        self.message.setText(text)

    def refresh(self) -> None:
        model = self.model
        example = model.example
        self._shown = True
        for key, button in self.example_buttons.items():
            button.setChecked(key == example.key)
        self._build_t0_spins()
        blocked = self.slider.blockSignals(True)
        self.slider.setRange(0, example.end // example.step)
        self.slider.setValue(model.time // example.step)
        self.slider.blockSignals(blocked)
        self.time_label.setText(f"t = {seconds(model.time)}")
        self.description.setText(example.description)
        if self.query_view.toPlainText() != example.query_text:
            self.query_view.setPlainText(example.query_text)
        rows = []
        for stream, elements in example.streams.items():
            rows.append(f"<b>{escape_html(shorten(f'<{stream}>'))}</b>")
            for element in elements:
                style = "" if element.t <= model.time else " style='color:#aaa'"
                rows.append(f"<span{style}>{escape_html(format_element(element))}</span>")
        self.stream_label.setText("<br>".join(rows))
        chosen = self.timeline_column.currentIndex()
        blocked = self.timeline_column.blockSignals(True)
        self.timeline_column.clear()
        self.timeline_column.addItems([c.label for c in model.columns])
        self.timeline_column.setCurrentIndex(max(0, chosen))
        self.timeline_column.blockSignals(blocked)
        self.message.setText("")
        for widget in self.column_widgets:
            widget.show_column()
        try:
            self.timeline.show_model(max(0, self.timeline_column.currentIndex()))
        except UserError as error:
            self.show_message(str(error))

    def _build_t0_spins(self) -> None:
        windows = self.model.query.windows
        if len(self.t0_spins) != len(windows):
            for spin in self.t0_spins:
                spin.deleteLater()
            while self.t0_box.count():
                item = self.t0_box.takeAt(0)
                if item.widget():
                    item.widget().hide()  # else it stays drawn over the new fields until deleted
                    item.widget().deleteLater()
            self.t0_spins = []
            for index, window in enumerate(windows):
                name = "" if window.generated_name else f" {shorten(f'<{window.name}>')}"
                self.t0_box.addWidget(QLabel(f"<b>t0{name}</b>"))
                spin = QDoubleSpinBox()  # seconds, like the axis and the panels
                spin.setObjectName(f"t0_{index}")
                spin.setDecimals(1)
                spin.setRange(0, 3600)
                spin.setSingleStep(1)
                spin.setSuffix(" s")
                spin.setKeyboardTracking(False)
                spin.valueChanged.connect(lambda value, i=index: self.model.set_window_t0(i, round(value * 1000)))
                self.t0_box.addWidget(spin)
                self.t0_spins.append(spin)
        for spin, value in zip(self.t0_spins, self.model.t0):
            blocked = spin.blockSignals(True)
            spin.setValue(value / 1000)
            spin.blockSignals(blocked)

    # ------------------------------------------------------------------ view → model
    @Slot(int)
    def _on_slider(self, value: int) -> None:
        self.set_time(value * self.model.example.step)

    def set_time(self, time: int) -> None:
        self.step_note.clear()
        self.step_note.setToolTip("")
        self.model.set_time(time)

    def step(self, direction: int) -> None:
        """To the next (previous) instant where something happens, and say what."""
        instants = self.model.interesting_instants()
        now = self.model.time
        found = [t for t in instants if t > now][:1] if direction > 0 else [t for t in instants if t < now][-1:]
        if not found:
            self.step_note.setText("the end of the stream" if direction > 0 else "the start of the stream")
            return
        self.set_time(found[0])
        reasons = self.model.instant_reasons(found[0])
        note = f"{'▶' if direction > 0 else '◀'} {'; '.join(reasons) or 'the end of the example'}"
        self.step_note.setToolTip(note)
        width = max(60, self.step_note.width())
        self.step_note.setText(self.step_note.fontMetrics().elidedText(note, Qt.TextElideMode.ElideRight, width))

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        self.model.unsubscribe(self._on_model_changed)
        super().closeEvent(event)
