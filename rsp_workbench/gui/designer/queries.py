"""The continuous queries: ``queries`` (``id``, ``syntax``, inline ``text`` or a ``file``), with the
window clauses of the selected query as a table (size ω, slide β, the stream each window
reads) and the ``${VAR}`` values it uses.

A window size or slide that comes from a variable edits the variable; a literal one edits
the query text in place (:func:`~rsp_workbench.gui.designer.window_clauses.set_window_value`).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.experiment.model import QUERY_SYNTAXES
from rsp_workbench.gui.designer.fields import (
    TEMPLATE_COLOR,
    html,
    DesignerSection,
    Shown,
    cell_value,
    fill_list,
    item_list,
    refill_rows,
    table_height,
    table_item,
    yaml_value,
)
from rsp_workbench.gui.designer.model import MISSING, DesignerModel, stream_summary
from rsp_workbench.gui.designer.query_editor import QueryTools
from rsp_workbench.gui.designer.window_clauses import WindowField, query_windows, set_window_value, window_stream_iri
from rsp_workbench.gui.highlight import CodeEditor


class QueriesSection(DesignerSection):
    """The query list, the selected query's fields and template, its windows and variables."""

    def __init__(self, model: DesignerModel, parent: QWidget | None = None) -> None:
        super().__init__(model, parent)
        self.query_index = 0
        self._windows: list[WindowField] = []
        self._query_timer = QTimer(self)
        self._query_timer.setSingleShot(True)
        self._query_timer.setInterval(300)
        self._query_timer.timeout.connect(self._apply_query_text)
        layout = QHBoxLayout(self)
        self.query_list = QListWidget()
        layout.addLayout(item_list(self.query_list, self.select_query, self._add_query, self._remove_query))
        right = QVBoxLayout()
        form = QFormLayout()
        q = lambda *keys: (lambda: ("queries", self.query_index, *keys))  # noqa: E731
        self.query_id_edit = self.line(q("id"), text=True)
        form.addRow("Id", self.query_id_edit)
        self.query_syntax_combo = self.combo(q("syntax"), QUERY_SYNTAXES, unset=lambda: "(auto-detect)")
        form.addRow("Syntax", self.query_syntax_combo)
        self.query_file_edit = self.line(q("file"), text=True, placeholder="or a query file (relative path)")
        form.addRow("File", self.with_browse(self.query_file_edit, q("file")))
        right.addLayout(form)
        self.query_label = QLabel("Template (${NAME} placeholders are filled from the variables)")
        right.addWidget(self.query_label)
        self.query_edit = CodeEditor(language="query")
        self.query_edit.setObjectName("queryEditor")
        self.query_edit.setMinimumHeight(150)
        self.query_edit.textChanged.connect(self._on_query_typed)
        self.bind(self.query_edit, q("text"), self._show_query_text)
        right.addWidget(self.query_edit, 1)
        self.tools = QueryTools(model, self.query_edit, lambda: self.query_index)
        self.tools.statusMessage.connect(self.statusMessage)
        right.addWidget(self.tools)
        windows_label = QLabel("<b>Windows</b> (size ω, slide β) — a value from a variable edits the variable")
        windows_label.setWordWrap(True)
        right.addWidget(windows_label)
        self.window_table = QTableWidget(0, 4)
        self.window_table.setObjectName("windowTable")
        self.window_table.setHorizontalHeaderLabels(["stream", "size (RANGE)", "slide (STEP / SLIDE)", "reads"])
        self.window_table.horizontalHeaderItem(3).setToolTip(
            "the stream this window reads: the single stream, or the one 'streams' declares for its IRI")
        self.window_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.window_table.verticalHeader().setVisible(False)
        table_height(self.window_table, 2)
        self.window_table.setMaximumHeight(self.window_table.minimumHeight() + 30)
        self.window_table.itemChanged.connect(self._on_window_edited)
        right.addWidget(self.window_table)
        right.addWidget(QLabel("<b>${VAR} values</b> used by this query"))
        self.query_vars = QTableWidget(0, 2)
        self.query_vars.setObjectName("queryVariables")
        self.query_vars.setHorizontalHeaderLabels(["variable", "value (variables) / swept values"])
        self.query_vars.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.query_vars.verticalHeader().setVisible(False)
        table_height(self.query_vars, 3)
        self.query_vars.setMaximumHeight(self.query_vars.minimumHeight() + 30)
        self.query_vars.itemChanged.connect(self._on_query_var_edited)
        right.addWidget(self.query_vars)
        layout.addLayout(right, 1)

    def before_show(self) -> None:
        self.query_index = fill_list(self.query_list, self.model.get(("queries",), []), self.query_index)

    def after_show(self) -> None:
        self._show_query_vars()
        self._show_query_windows()

    def flush(self) -> None:
        super().flush()
        if self._query_timer.isActive():
            self._query_timer.stop()
            self._apply_query_text()
        self.tools.flush()

    def stop_timers(self) -> None:
        super().stop_timers()
        self._query_timer.stop()
        self.tools.stop_timers()

    def forget_forms(self) -> None:
        self.query_index = 0
        self.tools.forget()

    def _show_query_text(self, value: Any) -> None:
        """The inline template, or the query file's text (its unsaved edit if any): both editable."""
        file = self.tools.query_file()
        text = self.tools.shown_text(self._query_template()[0]) if file is not None else (value if isinstance(value, str) else "")
        if self.query_edit.toPlainText() != text and not self._query_timer.isActive():
            self.query_edit.set_text_keep_view(text)
            self.tools.check()
        unsaved = " — edited, not saved yet" if file in self.tools.file_edits else ""
        self.query_label.setText(f"Query file {html(str(self.model.get(('queries', self.query_index, 'file'))))}{unsaved} "
                                 "(Save query file writes it)" if file is not None
                                 else "Template (${NAME} placeholders are filled from the variables)")
        self.tools.refresh_buttons()

    def _query_template(self) -> tuple[str, bool]:
        """The current query's template and whether it is editable here (inline text, not a file)."""
        return self.model.query_template(self.query_index)

    def _variable_cell(self, name: str, editable: bool) -> QTableWidgetItem:
        """A cell showing the value of ``${name}``: the variable's value (editable), or where it comes from."""
        variables = self.model.get(("variables",), {}) or {}
        sweep = self.model.get(("sweep",), {}) or {}
        cases = self.model.get(("cases",), []) or []
        if isinstance(sweep, dict) and name in sweep:
            item = table_item(f"swept: {yaml_value(sweep[name])}", editable=False,
                         tooltip=f"${{{name}}} takes every value of the sweep (Variables section)")
        elif isinstance(cases, list) and any(isinstance(case, dict) and name in case for case in cases):
            values = dict.fromkeys(yaml_value(case[name]) for case in cases if isinstance(case, dict) and name in case)
            item = table_item(f"per case: {', '.join(values)}", editable=False,
                         tooltip=f"${{{name}}} is set by the cases (Variables section)")
        elif isinstance(variables, dict) and name in variables:
            value = variables[name]
            item = table_item(yaml_value(value), value, editable=editable,
                         tooltip=f"the value of ${{{name}}}; editing it edits the variable")
        else:
            item = table_item("", editable=editable, tooltip=f"${{{name}}} is not defined: type a value to add it to the variables")
            item.setBackground(QColor("#fff59d"))
        item.setForeground(QColor(TEMPLATE_COLOR))
        return item

    def _show_query_vars(self) -> None:
        from rsp_workbench.experiment.runs import template_variables

        text, _ = self._query_template()
        names = sorted(template_variables(text)) if text else []
        blocked = self.query_vars.blockSignals(True)
        refill_rows(self.query_vars, len(names))
        for row, name in enumerate(names):
            self.query_vars.setItem(row, 0, table_item(name, name, editable=False))
            self.query_vars.setItem(row, 1, self._variable_cell(name, True))
        self.query_vars.blockSignals(blocked)

    def _show_query_windows(self) -> None:
        template, editable = self._query_template()
        syntax = self.model.get(("queries", self.query_index, "syntax"))
        windows = query_windows(template, syntax if isinstance(syntax, str) else None)
        self._windows = windows
        blocked = self.window_table.blockSignals(True)
        refill_rows(self.window_table, max(1, len(windows)))  # no window: one row says why
        for row, window in enumerate(windows):
            self.window_table.setItem(row, 0, table_item(window.stream or "(unnamed)", editable=False))
            for column, part in ((1, window.size), (2, window.slide)):
                variable = WindowField.variable(part)
                if variable is not None:
                    item = self._variable_cell(variable, True)
                    item.setToolTip(f"${{{variable}}}: {item.toolTip()}")
                elif part is None:
                    text = "TUMBLING (= size)" if window.tumbling else "(none)"
                    item = table_item(text, editable=editable,
                                 tooltip=f"type a slide to add {window.keyword} …" if editable else "")
                else:
                    item = table_item(part, part, editable=editable,
                                 tooltip="written in the query text" if editable else "written in the query file (read-only here)")
                self.window_table.setItem(row, column, item)
            self.window_table.setItem(row, 3, self._window_binding_item(window_stream_iri(template, window)))
        if not windows:
            unreadable = self.model.unreadable_query_file(self.query_index)
            self.window_table.setItem(0, 0, table_item(
                f"cannot read {unreadable} (paths are relative to the experiment file)" if unreadable is not None
                else "no window clause found (plain SPARQL: the whole stream)", editable=False))
        self.window_table.blockSignals(blocked)

    def _window_binding_item(self, iri: str | None) -> QTableWidgetItem:
        """Which declared stream a window reads; an IRI ``streams:`` does not declare is marked."""
        model = self.model
        if not model.several_streams:
            summary = stream_summary(model.get(("stream",)))
            return table_item(f"the stream ({summary})", editable=False,
                         tooltip="a single 'stream:' is read by every window, whatever IRI it names")
        if iri is None:
            item = table_item("? (IRI not resolved)", editable=False,
                         tooltip="the window's stream IRI uses an undeclared prefix or a ${VAR}")
            item.setForeground(QColor("#8a4b00"))
            return item
        if iri in model.stream_iris():
            return table_item(f"✔ {iri.rsplit('/', 1)[-1] or iri} ({stream_summary(model.get(('streams', iri)))})",
                         editable=False, tooltip=f"<{iri}>, declared in streams")
        item = table_item("✖ not declared in streams", editable=False,
                     tooltip=f"<{iri}> is not declared in 'streams' (Stream section: Add stream, or rename one)")
        item.setBackground(QColor("#ffd6d6"))
        item.setForeground(QColor("#c62828"))
        return item


    @Slot()
    def _on_query_typed(self) -> None:
        if self._refreshing:
            return
        self.tools.typed()
        file = self.tools.query_file()
        if file is None:
            self._query_timer.start()
        else:
            edited = " — edited, not saved yet" if file in self.tools.file_edits else ""
            self.query_label.setText(f"Query file {html(str(self.model.get(('queries', self.query_index, 'file'))))}"
                                     f"{edited} (Save query file writes it)")

    @Slot()
    def _apply_query_text(self) -> None:
        if self.model.get(("queries", self.query_index)) is MISSING or self.tools.query_file() is not None:
            return
        self.model.set(("queries", self.query_index, "text"), self.query_edit.toPlainText(), merge=True)

    @Slot(QTableWidgetItem)
    def _on_query_var_edited(self, item: QTableWidgetItem) -> None:
        if item.column() != 1:
            return
        name = self.query_vars.item(item.row(), 0).text()
        self._set_variable(name, item)

    def _set_variable(self, name: str, item: QTableWidgetItem) -> None:
        value = cell_value(item)
        if value is not MISSING and self.model.get(("variables", name)) != value:
            self.model.set(("variables", name), value)

    @Slot(QTableWidgetItem)
    def _on_window_edited(self, item: QTableWidgetItem) -> None:
        """A window size or slide typed in the table: edit the variable it comes from, or the query text."""
        row, column = item.row(), item.column()
        windows = self._windows
        if column not in (1, 2) or not 0 <= row < len(windows):
            return
        shown = item.data(Qt.ItemDataRole.UserRole)
        if isinstance(shown, Shown) and shown.text == item.text():
            return
        window = windows[row]
        part = "size" if column == 1 else "slide"
        variable = WindowField.variable(window.size if part == "size" else window.slide)
        if variable is not None:
            self._set_variable(variable, item)
            return
        self.request_flush()
        template, editable = self._query_template()
        if not editable:
            return
        self.model.set(("queries", self.query_index, "text"), set_window_value(template, window, part, item.text()))

    @Slot()

    @Slot(int)
    def select_query(self, row: int) -> None:
        if row >= 0 and row != self.query_index:
            self.request_flush()
            self.query_index = row
            self._show_selection()


    @Slot()
    def _add_query(self) -> None:
        ids = {q.get("id") for q in self.model.get(("queries",), []) or [] if isinstance(q, dict)}
        new_id = next(f"q{i}" for i in range(1, 1000) if f"q{i}" not in ids)
        self.query_index = self.model.append(("queries",), {"id": new_id, "text": "SELECT * WHERE { ?s ?p ?o }\n"})
        self._show_selection()

    @Slot()
    def _remove_query(self) -> None:
        self.model.remove_item(("queries",), self.query_index)


    def _show_selection(self) -> None:
        self.refresh()
        self.selectionChanged.emit()
