"""Shared helpers for the GUI tests (offscreen Qt, no Spark warm-up, isolated settings, leak checks)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Iterator

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("RSPWB_NO_SPARK_WARMUP", "1")

import pytest


@pytest.fixture
def no_leaks(qapp: Any) -> Iterator[None]:
    """Fail if a test leaves threads running or top-level windows open (STYLE.md)."""
    from PySide6.QtWidgets import QApplication

    threads_before = {t.ident for t in threading.enumerate()}
    yield
    QApplication.processEvents()
    leaked_threads = [t for t in threading.enumerate()
                      if t.ident not in threads_before and t.is_alive() and not _ended_foreign_thread(t)]
    visible = [w for w in QApplication.topLevelWidgets() if w.isVisible()]
    assert not leaked_threads, f"leaked threads: {leaked_threads}"
    assert not visible, f"windows left open: {[w.objectName() or type(w).__name__ for w in visible]}"


def _ended_foreign_thread(thread: threading.Thread) -> bool:
    """Python keeps a ``_DummyThread`` for a QThread that created Python threads, "alive" after the
    OS thread ended (Python < 3.12); on Linux /proc tells whether it still exists."""
    if not isinstance(thread, threading._DummyThread) or thread.native_id is None:  # type: ignore[attr-defined]
        return False
    return Path("/proc/self/task").is_dir() and not Path(f"/proc/self/task/{thread.native_id}").exists()


@pytest.fixture
def settings(tmp_path: Path) -> Any:
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def shown_main_window(qtbot: Any, settings: Any, samples: Path) -> Iterator[Any]:
    """A shown MainWindow over ``samples`` (no Spark warm-up), closed without a save prompt: the body
    of the GUI tests' ``window`` fixtures."""
    import time

    from rsp_workbench.gui.main_window import MainWindow

    started, started_cpu = time.monotonic(), time.thread_time()
    main = MainWindow(settings=settings, samples_dir=samples, spark_warmup=False)
    qtbot.addWidget(main)
    main.show()
    qtbot.waitExposed(main)
    main.startup_seconds = time.monotonic() - started
    # the GUI thread's own CPU time: what start-up costs, whatever else loads the machine
    main.startup_cpu_seconds = time.thread_time() - started_cpu
    yield main
    main.designer.model._saved_raw = main.designer.model.raw  # no save prompt on teardown
    main.close()
