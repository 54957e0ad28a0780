"""Background tasks outlive the registry (or view) that started them: collecting a registry whose
task still ran deleted the task's QThread under it — an intermittent segfault in the event loop."""

from __future__ import annotations

import gc
import threading
import time

import pytest

pytest.importorskip("PySide6")


pytestmark = pytest.mark.gui


@pytest.mark.slow
def test_a_task_keeps_running_when_its_registry_is_collected(qtbot, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui import tasks
    from rsp_workbench.gui.tasks import TaskRegistry

    release = threading.Event()
    seen: list[int] = []
    registry = TaskRegistry()
    # the worker waits for the release as long as the test may take: under CI's load the full collection
    # below once took more than the 5 s it waited before, and the task then answered False, not 42
    task = registry.start("slow", lambda state: release.wait(120) and 42, user_work=False)
    task.finished.connect(seen.append)
    del registry, task
    gc.collect()  # before the fix: "QThread: Destroyed while thread is still running" or a crash
    assert len(tasks._LIVE) == 1
    release.set()
    qtbot.waitUntil(lambda: seen != [], timeout=60_000)
    assert seen == [42]
    qtbot.waitUntil(lambda: not tasks._LIVE, timeout=60_000)


def test_a_finished_task_is_released_only_after_its_thread_is_waited_for(qtbot, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui import tasks
    from rsp_workbench.gui.tasks import TaskRegistry

    registry = TaskRegistry()
    done: list[bool] = []
    task = registry.start("quick", lambda state: time.sleep(0.05), user_work=False)
    task.done.connect(lambda: done.append(task._thread.isFinished()))  # done: the thread is over
    qtbot.waitUntil(lambda: done == [True] and task not in tasks._LIVE, timeout=30_000)
    assert registry.running() == []


def test_while_a_task_runs_the_garbage_collector_runs_only_in_the_gui_thread(qtbot, no_leaks) -> None:  # type: ignore[no-untyped-def]
    """A worker that allocates container objects crosses the collector's thresholds; automatic
    collection would then run in the worker and could destroy the GUI's collected Qt objects
    there (the intermittent segfault in QApplication.topLevelWidgets). The GUI thread collects."""
    from rsp_workbench.gui import tasks
    from rsp_workbench.gui.tasks import TaskRegistry

    class Cycle:
        def __init__(self) -> None:
            self.me = self

    collected_in: set[int] = set()

    def note(phase: str, info: dict) -> None:
        if phase == "start":
            collected_in.add(threading.get_ident())

    enabled_before = gc.isenabled()
    gc.callbacks.append(note)
    try:
        registry = TaskRegistry()
        task = registry.start("allocating", lambda state: [[Cycle() for _ in range(50)] for _ in range(4000)] and None,
                              user_work=False)
        assert not gc.isenabled()  # off before the worker allocates anything
        qtbot.waitUntil(lambda: task not in tasks._LIVE, timeout=10_000)
        qtbot.waitUntil(lambda: bool(collected_in), timeout=30_000)  # the GUI thread's timer collected
        assert collected_in == {threading.get_ident()}
        assert gc.isenabled() == enabled_before  # no task left: automatic collection as before
    finally:
        gc.callbacks.remove(note)


def test_the_application_collects_in_the_gui_thread_also_when_no_task_runs(qtbot) -> None:  # type: ignore[no-untyped-def]
    """`collect_in_gui_thread` (the application's start; these tests' session fixture): automatic
    collection stays off after the last task ends, so no other thread destroys a closed view's widgets."""
    from rsp_workbench.gui import tasks
    from rsp_workbench.gui.tasks import TaskRegistry, collect_in_gui_thread

    collect_in_gui_thread()
    assert not gc.isenabled()
    registry = TaskRegistry()
    task = registry.start("short", lambda state: None, user_work=False)
    qtbot.waitUntil(lambda: task not in tasks._LIVE, timeout=10_000)
    qtbot.wait(50)
    assert not gc.isenabled()
