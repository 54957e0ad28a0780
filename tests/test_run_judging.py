"""How `rspwb run` judges its runs: the oracle path the `auto` rule picks (recorded in
oracle.json), external engines' declared semantics, report policies of data-driven engines,
regrouping, and the exit codes of `rspwb check`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_run_experiment import experiment_file
from workbench.experiment import load_experiment
from workbench.pipeline.run_experiment import run_experiment


def oracle_of(bundle: Path, run_id: str) -> dict:
    return json.loads((bundle / "runs" / run_id / "oracle.json").read_text())


def test_small_runs_are_judged_on_the_python_fast_path(tmp_path: Path) -> None:
    path = experiment_file(tmp_path, "- {id: csparql, type: secret, preset: csparql}")
    summary = run_experiment(load_experiment(path), tmp_path / "bundle")
    oracle = oracle_of(tmp_path / "bundle", summary.runs[0]["run_id"])
    assert oracle["verdict"] == "correct"
    assert (oracle["method"], oracle["method_engine"], oracle["method_reason"]) == ("fast", "python", None)


@pytest.mark.spark
def test_runs_over_the_threshold_are_judged_by_the_spark_job(tmp_path: Path, spark: object,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.pipeline import oracle_paths

    monkeypatch.setattr(oracle_paths, "SPARK_THRESHOLD", 3)  # the tiny stream counts as big
    path = experiment_file(tmp_path, """
        - {id: csparql, type: secret, preset: csparql}
        - {id: cqels, type: secret, preset: cqels}
        """)
    summary = run_experiment(load_experiment(path), tmp_path / "bundle")
    assert [row["verdict"] for row in summary.runs] == ["correct", "correct"]
    for row in summary.runs:
        oracle = oracle_of(tmp_path / "bundle", row["run_id"])
        assert oracle["method_engine"] == "spark", oracle["method_reason"]
        assert oracle["method"] in ("fast", "fast-vectorised")
        assert oracle["precision"] == oracle["recall"] == 1.0
