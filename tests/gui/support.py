"""Helpers shared by the GUI test modules: small experiments, run events, bundles, a shown main window."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Iterator

from rsp_workbench.files import write_json_atomic
from rsp_workbench.gui.runs.model import ExperimentRun, RunRequest
from rsp_workbench.pipeline.run_task import ExperimentProgress
from rsp_workbench.results.bundle import MANIFEST, SUMMARY
from tests.paths import ROOT


ROOMS = ROOT / "sample_experiments" / "teaching" / "rooms.stream"


QUERY = """REGISTER QUERY rooms AS
      SELECT ?room
      FROM STREAM <http://www.example.org/stream1> [RANGE 10s STEP 10s]
      WHERE { <http://ex.org/m1> <http://ex.org/detectedAt> ?room .
              <http://ex.org/m2> <http://ex.org/detectedAt> ?room }"""


def rooms_experiment(folder: Path, *, name: str = "tiny-rooms", engines: str = "- {id: csparql, type: secret, preset: csparql}",
                     mode: str = "absolute-time") -> Path:
    """A one-query experiment over the rooms stream; ``real-time`` makes the engine run last 25 s."""
    text = f"""name: {name}
sizes:
  smoke: {{}}
stream: {{file: {ROOMS}, format: yabench}}
queries:
  - id: rooms
    syntax: csparql
    text: |
      {QUERY}
engines:
{textwrap.indent(textwrap.dedent(engines).strip(), "  ")}
kpis: {{sampling: 50ms}}
oracle: {{system: engine, t0: all}}
stand: {{mode: {mode}}}
"""
    path = folder / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def event(stage: str, message: str = "", **kwargs: Any) -> ExperimentProgress:
    return ExperimentProgress(stage, message or stage, **kwargs)


def entry_for(tmp_path: Path) -> ExperimentRun:
    from rsp_workbench.experiment import load_experiment

    return ExperimentRun(1, RunRequest(load_experiment(rooms_experiment(tmp_path)), tmp_path / "out"))


def write_bundle(folder: Path, name: str, runs: list[dict[str, Any]]) -> Path:
    """A hand-written bundle in the documented layout: manifest.json, summary.json, runs/ID/{run-spec,run}.json
    and P_ENGINE.csv. Each run dict holds a summary row plus optional ``_run`` (run.json extras)."""
    rows = []
    for index, run in enumerate(runs):
        extra = run.pop("_run", {})
        row = {"run_id": f"case{run['case']}-rep{run['repetition']}-{run['engine']}-{run['query']}", "index": index,
               "engine_type": "secret", "stream": "stream0", "status": "ok", "verdict": "correct", "precision": None,
               "recall": None, "windows": 0, "responses": 1, "bindings": 1, "kpi_samples": 2, "peak_rss_mb": None,
               "latency_ms_mean": None, "latency_ms_p95": None, "throughput_triples_per_s": None, "wall_s": 1.0,
               "error": None, **run}
        row["folder"] = f"runs/{row['run_id']}"
        run_folder = folder / "runs" / row["run_id"]
        run_folder.mkdir(parents=True)
        spec = {k: row[k] for k in ("run_id", "index", "case", "repetition", "variables", "engine", "engine_type",
                                    "query", "stream")}
        write_json_atomic(run_folder / "run-spec.json", spec)
        write_json_atomic(run_folder / "run.json", {
            "name": row["engine"], "status": "ok", "error": None, "responses": 1, "bindings": 1, "samples": 2,
            "timings": {"wall_s": 1.0}, "latency_ms": {"mean": row["latency_ms_mean"]},
            "peak_rss_mb": row["peak_rss_mb"], "engine": {"type": row["engine_type"], "name": row["engine"],
                                                          "parameters": extra.get("parameters", {})}})
        (run_folder / f"P_{row['engine']}.csv").write_text(
            "time,rss_mem,cpu_percent,mem_percent,threads\n0.1,10.0,5.0,0.1,1\n0.6,20.0,50.0,0.2,2\n", encoding="utf-8")
        rows.append(row)
    write_json_atomic(folder / SUMMARY, {"name": name, "status": "ok", "runs": rows})
    write_json_atomic(folder / MANIFEST, {
        "format": "rspwb-result-bundle/1", "name": name, "status": "ok", "started": "2026-01-01T00:00:00+00:00",
        "finished": "2026-01-01T00:01:00+00:00", "repetitions": 2,
        "runs": [{**{k: r[k] for k in ("run_id", "index", "case", "repetition", "variables", "engine", "engine_type",
                                        "query", "stream")}, "status": "ok"} for r in rows]})
    return folder


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
