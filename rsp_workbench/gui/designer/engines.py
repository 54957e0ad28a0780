"""The engines under test: ``engines`` (``id``, ``type``, ``preset``, ``semantics``, ``faults``,
``parameters``), one form for the engine selected in the list.

The parameters form is built from ``ENGINE_PARAMETERS`` (name → kind, required), so a
parameter added to an engine type appears here without touching the designer.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.core.semantics import PRESETS, EngineSemantics
from rsp_workbench.engine import PROGRAM_ENGINES
from rsp_workbench.experiment.model import ENGINE_TYPES, EVICTION_STRATEGIES, FAULTS
from rsp_workbench.gui.designer.fields import WARNING_STYLE, DesignerSection, fill_list, grid_of, item_list
from rsp_workbench.gui.designer.semantics import T0_RULES, semantics_form
from rsp_workbench.gui.designer.model import MISSING, DesignerModel, command_text, engine_with_type, parse_command

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

def _parenthesised(placeholder: str) -> str:
    """What an unset engine parameter's combo box shows."""
    return f"({placeholder})"


def _matchers() -> tuple[str, ...]:
    from rsp_workbench.engine import MATCHERS

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


class EnginesSection(DesignerSection):
    """The engine list and the selected engine's type, preset, semantics, faults and parameters."""

    def __init__(self, model: DesignerModel, parent: QWidget | None = None) -> None:
        super().__init__(model, parent)
        self.engine_index = 0
        self._built_type: Any = None
        self.engine_param_widgets: dict[str, QWidget] = {}
        layout = QHBoxLayout(self)
        self.engine_list = QListWidget()
        layout.addLayout(item_list(self.engine_list, self.select_engine, self._add_engine, self._remove_engine))

        right = QVBoxLayout()
        e = lambda *keys: (lambda: ("engines", self.engine_index, *keys))  # noqa: E731
        form = QFormLayout()
        self.engine_id_edit = self.line(e("id"), text=True)
        self.engine_id_edit.setObjectName("engine_id")
        form.addRow("Id", self.engine_id_edit)
        self.engine_type_combo = self.combo(e("type"), ENGINE_TYPES, on_commit=self._set_engine_type)
        self.engine_type_combo.setObjectName("engineType")
        form.addRow("Type", self.engine_type_combo)
        self.preset_combo = self.combo(e("preset"), tuple(PRESETS), unset=lambda: "(none: defaults)")
        form.addRow("Preset", self.preset_combo)
        right.addLayout(form)

        semantics = semantics_form(self, "Semantics (SECRET + R2S); unset fields come from the preset",
                                   e("semantics"), self._effective_semantics, "semantics")
        self.report = semantics.report
        right.addWidget(semantics.box)

        self.faults_box = QGroupBox("Injected faults (built-in engines)")
        fault_boxes = []
        for fault in FAULTS:
            box = self.check(e("faults", fault), fault)
            box.setObjectName(f"fault_{fault}")
            fault_boxes.append(box)
        QVBoxLayout(self.faults_box).addLayout(grid_of(fault_boxes, 2))
        right.addWidget(self.faults_box)
        self.parameters_box = self.marker(QGroupBox("Parameters"), e("parameters"), "engineParameters")
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

    def before_show(self) -> None:
        self.engine_index = fill_list(self.engine_list, self.model.get(("engines",), []), self.engine_index)
        engine_type = self.model.get(("engines", self.engine_index, "type"))
        self._rebuild_engine_params(engine_type)
        self.external_warning.setVisible(engine_type == "external")
        program = engine_type == "external" or engine_type in PROGRAM_ENGINES  # faults exist in built-in engines only
        self.faults_box.setEnabled(not program)
        self.faults_box.setToolTip(f"{engine_type} engines cannot have injected faults" if program else "")

    def forget_forms(self) -> None:
        self.engine_index = 0
        self._built_type = None

    def _effective_semantics(self) -> EngineSemantics:
        preset = self.model.get(("engines", self.engine_index, "preset"))
        return PRESETS.get(preset, EngineSemantics()) if isinstance(preset, str) else EngineSemantics()


    def _rebuild_engine_params(self, engine_type: Any) -> None:
        """One field per parameter the engine type takes (``ENGINE_PARAMETERS``: name → (kind, required)),
        so a parameter added to the engines appears here without touching the designer."""
        from rsp_workbench.experiment.runs import ENGINE_PARAMETERS, choice_values

        parameters = ENGINE_PARAMETERS.get(str(engine_type), {})
        key = (engine_type, tuple(parameters.items()))
        if self._built_type == key:
            return
        self._built_type = key
        self.clear_form(self.engine_params_form, "engine")
        self.engine_param_widgets = {}
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
            choices = PARAMETER_CHOICES[kind]() if kind in PARAMETER_CHOICES else choice_values(kind)
            row_widget: QWidget
            if choices is not None:
                widget: QWidget = self.combo(path, choices, unset=functools.partial(_parenthesised, placeholder), group="engine")
                row_widget = widget
            elif kind == "env":
                widget = self.table(path, ("variable", "value"), group="engine", new_name="NAME", rows=2)
                row_widget = widget
            elif kind == "bool":
                widget = self.check(path, name, group="engine")
                row_widget = widget
            elif kind == "command":
                widget = self.line(path, placeholder=f"{placeholder}: {hint}", group="engine",
                                    parse=parse_command, format=command_text,
                                    tooltip="split like a shell command line, but run without a shell")
                row_widget = widget
            elif kind in ("file", "directory"):
                widget = self.line(path, placeholder=f"{placeholder}: {hint}", group="engine", text=True)
                row_widget = self.with_browse(widget, path, directory=kind == "directory")
            else:
                widget = self.line(path, placeholder=f"{placeholder}: {hint}", group="engine")
                row_widget = widget
            widget.setObjectName(f"engine_param_{name}")
            if not widget.toolTip():
                widget.setToolTip(T0_RULES["parameter"] if kind == "t0" else f"{name}: {hint}{' (required)' if required else ''}")
            self.engine_param_widgets[name] = widget
            self.engine_params_form.addRow(f"{name}{' *' if required else ''}", row_widget)


    def _set_engine_type(self, engine_type: Any) -> None:
        """Changing the type drops parameters (and faults) the new type rejects, as one undo step."""
        if engine_type is MISSING:
            return
        engine = self.model.get(("engines", self.engine_index))
        if isinstance(engine, dict) and engine.get("type") == engine_type:
            return
        self.model.set(("engines", self.engine_index), engine_with_type(engine, str(engine_type)))


    @Slot(int)
    def select_engine(self, row: int) -> None:
        if row >= 0 and row != self.engine_index:
            self.request_flush()
            self.engine_index = row
            self._show_selection()


    @Slot()
    def _add_engine(self) -> None:
        ids = {e.get("id") for e in self.model.get(("engines",), []) or [] if isinstance(e, dict)}
        new_id = next(f"engine{i}" for i in range(1, 1000) if f"engine{i}" not in ids)
        self.engine_index = self.model.append(("engines",), {"id": new_id, "type": "secret", "preset": "cqels"})
        self._show_selection()

    @Slot()
    def _remove_engine(self) -> None:
        self.model.remove_item(("engines",), self.engine_index)


    def _show_selection(self) -> None:
        self.refresh()
        self.selectionChanged.emit()
