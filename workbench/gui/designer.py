"""The experiment designer: forms for every field, a YAML pane in sync both ways, undo/redo.

A thin skin over :class:`workbench.gui.designer_model.DesignerModel`: every widget reads
its value from the model's raw mapping and writes edits back as commands; the model
validates with the CLI's loader and the view marks the widget of the failing field path
(``engines[0].semantics.report``) with the loader's message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QMessageBox,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from workbench.gui.qt import pg  # PySide6 first, then pyqtgraph; bool refcount guard
from workbench.core.semantics import PRESETS, EngineSemantics
from workbench.errors import UserError
from workbench.experiment.model import (
    ENGINE_TYPES,
    FAULTS,
    KPI_NAMES,
    ORACLE_MATCHES,
    QUERY_SYNTAXES,
    STAND_MODES,
    STATIC_FORMATS,
    STREAM_FILE_FORMATS,
)
from workbench.gui.designer_model import (
    MISSING,
    Change,
    DesignerModel,
    FieldPath,
    parse_scalar,
    path_text,
    scalar_text,
)
from workbench.gui.highlight import CodeEditor

INVALID_STYLE = "border: 2px solid #d32f2f; background: #fff3f3;"
ENGINE_PARAMETERS = {
    "naive": ("tbox",),
    "incremental": ("tbox",),
    "eviction": ("strategy", "cache_size"),
    "external": ("command", "cwd", "env", "startup_timeout"),
    "secret": (),
}
SEMANTICS_CHOICES = {
    "border": ("closed-open", "open-closed", "closed"),
    "tick": ("tuple", "time", "batch"),
    "r2s": ("rstream", "istream", "dstream"),
    "time_unit": ("ms", "100ms", "s", "m", "h"),
    "active_window": ("earliest", "latest"),
    "empty_notification": (True, False),
    "leading_partial": (True, False),
}
STRATEGY_BOXES = (("CC", "content-change"), ("WC", "window-close"), ("NC", "non-empty"), ("P", "periodic"))


@dataclass
class _Binding:
    """A widget bound to a field: ``path()`` locates it now, ``show(value)`` displays a value."""

    widget: QWidget
    path: Callable[[], FieldPath]
    show: Callable[[Any], None]
    group: str = ""


def _yaml_value(value: Any) -> str:
    if value is MISSING or value is None:
        return ""
    if isinstance(value, (list, dict)):
        return yaml.safe_dump(value, default_flow_style=True, sort_keys=False).strip()
    return scalar_text(value)


def _parse_cell(text: str) -> Any:
    """A table cell: YAML flow values allowed (``[50, 100]``, ``{a: 1}``)."""
    stripped = text.strip()
    if stripped.startswith(("[", "{")):
        try:
            return yaml.safe_load(stripped)
        except yaml.YAMLError:
            return stripped
    return parse_scalar(text)


class MappingTable(QWidget):
    """A name → value table bound to one mapping (variables, sweep, engine parameters)."""

    edited = Signal(object)  # the new mapping, or MISSING when empty

    def __init__(self, headers: tuple[str, str] = ("name", "value"), *, list_values: bool = False) -> None:
        super().__init__()
        self._list_values = list_values
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(list(headers))
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        self.table.setMinimumHeight(90)
        self.table.itemChanged.connect(self._on_item_changed)
        add, remove = QPushButton("Add"), QPushButton("Remove")
        add.clicked.connect(self._add)
        remove.clicked.connect(self._remove)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)

    def show_mapping(self, mapping: Any) -> None:
        blocked = self.table.blockSignals(True)
        items = mapping.items() if isinstance(mapping, dict) else []
        self.table.setRowCount(0)
        for name, value in items:
            row = self.table.rowCount()
            self.table.insertRow(row)
            self.table.setItem(row, 0, QTableWidgetItem(str(name)))
            shown = ", ".join(_yaml_value(v) for v in value) if self._list_values and isinstance(value, list) else _yaml_value(value)
            self.table.setItem(row, 1, QTableWidgetItem(shown))
        self.table.blockSignals(blocked)

    def mapping(self) -> Any:
        result: dict[str, Any] = {}
        for row in range(self.table.rowCount()):
            name_item, value_item = self.table.item(row, 0), self.table.item(row, 1)
            name = name_item.text().strip() if name_item else ""
            text = value_item.text() if value_item else ""
            if not name:
                continue
            if self._list_values:
                value = _parse_cell(f"[{text}]") if not text.strip().startswith("[") else _parse_cell(text)
                result[name] = value if isinstance(value, list) else [value]
            else:
                value = _parse_cell(text)
                result[name] = "" if value is MISSING else value
        return result or MISSING

    @Slot()
    def _on_item_changed(self) -> None:
        self.edited.emit(self.mapping())

    @Slot()
    def _add(self) -> None:
        names = {self.table.item(r, 0).text() for r in range(self.table.rowCount()) if self.table.item(r, 0)}
        name = next(f"VAR{i}" for i in range(1, 1000) if f"VAR{i}" not in names)
        blocked = self.table.blockSignals(True)
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.table.setItem(row, 0, QTableWidgetItem(name))
        self.table.setItem(row, 1, QTableWidgetItem("1" if self._list_values else ""))
        self.table.blockSignals(blocked)
        self.edited.emit(self.mapping())

    @Slot()
    def _remove(self) -> None:
        row = self.table.currentRow()
        if row < 0:
            row = self.table.rowCount() - 1
        if row >= 0:
            self.table.removeRow(row)
            self.edited.emit(self.mapping())


class DesignerView(QWidget):
    """Forms + YAML pane over a :class:`DesignerModel`."""

    fileChanged = Signal(str)
    statusMessage = Signal(str)

    def __init__(self, model: DesignerModel | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("designer")
        self.model = model or DesignerModel()
        self._bindings: list[_Binding] = []
        self._built: dict[str, Any] = {}
        self._refreshing = False
        self.engine_index = 0
        self.query_index = 0
        # dialogs are attributes so that tests (and scripts) can replace them
        self.ask_open_path: Callable[[], str | None] = self._ask_open_path
        self.ask_save_path: Callable[[], str | None] = self._ask_save_path

        self._yaml_timer = QTimer(self)
        self._yaml_timer.setSingleShot(True)
        self._yaml_timer.setInterval(400)
        self._yaml_timer.timeout.connect(self._apply_yaml)
        self._query_timer = QTimer(self)
        self._query_timer.setSingleShot(True)
        self._query_timer.setInterval(300)
        self._query_timer.timeout.connect(self._apply_query_text)

        self._build_actions()
        self.sections = QTabWidget()
        self.sections.setObjectName("designerSections")
        self.sections.addTab(self._scroll(self._general_page()), "General")
        self.sections.addTab(self._scroll(self._stream_page()), "Stream")
        self.sections.addTab(self._scroll(self._queries_page()), "Queries")
        self.sections.addTab(self._scroll(self._engines_page()), "Engines")
        self.sections.addTab(self._scroll(self._static_page()), "Static data")
        self.sections.addTab(self._scroll(self._kpis_page()), "KPIs, oracle, stand")
        self._section_of = {
            "name": 0, "description": 0, "seed": 0, "repetitions": 0, "variables": 0, "sweep": 0, "cases": 0,
            "sizes": 0, "stream": 1, "queries": 2, "engines": 3, "static": 4, "kpis": 5, "oracle": 5, "stand": 5,
        }

        self.yaml_edit = CodeEditor(language="yaml")
        self.yaml_edit.setObjectName("yamlPane")
        self.yaml_edit.textChanged.connect(self._on_yaml_typed)
        self.error_label = QLabel()
        self.error_label.setObjectName("validationMessage")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(QLabel("<b>YAML</b> (edits apply after validation)"))
        right_layout.addWidget(self.yaml_edit, 1)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.sections)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.error_label)
        layout.addWidget(splitter, 1)

        self.model.subscribe(self._on_model_changed)
        self._on_model_changed(Change((), "load"))

    # ------------------------------------------------------------------ actions
    def _build_actions(self) -> None:
        self.toolbar = QToolBar()
        self.new_action = QAction("New", self)
        self.new_action.triggered.connect(self.new_document)
        self.open_action = QAction("Open…", self)
        self.open_action.triggered.connect(self.open_dialog)
        self.save_action = QAction("Save", self)
        self.save_action.triggered.connect(self.save)
        self.save_as_action = QAction("Save as…", self)
        self.save_as_action.triggered.connect(self.save_as)
        self.undo_action = QAction("Undo", self)
        self.undo_action.setShortcut(QKeySequence("Ctrl+Z"))
        self.undo_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.undo_action.triggered.connect(self.undo)
        self.redo_action = QAction("Redo", self)
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.redo_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.redo_action.triggered.connect(self.redo)
        self.addAction(self.undo_action)
        self.addAction(self.redo_action)
        for action in (self.new_action, self.open_action, self.save_action, self.save_as_action):
            self.toolbar.addAction(action)
        self.toolbar.addSeparator()
        self.toolbar.addAction(self.undo_action)
        self.toolbar.addAction(self.redo_action)
        self.file_label = QLabel()
        self.toolbar.addSeparator()
        self.toolbar.addWidget(self.file_label)

    @staticmethod
    def _scroll(widget: QWidget) -> QScrollArea:
        area = QScrollArea()
        area.setWidgetResizable(True)
        area.setWidget(widget)
        return area

    # ------------------------------------------------------------------ binding helpers
    def _commit(self, path: FieldPath, value: Any, *, merge: bool = False) -> None:
        if self._refreshing:
            return
        self.model.set(path, value, merge=merge)

    def _line(self, path: Callable[[], FieldPath], *, placeholder: str = "", text: bool = False,
              tooltip: str = "", group: str = "") -> QLineEdit:
        edit = QLineEdit()
        edit.setPlaceholderText(placeholder)
        edit.setToolTip(tooltip)

        def show(value: Any) -> None:
            edit.setText(_yaml_value(value))

        def commit() -> None:
            raw = edit.text()
            value = (raw if raw.strip() else MISSING) if text else _parse_cell(raw)
            self._commit(path(), value)

        edit.editingFinished.connect(commit)
        self._bindings.append(_Binding(edit, path, show, group))
        return edit

    def _combo(self, path: Callable[[], FieldPath], choices: Sequence[Any], *, unset: Callable[[], str] | None = None,
               group: str = "") -> QComboBox:
        combo = QComboBox()

        def fill(current: Any) -> None:
            combo.clear()
            if unset is not None:
                combo.addItem(unset(), MISSING)
            for choice in choices:
                combo.addItem(scalar_text(choice), choice)
            if current is not MISSING and current not in choices:
                combo.addItem(f"{scalar_text(current)} (invalid)", current)

        def show(value: Any) -> None:
            fill(value)
            for index in range(combo.count()):
                data = combo.itemData(index)
                if (data is MISSING and value is MISSING) or (data is not MISSING and data == value and type(data) is type(value)):
                    combo.setCurrentIndex(index)
                    return
            combo.setCurrentIndex(0)

        def commit(index: int) -> None:
            self._commit(path(), combo.itemData(index))

        combo.activated.connect(commit)
        self._bindings.append(_Binding(combo, path, show, group))
        return combo

    def _check(self, path: Callable[[], FieldPath], label: str, *, default: bool = False, group: str = "") -> QCheckBox:
        box = QCheckBox(label)

        def show(value: Any) -> None:
            box.setChecked(bool(value) if isinstance(value, bool) else default)

        def commit(checked: bool) -> None:
            self._commit(path(), checked if checked != default else MISSING)

        box.clicked.connect(commit)
        self._bindings.append(_Binding(box, path, show, group))
        return box

    def _table(self, path: Callable[[], FieldPath], headers: tuple[str, str] = ("name", "value"), *,
               list_values: bool = False, group: str = "") -> MappingTable:
        table = MappingTable(headers, list_values=list_values)
        table.edited.connect(lambda mapping: self._commit(path(), mapping))
        self._bindings.append(_Binding(table, path, table.show_mapping, group))
        return table

    def _drop_group(self, group: str) -> None:
        """Forget a dynamic form's bindings (``QFormLayout.removeRow`` deletes the widgets)."""
        self._bindings = [b for b in self._bindings if b.group != group]

    # ------------------------------------------------------------------ pages
    def _general_page(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.name_edit = self._line(lambda: ("name",), text=True, placeholder="required")
        self.name_edit.setObjectName("field_name")
        form.addRow("Name", self.name_edit)
        form.addRow("Description", self._line(lambda: ("description",), text=True))
        self.seed_edit = self._line(lambda: ("seed",), placeholder="0")
        form.addRow("Seed", self.seed_edit)
        self.repetitions_edit = self._line(lambda: ("repetitions",), placeholder="1")
        form.addRow("Repetitions", self.repetitions_edit)
        self.variables_table = self._table(lambda: ("variables",), ("variable", "value"))
        form.addRow(QLabel("<b>Variables</b> — values of ${NAME} in query templates and parameters"))
        form.addRow(self.variables_table)
        form.addRow(QLabel("<b>Sweep</b> — each variable takes every listed value (Cartesian product)"))
        self.sweep_table = self._table(lambda: ("sweep",), ("variable", "values (comma-separated)"), list_values=True)
        form.addRow(self.sweep_table)
        self.runs_label = QLabel()
        form.addRow("Runs", self.runs_label)
        return page

    def _stream_page(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        source = QHBoxLayout()
        self.generator_radio = QRadioButton("Generator")
        self.file_radio = QRadioButton("Recorded file")
        self.generator_radio.clicked.connect(lambda: self._switch_stream_source("generator"))
        self.file_radio.clicked.connect(lambda: self._switch_stream_source("file"))
        source.addWidget(self.generator_radio)
        source.addWidget(self.file_radio)
        source.addStretch(1)
        layout.addLayout(source)

        from workbench.generators import GENERATOR_MODULES

        self.generator_box = QGroupBox("Generator")
        generator_form = QFormLayout(self.generator_box)
        self.generator_combo = self._combo(lambda: ("stream", "generator"), tuple(GENERATOR_MODULES))
        generator_form.addRow("Generator", self.generator_combo)
        self.generator_params = QWidget()
        self.generator_params_form = QFormLayout(self.generator_params)
        generator_form.addRow(self.generator_params)
        layout.addWidget(self.generator_box)

        self.file_box = QGroupBox("Recorded stream")
        file_form = QFormLayout(self.file_box)
        self.stream_file_edit = self._line(lambda: ("stream", "file"), text=True, placeholder="path relative to the experiment file")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_stream)
        row = QHBoxLayout()
        row.addWidget(self.stream_file_edit, 1)
        row.addWidget(browse)
        file_form.addRow("File", row)
        file_form.addRow("Format", self._combo(lambda: ("stream", "format"), STREAM_FILE_FORMATS, unset=lambda: "(from the extension)"))
        file_form.addRow("Interval", self._line(lambda: ("stream", "interval"), placeholder="1s (csrbench-dir only)"))
        layout.addWidget(self.file_box)

        from workbench.generators.flows import FLOW_SHAPES

        flow_box = QGroupBox("Flow shape (triples per stimulus over time)")
        flow_layout = QVBoxLayout(flow_box)
        flow_form = QFormLayout()
        self.flow_combo = self._combo(lambda: ("stream", "flow", "shape"), tuple(FLOW_SHAPES), unset=lambda: "(none: as generated)")
        flow_form.addRow("Shape", self.flow_combo)
        flow_layout.addLayout(flow_form)
        self.flow_params = QWidget()
        self.flow_params_form = QFormLayout(self.flow_params)
        flow_layout.addWidget(self.flow_params)
        self.flow_plot = pg.PlotWidget(background="w")
        self.flow_plot.setObjectName("flowPreview")
        self.flow_plot.setMinimumHeight(140)
        self.flow_plot.setMaximumHeight(180)
        self.flow_plot.setLabel("bottom", "application time", units="s")
        self.flow_plot.setLabel("left", "triples/s")
        self.flow_plot.setMouseEnabled(x=False, y=False)
        self.flow_curve = self.flow_plot.plot([], [], stepMode="center", pen=pg.mkPen("#1565c0", width=2),
                                              fillLevel=0, brush=(21, 101, 192, 60))
        self.flow_message = QLabel()
        self.flow_message.setStyleSheet("color: #666")
        flow_layout.addWidget(self.flow_plot)
        flow_layout.addWidget(self.flow_message)
        layout.addWidget(flow_box)
        layout.addStretch(1)
        return page

    def _queries_page(self) -> QWidget:
        page = QWidget()
        layout = QHBoxLayout(page)
        left = QVBoxLayout()
        self.query_list = QListWidget()
        self.query_list.setMaximumWidth(160)
        self.query_list.currentRowChanged.connect(self._select_query)
        left.addWidget(self.query_list)
        add, remove = QPushButton("Add"), QPushButton("Remove")
        add.clicked.connect(self._add_query)
        remove.clicked.connect(self._remove_query)
        left.addWidget(add)
        left.addWidget(remove)
        layout.addLayout(left)
        right = QVBoxLayout()
        form = QFormLayout()
        q = lambda *keys: (lambda: ("queries", self.query_index, *keys))  # noqa: E731
        self.query_id_edit = self._line(q("id"), text=True)
        form.addRow("Id", self.query_id_edit)
        form.addRow("Syntax", self._combo(q("syntax"), QUERY_SYNTAXES, unset=lambda: "(auto-detect)"))
        self.query_file_edit = self._line(q("file"), text=True, placeholder="or a query file (relative path)")
        form.addRow("File", self.query_file_edit)
        right.addLayout(form)
        right.addWidget(QLabel("Template (${NAME} placeholders are filled from the variables)"))
        self.query_edit = CodeEditor(language="query")
        self.query_edit.setObjectName("queryEditor")
        self.query_edit.textChanged.connect(self._on_query_typed)
        self._bindings.append(_Binding(self.query_edit, q("text"), self._show_query_text))
        right.addWidget(self.query_edit, 1)
        right.addWidget(QLabel("<b>${VAR} values</b> used by this query"))
        self.query_vars = QTableWidget(0, 2)
        self.query_vars.setHorizontalHeaderLabels(["variable", "value (variables) / swept values"])
        self.query_vars.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.query_vars.verticalHeader().setVisible(False)
        self.query_vars.setMaximumHeight(130)
        self.query_vars.itemChanged.connect(self._on_query_var_edited)
        right.addWidget(self.query_vars)
        layout.addLayout(right, 1)
        return page

    def _engines_page(self) -> QWidget:
        page = QWidget()
        layout = QHBoxLayout(page)
        left = QVBoxLayout()
        self.engine_list = QListWidget()
        self.engine_list.setMaximumWidth(160)
        self.engine_list.currentRowChanged.connect(self._select_engine)
        left.addWidget(self.engine_list)
        add, remove = QPushButton("Add"), QPushButton("Remove")
        add.clicked.connect(self._add_engine)
        remove.clicked.connect(self._remove_engine)
        left.addWidget(add)
        left.addWidget(remove)
        layout.addLayout(left)

        right = QVBoxLayout()
        e = lambda *keys: (lambda: ("engines", self.engine_index, *keys))  # noqa: E731
        form = QFormLayout()
        form.addRow("Id", self._line(e("id"), text=True))
        form.addRow("Type", self._combo(e("type"), ENGINE_TYPES))
        self.preset_combo = self._combo(e("preset"), tuple(PRESETS), unset=lambda: "(none: defaults)")
        form.addRow("Preset", self.preset_combo)
        right.addLayout(form)

        semantics = QGroupBox("Semantics (SECRET + R2S); unset fields come from the preset")
        semantics_form = QFormLayout(semantics)
        s = lambda key: e("semantics", key)  # noqa: E731
        for key, label in (("border", "Border convention"), ("tick", "Tick"), ("r2s", "R2S operator"),
                           ("empty_notification", "Empty-relation notification"), ("time_unit", "Time unit"),
                           ("active_window", "Active window"), ("leading_partial", "Leading partial windows")):
            combo = self._combo(s(key), SEMANTICS_CHOICES[key], unset=self._preset_value_label(key))
            combo.setObjectName(f"semantics_{key}")
            semantics_form.addRow(label, combo)
        semantics_form.addRow("Report policy", self._report_widget(s("report")))
        semantics_form.addRow("t0", self._line(s("t0"), placeholder="preset (hidden: all admissible t0)",
                                               tooltip="a duration such as 0s, or auto"))
        semantics_form.addRow("Batch size", self._line(s("batch_size"), placeholder="1 (batch tick)"))
        right.addWidget(semantics)

        faults = QGroupBox("Injected faults (built-in engines)")
        faults_layout = QHBoxLayout(faults)
        for fault in FAULTS:
            faults_layout.addWidget(self._check(e("faults", fault), fault))
        right.addWidget(faults)
        parameters = QGroupBox("Parameters (eviction: strategy, cache_size; external: command, cwd, env; naive/incremental: tbox)")
        parameters_layout = QVBoxLayout(parameters)
        parameters_layout.addWidget(self._table(e("parameters"), ("parameter", "value")))
        right.addWidget(parameters)
        right.addStretch(1)
        layout.addLayout(right, 1)
        return page

    def _preset_value_label(self, key: str) -> Callable[[], str]:
        def label() -> str:
            value = self._effective_semantics().describe().get(key)
            return f"(preset: {scalar_text(value)})"
        return label

    def _effective_semantics(self) -> EngineSemantics:
        preset = self.model.get(("engines", self.engine_index, "preset"))
        return PRESETS.get(preset, EngineSemantics()) if isinstance(preset, str) else EngineSemantics()

    def _report_widget(self, path: Callable[[], FieldPath]) -> QWidget:
        box = QWidget()
        box.setObjectName("reportPolicy")
        box.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        override = QCheckBox("override")
        override.setObjectName("report_override")
        boxes = {}
        for short, long in STRATEGY_BOXES:
            check = QCheckBox(short)
            check.setToolTip(long)
            check.setObjectName(f"report_{short}")
            boxes[long] = check
            row.addWidget(check)
        period = QLineEdit()
        period.setPlaceholderText("period, e.g. 5s")
        period.setMaximumWidth(110)
        row.insertWidget(0, override)
        row.addWidget(period)
        self.report_boxes = boxes
        self.report_override = override
        self.report_period = period

        def show(value: Any) -> None:
            from workbench.core.semantics import ReportPolicy

            text = value if isinstance(value, str) else str(self._effective_semantics().report)
            override.setChecked(value is not MISSING)
            try:
                policy = ReportPolicy.parse(text)
                names = {s.value for s in policy.strategies}
                period.setText(f"{policy.period_ms}ms" if policy.period_ms else "")
            except UserError:
                names = set()
            for long, check in boxes.items():
                check.setChecked(long in names)
                check.setEnabled(value is not MISSING)
            period.setEnabled(value is not MISSING)

        def commit() -> None:
            if not override.isChecked():
                self._commit(path(), MISSING)
                return
            parts = []
            for long, check in boxes.items():
                if check.isChecked():
                    parts.append(f"periodic({period.text().strip() or '1s'})" if long == "periodic" else long)
            self._commit(path(), " & ".join(parts) if parts else "")

        override.clicked.connect(commit)
        for check in boxes.values():
            check.clicked.connect(commit)
        period.editingFinished.connect(commit)
        self._bindings.append(_Binding(box, path, show))
        return box

    def _static_page(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(QLabel("Static data and ontologies loaded before the stream (Heaven's T). "
                                "Paths are relative to the experiment file."))
        self.static_table = QTableWidget(0, 3)
        self.static_table.setObjectName("staticTable")
        self.static_table.setHorizontalHeaderLabels(["file", "graph (optional)", f"format ({', '.join(STATIC_FORMATS[:3])}, …)"])
        self.static_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.static_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.static_table.itemChanged.connect(self._on_static_edited)
        self._bindings.append(_Binding(self.static_table, lambda: ("static",), self._show_static))
        layout.addWidget(self.static_table)
        buttons = QHBoxLayout()
        add, remove = QPushButton("Add file…"), QPushButton("Remove")
        add.clicked.connect(self._add_static)
        remove.clicked.connect(self._remove_static)
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        layout.addStretch(1)
        return page

    def _kpis_page(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        kpis = QGroupBox("KPIs (Heaven's K)")
        kpi_layout = QVBoxLayout(kpis)
        row = QHBoxLayout()
        self.kpi_boxes: dict[str, QCheckBox] = {}
        for name in KPI_NAMES:
            box = QCheckBox(name)
            box.clicked.connect(self._on_kpi_clicked)
            self.kpi_boxes[name] = box
            row.addWidget(box)
        self._bindings.append(_Binding(kpis, lambda: ("kpis", "collect"), self._show_kpis))
        kpi_layout.addLayout(row)
        sampling_form = QFormLayout()
        self.sampling_edit = QLineEdit()
        self.sampling_edit.setPlaceholderText("500ms")
        self.sampling_edit.editingFinished.connect(self._on_sampling_edited)
        self._bindings.append(_Binding(self.sampling_edit, lambda: ("kpis", "sampling"),
                                       lambda v: self.sampling_edit.setText(_yaml_value(v))))
        sampling_form.addRow("Sampling period", self.sampling_edit)
        kpi_layout.addLayout(sampling_form)
        layout.addWidget(kpis)

        oracle = QGroupBox("Oracle")
        oracle_form = QFormLayout(oracle)
        oracle_form.addRow("System", self._combo(lambda: ("oracle", "system"), ("engine", *PRESETS), unset=lambda: "(engine: each engine's own)"))
        oracle_form.addRow("Match", self._combo(lambda: ("oracle", "match"), ORACLE_MATCHES, unset=lambda: "(strict)"))
        oracle_form.addRow("", self._check(lambda: ("oracle", "gracious"), "gracious mode (reconstruct the borders the engine used)"))
        oracle_form.addRow("t0", self._line(lambda: ("oracle", "t0"), placeholder="all (every admissible t0)"))
        oracle_form.addRow("Semantics overrides", self._table(lambda: ("oracle", "semantics"), ("parameter", "value")))
        layout.addWidget(oracle)

        stand = QGroupBox("Test stand")
        stand_form = QFormLayout(stand)
        stand_form.addRow("Mode", self._combo(lambda: ("stand", "mode"), STAND_MODES, unset=lambda: "(real-time)"))
        stand_form.addRow("Time scale", self._line(lambda: ("stand", "time_scale"), placeholder="1.0"))
        stand_form.addRow("Timeout", self._line(lambda: ("stand", "timeout"), placeholder="none"))
        layout.addWidget(stand)
        layout.addStretch(1)
        return page

    # ------------------------------------------------------------------ dynamic forms
    def _rebuild_generator_params(self, generator: Any) -> None:
        if self._built.get("generator") == generator:
            return
        self._built["generator"] = generator
        self._drop_group("generator")
        while self.generator_params_form.rowCount():
            self.generator_params_form.removeRow(0)
        from workbench.generators import generator_spec

        try:
            spec = generator_spec(str(generator))
        except UserError:
            self.generator_params_form.addRow(QLabel("choose a generator to see its parameters"))
            return
        doc = QLabel(f"<i>{_html(spec.doc.splitlines()[0]) if spec.doc else ''}</i>")
        doc.setWordWrap(True)
        self.generator_params_form.addRow(doc)
        for param in spec.params:
            path = (lambda name: (lambda: ("stream", "params", name)))(param.name)
            tip = f"{param.doc} ({param.kind}{', required' if param.required else ''})"
            if param.kind == "choice":
                widget: QWidget = self._combo(path, param.choices, unset=lambda p=param: f"(default: {p.default})", group="generator")
            elif param.kind == "bool":
                widget = self._check(path, param.doc, default=bool(param.default), group="generator")
            else:
                default = "" if param.default is None else f"default: {scalar_text(param.default)}"
                widget = self._line(path, placeholder=default or ("required" if param.required else ""),
                                    tooltip=tip, group="generator")
            widget.setObjectName(f"param_{param.name}")
            widget.setToolTip(tip)
            self.generator_params_form.addRow(f"{param.name} ({param.kind})", widget)

    def _rebuild_flow_params(self, shape: Any) -> None:
        if self._built.get("flow") == shape:
            return
        self._built["flow"] = shape
        self._drop_group("flow")
        while self.flow_params_form.rowCount():
            self.flow_params_form.removeRow(0)
        from workbench.generators.flows import FLOW_SHAPES

        for param in FLOW_SHAPES.get(str(shape), ()):
            if param.name == "seed":
                continue
            path = (lambda name: (lambda: ("stream", "flow", name)))(param.name)
            default = "" if param.default is None else f"default: {scalar_text(param.default)}"
            edit = self._line(path, placeholder=default or ("required" if param.required else ""),
                              tooltip=param.doc, group="flow")
            self.flow_params_form.addRow(f"{param.name} ({param.kind})", edit)

    def _update_flow_preview(self) -> None:
        flow = self.model.get(("stream", "flow"))
        if not isinstance(flow, dict) or "shape" not in flow:
            self.flow_curve.setData([], [])
            self.flow_message.setText("No flow shape: stimuli are sent as the stream is timestamped.")
            return
        from workbench.core.time import parse_duration
        from workbench.generators.flows import rate_preview

        variables = self.model.get(("variables",), {}) or {}
        settings = {k: _resolve_template(v, variables) for k, v in flow.items()}
        duration_raw = _resolve_template(self.model.get(("stream", "params", "duration"), "10s"), variables)
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

    # ------------------------------------------------------------------ model → view
    @Slot()
    def _on_model_changed(self, change: Change) -> None:
        self.refresh(update_yaml=change.origin not in ("yaml", "yaml-error", "yaml-validated"))

    def refresh(self, *, update_yaml: bool = True) -> None:
        """Show the model: every bound widget, the lists, the YAML pane and the validation."""
        self._refreshing = True
        try:
            model = self.model
            queries = model.get(("queries",), [])
            engines = model.get(("engines",), [])
            self._fill_list(self.query_list, queries, "query_index")
            self._fill_list(self.engine_list, engines, "engine_index")
            stream = model.get(("stream",), {})
            uses_file = isinstance(stream, dict) and "file" in stream and "generator" not in stream
            self.generator_radio.setChecked(not uses_file)
            self.file_radio.setChecked(uses_file)
            self.generator_box.setVisible(not uses_file)
            self.file_box.setVisible(uses_file)
            self._rebuild_generator_params(model.get(("stream", "generator")))
            self._rebuild_flow_params(model.get(("stream", "flow", "shape")))
            for binding in self._bindings:
                blocked = binding.widget.blockSignals(True)
                try:
                    binding.show(model.get(binding.path()))
                finally:
                    binding.widget.blockSignals(blocked)
            self._show_query_vars()
            self._update_flow_preview()
            if update_yaml:
                self.yaml_edit.set_text_keep_view(model.shown_text())
        finally:
            self._refreshing = False
        self._show_validation()
        self.undo_action.setEnabled(model.can_undo)
        self.redo_action.setEnabled(model.can_redo)
        self.undo_action.setToolTip(model.undo_text())
        self.redo_action.setToolTip(model.redo_text())
        name = str(model.file) if model.file else "unsaved experiment"
        self.file_label.setText(f"  {name}{' •' if model.dirty else ''}")

    def _fill_list(self, widget: QListWidget, items: Any, index_attr: str) -> None:
        labels = [str(item.get("id", f"#{i}")) if isinstance(item, dict) else f"#{i}" for i, item in enumerate(items or [])]
        blocked = widget.blockSignals(True)
        if [widget.item(i).text() for i in range(widget.count())] != labels:
            widget.clear()
            widget.addItems(labels)
        index = min(getattr(self, index_attr), max(0, len(labels) - 1))
        setattr(self, index_attr, index)
        widget.setCurrentRow(index if labels else -1)
        widget.blockSignals(blocked)

    def _show_query_text(self, value: Any) -> None:
        text = value if isinstance(value, str) else ""
        if self.query_edit.toPlainText() != text and not self._query_timer.isActive():
            self.query_edit.set_text_keep_view(text)
        self.query_edit.setReadOnly(self.model.get(("queries", self.query_index, "file")) is not MISSING)

    def _show_query_vars(self) -> None:
        from workbench.query.template import template_variables

        text = self.model.get(("queries", self.query_index, "text"))
        try:
            names = sorted(template_variables(text)) if isinstance(text, str) else []
        except UserError:
            names = []
        variables = self.model.get(("variables",), {}) or {}
        sweep = self.model.get(("sweep",), {}) or {}
        blocked = self.query_vars.blockSignals(True)
        self.query_vars.setRowCount(0)
        for name in names:
            row = self.query_vars.rowCount()
            self.query_vars.insertRow(row)
            name_item = QTableWidgetItem(name)
            name_item.setFlags(name_item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            self.query_vars.setItem(row, 0, name_item)
            if isinstance(sweep, dict) and name in sweep:
                value_item = QTableWidgetItem(f"swept: {_yaml_value(sweep[name])}")
                value_item.setFlags(value_item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            elif isinstance(variables, dict) and name in variables:
                value_item = QTableWidgetItem(_yaml_value(variables[name]))
            else:
                value_item = QTableWidgetItem("")
                value_item.setToolTip("not defined: type a value to add it to the variables")
                value_item.setBackground(Qt.GlobalColor.yellow)
            self.query_vars.setItem(row, 1, value_item)
        self.query_vars.blockSignals(blocked)

    def _show_static(self, value: Any) -> None:
        self.static_table.setRowCount(0)
        for item in value if isinstance(value, list) else []:
            row = self.static_table.rowCount()
            self.static_table.insertRow(row)
            entry = item if isinstance(item, dict) else {"file": item}
            for column, key in enumerate(("file", "graph", "format")):
                self.static_table.setItem(row, column, QTableWidgetItem(_yaml_value(entry.get(key, MISSING))))

    def _show_kpis(self, value: Any) -> None:
        raw = self.model.get(("kpis",))
        chosen = value if isinstance(value, list) else (raw if isinstance(raw, list) else list(KPI_NAMES))
        for name, box in self.kpi_boxes.items():
            box.setChecked(name in chosen)
        if isinstance(raw, dict) or raw is MISSING:
            self.sampling_edit.setText(_yaml_value(raw.get("sampling", MISSING)) if isinstance(raw, dict) else "")

    def _show_validation(self) -> None:
        validation = self.model.validation
        for binding in self._bindings:
            binding.widget.setStyleSheet("")
            binding.widget.setProperty("invalid", False)
        for index in range(self.sections.count()):
            self.sections.tabBar().setTabTextColor(index, self.palette().text().color())
        self.yaml_edit.mark_line(None)
        if validation.ok:
            experiment = validation.experiment
            runs = len(experiment.runs()) if experiment is not None else 0
            self.error_label.setText(f"<span style='color:#2e7d32'>✔ valid — {runs} run(s)</span>")
            self.runs_label.setText(str(runs))
            return
        error = validation.error
        assert error is not None
        self.error_label.setText(f"<span style='color:#c62828'>✖ {_html(str(error))}</span>")
        self.yaml_edit.mark_line(error.line, scroll=not self.yaml_edit.hasFocus())
        widget = self.widget_for_field(error.field or "")
        if widget is not None:
            name = widget.objectName()
            # a selector keeps the red frame off the children of container widgets
            widget.setStyleSheet(f"#{name} {{ {INVALID_STYLE} }}" if name else INVALID_STYLE)
            widget.setProperty("invalid", True)
            widget.setToolTip(str(error.message))
        top = (error.field or "").split(".")[0].split("[")[0]
        if top in self._section_of:
            self.sections.tabBar().setTabTextColor(self._section_of[top], Qt.GlobalColor.red)

    def widget_for_field(self, field: str) -> QWidget | None:
        """The bound widget that shows ``field`` (the loader's path) or its nearest parent."""
        if not field:
            return None
        best: tuple[int, QWidget] | None = None
        for binding in self._bindings:
            text = path_text(binding.path())
            if field == text or field.startswith(text + ".") or field.startswith(text + "["):
                if best is None or len(text) > best[0]:
                    best = (len(text), binding.widget)
        return best[1] if best else None

    def invalid_widgets(self) -> list[QWidget]:
        return [b.widget for b in self._bindings if b.widget.property("invalid")]

    # ------------------------------------------------------------------ view → model
    @Slot()
    def _on_yaml_typed(self) -> None:
        self._yaml_timer.start()

    @Slot()
    def _apply_yaml(self) -> None:
        self.model.set_yaml_text(self.yaml_edit.toPlainText())

    def flush_pending_edits(self) -> None:
        """Apply edits still waiting on a debounce timer (before save, undo, close)."""
        if self._yaml_timer.isActive():
            self._yaml_timer.stop()
            self._apply_yaml()
        if self._query_timer.isActive():
            self._query_timer.stop()
            self._apply_query_text()

    @Slot()
    def _on_query_typed(self) -> None:
        if not self._refreshing:
            self._query_timer.start()

    @Slot()
    def _apply_query_text(self) -> None:
        if self.model.get(("queries", self.query_index)) is MISSING:
            return
        self.model.set(("queries", self.query_index, "text"), self.query_edit.toPlainText(), merge=True)

    @Slot()
    def _on_query_var_edited(self) -> None:
        for row in range(self.query_vars.rowCount()):
            name = self.query_vars.item(row, 0).text()
            value_item = self.query_vars.item(row, 1)
            if value_item is None or not (value_item.flags() & Qt.ItemFlag.ItemIsEditable):
                continue
            value = _parse_cell(value_item.text())
            if value is not MISSING and self.model.get(("variables", name)) != value:
                self.model.set(("variables", name), value)
                return

    @Slot()
    def _on_static_edited(self) -> None:
        entries: list[Any] = []
        for row in range(self.static_table.rowCount()):
            cells = [self.static_table.item(row, c).text().strip() if self.static_table.item(row, c) else "" for c in range(3)]
            if not any(cells):
                continue
            if not cells[1] and not cells[2]:
                entries.append(cells[0])
            else:
                entry = {"file": cells[0]}
                if cells[1]:
                    entry["graph"] = cells[1]
                if cells[2]:
                    entry["format"] = cells[2]
                entries.append(entry)
        self._commit(("static",), entries or MISSING)

    @Slot()
    def _on_kpi_clicked(self) -> None:
        chosen = [name for name, box in self.kpi_boxes.items() if box.isChecked()]
        raw = self.model.get(("kpis",))
        sampling = raw.get("sampling", MISSING) if isinstance(raw, dict) else MISSING
        if sampling is MISSING and chosen == list(KPI_NAMES):
            self._commit(("kpis",), MISSING)
        else:
            value: dict[str, Any] = {"collect": chosen}
            if sampling is not MISSING:
                value["sampling"] = sampling
            self._commit(("kpis",), value)

    @Slot()
    def _on_sampling_edited(self) -> None:
        raw = self.model.get(("kpis",))
        chosen = raw if isinstance(raw, list) else (raw.get("collect", list(KPI_NAMES)) if isinstance(raw, dict) else list(KPI_NAMES))
        value = parse_scalar(self.sampling_edit.text())
        new: dict[str, Any] = {"collect": chosen}
        if value is not MISSING:
            new["sampling"] = value
        self._commit(("kpis",), new)

    def _switch_stream_source(self, kind: str) -> None:
        stream = dict(self.model.get(("stream",), {}) or {})
        flow = stream.get("flow")
        if kind == "generator" and "generator" not in stream:
            new: dict[str, Any] = {"generator": "sg1", "params": {"stations": 10, "interval": "1s", "duration": "60s"}}
        elif kind == "file" and "file" not in stream:
            new = {"file": "data/stream.stream", "format": "yabench"}
        else:
            return
        if flow is not None:
            new["flow"] = flow
        self._commit(("stream",), new)

    @Slot(int)
    def _select_query(self, row: int) -> None:
        if row >= 0 and row != self.query_index:
            self.flush_pending_edits()
            self.query_index = row
            self.refresh(update_yaml=False)

    @Slot(int)
    def _select_engine(self, row: int) -> None:
        if row >= 0 and row != self.engine_index:
            self.engine_index = row
            self.refresh(update_yaml=False)

    @Slot()
    def _add_query(self) -> None:
        ids = {q.get("id") for q in self.model.get(("queries",), []) or [] if isinstance(q, dict)}
        new_id = next(f"q{i}" for i in range(1, 1000) if f"q{i}" not in ids)
        self.query_index = self.model.append(("queries",), {"id": new_id, "text": "SELECT * WHERE { ?s ?p ?o }\n"})
        self.refresh(update_yaml=False)

    @Slot()
    def _remove_query(self) -> None:
        self.model.remove_item(("queries",), self.query_index)

    @Slot()
    def _add_engine(self) -> None:
        ids = {e.get("id") for e in self.model.get(("engines",), []) or [] if isinstance(e, dict)}
        new_id = next(f"engine{i}" for i in range(1, 1000) if f"engine{i}" not in ids)
        self.engine_index = self.model.append(("engines",), {"id": new_id, "type": "secret", "preset": "cqels"})
        self.refresh(update_yaml=False)

    @Slot()
    def _remove_engine(self) -> None:
        self.model.remove_item(("engines",), self.engine_index)

    @Slot()
    def _add_static(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Static data", str(self.model.base_dir or Path.cwd()),
                                              "RDF (*.ttl *.nt *.n3 *.rdf *.owl *.jsonld *.trig *.nq);;All files (*)")
        if path:
            self.model.append(("static",), self._relative(path))

    @Slot()
    def _remove_static(self) -> None:
        self.model.remove_item(("static",), max(0, self.static_table.currentRow()))

    @Slot()
    def _browse_stream(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Stream file", str(self.model.base_dir or Path.cwd()))
        if path:
            self._commit(("stream", "file"), self._relative(path))

    def _relative(self, path: str) -> str:
        base = self.model.base_dir or Path.cwd()
        try:
            return str(Path(path).resolve().relative_to(base.resolve()))
        except ValueError:
            return path

    # ------------------------------------------------------------------ commands
    @Slot()
    def undo(self) -> None:
        self.flush_pending_edits()
        self.model.undo()

    @Slot()
    def redo(self) -> None:
        self.flush_pending_edits()
        self.model.redo()

    @Slot()
    def new_document(self) -> None:
        if self.confirm_discard():
            self.model.new()

    def open_file(self, path: str | Path) -> UserError | None:
        """Load a file; a YAML error is shown in the pane (the form stays empty)."""
        try:
            error = self.model.load(path)
        except UserError as error_:
            self.statusMessage.emit(str(error_))
            return error_
        self.engine_index = self.query_index = 0
        self._built.clear()
        self.refresh()
        if error is not None:
            self.yaml_edit.set_text_keep_view(Path(path).read_text(encoding="utf-8", errors="replace"))
            self.yaml_edit.mark_line(error.line)
        self.fileChanged.emit(str(path))
        return error

    @Slot()
    def open_dialog(self) -> None:
        if not self.confirm_discard():
            return
        path = self.ask_open_path()
        if path:
            self.open_file(path)

    @Slot()
    def save(self) -> bool:
        self.flush_pending_edits()
        if self.model.file is None:
            return self.save_as()
        self.model.save()
        self.statusMessage.emit(f"saved {self.model.file}")
        self.fileChanged.emit(str(self.model.file))
        return True

    @Slot()
    def save_as(self) -> bool:
        self.flush_pending_edits()
        path = self.ask_save_path()
        if not path:
            return False
        self.model.save(path)
        self.statusMessage.emit(f"saved {path}")
        self.fileChanged.emit(str(path))
        return True

    def confirm_discard(self) -> bool:
        """Ask before throwing away unsaved changes (True: go ahead)."""
        self.flush_pending_edits()
        if not self.model.dirty:
            return True
        answer = QMessageBox.question(
            self, "Unsaved changes", "The experiment has unsaved changes. Save them first?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def _ask_open_path(self) -> str | None:
        path, _ = QFileDialog.getOpenFileName(self, "Open experiment", str(self.model.base_dir or Path.cwd()),
                                              "Experiments (*.yaml *.yml);;All files (*)")
        return path or None

    def _ask_save_path(self) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self, "Save experiment", str(self.model.file or "experiment.yaml"),
                                              "Experiments (*.yaml *.yml)")
        return path or None

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        self._yaml_timer.stop()
        self._query_timer.stop()
        super().closeEvent(event)


def _resolve_template(value: Any, variables: Any) -> Any:
    """``${NAME}`` exactly → the variable's value (for previews only)."""
    if isinstance(value, str) and value.startswith("${") and value.endswith("}") and isinstance(variables, dict):
        return variables.get(value[2:-1], value)
    return value


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
