"""The Runs tab's "New run" form: which experiment (the designer's or a file), its size, the
scheduler and the results folder.

The chosen experiment is validated as it is chosen (its run count at the chosen size is shown,
or the located error); queueing it is the tab's (:class:`~rsp_workbench.gui.runs.view.RunManagerView`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.errors import UserError
from rsp_workbench.experiment.model import Experiment
from rsp_workbench.experiment.runs import expand_runs
from rsp_workbench.gui.runs.model import (
    SCHEDULERS,
    default_results_dir,
    default_size,
    experiment_from_designer,
    sized,
)
from rsp_workbench.gui.text import escape_html, plural


class EnqueueForm(QGroupBox):
    """Source (designer or file), size, scheduler and results folder, and the Run button."""

    def __init__(self, designer: Any, results_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__("New run", parent)
        self.designer = designer
        self._source_experiment: Experiment | None = None
        # dialogs are attributes so that tests and scripts can replace them
        self.ask_open_path: Callable[[], str | None] = self._ask_open_path
        self.ask_results_dir: Callable[[], str | None] = self._ask_results_dir

        self.designer_radio = QRadioButton("Designer's experiment")
        self.file_radio = QRadioButton("File:")
        self.designer_radio.setChecked(self.designer is not None)
        self.file_radio.setChecked(self.designer is None)
        self.designer_radio.setEnabled(self.designer is not None)
        self._source_group = QButtonGroup(self)
        self._source_group.addButton(self.designer_radio)
        self._source_group.addButton(self.file_radio)
        self.designer_radio.toggled.connect(self.refresh_source)
        self.file_edit = QLineEdit()
        self.file_edit.setPlaceholderText("experiment file (YAML)")
        self.file_edit.editingFinished.connect(self._on_file_edited)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self.browse_file)
        self.source_label = QLabel()
        self.source_label.setObjectName("runSource")
        self.source_label.setWordWrap(True)
        self.size_combo = QComboBox()
        self.size_combo.setObjectName("runSize")
        self.size_combo.currentIndexChanged.connect(self._describe_source)
        self.scheduler_combo = QComboBox()
        for name in SCHEDULERS:
            self.scheduler_combo.addItem(name, name)
        self.scheduler_combo.setToolTip("local: one measured engine run at a time, live KPIs; "
                                        "spark: one Spark task per run on the configured master (no live KPIs)")
        self.results_edit = QLineEdit(str(results_dir))
        self.results_edit.setObjectName("resultsDir")
        self.results_edit.setToolTip("each run writes a new bundle folder NAME-YYYYmmdd-HHMMSS here")
        results_browse = QPushButton("Choose…")
        results_browse.clicked.connect(self.browse_results_dir)
        self.enqueue_button = QPushButton("Run ▶")
        self.enqueue_button.setObjectName("enqueueRun")
        self.enqueue_button.setToolTip("queue this experiment; runs start one after another")

        first = QHBoxLayout()
        first.addWidget(self.designer_radio)
        first.addSpacing(12)
        first.addWidget(self.file_radio)
        first.addWidget(self.file_edit, 2)
        first.addWidget(browse)
        first.addSpacing(12)
        first.addWidget(self.source_label, 3)
        second = QHBoxLayout()
        for label, widget in (("Size", self.size_combo), ("Scheduler", self.scheduler_combo)):
            second.addWidget(QLabel(label))
            second.addWidget(widget)
            second.addSpacing(12)
        second.addWidget(QLabel("Results folder"))
        second.addWidget(self.results_edit, 1)
        second.addWidget(results_browse)
        second.addSpacing(12)
        second.addWidget(self.enqueue_button)
        rows = QVBoxLayout(self)
        rows.addLayout(first)
        rows.addLayout(second)

    @Slot()
    def refresh_source(self) -> None:
        """Describe the chosen experiment and offer its sizes (keeping the current choice if it has it)."""
        self._source_experiment = None
        try:
            experiment = self.source_experiment()
        except UserError as error:
            self.source_label.setText(f"<span style='color:#c62828'>{escape_html(str(error))}</span>")
            sizes: tuple[str, ...] = ()
        else:
            self._source_experiment = experiment
            sizes = tuple(experiment.sizes)
        previous = self.size_combo.currentData()
        self.size_combo.blockSignals(True)
        self.size_combo.clear()
        self.size_combo.addItem("none (as written)", None)
        for size in sizes:
            self.size_combo.addItem(size, size)
        chosen = default_size(sizes, previous)
        self.size_combo.setCurrentIndex(max(0, self.size_combo.findData(chosen)) if chosen else 0)
        self.size_combo.blockSignals(False)
        self._describe_source()

    @Slot()
    def _describe_source(self) -> None:
        """Name, run count *at the chosen size* and sizes of the chosen experiment."""
        experiment = self._source_experiment
        if experiment is None:
            return
        size = self.size_combo.currentData()
        try:
            runs = len(expand_runs(sized(experiment, size)))
        except UserError as error:
            self.source_label.setText(f"<span style='color:#c62828'>{escape_html(str(error))}</span>")
            return
        at = f" at size {escape_html(size)}" if size else ""
        self.source_label.setText(f"<b>{escape_html(experiment.name)}</b> · {plural(runs, 'run')}{at}"
                                  + (f" · sizes: {escape_html(', '.join(experiment.sizes))}" if experiment.sizes else ""))

    def source_experiment(self) -> Experiment:
        """The experiment of the chosen source (UserError naming file/line/field if it is not valid)."""
        if self.designer_radio.isChecked() and self.designer is not None:
            self.designer.flush_pending_edits()
            return experiment_from_designer(self.designer.model)
        text = self.file_edit.text().strip()
        if not text:
            raise UserError("choose an experiment file")
        from rsp_workbench.experiment import load_experiment

        return load_experiment(Path(text).expanduser())

    def choose_designer(self) -> None:
        self.designer_radio.setChecked(True)
        self.refresh_source()

    def choose_file(self, path: str | Path) -> None:
        self.file_edit.setText(str(path))
        self.file_radio.setChecked(True)
        self.refresh_source()

    def chosen_size(self, experiment: Experiment) -> str | None:
        """The chosen size if ``experiment`` has it, else its default size."""
        size = self.size_combo.currentData()
        if size is not None and size not in experiment.sizes:
            size = default_size(tuple(experiment.sizes), None)
        return size

    def chosen_source(self) -> str:
        """``designer`` or the file's path, as the queue shows where a run came from."""
        return "designer" if self.designer_radio.isChecked() else self.file_edit.text().strip()

    def scheduler(self) -> str:
        return str(self.scheduler_combo.currentData())

    def results_dir(self) -> Path:
        return Path(self.results_edit.text().strip() or str(default_results_dir())).expanduser()

    def note_status(self, text: str) -> None:
        self.source_label.setText(f"<span style='color:#ef6c00'>{escape_html(text)}</span>")

    @Slot()
    def browse_file(self) -> None:
        path = self.ask_open_path()
        if path:
            self.file_edit.setText(path)
            self.file_radio.setChecked(True)
            self.refresh_source()

    @Slot()
    def _on_file_edited(self) -> None:
        if self.file_edit.text().strip():
            self.file_radio.setChecked(True)
        self.refresh_source()

    @Slot()
    def browse_results_dir(self) -> None:
        path = self.ask_results_dir()
        if path:
            self.results_edit.setText(path)

    def _ask_open_path(self) -> str | None:
        path, _ = QFileDialog.getOpenFileName(self, "Experiment to run", str(Path.cwd()),
                                              "Experiments (*.yaml *.yml);;All files (*)")
        return path or None

    def _ask_results_dir(self) -> str | None:
        path = QFileDialog.getExistingDirectory(self, "Results folder", str(self.results_dir()))
        return path or None
