"""The stream the engines read: ``stream:`` (one, every window reads it) or ``streams:`` (several,
by IRI), each generated (``generator`` + ``params``) or recorded (``file``, ``format``,
``interval``), and its ``flow`` shape with a rate preview.

The same form edits the single stream or the selected one of ``streams:``; its field paths
follow :meth:`StreamSection.stream_path`.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from PySide6.QtCore import Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QButtonGroup,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.gui.qt import pg  # PySide6 first, then pyqtgraph; bool refcount guard
from rsp_workbench.errors import UserError
from rsp_workbench.experiment.model import STREAM_FILE_FORMATS
from rsp_workbench.gui.designer.fields import DesignerSection, html
from rsp_workbench.gui.designer.model import (
    MISSING,
    NEW_GENERATED_STREAM,
    NEW_RECORDED_STREAM,
    DesignerModel,
    FieldPath,
    scalar_text,
    stream_summary,
)


class StreamSection(DesignerSection):
    """One stream or several by IRI; generator parameters or a recorded file; the flow shape."""

    def __init__(self, model: DesignerModel, parent: QWidget | None = None) -> None:
        super().__init__(model, parent)
        self.stream_iri: str | None = None  # the stream the form edits in a `streams:` document
        self._built: dict[str, Any] = {}
        layout = QVBoxLayout(self)
        mode = QVBoxLayout()  # one above the other: side by side they widen the form
        self.one_stream_radio = QRadioButton("One stream (every window reads it)")
        self.one_stream_radio.setObjectName("oneStream")
        self.several_streams_radio = QRadioButton("Several streams, by IRI (each window reads the stream it names)")
        self.several_streams_radio.setObjectName("severalStreams")
        self.one_stream_radio.clicked.connect(self._use_one_stream)
        self.several_streams_radio.clicked.connect(self._use_several_streams)
        self._stream_mode_group = QButtonGroup(self)  # radios of one parent are exclusive across pairs otherwise
        for radio in (self.one_stream_radio, self.several_streams_radio):
            self._stream_mode_group.addButton(radio)
            mode.addWidget(radio)
        layout.addLayout(mode)

        self.streams_box = self.marker(QGroupBox("Streams (stream IRI → stream)"), lambda: ("streams",), "streamsBox")
        streams_layout = QHBoxLayout(self.streams_box)
        self.stream_list = QListWidget()
        self.stream_list.setObjectName("streamList")
        self.stream_list.setMaximumHeight(110)
        self.stream_list.currentRowChanged.connect(self._select_stream)
        streams_layout.addWidget(self.stream_list, 3)
        side = QVBoxLayout()
        iri_form = QFormLayout()
        self.stream_iri_edit = QLineEdit()
        self.stream_iri_edit.setObjectName("streamIri")
        self.stream_iri_edit.setPlaceholderText("absolute IRI, e.g. http://example.org/S_nearby")
        self.stream_iri_edit.setToolTip("the IRI queries name in FROM STREAM <…> / ON <…>; renaming keeps the sizes' overrides")
        self.stream_iri_edit.editingFinished.connect(self._rename_stream)
        iri_form.addRow("IRI", self.stream_iri_edit)
        side.addLayout(iri_form)
        self.stream_readers_label = QLabel()
        self.stream_readers_label.setObjectName("streamReaders")
        self.stream_readers_label.setWordWrap(True)
        side.addWidget(self.stream_readers_label)
        buttons = QHBoxLayout()
        self.add_stream_button, self.remove_stream_button = QPushButton("Add stream"), QPushButton("Remove stream")
        self.add_stream_button.clicked.connect(self._add_stream)
        self.remove_stream_button.clicked.connect(self._remove_stream)
        buttons.addWidget(self.add_stream_button)
        buttons.addWidget(self.remove_stream_button)
        buttons.addStretch(1)
        side.addLayout(buttons)
        side.addStretch(1)
        streams_layout.addLayout(side, 4)
        layout.addWidget(self.streams_box)

        source = QHBoxLayout()
        self.stream_form_label = QLabel()
        self.stream_form_label.setObjectName("streamFormLabel")
        source.addWidget(self.stream_form_label)
        self.generator_radio = QRadioButton("Generator")
        self.file_radio = QRadioButton("Recorded file")
        self.generator_radio.clicked.connect(lambda: self._switch_stream_source("generator"))
        self.file_radio.clicked.connect(lambda: self._switch_stream_source("file"))
        self._stream_source_group = QButtonGroup(self)
        for radio in (self.generator_radio, self.file_radio):
            self._stream_source_group.addButton(radio)
            source.addWidget(radio)
        source.addStretch(1)
        layout.addLayout(source)

        from rsp_workbench.generators import GENERATOR_MODULES

        st = lambda *keys: (lambda: (*self.stream_path(), *keys))  # noqa: E731
        self.generator_box = QGroupBox("Generator")
        generator_form = QFormLayout(self.generator_box)
        self.generator_combo = self.combo(st("generator"), tuple(GENERATOR_MODULES))
        generator_form.addRow("Generator", self.generator_combo)
        self.generator_params = self.marker(QWidget(), st("params"), "generatorParams")
        self.generator_params_form = QFormLayout(self.generator_params)
        self.generator_params_form.setContentsMargins(0, 0, 0, 0)
        generator_form.addRow(self.generator_params)
        layout.addWidget(self.generator_box)

        self.file_box = QGroupBox("Recorded stream")
        file_form = QFormLayout(self.file_box)
        self.stream_file_edit = self.line(st("file"), text=True, placeholder="path relative to the experiment file")
        file_form.addRow("File", self.with_browse(self.stream_file_edit, st("file")))
        file_form.addRow("Format", self.combo(st("format"), STREAM_FILE_FORMATS, unset=lambda: "(from the extension)"))
        file_form.addRow("Interval", self.line(st("interval"), placeholder="1s (csrbench-dir only)"))
        layout.addWidget(self.file_box)

        from rsp_workbench.generators.flows import FLOW_SHAPES

        flow_box = self.marker(QGroupBox("Flow shape (triples per stimulus over time)"), st("flow"), "flowBox")
        self.flow_box = flow_box
        flow_layout = QHBoxLayout(flow_box)  # settings beside the preview: the page stays short
        settings = QVBoxLayout()
        flow_form = QFormLayout()
        self.flow_combo = self.combo(st("flow", "shape"), tuple(FLOW_SHAPES), unset=lambda: "(none: as generated)",
                                      on_commit=self._set_flow_shape)
        self.flow_combo.setObjectName("flowShape")
        flow_form.addRow("Shape", self.flow_combo)
        settings.addLayout(flow_form)
        self.flow_params = QWidget()
        self.flow_params_form = QFormLayout(self.flow_params)
        self.flow_params_form.setContentsMargins(0, 0, 0, 0)
        settings.addWidget(self.flow_params)
        settings.addStretch(1)
        flow_layout.addLayout(settings, 2)
        self.flow_plot = pg.PlotWidget(background="w")
        self.flow_plot.setObjectName("flowPreview")
        self.flow_plot.setMinimumSize(260, 170)
        self.flow_plot.setMaximumHeight(200)
        self.flow_plot.setLabel("bottom", "application time", units="s")
        self.flow_plot.setLabel("left", "triples/s")
        self.flow_plot.setMouseEnabled(x=False, y=False)
        self.flow_curve = self.flow_plot.plot([], [], stepMode="center", pen=pg.mkPen("#1565c0", width=2),
                                              fillLevel=0, brush=(21, 101, 192, 60))
        self.flow_message = QLabel()
        self.flow_message.setStyleSheet("color: #666")
        self.flow_message.setWordWrap(True)
        preview = QVBoxLayout()
        preview.addWidget(self.flow_plot)
        preview.addWidget(self.flow_message)
        preview.addStretch(1)
        flow_layout.addLayout(preview, 3)
        layout.addWidget(flow_box)
        layout.addStretch(1)

    def before_show(self) -> None:
        self._show_stream_choice()
        model = self.model
        stream = model.get(self.stream_path(), {})
        uses_file = isinstance(stream, dict) and "file" in stream and "generator" not in stream
        self.generator_radio.setChecked(not uses_file)
        self.file_radio.setChecked(uses_file)
        self.generator_box.setVisible(not uses_file)
        self.file_box.setVisible(uses_file)
        self._rebuild_generator_params(model.get((*self.stream_path(), "generator")))
        self._rebuild_flow_params(model.get((*self.stream_path(), "flow", "shape")))

    def after_show(self) -> None:
        self._update_flow_preview()

    def show_validation(self, validation: Any) -> None:
        """An error in a stream the form does not show marks that stream in the list."""
        if validation.ok or validation.error is None:
            return
        field = validation.error.field or ""
        for row in range(self.stream_list.count()):
            item = self.stream_list.item(row)
            if field == f"streams.{item.text()}" or field.startswith(f"streams.{item.text()}."):
                item.setForeground(QColor("#c62828"))
                item.setToolTip(validation.error.message)

    def forget_forms(self) -> None:
        """A new document: rebuild the dynamic forms and select its first stream."""
        self.stream_iri = None
        self._built.clear()


    def _rebuild_generator_params(self, generator: Any) -> None:
        if self._built.get("generator") == generator:
            return
        self._built["generator"] = generator
        self.clear_form(self.generator_params_form, "generator")
        from rsp_workbench.generators import generator_spec

        try:
            spec = generator_spec(str(generator))
        except UserError:
            self.generator_params_form.addRow(QLabel("choose a generator to see its parameters"))
            return
        doc = QLabel(f"<i>{html(spec.doc.splitlines()[0]) if spec.doc else ''}</i>")
        doc.setWordWrap(True)
        self.generator_params_form.addRow(doc)
        for param in spec.params:
            path = (lambda name: (lambda: (*self.stream_path(), "params", name)))(param.name)
            tip = f"{param.doc} ({param.kind}{', required' if param.required else ''})"
            if param.kind == "choice":
                widget: QWidget = self.combo(path, param.choices, unset=functools.partial(_default_hint, param.default), group="generator")
            elif param.kind == "bool":
                widget = self.check(path, "", default=bool(param.default), group="generator")
                self.generator_params_form.addRow(f"{param.name} ({param.kind})", _with_note(widget, param.doc))
                widget.setObjectName(f"param_{param.name}")
                widget.setToolTip(tip)
                continue
            else:
                if param.name == "seed":
                    default = "the run's seed (from the experiment seed)"
                else:
                    default = "" if param.default is None else f"default: {scalar_text(param.default)}"
                widget = self.line(path, placeholder=default or ("required" if param.required else ""),
                                    tooltip=tip, group="generator")
            widget.setObjectName(f"param_{param.name}")
            widget.setToolTip(tip)
            self.generator_params_form.addRow(f"{param.name} ({param.kind})", widget)

    def _rebuild_flow_params(self, shape: Any) -> None:
        if self._built.get("flow") == shape:
            return
        self._built["flow"] = shape
        self.clear_form(self.flow_params_form, "flow")
        from rsp_workbench.generators.flows import FLOW_SHAPES

        for param in FLOW_SHAPES.get(str(shape), ()):
            path = (lambda name: (lambda: (*self.stream_path(), "flow", name)))(param.name)
            if param.name == "seed":
                default = "the run's seed (from the experiment seed)"
            else:
                default = "" if param.default is None else f"default: {scalar_text(param.default)}"
            edit = self.line(path, placeholder=default or ("required" if param.required else ""),
                              tooltip=param.doc, group="flow")
            edit.setObjectName(f"flow_{param.name}")
            self.flow_params_form.addRow(f"{param.name} ({param.kind})", edit)


    def _update_flow_preview(self) -> None:
        flow = self.model.get((*self.stream_path(), "flow"))
        if not isinstance(flow, dict) or "shape" not in flow:
            self.flow_curve.setData([], [])
            self.flow_message.setText("No flow shape: stimuli are sent as the stream is timestamped.")
            return
        from rsp_workbench.core.time import parse_duration
        from rsp_workbench.generators.flows import rate_preview

        variables = self.model.get(("variables",), {}) or {}
        settings = {k: _resolve_template(v, variables) for k, v in flow.items()}
        duration_raw = _resolve_template(self.model.get((*self.stream_path(), "params", "duration"), "10s"), variables)
        try:
            duration = parse_duration(duration_raw)
            step = settings.get("period", settings.get("mean", 100))
            bins = max(1, min(100, duration // max(1, parse_duration(step))))
            points = rate_preview(settings, duration, bins=bins)
        except (UserError, ValueError, TypeError) as error:
            self.flow_curve.setData([], [])
            self.flow_message.setText(f"preview unavailable: {error}")
            return
        xs = [t / 1000 for t, _ in points] + [(points[-1][0] + (points[1][0] - points[0][0] if len(points) > 1 else 1)) / 1000]
        self.flow_curve.setData(xs, [rate for _, rate in points])
        self.flow_message.setText(f"rate over the first {duration / 1000:g} s")


    def _set_flow_shape(self, shape: Any) -> None:
        """A new shape keeps only the settings the new shape has (one undo step)."""
        from rsp_workbench.generators.flows import FLOW_SHAPES

        path = (*self.stream_path(), "flow")
        flow = self.model.get(path)
        if shape is MISSING:
            self.commit(path, MISSING)
            return
        names = {param.name for param in FLOW_SHAPES.get(str(shape), ())}
        kept = {k: v for k, v in flow.items() if k in names} if isinstance(flow, dict) else {}
        self.commit(path, {"shape": shape, **kept})

    def _switch_stream_source(self, kind: str) -> None:
        path = self.stream_path()
        stream = dict(self.model.get(path, {}) or {})
        flow = stream.get("flow")
        if kind == "generator" and "generator" not in stream:
            new: dict[str, Any] = copy.deepcopy(NEW_GENERATED_STREAM)
        elif kind == "file" and "file" not in stream:
            new = copy.deepcopy(NEW_RECORDED_STREAM)
        else:
            return
        if flow is not None:
            new["flow"] = flow
        self.commit(path, new)

    # ------------------------------------------------------------------ several streams
    def stream_path(self) -> FieldPath:
        """Where the stream form reads and writes: ``stream`` or ``streams.<selected IRI>``."""
        return ("streams", self.stream_iri or "") if self.model.several_streams else ("stream",)

    def _show_stream_choice(self) -> None:
        """The one/several switch, the IRI list (keeping the selection) and who reads the selected stream."""
        model = self.model
        several = model.several_streams
        iris = model.stream_iris() if several else []
        if self.stream_iri not in iris:
            self.stream_iri = iris[0] if iris else None
        self.one_stream_radio.setChecked(not several)
        self.several_streams_radio.setChecked(several)
        self.one_stream_radio.setEnabled(not several or len(iris) == 1)
        self.one_stream_radio.setToolTip("" if self.one_stream_radio.isEnabled()
                                         else "remove streams until one is left to use a single stream")
        self.streams_box.setVisible(several)
        blocked = self.stream_list.blockSignals(True)
        if [self.stream_list.item(i).text() for i in range(self.stream_list.count())] != iris:
            self.stream_list.clear()
            self.stream_list.addItems(iris)
        self.stream_list.setCurrentRow(iris.index(self.stream_iri) if self.stream_iri in iris else -1)
        self.stream_list.blockSignals(blocked)
        for row in range(self.stream_list.count()):
            item = self.stream_list.item(row)
            item.setForeground(self.palette().text().color())
            item.setToolTip(stream_summary(model.get(("streams", item.text()))))
        self.stream_iri_edit.setText(self.stream_iri or "")
        self.stream_form_label.setVisible(several)
        self.stream_form_label.setText(f"<b>&lt;{html(self.stream_iri or '')}&gt;</b> comes from:")
        self.remove_stream_button.setEnabled(len(iris) > 1)
        readers = [f"{query_id} (window {number + 1})" for query_id, number, iri in model.window_iris() if iri == self.stream_iri]
        self.stream_readers_label.setText(
            f"Read by: {', '.join(readers)}" if readers
            else "<span style='color:#8a4b00'>No query window reads this stream (allowed: another query may).</span>")

    @Slot()
    def _use_several_streams(self) -> None:
        self.request_flush()
        if self.model.use_several_streams():
            self.stream_iri = self.model.stream_iris()[0]
            self._show_selection()

    @Slot()
    def _use_one_stream(self) -> None:
        self.request_flush()
        try:
            self.model.use_one_stream()
        except UserError as error:
            self.statusMessage.emit(error.message)
            self._show_selection()

    @Slot(int)
    def _select_stream(self, row: int) -> None:
        iris = self.model.stream_iris()
        if 0 <= row < len(iris) and iris[row] != self.stream_iri:
            self.request_flush()
            self.stream_iri = iris[row]
            self._show_selection()

    @Slot()
    def _add_stream(self) -> None:
        self.request_flush()
        try:
            iri = self.model.add_stream()
        except UserError as error:
            self.statusMessage.emit(error.message)
            return
        self.stream_iri = iri
        self._show_selection()

    @Slot()
    def _remove_stream(self) -> None:
        if self.stream_iri is None:
            return
        try:
            self.model.remove_stream(self.stream_iri)
        except UserError as error:
            self.statusMessage.emit(error.message)

    @Slot()
    def _rename_stream(self) -> None:
        old, text = self.stream_iri, self.stream_iri_edit.text()
        if self._refreshing or old is None or text.strip() == old:
            return
        try:
            self.stream_iri = self.model.rename_stream(old, text)
        except UserError as error:
            self.statusMessage.emit(error.message)
            self.stream_iri_edit.setText(old)
            return
        self._show_selection()


    def _show_selection(self) -> None:
        self.refresh()
        self.selectionChanged.emit()


def _default_hint(default: Any) -> str:
    """What an unset generator parameter's combo box shows."""
    return f"(default: {default})"


def _resolve_template(value: Any, variables: Any) -> Any:
    """``${NAME}`` exactly → the variable's value (for previews only)."""
    if isinstance(value, str) and value.startswith("${") and value.endswith("}") and isinstance(variables, dict):
        return variables.get(value[2:-1], value)
    return value


def _with_note(box: QWidget, note: str) -> QWidget:
    """A check box followed by its explanation, wrapped (a long check box text widens the form)."""
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(box)
    label = QLabel(note)
    label.setWordWrap(True)
    layout.addWidget(label, 1)
    return row
