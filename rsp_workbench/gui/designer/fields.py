"""What every section of the designer is built from: a widget bound to one field path.

A section (:class:`DesignerSection`) reads its widgets' values from the shared
:class:`~rsp_workbench.gui.designer.model.DesignerModel` and writes edits back as commands; it
knows nothing of the other sections. A widget only writes when the user changed what it
shows, so opening a file never rewrites it (``"10"`` stays a string, ``{file: x}`` stays a
mapping). The tables here (:class:`MappingTable`) and the cell helpers keep that promise for
table cells too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.gui.designer.model import MISSING, DesignerModel, FieldPath, parse_scalar, scalar_text

INVALID_STYLE = "border: 2px solid #d32f2f; background: #fff3f3;"
WARNING_STYLE = "color: #8a4b00; background: #fff4e0; border: 1px solid #f0b35a; padding: 4px;"
TEMPLATE_COLOR = "#c2185b"  # the highlighters' ${VAR} colour: a value that comes from a variable

@dataclass
class Binding:
    """A widget bound to a field: ``path()`` locates it now, ``show(value)`` displays a value."""

    widget: QWidget
    path: Callable[[], FieldPath]
    show: Callable[[Any], None]
    group: str = ""


@dataclass(frozen=True)
class Shown:
    """What a cell showed and the value behind it: an untouched cell writes the value back as is."""

    text: str
    value: Any


def yaml_value(value: Any) -> str:
    if value is MISSING or value is None:
        return ""
    if isinstance(value, (list, dict)):
        return yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10_000).strip()
    return scalar_text(value)


def parse_cell(text: str) -> Any:
    """A table cell: YAML flow values allowed (``[50, 100]``, ``{a: 1}``)."""
    stripped = text.strip()
    if stripped.startswith(("[", "{")):
        try:
            return yaml.safe_load(stripped)
        except yaml.YAMLError:
            return stripped
    return parse_scalar(text)


def table_item(text: str, value: Any = MISSING, *, editable: bool = True, tooltip: str = "") -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setData(Qt.ItemDataRole.UserRole, Shown(text, value))
    if not editable:
        item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if tooltip:
        item.setToolTip(tooltip)
    return item


def cell_value(item: QTableWidgetItem | None, parse: Callable[[str], Any] = parse_cell) -> Any:
    """The value of a cell: the original if the user left its text alone, else the parsed text."""
    if item is None:
        return MISSING
    shown = item.data(Qt.ItemDataRole.UserRole)
    if isinstance(shown, Shown) and shown.text == item.text() and shown.value is not MISSING:
        return shown.value
    return parse(item.text())


def block_tooltip(value: Any) -> str:
    if isinstance(value, (dict, list)) and value:
        return yaml.safe_dump(value, default_flow_style=False, sort_keys=False).strip()
    return ""


def table_height(table: QTableWidget, rows: int) -> None:
    """Size a table to show ``rows`` rows without a scroll bar (forms scroll, not tables)."""
    header = table.horizontalHeader().sizeHint().height()
    table.setMinimumHeight(header + rows * table.verticalHeader().defaultSectionSize() + 6)


def refill_rows(table: QTableWidget, rows: int) -> None:
    """Empty every cell of ``table`` and give it ``rows`` rows, keeping the rows it has.

    A table showing the model again after one of its own cells was edited must not remove that
    cell's row: the edit is applied while the table commits the cell's editor, and clearing the
    table with ``setRowCount(0)`` there left Qt committing an editor whose row was gone ("commitData
    called with an editor that does not belong to this view"). Emptied cells keep their rows."""
    table.setRowCount(rows)
    for row in range(rows):
        for column in range(table.columnCount()):
            table.takeItem(row, column)


def fit_rows(table: QTableWidget, minimum: int, maximum: int = 10) -> None:
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
        fit_rows(self.table, rows)
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
            return ", ".join(yaml_value(v) for v in value)
        return yaml_value(value)

    def show_mapping(self, mapping: Any) -> None:
        blocked = self.table.blockSignals(True)
        items = list(mapping.items()) if isinstance(mapping, dict) else []
        refill_rows(self.table, len(items))
        for row, (name, value) in enumerate(items):
            self.table.setItem(row, 0, table_item(str(name), name))
            text = self._text(value)
            self.table.setItem(row, 1, table_item(text, value, tooltip=block_tooltip(value)))
        self.table.blockSignals(blocked)
        fit_rows(self.table, self._rows)

    def _parse(self, text: str) -> Any:
        if self._list_values:
            value = parse_cell(text) if text.strip().startswith("[") else parse_cell(f"[{text}]")
            return value if isinstance(value, list) else [value]
        value = parse_cell(text)
        return self._empty_value if value is MISSING else value

    def mapping(self) -> Any:
        result: dict[str, Any] = {}
        for row in range(self.table.rowCount()):
            name_item = self.table.item(row, 0)
            name = name_item.text().strip() if name_item else ""
            if not name:
                continue
            value = cell_value(self.table.item(row, 1), self._parse)
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


class DesignerSection(QWidget):
    """One section of the experiment file as a form, bound to the shared model.

    Subclasses build their widgets with the binding helpers (``line``, ``combo``, ``check``,
    ``table``, ``text_block``, ``marker``) and extend :meth:`refresh` for what is not a plain
    field. ``statusMessage`` reports a refused edit; ``pendingEditsWanted`` asks the view to
    apply every debounced edit (in any section or the YAML pane) before a structural change;
    ``selectionChanged`` says the section now shows another list item (so the view re-marks
    the invalid field).
    """

    statusMessage = Signal(str)
    pendingEditsWanted = Signal()
    selectionChanged = Signal()

    def __init__(self, model: DesignerModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.bindings: list[Binding] = []
        self._refreshing = False
        self._text_timers: list[QTimer] = []  # debounced multi-line fields (flushed before save/undo)

    # ------------------------------------------------------------------ model → view
    def refresh(self) -> None:
        """Show the model in every bound widget (signals blocked: showing is not editing)."""
        self._refreshing = True
        try:
            self.before_show()
            for binding in self.bindings:
                blocked = binding.widget.blockSignals(True)
                try:
                    binding.show(self.model.get(binding.path()))
                finally:
                    binding.widget.blockSignals(blocked)
            self.after_show()
        finally:
            self._refreshing = False

    def before_show(self) -> None:
        """Lists and dynamic forms, rebuilt before the bound widgets show their values."""

    def after_show(self) -> None:
        """Derived displays (tables computed from several fields, previews)."""

    def show_validation(self, validation: Any) -> None:
        """Section-specific display of the validation outcome (counts, list marks)."""

    def forget_forms(self) -> None:
        """Another document was opened: drop list selections and dynamic forms built for the old one."""

    def flush(self) -> None:
        """Apply this section's edits still waiting on a debounce timer."""
        for timer in self._text_timers:
            if timer.isActive():
                timer.stop()
                timer.timeout.emit()

    def stop_timers(self) -> None:
        for timer in self._text_timers:
            timer.stop()

    def request_flush(self) -> None:
        """Ask the view to apply every pending debounced edit (before a structural change)."""
        self.pendingEditsWanted.emit()

    # ------------------------------------------------------------------ binding helpers
    def commit(self, path: FieldPath, value: Any, *, merge: bool = False) -> None:
        if self._refreshing:
            return
        self.model.set(path, value, merge=merge)

    def bind(self, widget: QWidget, path: Callable[[], FieldPath], show: Callable[[Any], None], group: str = "") -> None:
        self.bindings.append(Binding(widget, path, show, group))

    def line(self, path: Callable[[], FieldPath], *, placeholder: str = "", text: bool = False,
              tooltip: str = "", group: str = "", parse: Callable[[str], Any] | None = None,
              format: Callable[[Any], str] = yaml_value) -> QLineEdit:
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
                value = (raw if raw.strip() else MISSING) if text else parse_cell(raw)
            shown["text"] = raw
            self.commit(path(), value)

        edit.editingFinished.connect(commit)
        self.bind(edit, path, show, group)
        return edit

    def text_block(self, path: Callable[[], FieldPath], *, placeholder: str = "", lines: int = 3) -> QPlainTextEdit:
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
        self.bind(edit, path, show)
        return edit

    def combo(self, path: Callable[[], FieldPath], choices: Sequence[Any], *, unset: Callable[[], str] | None = None,
               group: str = "", on_commit: Callable[[Any], None] | None = None) -> QComboBox:
        combo = QComboBox()
        # sized by a short text, not the longest choice: forms fit a 1024 px window
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(8)

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
                self.commit(path(), value)

        combo.activated.connect(commit)
        self.bind(combo, path, show, group)
        return combo

    def check(self, path: Callable[[], FieldPath], label: str, *, default: bool = False, group: str = "") -> QCheckBox:
        box = QCheckBox(label)

        def show(value: Any) -> None:
            box.setChecked(bool(value) if isinstance(value, bool) else default)

        def commit(checked: bool) -> None:
            self.commit(path(), checked if checked != default else MISSING)

        box.clicked.connect(commit)
        self.bind(box, path, show, group)
        return box

    def table(self, path: Callable[[], FieldPath], headers: tuple[str, str] = ("name", "value"), *,
               list_values: bool = False, group: str = "", **options: Any) -> MappingTable:
        table = MappingTable(headers, list_values=list_values, **options)
        table.edited.connect(lambda mapping: self.commit(path(), mapping))
        self.bind(table, path, table.show_mapping, group)
        return table

    def marker(self, widget: QWidget, path: Callable[[], FieldPath], name: str, group: str = "") -> QWidget:
        """Bind a container to a field path only to mark it when the loader reports an error inside
        that no finer widget shows (an unknown generator parameter, a misspelt engine parameter)."""
        widget.setObjectName(name)
        widget.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.bind(widget, path, lambda value: None, group)
        return widget

    def drop_group(self, group: str) -> None:
        """Forget a dynamic form's bindings (``QFormLayout.removeRow`` deletes the widgets)."""
        self.bindings = [b for b in self.bindings if b.group != group]

    def with_browse(self, edit: QLineEdit, path: Callable[[], FieldPath], *, directory: bool = False) -> QWidget:
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
                self.commit(path(), self.relative_path(chosen))

        browse.clicked.connect(ask)
        row.addWidget(browse)
        return box


    def clear_form(self, form: QFormLayout, group: str) -> None:
        """Empty a dynamic form and forget its bindings."""
        self.drop_group(group)
        while form.rowCount():
            form.removeRow(0)

    def relative_path(self, path: str) -> str:
        """``path`` relative to the experiment file's folder when it lies inside it."""
        base = self.model.base_dir or Path.cwd()
        try:
            return str(Path(path).resolve().relative_to(base.resolve()))
        except ValueError:
            return path


def scroll_area(widget: QWidget) -> QScrollArea:
    """A section page that scrolls vertically (forms scroll, not the window)."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setWidget(widget)
    return area


def html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")



def fill_list(widget: QListWidget, items: Any, index: int) -> int:
    """Show the ids of a list of mappings (queries, engines) and select ``index`` clamped to it."""
    labels = [str(item.get("id", f"#{i}")) if isinstance(item, dict) else f"#{i}" for i, item in enumerate(items or [])]
    blocked = widget.blockSignals(True)
    if [widget.item(i).text() for i in range(widget.count())] != labels:
        widget.clear()
        widget.addItems(labels)
    index = min(index, max(0, len(labels) - 1))
    widget.setCurrentRow(index if labels else -1)
    widget.blockSignals(blocked)
    return index


def item_list(widget: QListWidget, select: Callable[[int], None], add: Callable[[], None],
              remove: Callable[[], None]) -> QVBoxLayout:
    """A narrow list of ids (queries, engines) with Add and Remove under it."""
    widget.setMaximumWidth(130)
    widget.currentRowChanged.connect(select)
    column = QVBoxLayout()
    column.addWidget(widget)
    for text, slot in (("Add", add), ("Remove", remove)):
        button = QPushButton(text)
        button.clicked.connect(slot)
        column.addWidget(button)
    return column


def grid_of(widgets: Sequence[QWidget], columns: int) -> QGridLayout:
    """Widgets (check boxes) in rows of ``columns``: a row of many would widen the form."""
    grid = QGridLayout()
    grid.setContentsMargins(0, 0, 0, 0)
    for index, widget in enumerate(widgets):
        grid.addWidget(widget, index // columns, index % columns)
    grid.setColumnStretch(columns, 1)
    return grid
