"""The top of the experiment file: ``name``, ``description``, ``seed``, ``repetitions``,
``sizes`` (General) and the template values ``variables``, ``sweep`` and ``cases`` (Variables).

Both sections show what the loader derives from them: the number of runs and of variable
combinations — or, while the document is invalid, that there is no count.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.gui.designer.fields import (
    DesignerSection,
    cell_value,
    fit_rows,
    refill_rows,
    table_item,
    yaml_value,
)
from rsp_workbench.gui.designer.model import MISSING, DesignerModel

NO_COUNT = "— (the document is not valid)"


class GeneralSection(DesignerSection):
    """Name, description, seed, repetitions, the run count and the named sizes."""

    def __init__(self, model: DesignerModel, parent: QWidget | None = None) -> None:
        super().__init__(model, parent)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        layout.addLayout(form)
        self.name_edit = self.line(lambda: ("name",), text=True, placeholder="required")
        self.name_edit.setObjectName("field_name")
        form.addRow("Name", self.name_edit)
        self.description_edit = self.text_block(lambda: ("description",), placeholder="what this experiment shows")
        self.description_edit.setObjectName("field_description")
        form.addRow("Description", self.description_edit)
        self.seed_edit = self.line(lambda: ("seed",), placeholder="0",
                                   tooltip="repetition 0 uses this seed; later ones derive theirs from it")
        self.seed_edit.setObjectName("field_seed")
        form.addRow("Seed", self.seed_edit)
        self.repetitions_edit = self.line(lambda: ("repetitions",), placeholder="1")
        self.repetitions_edit.setObjectName("field_repetitions")
        form.addRow("Repetitions", self.repetitions_edit)
        self.runs_label = QLabel()
        self.runs_label.setObjectName("runsCount")
        self.runs_label.setWordWrap(True)
        form.addRow("Runs", self.runs_label)
        note = QLabel("<b>Sizes</b> — named overrides of any top-level field (<tt>rspwb run FILE --size smoke</tt>); "
                      "YAML flow mappings such as <tt>{variables: {STATIONS: 5}, repetitions: 1}</tt>. "
                      "A variable a size sets is pinned: it leaves the sweep and the cases.")
        note.setWordWrap(True)
        layout.addWidget(note)
        self.sizes_table = self.table(lambda: ("sizes",), ("size", "overrides"), empty_value={}, new_name="size", rows=3)
        self.sizes_table.setObjectName("sizesTable")
        layout.addWidget(self.sizes_table)
        layout.addStretch(1)

    def show_validation(self, validation: Any) -> None:
        from rsp_workbench.experiment.runs import count_runs, variable_combinations

        experiment = validation.experiment if validation.ok else None
        if experiment is None:  # never the count of a previous document
            self.runs_label.setText(NO_COUNT)
            return
        runs = count_runs(experiment)
        self.runs_label.setText(f"{runs} = {len(variable_combinations(experiment))} combination(s) × {experiment.repetitions} "
                                f"repetition(s) × {len(experiment.engines)} engine(s) × {len(experiment.queries)} query(ies)")


class VariablesSection(DesignerSection):
    """``variables`` (defaults), ``sweep`` (Cartesian product) and ``cases`` (explicit combinations)."""

    def __init__(self, model: DesignerModel, parent: QWidget | None = None) -> None:
        super().__init__(model, parent)
        layout = QVBoxLayout(self)
        note = QLabel("<b>Variables</b> — values of <tt>${NAME}</tt> in query templates, generator, flow and "
                      "engine parameters (the defaults: cases and the sweep override them)")
        note.setWordWrap(True)
        layout.addWidget(note)
        self.variables_table = self.table(lambda: ("variables",), ("variable", "value"), rows=4)
        self.variables_table.setObjectName("variablesTable")
        layout.addWidget(self.variables_table)
        note = QLabel("<b>Sweep</b> — each variable takes every listed value (Cartesian product; the first "
                      "varies slowest)")
        note.setWordWrap(True)
        layout.addWidget(note)
        self.sweep_table = self.table(lambda: ("sweep",), ("variable", "values (comma-separated)"), list_values=True, rows=2)
        self.sweep_table.setObjectName("sweepTable")
        layout.addWidget(self.sweep_table)
        note = QLabel("<b>Cases</b> — explicit combinations (YABench's <tt>tests</tt>), each crossed with the sweep; "
                      "an empty cell leaves the variable to <i>Variables</i>. A variable comes from the sweep or from "
                      "the cases, not both.")
        note.setWordWrap(True)
        layout.addWidget(note)
        self.cases_table = CasesTable()
        self.cases_table.edited.connect(lambda cases: self.commit(("cases",), cases))
        self.bind(self.cases_table.table, lambda: ("cases",), self.cases_table.show_cases)
        layout.addWidget(self.cases_table)
        self.combinations_label = QLabel()
        self.combinations_label.setObjectName("combinationsCount")
        layout.addWidget(self.combinations_label)
        layout.addStretch(1)

    def show_validation(self, validation: Any) -> None:
        from rsp_workbench.experiment.runs import variable_combinations

        experiment = validation.experiment if validation.ok else None
        self.combinations_label.setText(f"{len(variable_combinations(experiment))} variable combination(s)"
                                        if experiment is not None else "")


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
        fit_rows(self.table, 3)
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
        self.table.setColumnCount(len(columns))
        refill_rows(self.table, len(items))
        self.table.setHorizontalHeaderLabels(columns)
        for row, case in enumerate(items):
            entry = case if isinstance(case, dict) else {}
            for column, name in enumerate(columns):
                value = entry.get(name, MISSING)
                self.table.setItem(row, column, table_item(yaml_value(value), value))
        self.table.setVerticalHeaderLabels([f"case {i}" for i in range(len(items))])
        self.table.blockSignals(blocked)
        fit_rows(self.table, 3, 12)

    def cases(self) -> Any:
        result = []
        for row in range(self.table.rowCount()):
            case: dict[str, Any] = {}
            for column, name in enumerate(self._columns):
                value = cell_value(self.table.item(row, column))
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


