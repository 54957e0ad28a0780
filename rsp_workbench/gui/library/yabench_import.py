"""File › Import YABench folder… (also in the Library): a published YABench test folder as an experiment file.

The same code as ``rspwb import yabench-config DIR --out FILE``
(:func:`~rsp_workbench.experiment.yabench_config.write_imported_experiment`): the file written validates,
its query file goes to ``queries/`` next to it, and what could not be mapped is listed at its top. The
window then opens it in the designer, so a published run can be re-run and re-judged under the
workbench's oracle (and compared with the published folder: Results › Compare with…).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from rsp_workbench.experiment.yabench_config import ImportedExperiment, import_targets, write_imported_experiment
from rsp_workbench.gui.text import plural


class YabenchImport:
    """Ask for the test folder and the experiment file, then write them; the dialogs are attributes
    (tests and scripts answer them)."""

    def __init__(self, parent: QWidget) -> None:
        self.parent = parent
        self.ask_folder: Callable[[], str | None] = self._ask_folder
        self.ask_out: Callable[[Path], str | None] = self._ask_out
        self.ask_replace: Callable[[Path], bool] = self._ask_replace

    def run(self) -> tuple[Path, ImportedExperiment] | None:
        """(experiment file, what was imported), or None when the user stopped; a UserError when the
        folder is no YABench test folder (one line naming the file)."""
        folder = self.ask_folder()
        if not folder:
            return None
        name = Path(folder).resolve().name
        answer = self.ask_out(Path.home() / f"yabench-{name}.yaml")
        if not answer:
            return None
        out, query_path = import_targets(folder, answer)
        if query_path.exists() and not self.ask_replace(query_path):
            return None  # the experiment file's own replacement was asked by the save dialog
        return out, write_imported_experiment(folder, out, force=True)

    def _ask_folder(self) -> str | None:
        return QFileDialog.getExistingDirectory(self.parent, "Import a YABench test folder (config.json, engine.query)",
                                                str(Path.home())) or None

    def _ask_out(self, suggested: Path) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self.parent, "Save the imported experiment as", str(suggested),
                                              "Experiments (*.yaml *.yml)")
        return path or None

    def _ask_replace(self, path: Path) -> bool:
        answer = QMessageBox.question(self.parent, "Replace the query file?", f"{path} exists. Replace it?",
                                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes


def imported_message(out: Path, imported: ImportedExperiment) -> str:
    """The status line after an import: where it went and how much was not mapped."""
    notes = len(imported.unmapped) + len(imported.warnings)
    tail = f"; {plural(notes, 'setting')} not mapped (listed at the top of the file)" if notes else ""
    return f"imported as {out} (a YABench folder's experiment: run it, then compare with the folder){tail}"
