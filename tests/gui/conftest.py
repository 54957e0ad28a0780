"""Fixtures of the GUI tests (offscreen Qt, no Spark warm-up, isolated settings, leak checks)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Iterator

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("RSPWB_NO_SPARK_WARMUP", "1")

import pytest  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def gui_thread_collector(qapp: Any) -> None:
    """As the application does at start (`rsp_workbench.gui.app.main`): Python's garbage collected in
    the GUI thread only, so no other thread ever destroys a closed view's widgets."""
    from rsp_workbench.gui.tasks import collect_in_gui_thread

    collect_in_gui_thread()


@pytest.fixture
def no_leaks(qapp: Any) -> Iterator[None]:
    """Fail if a test leaves threads running or top-level windows open (docs/design/STYLE.md)."""
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


TINY_EXPERIMENT = """\
name: tiny-yabench
description: two engines, two repetitions, a few seconds of SG1 (tests/gui/test_gui_results.py)
seed: 1430236906
repetitions: 2
variables: {WSIZE: 2s, WSLIDE: 2s, TEMP: 50.0}
stream:
  generator: sg1
  params: {stations: 3, interval: 1s, duration: 6s}
queries:
  - id: q1
    syntax: csparql
    text: |
      PREFIX om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>
      PREFIX weather: <http://knoesis.wright.edu/ssw/ont/weather.owl#>
      REGISTER QUERY q1 AS
      SELECT ?sensor ?value ?obs
      FROM STREAM <http://cwi.nl/SRBench/observations> [RANGE ${WSIZE} STEP ${WSLIDE}]
      WHERE {
        ?obs om-owl:observedProperty weather:_AirTemperature ;
             om-owl:procedure ?sensor ;
             om-owl:result ?res .
        ?res om-owl:floatValue ?value .
        FILTER (?value > ${TEMP})
      }
engines:
  - {id: cqels, type: secret, preset: cqels}
  - {id: csparql, type: secret, preset: csparql, faults: {border_drift: true}}
kpis:
  collect: [latency, throughput, memory, cpu, threads, correctness]
  sampling: 100ms
oracle: {system: engine, match: strict, gracious: false, t0: 0s}
stand: {mode: absolute-time}
"""


@pytest.fixture(scope="session")
def real_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bundle written by ``rspwb run`` itself (run_experiment) for a tiny experiment."""
    from rsp_workbench.experiment import load_experiment
    from rsp_workbench.pipeline.run_experiment import run_experiment

    folder = tmp_path_factory.mktemp("tiny")
    experiment_file = folder / "tiny.yaml"
    experiment_file.write_text(TINY_EXPERIMENT, encoding="utf-8")
    summary = run_experiment(load_experiment(experiment_file), folder / "bundle", assume_yes=True)
    assert summary.status == "ok", summary
    return folder / "bundle"


@pytest.fixture
def browser(qtbot, settings, no_leaks):  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.results.browser import ResultsBrowser

    widget = ResultsBrowser(settings=settings)
    qtbot.addWidget(widget)
    widget.resize(1300, 800)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.timeline.close()
    widget.close()


@pytest.fixture
def settings(tmp_path: Path) -> Any:
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
