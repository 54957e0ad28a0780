"""The "Probe engine" dialog: `rspwb probe` in the GUI, off the GUI thread, with progress and Cancel.

A thin view over :mod:`rsp_workbench.probe` and :mod:`rsp_workbench.gui.probe.model`: the
engine is chosen from the presets, the built-in engine types and the engines of the
designer's experiment (an external one is shown and must be confirmed first); the battery runs as one TaskRegistry task whose
plain worker calls :func:`rsp_workbench.probe.runner.probe_engine`, polling the task's cancel
flag. The answer — preset + overrides, every parameter with what the probes could not
tell, faults, and each unexplained probe with its first divergence — is shown when the
task ends.
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.errors import UserError
from rsp_workbench.gui.fit import fit_to_screen
from rsp_workbench.gui.tasks import Task, TaskRegistry, TaskState
from rsp_workbench.gui.probe.model import (
    NO_FAULT,
    PARAMETER_COLUMNS,
    PROBE_COLUMNS,
    STATUS_COLOURS,
    UNEXPLAINED_COLOUR,
    builtin_engines,
    combination_choices,
    details_text,
    headline_html,
    probes_ran,
    parameter_rows,
    probe_rows,
    probe_target,
    takes_fault_knob,
)
from rsp_workbench.gui.probe.side_by_side import SideBySide
from rsp_workbench.probe.infer import ProbeInference
from rsp_workbench.probe.runner import ProbeRunOptions, ProbeTarget, probe_engine


class ProbeDialog(QDialog):
    """Choose an engine, probe it, read what its answers say about its semantics."""

    finishedProbe = Signal(object)  # the ProbeInference (tests, the main window); the last one of several
    finishedProbes = Signal(object)  # every ProbeInference of the run (one per engine/combination)

    def __init__(self, tasks: TaskRegistry, experiment_source: Callable[[], Any] | None = None,
                 parent: QWidget | None = None, options: ProbeRunOptions | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("probeDialog")
        self.setWindowTitle("Probe engine")
        self.tasks = tasks
        self.experiment_source = experiment_source  # the designer's experiment (UserError if invalid)
        self.options = options or ProbeRunOptions()
        self.task: Task | None = None
        self.inference: ProbeInference | None = None
        self.ask_confirm: Callable[[str], bool] = self._ask_confirm
        self.show_error: Callable[[str, str], None] = self._show_error

        self.engine_combo = QComboBox()
        self.engine_combo.setObjectName("probeEngine")
        self.fault_combo = QComboBox()
        self.fault_combo.setObjectName("probeFault")
        self.fault_combo.addItem(NO_FAULT, None)
        from rsp_workbench.engines.secret import FAULTS

        for fault in FAULTS:
            self.fault_combo.addItem(fault, fault)
        self.fault_combo.setToolTip("switch on a fault knob of the secret engine (the probe is not told)")
        self.combination_combo = QComboBox()
        self.combination_combo.setObjectName("probeCombination")
        self.combination_combo.setToolTip("the engine parameters to probe the type with (the combinations it declares "
                                          "a preset for), or every combination, side by side")
        self.engine_combo.currentIndexChanged.connect(self._engine_changed)
        form = QFormLayout()
        form.addRow("Engine", self.engine_combo)
        form.addRow("Parameters", self.combination_combo)
        form.addRow("Fault knob", self.fault_combo)

        self.start_button = QPushButton("Probe")
        self.start_button.setObjectName("probeStart")
        self.start_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("probeCancel")
        self.cancel_button.setEnabled(False)
        self.close_button = QPushButton("Close")
        self.copy_button = QPushButton("Copy report")
        self.copy_button.setToolTip("Copy the answer as rspwb probe prints it (to paste in notes or an issue)")
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self.copy_report)
        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.close_button.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.close_button)

        self.progress = QProgressBar()
        self.progress.setObjectName("probeProgress")
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.status = QLabel("Runs a battery of small designed streams against the engine on the test stand and "
                             "infers its SECRET parameters (docs/probe.md).")
        self.status.setWordWrap(True)
        self.headline = QLabel()
        self.headline.setObjectName("probeHeadline")
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.parameters_table = QTableWidget(0, len(PARAMETER_COLUMNS))
        self.parameters_table.setObjectName("probeParameters")
        self.parameters_table.setHorizontalHeaderLabels(PARAMETER_COLUMNS)
        self.probes_table = QTableWidget(0, len(PROBE_COLUMNS))
        self.probes_table.setObjectName("probeProbes")
        self.probes_table.setHorizontalHeaderLabels(PROBE_COLUMNS)
        for table in (self.parameters_table, self.probes_table):
            table.verticalHeader().setVisible(False)
            table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
            table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            table.horizontalHeader().setStretchLastSection(True)
            table.setWordWrap(True)
        self.details = QPlainTextEdit()
        self.details.setObjectName("probeDetails")
        self.details.setReadOnly(True)
        self.details.setPlaceholderText("faults and unexplained probes (first divergence) appear here")

        answer = QWidget()
        tables = QHBoxLayout()
        tables.setContentsMargins(0, 0, 0, 0)
        tables.addWidget(self.parameters_table, 1)
        tables.addWidget(self.probes_table, 1)
        answer_layout = QVBoxLayout(answer)
        answer_layout.setContentsMargins(0, 0, 0, 0)
        answer_layout.addWidget(self.headline)
        answer_layout.addLayout(tables, 3)
        answer_layout.addWidget(self.details, 2)
        self.side_by_side = SideBySide()
        self.tabs = QTabWidget()
        self.tabs.setObjectName("probeTabs")
        self.tabs.addTab(answer, "Answer")
        self.tabs.addTab(self.side_by_side, "Side by side (SECRET)")
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.tabs, 1)
        fit_to_screen(self, 1100, 700)
        self.refresh_engines()

    # ------------------------------------------------------------------ engines
    def refresh_engines(self) -> None:
        """Built-in names, then the engines of the designer's experiment (if it is valid)."""
        current = self.engine_combo.currentData()
        self.engine_combo.blockSignals(True)
        self.engine_combo.clear()
        for label, key in builtin_engines():
            self.engine_combo.addItem(label, key)
        experiment = self._experiment()
        if experiment is not None:
            for spec in experiment.engines:
                self.engine_combo.addItem(f"{experiment.name}: {spec.id} ({spec.type})", f"experiment:{spec.id}")
        index = self.engine_combo.findData(current) if current is not None else -1
        self.engine_combo.setCurrentIndex(max(0, index))
        self.engine_combo.blockSignals(False)
        self._engine_changed()

    def select_engine(self, kind: str, name: str) -> None:
        """``kind``: preset, builtin (an engine type) or experiment (an engine id of the designer's)."""
        index = self.engine_combo.findData(f"{kind}:{name}")
        if index < 0:
            raise ValueError(f"no {kind} engine {name!r} in the list")
        self.engine_combo.setCurrentIndex(index)

    def _experiment(self) -> Any:
        if self.experiment_source is None:
            return None
        try:
            return self.experiment_source()
        except UserError:
            return None  # an invalid designer document offers the built-in engines only

    @Slot()
    def _engine_changed(self) -> None:
        key = str(self.engine_combo.currentData() or "")
        self.fault_combo.setEnabled(takes_fault_knob(key))
        if not self.fault_combo.isEnabled():
            self.fault_combo.setCurrentIndex(0)
        self.combination_combo.clear()
        for label, parameters in combination_choices(key):
            self.combination_combo.addItem(label, parameters)
        self.combination_combo.setEnabled(self.combination_combo.count() > 1)

    def select_combination(self, label: str) -> None:
        """A parameter combination by its label (``window=time``, ``every combination``)."""
        index = self.combination_combo.findText(label)
        if index < 0:
            raise ValueError(f"no combination {label!r} for this engine")
        self.combination_combo.setCurrentIndex(index)

    def target(self) -> ProbeTarget:
        return self.targets()[0]

    def targets(self) -> list[ProbeTarget]:
        """The engine chosen, once per parameter combination asked for."""
        key = str(self.engine_combo.currentData() or "")
        fault = self.fault_combo.currentData() if self.fault_combo.isEnabled() else None
        experiment = self._experiment() if key.startswith("experiment:") else None
        chosen = self.combination_combo.currentData()
        combinations = [p for _, p in combination_choices(key) if p is not None] if chosen is None else [chosen]
        return [probe_target(key, fault, experiment, parameters) for parameters in combinations]

    # ------------------------------------------------------------------ running
    @Slot()
    def start(self) -> Task | None:
        if self.task is not None:
            return None
        try:
            targets = self.targets()
        except UserError as error:
            self.show_error("Cannot probe this engine", str(error))
            return None
        target = targets[0]
        if target.external:
            from rsp_workbench.stand.confirm import describe_command

            if not self.ask_confirm(describe_command(target) + "\n\nRun this command for each probe?"):
                self.status.setText("Not probed: the external command was not confirmed.")
                return None
        options = self.options

        def work(state: TaskState) -> list[ProbeInference]:
            inferences: list[ProbeInference] = []
            for index, one in enumerate(targets):
                if state.cancel_event.is_set():
                    break
                prefix = f"{one.label}: " if len(targets) > 1 else ""

                def progress(done: int, total: int, message: str, index: int = index, prefix: str = prefix) -> None:
                    state.report_progress((index + done / max(1, total)) / len(targets),
                                          f"{prefix}[{done}/{total}] {message}")

                inferences.append(probe_engine(one, options, cancel=state.cancel_event, progress=progress))
            return inferences

        self.inference = None
        self._clear()
        self.progress.setRange(0, 100)
        self.progress.setValue(0)
        what = f"{target.label} ({target.description})" if len(targets) == 1 else \
            f"{len(targets)} combinations of {target.config.type}"
        self.status.setText(f"Probing {what}…")
        self.start_button.setEnabled(False)
        self.engine_combo.setEnabled(False)
        self.combination_combo.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.task = self.tasks.start(f"probe {target.label}", work)
        self.task.progress.connect(self._on_progress)
        self.task.finished.connect(self._on_finished)
        self.task.failed.connect(self._on_failed)
        self.task.done.connect(self._on_done)
        return self.task

    @Slot()
    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.cancel_button.setEnabled(False)
            self.status.setText("Cancelling: stopping the engine processes…")

    @Slot(float, str)
    def _on_progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(round(fraction * 100)))
        self.status.setText(message)

    @Slot(object)
    def _on_finished(self, inferences: list[ProbeInference]) -> None:
        if not inferences:
            self.status.setText("Cancelled before a probe ran.")
            return
        inference = inferences[-1]
        self.inference = inference
        for each in inferences:
            self.side_by_side.add(each)
        cancelled = self.task is not None and self.task.state.cancelled
        several = f" ({len(inferences)} engines: see Side by side)" if len(inferences) > 1 else ""
        self.status.setText("Cancelled: the answer below uses the probes that finished." if cancelled
                            else f"Done: {sum(o.ok for o in inference.observations)} of "
                                 f"{len(inference.observations)} probes ran{several}.")
        self.show_inference(inference)
        if len(inferences) > 1:
            self.tabs.setCurrentWidget(self.side_by_side)
        self.finishedProbes.emit(inferences)
        self.finishedProbe.emit(inference)

    @Slot(object, str)
    def _on_failed(self, error: BaseException, trace: str) -> None:
        self.status.setText(f"The probe failed: {error}")
        self.details.setPlainText(str(error) if isinstance(error, UserError) else trace)

    @Slot()
    def _on_done(self) -> None:
        self.task = None
        self.start_button.setEnabled(True)
        self.engine_combo.setEnabled(True)
        self.combination_combo.setEnabled(self.combination_combo.count() > 1)
        self.cancel_button.setEnabled(False)
        ran, total = probes_ran(self.inference) if self.inference is not None else (1, 1)
        # a cancelled probe shows the share that ran (the runner reports the cancelled ones as done too)
        self.progress.setValue(self.progress.maximum() if ran == total else round(100 * ran / max(1, total)))

    # ------------------------------------------------------------------ the answer
    def _clear(self) -> None:
        self.copy_button.setEnabled(False)
        self.headline.clear()
        self.parameters_table.setRowCount(0)
        self.probes_table.setRowCount(0)
        self.details.clear()

    @Slot()
    def copy_report(self) -> str:
        """The shown answer as text (``rspwb probe``'s report) on the clipboard."""
        from PySide6.QtWidgets import QApplication

        from rsp_workbench.probe.infer import format_inference

        text = format_inference(self.inference) if self.inference is not None else ""
        QApplication.clipboard().setText(text)
        return text

    def show_inference(self, inference: ProbeInference) -> None:
        self._clear()
        self.copy_button.setEnabled(True)
        self.headline.setText(headline_html(inference))
        parameters = parameter_rows(inference)
        self.parameters_table.setRowCount(len(parameters))
        for row, parameter in enumerate(parameters):
            for column, text in enumerate(parameter.cells):
                item = QTableWidgetItem(text)
                if parameter.override and column == 1:
                    item.setForeground(Qt.GlobalColor.darkRed)
                    item.setToolTip("an override of the preset")
                self.parameters_table.setItem(row, column, item)
        probes = probe_rows(inference)
        self.probes_table.setRowCount(len(probes))
        for row, probe in enumerate(probes):
            for column, text in enumerate(probe.cells):
                item = QTableWidgetItem(text)
                if column == 1:
                    item.setForeground(_colour(STATUS_COLOURS.get(probe.status, "#000")))
                    if probe.error:
                        item.setToolTip(probe.error)
                if column == 3 and probe.explained is False:
                    item.setForeground(_colour(UNEXPLAINED_COLOUR))
                self.probes_table.setItem(row, column, item)
        for table in (self.parameters_table, self.probes_table):
            table.resizeRowsToContents()
        self.details.setPlainText(details_text(inference))

    # ------------------------------------------------------------------ dialogs
    def _ask_confirm(self, question: str) -> bool:
        answer = QMessageBox.question(self, "Run an external engine?", question,
                                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def _show_error(self, title: str, text: str) -> None:
        QMessageBox.warning(self, title, text)

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        """Closing the dialog cancels a probe still running (the window's registry waits for it)."""
        self.cancel()
        super().closeEvent(event)


def _colour(text: str) -> Any:
    from PySide6.QtGui import QColor

    return QColor(text)
