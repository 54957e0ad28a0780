"""Bundles built by hand for the API and report tests: every number in them is chosen, so the
tables and the report can be checked against them without running an engine."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.results.yabench_folder import build_two_engines

#: Three windows of the judged run "ok-run": start, end, precision, recall, actual, expected, triples, delay.
WINDOWS = [(0, 1000, 1.0, 1.0, 2, 2, 7, 12), (1000, 2000, 0.5, 1.0, 2, 1, 7, None), (2000, 3000, 1.0, 0.5, 1, 2, 14, 30)]
STREAM = [("<http://ex.org/a>", "<http://ex.org/p>", '"1"', 0), ("<http://ex.org/b>", "<http://ex.org/p>", '"2"', 1500)]
FAILURE = "the engine process exited with code 3 before the end of the stream\nTraceback: boom"


def build_published(root: Path) -> Path:
    """A folder of two engines' YABench test folders (YABench-One's Experiment_1 shape)."""
    return build_two_engines(root)


def _write(path: Path, payload: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1), encoding="utf-8")


def build_bundle(root: Path, *, status: str = "failed") -> Path:
    """A bundle of two runs: ``ok-run`` judged incorrect (three windows, three responses, two stream
    elements, two resource samples) and ``bad-run`` that failed with :data:`FAILURE`."""
    stream_file = root / "streams" / "s0.parquet"
    stream_file.parent.mkdir(parents=True)
    pq.write_table(pa.table({"subject": [s for s, _, _, _ in STREAM], "predicate": [p for _, p, _, _ in STREAM],
                             "object": [o for _, _, o, _ in STREAM], "graph": pa.array([None, None], pa.string()),
                             "t": pa.array([t for *_, t in STREAM], pa.int64())}), stream_file)
    specs = []
    for index, (run_id, engine) in enumerate((("ok-run", "alpha"), ("bad-run", "beta"))):
        spec = {"run_id": run_id, "index": index, "case": 0, "repetition": 0, "variables": {"N": 1},
                "engine": engine, "engine_type": "secret", "query": "q", "stream": "s0", "status": "ok"}
        specs.append(spec)
        _write(root / "runs" / run_id / "run-spec.json", spec)
    _write(root / "runs" / "ok-run" / "run.json", {"status": "ok", "responses": 3, "samples": 2, "peak_rss_mb": 41.5})
    _write(root / "runs" / "ok-run" / "oracle.json", {
        "verdict": "incorrect", "precision": 0.8, "recall": 0.75,
        "first_divergence": {"t0": 0, "index": 1, "expected_time": 2000, "actual_time": 2000,
                             "reason": "different bindings", "matched_before": 1,
                             "missing": [], "extra": [{"binding": {"x": "<http://ex.org/b>"}}]},
        "windows": [dict(zip(("start", "end", "precision", "recall", "actual_size", "expected_size",
                              "window_triples", "delay"), w)) for w in WINDOWS]})
    lines = [{"record": "header", "variables": ["x"], "source": "stand"},
             {"response": 0, "application_time": 1000, "system_time": 5, "operation": "+", "binding": {"x": "<http://ex.org/a>"}},
             {"response": 0, "application_time": 1000, "system_time": 5, "operation": "+", "binding": {"x": "<http://ex.org/b>"}},
             {"response": 1, "application_time": 2000, "system_time": 9, "operation": "+", "binding": None},
             {"response": 2, "application_time": 3000, "system_time": 12, "operation": "+", "binding": {"x": "<http://ex.org/b>"}}]
    (root / "runs" / "ok-run" / "responses.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    (root / "runs" / "ok-run" / "P_alpha.csv").write_text(
        "time,rss_mem,cpu_percent,mem_percent,threads\n0.1,20.0,50.0,0.1,2\n0.6,41.5,100.0,0.2,3\n")
    _write(root / "runs" / "bad-run" / "run.json", {"status": "failed", "error": FAILURE})
    (root / "experiment.yaml").write_text("name: hand-made\n# the experiment file\n", encoding="utf-8")
    _write(root / "manifest.json", {
        "format": "rspwb-result-bundle/1", "name": "hand-made", "status": status, "seed": 1234,
        "versions": {"workbench": "0.1.0"}, "machine": {"cpus": 2},
        "streams": [{"id": "s0", "path": "streams/s0.parquet", "format": "parquet", "elements": 2}], "runs": specs})
    return root
