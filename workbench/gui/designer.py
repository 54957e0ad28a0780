"""The experiment designer: forms for every field, a YAML pane in sync both ways, undo/redo.

A thin skin over :class:`workbench.gui.designer_model.DesignerModel`: every widget reads
its value from the model's raw mapping and writes edits back as commands; the model
validates with the CLI's loader and the view marks the widget of the failing field path
(``engines[0].semantics.report``) with the loader's message. A widget only writes when the
user changed what it shows, so opening a file never rewrites it (``"10"`` stays a string,
``{file: x}`` stays a mapping).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QColor, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSizePolicy,
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
    EVICTION_STRATEGIES,
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
    NEW_GENERATED_STREAM,
    NEW_RECORDED_STREAM,
    Change,
    DesignerModel,
    FieldPath,
    WindowField,
    command_text,
    engine_with_type,
    parse_command,
    parse_scalar,
    path_text,
    query_windows,
    scalar_text,
    set_window_value,
    window_stream_iri,
)
from workbench.gui.highlight import CodeEditor

INVALID_STYLE = "border: 2px solid #d32f2f; background: #fff3f3;"
WARNING_STYLE = "color: #8a4b00; background: #fff4e0; border: 1px solid #f0b35a; padding: 4px;"
TEMPLATE_COLOR = "#c2185b"  # the highlighters' ${VAR} colour: a value that comes from a variable
SEMANTICS_CHOICES = {
    "border": ("closed-open", "open-closed", "closed"),
    "tick": ("tuple", "time", "batch"),
    "r2s": ("rstream", "istream", "dstream"),
    "time_unit": ("ms", "100ms", "s", "m", "h"),
    "active_window": ("earliest", "latest"),
    "empty_notification": (True, False),
    "leading_partial": (True, False),
}
SEMANTICS_LABELS = (  # key, label, what it decides (tooltip)
    ("border", "Border convention", "which window borders are inclusive: [o, c), (o, c] or [o, c]"),
    ("tick", "Tick", "what makes the engine evaluate: every element, every time instant, or a batch"),
    ("r2s", "R2S operator", "relation-to-stream: Rstream (all), Istream (new), Dstream (gone)"),
    ("empty_notification", "Empty relations", "empty-relation notification: report an empty answer"),
    ("time_unit", "Time unit", "the engine's clock resolution"),
    ("active_window", "Active window", "which window is active when several are open"),
    ("leading_partial", "Leading partials", "YABench's first windows shorter than the size"),
)
STRATEGY_BOXES = (("CC", "content-change"), ("WC", "window-close"), ("NC", "non-empty"), ("P", "periodic"))
PARAMETER_HINTS = {
    "strategy": "eviction strategy",
    "matcher": "how window contents are matched",
    "index": "window index, 0 = the query's first window",
    "non-negative-number": "milliseconds ≥ 0",
    "t0": "a duration, or [one per window]",
    "positive-int": "a positive integer, or ${NAME}",
    "int": "an integer",
    "file": "path relative to the experiment file",
    "directory": "folder relative to the experiment file",
    "command": "program and arguments, e.g. python3 my_engine.py --fast",
    "duration": "a duration such as 30s",
    "string": "text",
}

def _matchers() -> tuple[str, ...]:
    from workbench.engine import MATCHERS

    return tuple(MATCHERS)


# engine parameter kinds with a closed set of values (runs._engine_parameter checks them)
PARAMETER_CHOICES: dict[str, Callable[[], tuple[str, ...]]] = {
    "strategy": lambda: EVICTION_STRATEGIES,
    "matcher": _matchers,
}
EXTERNAL_WARNING = (
    "⚠ An external engine runs the program given in <b>command</b> on this machine. "
    "The workbench shows the command and asks for confirmation before running it "
    "(<tt>rspwb run --yes</tt> confirms on the command line)."
)


@dataclass
class _Binding:
    """A widget bound to a field: ``path()`` locates it now, ``show(value)`` displays a value."""

    widget: QWidget
    path: Callable[[], FieldPath]
    show: Callable[[Any], None]
    group: str = ""


@dataclass(frozen=True)
class _Shown:
    """What a cell showed and the value behind it: an untouched cell writes the value back as is."""

    text: str
    value: Any


def _yaml_value(value: Any) -> str:
    if value is MISSING or value is None:
        return ""
    if isinstance(value, (list, dict)):
        return yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10_000).strip()
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


def _item(text: str, value: Any = MISSING, *, editable: bool = True, tooltip: str = "") -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setData(Qt.ItemDataRole.UserRole, _Shown(text, value))
    if not editable:
        item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if tooltip:
        item.setToolTip(tooltip)
    return item


def _cell_value(item: QTableWidgetItem | None, parse: Callable[[str], Any] = _parse_cell) -> Any:
    """The value of a cell: the original if the user left its text alone, else the parsed text."""
    if item is None:
        return MISSING
    shown = item.data(Qt.ItemDataRole.UserRole)
    if isinstance(shown, _Shown) and shown.text == item.text() and shown.value is not MISSING:
        return shown.value
    return parse(item.text())


def _block_tooltip(value: Any) -> str:
    if isinstance(value, (dict, list)) and value:
        return yaml.safe_dump(value, default_flow_style=False, sort_keys=False).strip()
    return ""


def _table_height(table: QTableWidget, rows: int) -> None:
    """Size a table to show ``rows`` rows without a scroll bar (forms scroll, not tables)."""
    header = table.horizontalHeader().sizeHint().height()
    table.setMinimumHeight(header + rows * table.verticalHeader().defaultSectionSize() + 6)


def _fit_rows(table: QTableWidget, minimum: int, maximum: int = 10) -> None:
    """Height for the rows shown plus a free one (between ``minimum`` and ``maximum`` rows), so
    short tables do not push the rest of a form off screen and long ones scroll inside."""
    rows = max(minimum, min(maximum, table.rowCount() + 1))
    header = table.horizontalHeader().sizeHint().height()
    scroll = table.horizontalScrollBar().sizeHint().height() if table.columnCount() > 3 else 0
    table.setFixedHeight(header + rows * table.verticalHeader().defaultSectionSize() + scroll + 6)


class MappingTable(QWidget):
    """A name → value table bound to one mapping (variables, sweep, sizes, environment)."""

    edited = Signal(object)  # the new mapping, or MISSING when empty

    def __init__(self, headers: tuple[str, str] = ("name", "value"), *, list_values: bool = False,
                 empty_value: Any = "", new_name: str = "VAR", rows: int = 3) -> None:
        super().__init__()
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)  # so an invalid frame shows
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self._list_values = list_values
        self._empty_value = empty_value
        self._new_name = new_name
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(list(headers))
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        self._rows = rows
        _fit_rows(self.table, rows)
        self.table.itemChanged.connect(self._on_item_changed)
        self.add_button, self.remove_button = QPushButton("Add"), QPushButton("Remove")
        self.add_button.clicked.connect(self._add)
        self.remove_button.clicked.connect(self._remove)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)

    def _text(self, value: Any) -> str:
        if self._list_values and isinstance(value, list):
            return ", ".join(_yaml_value(v) for v in value)
        return _yaml_value(value)

    def show_mapping(self, mapping: Any) -> None:
        blocked = self.table.blockSignals(True)
        items = mapping.items() if isinstance(mapping, dict) else []
        self.table.setRowCount(0)
        for name, value in items:
            row = self.table.rowCount()
            self.table.insertRow(row)
            self.table.setItem(row, 0, _item(str(name), name))
            text = self._text(value)
            self.table.setItem(row, 1, _item(text, value, tooltip=_block_tooltip(value)))
        self.table.blockSignals(blocked)
        _fit_rows(self.table, self._rows)

    def _parse(self, text: str) -> Any:
        if self._list_values:
            value = _parse_cell(text) if text.strip().startswith("[") else _parse_cell(f"[{text}]")
            return value if isinstance(value, list) else [value]
        value = _parse_cell(text)
        return self._empty_value if value is MISSING else value

    def mapping(self) -> Any:
        result: dict[str, Any] = {}
        for row in range(self.table.rowCount()):
            name_item = self.table.item(row, 0)
            name = name_item.text().strip() if name_item else ""
            if not name:
                continue
            value = _cell_value(self.table.item(row, 1), self._parse)
            result[name] = self._empty_value if value is MISSING else value
        return result or MISSING

    @Slot()
    def _on_item_changed(self) -> None:
        self.edited.emit(self.mapping())

    @Slot()
    def _add(self) -> None:
        names = {self.table.item(r, 0).text() for r in range(self.table.rowCount()) if self.table.item(r, 0)}
        name = next(f"{self._new_name}{i}" for i in range(1, 1000) if f"{self._new_name}{i}" not in names)
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


class CasesTable(QWidget):
    """Explicit variable combinations (``cases``, YABench's ``tests``): one row per case,
    one column per variable; an empty cell leaves the variable to ``variables``."""

    edited = Signal(object)  # the new list of cases, or MISSING when there are none

    def __init__(self) -> None:
        super().__init__()
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.table = QTableWidget(0, 0)
        self.table.setObjectName("casesTable")
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        _fit_rows(self.table, 3)
        self.table.itemChanged.connect(self._on_item_changed)
        self.add_case_button = QPushButton("Add case")
        self.remove_case_button = QPushButton("Remove case")
        self.column_edit = QLineEdit()
        self.column_edit.setPlaceholderText("variable name")
        self.column_edit.setMaximumWidth(140)
        self.add_column_button = QPushButton("Add variable")
        self.remove_column_button = QPushButton("Remove variable")
        self.add_case_button.clicked.connect(self._add_case)
        self.remove_case_button.clicked.connect(self._remove_case)
        self.add_column_button.clicked.connect(self._add_column)
        self.column_edit.returnPressed.connect(self._add_column)
        self.remove_column_button.clicked.connect(self._remove_column)
        buttons = QHBoxLayout()
        for widget in (self.add_case_button, self.remove_case_button, self.column_edit,
                       self.add_column_button, self.remove_column_button):
            buttons.addWidget(widget)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)
        self._columns: list[str] = []

    def show_cases(self, cases: Any) -> None:
        items = cases if isinstance(cases, list) else []
        columns: list[str] = []
        for case in items:
            for name in case if isinstance(case, dict) else ():
                if str(name) not in columns:
                    columns.append(str(name))
        blocked = self.table.blockSignals(True)
        self._columns = columns
        self.table.setRowCount(0)
        self.table.setColumnCount(len(columns))
        self.table.setHorizontalHeaderLabels(columns)
        for row, case in enumerate(items):
            self.table.insertRow(row)
            entry = case if isinstance(case, dict) else {}
            for column, name in enumerate(columns):
                value = entry.get(name, MISSING)
                self.table.setItem(row, column, _item(_yaml_value(value), value))
        self.table.setVerticalHeaderLabels([f"case {i}" for i in range(len(items))])
        self.table.blockSignals(blocked)
        _fit_rows(self.table, 3, 12)

    def cases(self) -> Any:
        result = []
        for row in range(self.table.rowCount()):
            case: dict[str, Any] = {}
            for column, name in enumerate(self._columns):
                value = _cell_value(self.table.item(row, column))
                if value is not MISSING:
                    case[name] = value
            result.append(case)
        return result or MISSING

    @Slot()
    def _on_item_changed(self) -> None:
        self.edited.emit(self.cases())

    @Slot()
    def _add_case(self) -> None:
        """A new case starts as a copy of the last one (two equal cases are an error: edit one)."""
        current = self.cases()
        cases = list(current) if current is not MISSING else []
        cases.append(dict(cases[-1]) if cases else {})
        self.edited.emit(cases)

    @Slot()
    def _remove_case(self) -> None:
        current = self.cases()
        if current is MISSING:
            return
        row = self.table.currentRow()
        cases = list(current)
        del cases[row if 0 <= row < len(cases) else -1]
        self.edited.emit(cases or MISSING)

    @Slot()
    def _add_column(self) -> None:
        name = self.column_edit.text().strip()
        if not name or name in self._columns:
            return
        current = self.cases()
        cases = list(current) if current is not MISSING else [{}]
        cases = [{**case, name: case.get(name, "")} for case in cases]
        self.column_edit.clear()
        self.edited.emit(cases)

    @Slot()
    def _remove_column(self) -> None:
        column = self.table.currentColumn()
        if not 0 <= column < len(self._columns):
            return
        name = self._columns[column]
        current = self.cases()
        if current is MISSING:
            return
        self.edited.emit([{k: v for k, v in case.items() if k != name} for case in current])


class DesignerView(QWidget):
    """Forms + YAML pane over a :class:`DesignerModel`."""

    fileChanged = Signal(str)
    statusMessage = Signal(str)

    SECTIONS = ("general", "variables", "stream", "queries", "engines", "static", "run")

    def __init__(self, model: DesignerModel | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("designer")
        self.model = model or DesignerModel()
        self._bindings: list[_Binding] = []
        self._built: dict[str, Any] = {}
        self._refreshing = False
        self._text_timers: list[QTimer] = []  # debounced multi-line fields (flushed before save/undo)
        self.engine_index = 0
        self.query_index = 0
        self.stream_iri: str | None = None  # the stream the stream form edits in a `streams:` document
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
        pages = (
            (self._general_page, "General"), (self._variables_page, "Variables"), (self._stream_page, "Stream"),
            (self._queries_page, "Queries"), (self._engines_page, "Engines"), (self._static_page, "Static data"),
            (self._run_settings_page, "KPIs, oracle, stand"),
        )
        for build, title in pages:
            page = build()
            self.sections.addTab(page if isinstance(page, QScrollArea) else self._scroll(page), title)
        # top-level field → section, to colour the tab of an invalid field
        self._section_of = {
            "name": 0, "description": 0, "seed": 0, "repetitions": 0, "sizes": 0,
            "variables": 1, "sweep": 1, "cases": 1, "stream": 2, "streams": 2, "queries": 3, "engines": 4, "static": 5,
            "kpis": 6, "oracle": 6, "stand": 6, "spark": 6,
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

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.sections)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([780, 480])
        layout = QVBoxLayout(self)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.error_label)
        layout.addWidget(self.splitter, 1)

        self.model.subscribe(self._on_model_changed)
        self._on_model_changed(Change((), "load"))

    def show_section(self, name: str) -> None:
        """Bring a form section to the front: general, variables, stream, queries, engines, static, run."""
        self.sections.setCurrentIndex(self.SECTIONS.index(name))

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

    def _bind(self, widget: QWidget, path: Callable[[], FieldPath], show: Callable[[Any], None], group: str = "") -> None:
        self._bindings.append(_Binding(widget, path, show, group))

    def _line(self, path: Callable[[], FieldPath], *, placeholder: str = "", text: bool = False,
              tooltip: str = "", group: str = "", parse: Callable[[str], Any] | None = None,
              format: Callable[[Any], str] = _yaml_value) -> QLineEdit:
        """A line edit bound to one field; it writes only when its text differs from what it showed."""
        edit = QLineEdit()
        edit.setPlaceholderText(placeholder)
        edit.setToolTip(tooltip)
        shown = {"text": ""}

        def show(value: Any) -> None:
            shown["text"] = format(value)
            edit.setText(shown["text"])

        def commit() -> None:
            raw = edit.text()
            if raw == shown["text"]:
                return
            if parse is not None:
                value = parse(raw)
            else:
                value = (raw if raw.strip() else MISSING) if text else _parse_cell(raw)
            shown["text"] = raw
            self._commit(path(), value)

        edit.editingFinished.connect(commit)
        self._bind(edit, path, show, group)
        return edit

    def _text_block(self, path: Callable[[], FieldPath], *, placeholder: str = "", lines: int = 3) -> QPlainTextEdit:
        """A multi-line text field (descriptions); typing is folded into one undo step."""
        edit = QPlainTextEdit()
        edit.setPlaceholderText(placeholder)
        edit.setTabChangesFocus(True)
        edit.setFixedHeight(edit.fontMetrics().lineSpacing() * lines + 14)
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(400)
        self._text_timers.append(timer)

        def show(value: Any) -> None:
            text = value if isinstance(value, str) else ""
            if edit.toPlainText() != text and not timer.isActive():
                edit.setPlainText(text)

        def typed() -> None:
            if not self._refreshing:
                timer.start()

        def commit() -> None:
            text = edit.toPlainText()
            current = self.model.get(path())
            if text == (current if isinstance(current, str) else ""):
                return
            self.model.set(path(), text if text.strip() else MISSING, merge=True)

        edit.textChanged.connect(typed)
        timer.timeout.connect(commit)
        self._bind(edit, path, show)
        return edit

    def _combo(self, path: Callable[[], FieldPath], choices: Sequence[Any], *, unset: Callable[[], str] | None = None,
               group: str = "", on_commit: Callable[[Any], None] | None = None) -> QComboBox:
        combo = QComboBox()

        def fill(current: Any) -> None:
            combo.clear()
            if unset is not None:
                combo.addItem(unset(), MISSING)
            for choice in choices:
                combo.addItem(scalar_text(choice), choice)
            if current is not MISSING and current not in choices:
                templated = isinstance(current, str) and "${" in current
                combo.addItem(f"{scalar_text(current)}" + (" (variable)" if templated else " (invalid)"), current)

        def show(value: Any) -> None:
            fill(value)
            for index in range(combo.count()):
                data = combo.itemData(index)
                if (data is MISSING and value is MISSING) or (data is not MISSING and data == value and type(data) is type(value)):
                    combo.setCurrentIndex(index)
                    return
            combo.setCurrentIndex(0)

        def commit(index: int) -> None:
            value = combo.itemData(index)
            if self._refreshing:
                return
            if on_commit is not None:
                on_commit(value)
            else:
                self._commit(path(), value)

        combo.activated.connect(commit)
        self._bind(combo, path, show, group)
        return combo

    def _check(self, path: Callable[[], FieldPath], label: str, *, default: bool = False, group: str = "") -> QCheckBox:
        box = QCheckBox(label)

        def show(value: Any) -> None:
            box.setChecked(bool(value) if isinstance(value, bool) else default)

        def commit(checked: bool) -> None:
            self._commit(path(), checked if checked != default else MISSING)

        box.clicked.connect(commit)
        self._bind(box, path, show, group)
        return box

    def _table(self, path: Callable[[], FieldPath], headers: tuple[str, str] = ("name", "value"), *,
               list_values: bool = False, group: str = "", **options: Any) -> MappingTable:
        table = MappingTable(headers, list_values=list_values, **options)
        table.edited.connect(lambda mapping: self._commit(path(), mapping))
        self._bind(table, path, table.show_mapping, group)
        return table

    def _marker(self, widget: QWidget, path: Callable[[], FieldPath], name: str, group: str = "") -> QWidget:
        """Bind a container to a field path only to mark it when the loader reports an error inside
        that no finer widget shows (an unknown generator parameter, a misspelt engine parameter)."""
        widget.setObjectName(name)
        widget.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._bind(widget, path, lambda value: None, group)
        return widget

    def _drop_group(self, group: str) -> None:
        """Forget a dynamic form's bindings (``QFormLayout.removeRow`` deletes the widgets)."""
        self._bindings = [b for b in self._bindings if b.group != group]

    def _with_browse(self, edit: QLineEdit, path: Callable[[], FieldPath], *, directory: bool = False) -> QWidget:
        """A path field with a Browse… button that writes the path relative to the experiment file."""
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(edit, 1)
        browse = QPushButton("Browse…")

        def ask() -> None:
            start = str(self.model.base_dir or Path.cwd())
            chosen = (QFileDialog.getExistingDirectory(self, "Folder", start) if directory
                      else QFileDialog.getOpenFileName(self, "File", start)[0])
            if chosen:
                self._commit(path(), self._relative(chosen))

        browse.clicked.connect(ask)
        row.addWidget(browse)
        return box

    # ------------------------------------------------------------------ pages
    def _general_page(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        form = QFormLayout()
        layout.addLayout(form)
        self.name_edit = self._line(lambda: ("name",), text=True, placeholder="required")
        self.name_edit.setObjectName("field_name")
        form.addRow("Name", self.name_edit)
        self.description_edit = self._text_block(lambda: ("description",), placeholder="what this experiment shows")
        self.description_edit.setObjectName("field_description")
        form.addRow("Description", self.description_edit)
        self.seed_edit = self._line(lambda: ("seed",), placeholder="0",
                                    tooltip="repetition 0 uses this seed; later ones derive theirs from it")
        self.seed_edit.setObjectName("field_seed")
        form.addRow("Seed", self.seed_edit)
        self.repetitions_edit = self._line(lambda: ("repetitions",), placeholder="1")
        self.repetitions_edit.setObjectName("field_repetitions")
        form.addRow("Repetitions", self.repetitions_edit)
        self.runs_label = QLabel()
        self.runs_label.setObjectName("runsCount")
        form.addRow("Runs", self.runs_label)
        note = QLabel("<b>Sizes</b> — named overrides of any top-level field (<tt>rspwb run FILE --size smoke</tt>); "
                      "YAML flow mappings such as <tt>{variables: {STATIONS: 5}, repetitions: 1}</tt>. "
                      "A variable a size sets is pinned: it leaves the sweep and the cases.")
        note.setWordWrap(True)
        layout.addWidget(note)
        self.sizes_table = self._table(lambda: ("sizes",), ("size", "overrides"), empty_value={}, new_name="size", rows=3)
        self.sizes_table.setObjectName("sizesTable")
        layout.addWidget(self.sizes_table)
        layout.addStretch(1)
        return page

    def _variables_page(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        note = QLabel("<b>Variables</b> — values of <tt>${NAME}</tt> in query templates, generator, flow and "
                      "engine parameters (the defaults: cases and the sweep override them)")
        note.setWordWrap(True)
        layout.addWidget(note)
        self.variables_table = self._table(lambda: ("variables",), ("variable", "value"), rows=4)
        self.variables_table.setObjectName("variablesTable")
        layout.addWidget(self.variables_table)
        note = QLabel("<b>Sweep</b> — each variable takes every listed value (Cartesian product; the first "
                      "varies slowest)")
        note.setWordWrap(True)
        layout.addWidget(note)
        self.sweep_table = self._table(lambda: ("sweep",), ("variable", "values (comma-separated)"), list_values=True, rows=2)
        self.sweep_table.setObjectName("sweepTable")
        layout.addWidget(self.sweep_table)
        note = QLabel("<b>Cases</b> — explicit combinations (YABench's <tt>tests</tt>), each crossed with the sweep; "
                      "an empty cell leaves the variable to <i>Variables</i>. A variable comes from the sweep or from "
                      "the cases, not both.")
        note.setWordWrap(True)
        layout.addWidget(note)
        self.cases_table = CasesTable()
        self.cases_table.edited.connect(lambda cases: self._commit(("cases",), cases))
        self._bind(self.cases_table.table, lambda: ("cases",), self.cases_table.show_cases)
        layout.addWidget(self.cases_table)
        self.combinations_label = QLabel()
        self.combinations_label.setObjectName("combinationsCount")
        layout.addWidget(self.combinations_label)
        layout.addStretch(1)
        return page

    def _stream_page(self) -> QWidget:
        """One stream (``stream:``) or several by IRI (``streams:``); the same form edits the single
        stream or the selected one, its paths following :meth:`_stream_path`."""
        page = QWidget()
        layout = QVBoxLayout(page)
        mode = QHBoxLayout()
        self.one_stream_radio = QRadioButton("One stream (every window reads it)")
        self.one_stream_radio.setObjectName("oneStream")
        self.several_streams_radio = QRadioButton("Several streams, by IRI (each window reads the stream it names)")
        self.several_streams_radio.setObjectName("severalStreams")
        self.one_stream_radio.clicked.connect(self._use_one_stream)
        self.several_streams_radio.clicked.connect(self._use_several_streams)
        self._stream_mode_group = QButtonGroup(page)  # radios of one parent are exclusive across pairs otherwise
        for radio in (self.one_stream_radio, self.several_streams_radio):
            self._stream_mode_group.addButton(radio)
            mode.addWidget(radio)
        mode.addStretch(1)
        layout.addLayout(mode)

        self.streams_box = self._marker(QGroupBox("Streams (stream IRI → stream)"), lambda: ("streams",), "streamsBox")
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
        self._stream_source_group = QButtonGroup(page)
        for radio in (self.generator_radio, self.file_radio):
            self._stream_source_group.addButton(radio)
            source.addWidget(radio)
        source.addStretch(1)
        layout.addLayout(source)

        from workbench.generators import GENERATOR_MODULES

        st = lambda *keys: (lambda: (*self._stream_path(), *keys))  # noqa: E731
        self.generator_box = QGroupBox("Generator")
        generator_form = QFormLayout(self.generator_box)
        self.generator_combo = self._combo(st("generator"), tuple(GENERATOR_MODULES))
        generator_form.addRow("Generator", self.generator_combo)
        self.generator_params = self._marker(QWidget(), st("params"), "generatorParams")
        self.generator_params_form = QFormLayout(self.generator_params)
        self.generator_params_form.setContentsMargins(0, 0, 0, 0)
        generator_form.addRow(self.generator_params)
        layout.addWidget(self.generator_box)

        self.file_box = QGroupBox("Recorded stream")
        file_form = QFormLayout(self.file_box)
        self.stream_file_edit = self._line(st("file"), text=True, placeholder="path relative to the experiment file")
        file_form.addRow("File", self._with_browse(self.stream_file_edit, st("file")))
        file_form.addRow("Format", self._combo(st("format"), STREAM_FILE_FORMATS, unset=lambda: "(from the extension)"))
        file_form.addRow("Interval", self._line(st("interval"), placeholder="1s (csrbench-dir only)"))
        layout.addWidget(self.file_box)

        from workbench.generators.flows import FLOW_SHAPES

        flow_box = self._marker(QGroupBox("Flow shape (triples per stimulus over time)"), st("flow"), "flowBox")
        self.flow_box = flow_box
        flow_layout = QHBoxLayout(flow_box)  # settings beside the preview: the page stays short
        settings = QVBoxLayout()
        flow_form = QFormLayout()
        self.flow_combo = self._combo(st("flow", "shape"), tuple(FLOW_SHAPES), unset=lambda: "(none: as generated)",
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
        return page

    def _queries_page(self) -> QWidget:
        page = QWidget()
        layout = QHBoxLayout(page)
        left = QVBoxLayout()
        self.query_list = QListWidget()
        self.query_list.setMaximumWidth(150)
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
        self.query_syntax_combo = self._combo(q("syntax"), QUERY_SYNTAXES, unset=lambda: "(auto-detect)")
        form.addRow("Syntax", self.query_syntax_combo)
        self.query_file_edit = self._line(q("file"), text=True, placeholder="or a query file (relative path)")
        form.addRow("File", self._with_browse(self.query_file_edit, q("file")))
        right.addLayout(form)
        self.query_label = QLabel("Template (${NAME} placeholders are filled from the variables)")
        right.addWidget(self.query_label)
        self.query_edit = CodeEditor(language="query")
        self.query_edit.setObjectName("queryEditor")
        self.query_edit.setMinimumHeight(150)
        self.query_edit.textChanged.connect(self._on_query_typed)
        self._bind(self.query_edit, q("text"), self._show_query_text)
        right.addWidget(self.query_edit, 1)
        right.addWidget(QLabel("<b>Windows</b> (size ω, slide β) — a value from a variable edits the variable"))
        self.window_table = QTableWidget(0, 4)
        self.window_table.setObjectName("windowTable")
        self.window_table.setHorizontalHeaderLabels(["stream", "size (RANGE)", "slide (STEP / SLIDE)", "reads"])
        self.window_table.horizontalHeaderItem(3).setToolTip(
            "the stream this window reads: the single stream, or the one 'streams' declares for its IRI")
        self.window_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.window_table.verticalHeader().setVisible(False)
        _table_height(self.window_table, 2)
        self.window_table.setMaximumHeight(self.window_table.minimumHeight() + 30)
        self.window_table.itemChanged.connect(self._on_window_edited)
        right.addWidget(self.window_table)
        right.addWidget(QLabel("<b>${VAR} values</b> used by this query"))
        self.query_vars = QTableWidget(0, 2)
        self.query_vars.setObjectName("queryVariables")
        self.query_vars.setHorizontalHeaderLabels(["variable", "value (variables) / swept values"])
        self.query_vars.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.query_vars.verticalHeader().setVisible(False)
        _table_height(self.query_vars, 3)
        self.query_vars.setMaximumHeight(self.query_vars.minimumHeight() + 30)
        self.query_vars.itemChanged.connect(self._on_query_var_edited)
        right.addWidget(self.query_vars)
        layout.addLayout(right, 1)
        return page

    def _engines_page(self) -> QWidget:
        page = QWidget()
        layout = QHBoxLayout(page)
        left = QVBoxLayout()
        self.engine_list = QListWidget()
        self.engine_list.setMaximumWidth(150)
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
        self.engine_type_combo = self._combo(e("type"), ENGINE_TYPES, on_commit=self._set_engine_type)
        self.engine_type_combo.setObjectName("engineType")
        form.addRow("Type", self.engine_type_combo)
        self.preset_combo = self._combo(e("preset"), tuple(PRESETS), unset=lambda: "(none: defaults)")
        form.addRow("Preset", self.preset_combo)
        right.addLayout(form)

        semantics = self._semantics_group("Semantics (SECRET + R2S); unset fields come from the preset",
                                          e("semantics"), self._effective_semantics, "semantics")
        right.addWidget(semantics)

        self.faults_box = QGroupBox("Injected faults (built-in engines)")
        faults_layout = QHBoxLayout(self.faults_box)
        for fault in FAULTS:
            box = self._check(e("faults", fault), fault)
            box.setObjectName(f"fault_{fault}")
            faults_layout.addWidget(box)
        faults_layout.addStretch(1)
        right.addWidget(self.faults_box)
        self.parameters_box = self._marker(QGroupBox("Parameters"), e("parameters"), "engineParameters")
        parameters_layout = QVBoxLayout(self.parameters_box)
        self.external_warning = QLabel(EXTERNAL_WARNING)
        self.external_warning.setObjectName("externalWarning")
        self.external_warning.setWordWrap(True)
        self.external_warning.setStyleSheet(WARNING_STYLE)
        parameters_layout.addWidget(self.external_warning)
        self.engine_params_form = QFormLayout()
        parameters_layout.addLayout(self.engine_params_form)
        right.addWidget(self.parameters_box)
        right.addStretch(1)
        layout.addLayout(right, 1)
        return page

    def _semantics_group(self, title: str, base: Callable[[], FieldPath], semantics: Callable[[], EngineSemantics],
                         prefix: str) -> QGroupBox:
        """Every SECRET + R2S parameter of one semantics mapping, two columns; unset = the preset's."""
        box = QGroupBox(title)
        grid = QGridLayout(box)
        s = lambda key: (lambda: (*base(), key))  # noqa: E731

        def preset_label(key: str) -> Callable[[], str]:
            return lambda: f"(preset: {scalar_text(semantics().describe().get(key))})"

        cells: list[tuple[str, QWidget]] = []
        for key, label, tip in SEMANTICS_LABELS:
            combo = self._combo(s(key), SEMANTICS_CHOICES[key], unset=preset_label(key))
            combo.setObjectName(f"{prefix}_{key}")
            combo.setToolTip(tip)
            cells.append((label, combo))
        t0 = self._line(s("t0"), placeholder="preset / all admissible",
                        tooltip="a duration such as 0s, or auto (hidden: every admissible t0, RSP-QL Theorem 1)")
        t0.setObjectName(f"{prefix}_t0")
        cells.append(("t0", t0))
        batch = self._line(s("batch_size"), placeholder="1 (batch tick)")
        batch.setObjectName(f"{prefix}_batch_size")
        cells.append(("Batch size", batch))
        for index, (label, widget) in enumerate(cells):
            row, column = divmod(index, 2)
            grid.addWidget(QLabel(label), row, column * 2)
            grid.addWidget(widget, row, column * 2 + 1)
        report_row = (len(cells) + 1) // 2
        grid.addWidget(QLabel("Report policy"), report_row, 0)
        report = self._report_widget(s("report"), semantics, prefix)
        grid.addWidget(report, report_row, 1, 1, 3)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        if prefix == "semantics":
            self.report_widget = report
        return box

    def _effective_semantics(self) -> EngineSemantics:
        preset = self.model.get(("engines", self.engine_index, "preset"))
        return PRESETS.get(preset, EngineSemantics()) if isinstance(preset, str) else EngineSemantics()

    def _oracle_semantics(self) -> EngineSemantics:
        system = self.model.get(("oracle", "system"))
        return PRESETS.get(system, EngineSemantics()) if isinstance(system, str) else EngineSemantics()

    def _report_widget(self, path: Callable[[], FieldPath], semantics: Callable[[], EngineSemantics], prefix: str) -> QWidget:
        """The report policy (CSRBench/SECRET strategies CC, WC, NC, P(period)) as check boxes."""
        box = QWidget()
        box.setObjectName(f"{prefix}_report")
        box.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        override = QCheckBox("override")
        override.setObjectName(f"{prefix}_report_override")
        row.addWidget(override)
        boxes = {}
        for short, long in STRATEGY_BOXES:
            check = QCheckBox(short)
            check.setToolTip(long)
            check.setObjectName(f"{prefix}_report_{short}")
            boxes[long] = check
            row.addWidget(check)
        period = QLineEdit()
        period.setObjectName(f"{prefix}_report_period")
        period.setPlaceholderText("period, e.g. 5s")
        period.setMaximumWidth(110)
        row.addWidget(period)
        row.addStretch(1)
        if prefix == "semantics":
            self.report_boxes = boxes
            self.report_override = override
            self.report_period = period

        def show(value: Any) -> None:
            from workbench.core.semantics import ReportPolicy

            text = value if isinstance(value, str) else str(semantics().report)
            override.setChecked(value is not MISSING)
            try:
                policy = ReportPolicy.parse(text)
                names = {s.value for s in policy.strategies}
                period.setText(f"{policy.period_ms}ms" if policy.period_ms else "")
                period.setProperty("shown", period.text())
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
        period.editingFinished.connect(lambda: commit() if period.text() != period.property("shown") else None)
        self._bind(box, path, show)
        return box

    def _static_page(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        note = QLabel("Static data and ontologies loaded before the stream (Heaven's T). "
                      "Paths are relative to the experiment file; the format defaults from the extension.")
        note.setWordWrap(True)
        layout.addWidget(note)
        self.static_table = QTableWidget(0, 3)
        self.static_table.setObjectName("staticTable")
        self.static_table.setHorizontalHeaderLabels(["file", "named graph (optional)", "format (optional)"])
        self.static_table.horizontalHeaderItem(2).setToolTip(f"one of {', '.join(STATIC_FORMATS)}; default from the extension")
        self.static_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.static_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.static_table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.static_table.verticalHeader().setVisible(False)
        self.static_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        _table_height(self.static_table, 4)
        self.static_table.itemChanged.connect(self._on_static_edited)
        self._bind(self.static_table, lambda: ("static",), self._show_static)
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

    def _run_settings_page(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        kpis = QGroupBox("KPIs (Heaven's K)")
        kpis.setObjectName("kpisBox")
        kpi_layout = QVBoxLayout(kpis)
        row = QHBoxLayout()
        self.kpi_boxes: dict[str, QCheckBox] = {}
        for name in KPI_NAMES:
            box = QCheckBox(name)
            box.setObjectName(f"kpi_{name}")
            box.clicked.connect(self._on_kpi_clicked)
            self.kpi_boxes[name] = box
            row.addWidget(box)
        row.addStretch(1)
        self._bind(kpis, lambda: ("kpis", "collect"), self._show_kpis)
        kpi_layout.addLayout(row)
        sampling_form = QFormLayout()
        self.sampling_edit = QLineEdit()
        self.sampling_edit.setObjectName("kpiSampling")
        self.sampling_edit.setPlaceholderText("500ms")
        self.sampling_edit.editingFinished.connect(self._on_sampling_edited)
        self._bind(self.sampling_edit, lambda: ("kpis", "sampling"), self._show_sampling)
        sampling_form.addRow("Sampling period", self.sampling_edit)
        kpi_layout.addLayout(sampling_form)
        layout.addWidget(kpis)

        oracle = QGroupBox("Oracle (expected answers)")
        oracle_layout = QVBoxLayout(oracle)
        oracle_form = QFormLayout()
        self.oracle_system_combo = self._combo(lambda: ("oracle", "system"), ("engine", *PRESETS),
                                               unset=lambda: "(engine: each engine's own semantics)")
        self.oracle_system_combo.setObjectName("oracle_system")
        oracle_form.addRow("System", self.oracle_system_combo)
        match = self._combo(lambda: ("oracle", "match"), ORACLE_MATCHES, unset=lambda: "(strict)")
        match.setObjectName("oracle_match")
        match.setToolTip("strict: equal answers; csrbench: the engine's answers contained in the oracle's")
        oracle_form.addRow("Match", match)
        gracious = self._check(lambda: ("oracle", "gracious"), "gracious mode (reconstruct the borders the engine used)")
        gracious.setObjectName("oracle_gracious")
        oracle_form.addRow("", gracious)
        t0 = self._line(lambda: ("oracle", "t0"), placeholder="all (every admissible t0, RSP-QL Theorem 1)")
        t0.setObjectName("oracle_t0")
        oracle_form.addRow("t0", t0)
        oracle_layout.addLayout(oracle_form)
        oracle_layout.addWidget(self._semantics_group("Semantics overrides of the system's preset",
                                                      lambda: ("oracle", "semantics"), self._oracle_semantics,
                                                      "oracle_semantics"))
        layout.addWidget(oracle)

        stand = QGroupBox("Test stand and Spark")
        stand_form = QFormLayout(stand)
        mode = self._combo(lambda: ("stand", "mode"), STAND_MODES, unset=lambda: "(real-time)")
        mode.setObjectName("stand_mode")
        mode.setToolTip("real-time: stimuli at their application times; absolute-time: the next one when the engine is done")
        stand_form.addRow("Mode", mode)
        scale = self._line(lambda: ("stand", "time_scale"), placeholder="1.0", tooltip="> 1 plays the stream faster")
        scale.setObjectName("stand_time_scale")
        stand_form.addRow("Time scale", scale)
        timeout = self._line(lambda: ("stand", "timeout"), placeholder="none", tooltip="a duration, e.g. 60s")
        timeout.setObjectName("stand_timeout")
        stand_form.addRow("Timeout", timeout)
        master = self._line(lambda: ("spark", "master"), text=True,
                            placeholder="from the settings, $SPARK_MASTER or local[*]",
                            tooltip="where this experiment's Spark jobs run, e.g. spark://host:7077")
        master.setObjectName("spark_master")
        stand_form.addRow("Spark master", master)
        layout.addWidget(stand)
        layout.addStretch(1)
        return page

    # ------------------------------------------------------------------ dynamic forms
    def _clear_form(self, form: QFormLayout, group: str) -> None:
        self._drop_group(group)
        while form.rowCount():
            form.removeRow(0)

    def _rebuild_generator_params(self, generator: Any) -> None:
        if self._built.get("generator") == generator:
            return
        self._built["generator"] = generator
        self._clear_form(self.generator_params_form, "generator")
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
            path = (lambda name: (lambda: (*self._stream_path(), "params", name)))(param.name)
            tip = f"{param.doc} ({param.kind}{', required' if param.required else ''})"
            if param.kind == "choice":
                widget: QWidget = self._combo(path, param.choices, unset=lambda p=param: f"(default: {p.default})", group="generator")
            elif param.kind == "bool":
                widget = self._check(path, param.doc, default=bool(param.default), group="generator")
            else:
                if param.name == "seed":
                    default = "the run's seed (from the experiment seed)"
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
        self._clear_form(self.flow_params_form, "flow")
        from workbench.generators.flows import FLOW_SHAPES

        for param in FLOW_SHAPES.get(str(shape), ()):
            path = (lambda name: (lambda: (*self._stream_path(), "flow", name)))(param.name)
            if param.name == "seed":
                default = "the run's seed (from the experiment seed)"
            else:
                default = "" if param.default is None else f"default: {scalar_text(param.default)}"
            edit = self._line(path, placeholder=default or ("required" if param.required else ""),
                              tooltip=param.doc, group="flow")
            edit.setObjectName(f"flow_{param.name}")
            self.flow_params_form.addRow(f"{param.name} ({param.kind})", edit)

    def _rebuild_engine_params(self, engine_type: Any) -> None:
        """One field per parameter the engine type takes (``ENGINE_PARAMETERS``: name → (kind, required)),
        so a parameter added to the engines appears here without touching the designer."""
        from workbench.experiment.runs import ENGINE_PARAMETERS

        parameters = ENGINE_PARAMETERS.get(str(engine_type), {})
        key = (engine_type, tuple(parameters.items()))
        if self._built.get("engine") == key:
            return
        self._built["engine"] = key
        self._clear_form(self.engine_params_form, "engine")
        self.engine_param_widgets: dict[str, QWidget] = {}
        if engine_type not in ENGINE_PARAMETERS:
            self.engine_params_form.addRow(QLabel("choose an engine type to see its parameters"))
            return
        if not parameters:
            self.engine_params_form.addRow(QLabel(f"a {engine_type} engine takes no parameters"))
            return
        for name, (kind, required) in parameters.items():
            path = (lambda name_: (lambda: ("engines", self.engine_index, "parameters", name_)))(name)
            hint = PARAMETER_HINTS.get(kind, kind)
            placeholder = "required" if required else "optional"
            row_widget: QWidget
            if kind in PARAMETER_CHOICES:
                widget: QWidget = self._combo(path, PARAMETER_CHOICES[kind](), unset=lambda p=placeholder: f"({p})",
                                              group="engine")
                row_widget = widget
            elif kind == "env":
                widget = self._table(path, ("variable", "value"), group="engine", new_name="NAME", rows=2)
                row_widget = widget
            elif kind == "bool":
                widget = self._check(path, name, group="engine")
                row_widget = widget
            elif kind == "command":
                widget = self._line(path, placeholder=f"{placeholder}: {hint}", group="engine",
                                    parse=parse_command, format=command_text,
                                    tooltip="split like a shell command line, but run without a shell")
                row_widget = widget
            elif kind in ("file", "directory"):
                widget = self._line(path, placeholder=f"{placeholder}: {hint}", group="engine", text=True)
                row_widget = self._with_browse(widget, path, directory=kind == "directory")
            else:
                widget = self._line(path, placeholder=f"{placeholder}: {hint}", group="engine")
                row_widget = widget
            widget.setObjectName(f"engine_param_{name}")
            if not widget.toolTip():
                widget.setToolTip(f"{name}: {hint}{' (required)' if required else ''}")
            self.engine_param_widgets[name] = widget
            self.engine_params_form.addRow(f"{name}{' *' if required else ''}", row_widget)

    def _update_flow_preview(self) -> None:
        flow = self.model.get((*self._stream_path(), "flow"))
        if not isinstance(flow, dict) or "shape" not in flow:
            self.flow_curve.setData([], [])
            self.flow_message.setText("No flow shape: stimuli are sent as the stream is timestamped.")
            return
        from workbench.core.time import parse_duration
        from workbench.generators.flows import rate_preview

        variables = self.model.get(("variables",), {}) or {}
        settings = {k: _resolve_template(v, variables) for k, v in flow.items()}
        duration_raw = _resolve_template(self.model.get((*self._stream_path(), "params", "duration"), "10s"), variables)
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
            self._show_stream_choice()
            stream = model.get(self._stream_path(), {})
            uses_file = isinstance(stream, dict) and "file" in stream and "generator" not in stream
            self.generator_radio.setChecked(not uses_file)
            self.file_radio.setChecked(uses_file)
            self.generator_box.setVisible(not uses_file)
            self.file_box.setVisible(uses_file)
            self._rebuild_generator_params(model.get((*self._stream_path(), "generator")))
            self._rebuild_flow_params(model.get((*self._stream_path(), "flow", "shape")))
            engine_type = model.get(("engines", self.engine_index, "type"))
            self._rebuild_engine_params(engine_type)
            self.external_warning.setVisible(engine_type == "external")
            self.faults_box.setEnabled(engine_type != "external")
            self.faults_box.setToolTip("external engines cannot have injected faults" if engine_type == "external" else "")
            for binding in self._bindings:
                blocked = binding.widget.blockSignals(True)
                try:
                    binding.show(model.get(binding.path()))
                finally:
                    binding.widget.blockSignals(blocked)
            self._show_query_vars()
            self._show_query_windows()
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
        """The inline template (editable), or the query file's text (read-only: the file is edited elsewhere)."""
        from_file = not isinstance(value, str) and self.model.get(("queries", self.query_index, "file")) is not MISSING
        text = self._query_template()[0] if from_file else (value if isinstance(value, str) else "")
        if self.query_edit.toPlainText() != text and not self._query_timer.isActive():
            self.query_edit.set_text_keep_view(text)
        self.query_edit.setReadOnly(from_file)
        self.query_label.setText(f"Template from {self.model.get(('queries', self.query_index, 'file'))} (read-only here)"
                                 if from_file else "Template (${NAME} placeholders are filled from the variables)")

    def _query_template(self) -> tuple[str, bool]:
        """The current query's template and whether it is editable here (inline text, not a file)."""
        return self.model.query_template(self.query_index)

    def _variable_cell(self, name: str, editable: bool) -> QTableWidgetItem:
        """A cell showing the value of ``${name}``: the variable's value (editable), or where it comes from."""
        variables = self.model.get(("variables",), {}) or {}
        sweep = self.model.get(("sweep",), {}) or {}
        cases = self.model.get(("cases",), []) or []
        if isinstance(sweep, dict) and name in sweep:
            item = _item(f"swept: {_yaml_value(sweep[name])}", editable=False,
                         tooltip=f"${{{name}}} takes every value of the sweep (Variables section)")
        elif isinstance(cases, list) and any(isinstance(case, dict) and name in case for case in cases):
            values = dict.fromkeys(_yaml_value(case[name]) for case in cases if isinstance(case, dict) and name in case)
            item = _item(f"per case: {', '.join(values)}", editable=False,
                         tooltip=f"${{{name}}} is set by the cases (Variables section)")
        elif isinstance(variables, dict) and name in variables:
            value = variables[name]
            item = _item(_yaml_value(value), value, editable=editable,
                         tooltip=f"the value of ${{{name}}}; editing it edits the variable")
        else:
            item = _item("", editable=editable, tooltip=f"${{{name}}} is not defined: type a value to add it to the variables")
            item.setBackground(QColor("#fff59d"))
        item.setForeground(QColor(TEMPLATE_COLOR))
        return item

    def _show_query_vars(self) -> None:
        from workbench.experiment.runs import template_variables

        text, _ = self._query_template()
        names = sorted(template_variables(text)) if text else []
        blocked = self.query_vars.blockSignals(True)
        self.query_vars.setRowCount(0)
        for name in names:
            row = self.query_vars.rowCount()
            self.query_vars.insertRow(row)
            self.query_vars.setItem(row, 0, _item(name, name, editable=False))
            self.query_vars.setItem(row, 1, self._variable_cell(name, True))
        self.query_vars.blockSignals(blocked)

    def _show_query_windows(self) -> None:
        template, editable = self._query_template()
        syntax = self.model.get(("queries", self.query_index, "syntax"))
        windows = query_windows(template, syntax if isinstance(syntax, str) else None)
        self._windows = windows
        blocked = self.window_table.blockSignals(True)
        self.window_table.setRowCount(0)
        for row, window in enumerate(windows):
            self.window_table.insertRow(row)
            self.window_table.setItem(row, 0, _item(window.stream or "(unnamed)", editable=False))
            for column, part in ((1, window.size), (2, window.slide)):
                variable = WindowField.variable(part)
                if variable is not None:
                    item = self._variable_cell(variable, True)
                    item.setToolTip(f"${{{variable}}}: {item.toolTip()}")
                elif part is None:
                    text = "TUMBLING (= size)" if window.tumbling else "(none)"
                    item = _item(text, editable=editable,
                                 tooltip=f"type a slide to add {window.keyword} …" if editable else "")
                else:
                    item = _item(part, part, editable=editable,
                                 tooltip="written in the query text" if editable else "written in the query file (read-only here)")
                self.window_table.setItem(row, column, item)
            self.window_table.setItem(row, 3, self._window_binding_item(window_stream_iri(template, window)))
        if not windows:
            self.window_table.insertRow(0)
            self.window_table.setItem(0, 0, _item("no window clause found (plain SPARQL: the whole stream)", editable=False))
        self.window_table.blockSignals(blocked)

    def _window_binding_item(self, iri: str | None) -> QTableWidgetItem:
        """Which declared stream a window reads; an IRI ``streams:`` does not declare is marked."""
        model = self.model
        if not model.several_streams:
            summary = _stream_summary(model.get(("stream",)))
            return _item(f"the stream ({summary})", editable=False,
                         tooltip="a single 'stream:' is read by every window, whatever IRI it names")
        if iri is None:
            item = _item("? (IRI not resolved)", editable=False,
                         tooltip="the window's stream IRI uses an undeclared prefix or a ${VAR}")
            item.setForeground(QColor("#8a4b00"))
            return item
        if iri in model.stream_iris():
            return _item(f"✔ {iri.rsplit('/', 1)[-1] or iri} ({_stream_summary(model.get(('streams', iri)))})",
                         editable=False, tooltip=f"<{iri}>, declared in streams")
        item = _item("✖ not declared in streams", editable=False,
                     tooltip=f"<{iri}> is not declared in 'streams' (Stream section: Add stream, or rename one)")
        item.setBackground(QColor("#ffd6d6"))
        item.setForeground(QColor("#c62828"))
        return item

    def _show_static(self, value: Any) -> None:
        self.static_table.setRowCount(0)
        for item in value if isinstance(value, list) else []:
            row = self.static_table.rowCount()
            self.static_table.insertRow(row)
            entry = item if isinstance(item, dict) else {"file": item}
            for column, key in enumerate(("file", "graph", "format")):
                shown = _yaml_value(entry.get(key, MISSING))
                cell = _item(shown, item if column == 0 else MISSING)
                self.static_table.setItem(row, column, cell)

    def _show_kpis(self, value: Any) -> None:
        raw = self.model.get(("kpis",))
        chosen = value if isinstance(value, list) else (raw if isinstance(raw, list) else list(KPI_NAMES))
        for name, box in self.kpi_boxes.items():
            box.setChecked(name in chosen)

    def _show_sampling(self, value: Any) -> None:
        self._sampling_shown = _yaml_value(value)
        self.sampling_edit.setText(self._sampling_shown)

    def _show_validation(self) -> None:
        validation = self.model.validation
        for binding in self._bindings:
            if binding.widget.property("invalid"):
                binding.widget.setStyleSheet("")
                binding.widget.setProperty("invalid", False)
        for index in range(self.sections.count()):
            self.sections.tabBar().setTabTextColor(index, self.palette().text().color())
        self.yaml_edit.mark_line(None)
        if validation.ok:
            from workbench.experiment.runs import count_runs, variable_combinations

            experiment = validation.experiment
            runs = count_runs(experiment) if experiment is not None else 0
            combinations = len(variable_combinations(experiment)) if experiment is not None else 0
            self.error_label.setText(f"<span style='color:#2e7d32'>✔ valid — {runs} run(s)</span>")
            self.runs_label.setText(f"{runs} = {combinations} combination(s) × {experiment.repetitions} repetition(s) × "
                                    f"{len(experiment.engines)} engine(s) × {len(experiment.queries)} query(ies)"
                                    if experiment is not None else "")
            self.combinations_label.setText(f"{combinations} variable combination(s)")
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
        field = error.field or ""
        for row in range(self.stream_list.count()):  # an error in a stream the form does not show
            item = self.stream_list.item(row)
            if field == f"streams.{item.text()}" or field.startswith(f"streams.{item.text()}."):
                item.setForeground(QColor("#c62828"))
                item.setToolTip(error.message)
        top = field.split(".")[0].split("[")[0]
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
        for timer in self._text_timers:
            if timer.isActive():
                timer.stop()
                timer.timeout.emit()

    @Slot()
    def _on_query_typed(self) -> None:
        if not self._refreshing:
            self._query_timer.start()

    @Slot()
    def _apply_query_text(self) -> None:
        if self.model.get(("queries", self.query_index)) is MISSING:
            return
        self.model.set(("queries", self.query_index, "text"), self.query_edit.toPlainText(), merge=True)

    @Slot(QTableWidgetItem)
    def _on_query_var_edited(self, item: QTableWidgetItem) -> None:
        if item.column() != 1:
            return
        name = self.query_vars.item(item.row(), 0).text()
        self._set_variable(name, item)

    def _set_variable(self, name: str, item: QTableWidgetItem) -> None:
        value = _cell_value(item)
        if value is not MISSING and self.model.get(("variables", name)) != value:
            self.model.set(("variables", name), value)

    @Slot(QTableWidgetItem)
    def _on_window_edited(self, item: QTableWidgetItem) -> None:
        """A window size or slide typed in the table: edit the variable it comes from, or the query text."""
        row, column = item.row(), item.column()
        windows = getattr(self, "_windows", [])
        if column not in (1, 2) or not 0 <= row < len(windows):
            return
        shown = item.data(Qt.ItemDataRole.UserRole)
        if isinstance(shown, _Shown) and shown.text == item.text():
            return
        window = windows[row]
        part = "size" if column == 1 else "slide"
        variable = WindowField.variable(window.size if part == "size" else window.slide)
        if variable is not None:
            self._set_variable(variable, item)
            return
        self.flush_pending_edits()
        template, editable = self._query_template()
        if not editable:
            return
        self.model.set(("queries", self.query_index, "text"), set_window_value(template, window, part, item.text()))

    @Slot()
    def _on_static_edited(self) -> None:
        entries: list[Any] = []
        for row in range(self.static_table.rowCount()):
            items = [self.static_table.item(row, c) for c in range(3)]
            cells = [item.text().strip() if item else "" for item in items]
            if not any(cells):
                continue
            shown = [item.data(Qt.ItemDataRole.UserRole) if item else None for item in items]
            if all(isinstance(s, _Shown) and s.text == cell for s, cell in zip(shown, cells)) and shown[0].value is not MISSING:
                entries.append(shown[0].value)  # an untouched row keeps its form (short or mapping)
            elif not cells[1] and not cells[2]:
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
        if self.sampling_edit.text() == getattr(self, "_sampling_shown", ""):
            return
        self._sampling_shown = self.sampling_edit.text()
        raw = self.model.get(("kpis",))
        chosen = raw if isinstance(raw, list) else (raw.get("collect", list(KPI_NAMES)) if isinstance(raw, dict) else list(KPI_NAMES))
        value = parse_scalar(self.sampling_edit.text())
        new: dict[str, Any] = {"collect": chosen}
        if value is not MISSING:
            new["sampling"] = value
        self._commit(("kpis",), new)

    def _set_engine_type(self, engine_type: Any) -> None:
        """Changing the type drops parameters (and faults) the new type rejects, as one undo step."""
        if engine_type is MISSING:
            return
        engine = self.model.get(("engines", self.engine_index))
        if isinstance(engine, dict) and engine.get("type") == engine_type:
            return
        self.model.set(("engines", self.engine_index), engine_with_type(engine, str(engine_type)))

    def _set_flow_shape(self, shape: Any) -> None:
        """A new shape keeps only the settings the new shape has (one undo step)."""
        from workbench.generators.flows import FLOW_SHAPES

        path = (*self._stream_path(), "flow")
        flow = self.model.get(path)
        if shape is MISSING:
            self._commit(path, MISSING)
            return
        names = {param.name for param in FLOW_SHAPES.get(str(shape), ())}
        kept = {k: v for k, v in flow.items() if k in names} if isinstance(flow, dict) else {}
        self._commit(path, {"shape": shape, **kept})

    def _switch_stream_source(self, kind: str) -> None:
        path = self._stream_path()
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
        self._commit(path, new)

    # ------------------------------------------------------------------ several streams
    def _stream_path(self) -> FieldPath:
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
            item.setToolTip(_stream_summary(model.get(("streams", item.text()))))
        self.stream_iri_edit.setText(self.stream_iri or "")
        self.stream_form_label.setVisible(several)
        self.stream_form_label.setText(f"<b>&lt;{_html(self.stream_iri or '')}&gt;</b> comes from:")
        self.remove_stream_button.setEnabled(len(iris) > 1)
        readers = [f"{query_id} (window {number + 1})" for query_id, number, iri in model.window_iris() if iri == self.stream_iri]
        self.stream_readers_label.setText(
            f"Read by: {', '.join(readers)}" if readers
            else "<span style='color:#8a4b00'>No query window reads this stream (allowed: another query may).</span>")

    @Slot()
    def _use_several_streams(self) -> None:
        self.flush_pending_edits()
        if self.model.use_several_streams():
            self.stream_iri = self.model.stream_iris()[0]
            self.refresh(update_yaml=False)

    @Slot()
    def _use_one_stream(self) -> None:
        self.flush_pending_edits()
        try:
            self.model.use_one_stream()
        except UserError as error:
            self.statusMessage.emit(error.message)
            self.refresh(update_yaml=False)

    @Slot(int)
    def _select_stream(self, row: int) -> None:
        iris = self.model.stream_iris()
        if 0 <= row < len(iris) and iris[row] != self.stream_iri:
            self.flush_pending_edits()
            self.stream_iri = iris[row]
            self.refresh(update_yaml=False)

    @Slot()
    def _add_stream(self) -> None:
        self.flush_pending_edits()
        try:
            iri = self.model.add_stream()
        except UserError as error:
            self.statusMessage.emit(error.message)
            return
        self.stream_iri = iri
        self.refresh(update_yaml=False)

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
        self.refresh(update_yaml=False)

    @Slot(int)
    def _select_query(self, row: int) -> None:
        if row >= 0 and row != self.query_index:
            self.flush_pending_edits()
            self.query_index = row
            self.refresh(update_yaml=False)

    @Slot(int)
    def _select_engine(self, row: int) -> None:
        if row >= 0 and row != self.engine_index:
            self.flush_pending_edits()
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
        self.stream_iri = None
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
        for timer in self._text_timers:
            timer.stop()
        super().closeEvent(event)


def _resolve_template(value: Any, variables: Any) -> Any:
    """``${NAME}`` exactly → the variable's value (for previews only)."""
    if isinstance(value, str) and value.startswith("${") and value.endswith("}") and isinstance(variables, dict):
        return variables.get(value[2:-1], value)
    return value


def _stream_summary(stream: Any) -> str:
    """``generator sg1`` / ``file s.nq`` for a stream mapping as written (lists and tooltips)."""
    if not isinstance(stream, dict):
        return "not a stream description"
    if stream.get("generator") is not None:
        return f"generator {stream['generator']}"
    if stream.get("file") is not None:
        return f"file {stream['file']}"
    return "needs a file or a generator"


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
