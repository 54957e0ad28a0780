"""`rsp-workbench [FILE|DIR]`: the desktop application.

A FILE opens in the designer; a result bundle DIR (or a published YABench test folder) opens
in Results, any other DIR becomes the experiment library; a path that does not exist is said
in a message that stays. Import order: PySide6
before pyqtgraph (``rsp_workbench.gui.qt``). Set ``RSPWB_NO_SPARK_WARMUP=1`` to skip the
background SparkSession start (tests, machines without Java).
"""

from __future__ import annotations

import sys
from typing import Sequence

from rsp_workbench import APP_NAME, __version__


def build_main_window(*, spark_warmup: bool | None = None, settings: object = None, samples_dir: object = None) -> "object":
    """The main window (created only after a QApplication exists)."""
    import rsp_workbench.gui.qt  # noqa: F401  (PySide6, then pyqtgraph; refcount guard)
    from rsp_workbench.gui.main_window import MainWindow

    return MainWindow(spark_warmup=spark_warmup, settings=settings, samples_dir=samples_dir)  # type: ignore[arg-type]


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None and not sys.flags.isolated:
        # the installed script (or python -m): start again isolated, so that nothing in the working
        # directory is ever imported — here, nor in the run processes the window spawns, which take
        # this interpreter's flags (a `multiprocessing` child puts its working directory first otherwise)
        import os

        from rsp_workbench.engine import isolated_python_command

        os.execv(sys.executable, isolated_python_command("rsp_workbench.gui.app", *sys.argv[1:]))
    from rsp_workbench.gui.platform_check import display_problem

    problem = display_problem()
    if problem is not None:  # Qt would abort with a message that names no library
        print(f"rsp-workbench: {problem}", file=sys.stderr)
        return 1
    from PySide6.QtWidgets import QApplication

    args = list(argv) if argv is not None else sys.argv
    app = QApplication.instance() or QApplication(args)
    app.setApplicationName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setOrganizationName("rsp-workbench")
    from rsp_workbench.gui.tasks import collect_in_gui_thread

    collect_in_gui_thread()
    window = build_main_window()
    paths = [a for a in args[1:] if not a.startswith("-")]
    window.show()  # type: ignore[attr-defined]
    if paths:
        window.open_path(paths[0])  # type: ignore[attr-defined]
    code = app.exec()
    _stop_spark()
    return code


def _stop_spark() -> None:
    """Stop the SparkSession if the warm-up started one (PySpark imported only if it was)."""
    if "rsp_workbench.pipeline.spark" in sys.modules:
        try:
            sys.modules["rsp_workbench.pipeline.spark"].stop_spark()
        except Exception:  # noqa: BLE001 - shutting down; nothing useful to do
            pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
