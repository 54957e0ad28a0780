"""The Results tab's Qt-free model: two bundles paired run by run and window by window, and whether
a bundle's experiment can be re-run (rsp_workbench/gui/results/model.py); no display needed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from rsp_workbench.errors import UserError
from rsp_workbench.gui.results.model import (
    BOTH,
    ONLY_A,
    ONLY_B,
    compare_bundles,
    compare_windows,
    experiment_to_rerun,
    open_for_comparison,
    read_window_comparison,
)
from rsp_workbench.results.reader import open_bundle
from tests.gui.support import rooms_experiment, write_bundle
from tests.results.yabench_folder import build_test_folder


def window_table(rows: list[tuple[int, int, float, float, int, int]]) -> pa.Table:
    start, end, precision, recall, actual, expected = (list(column) for column in zip(*rows))
    return pa.table({"start": start, "end": end, "precision": precision, "recall": recall, "actual_size": actual,
                     "expected_size": expected, "window_triples": [5] * len(rows), "delay": [1.0] * len(rows)})


def run(engine: str, repetition: int = 0, **values: object) -> dict[str, object]:
    return {"case": 0, "repetition": repetition, "engine": engine, "query": "q1", "variables": {}, **values}


def write_windows(bundle: Path, run_id: str, windows: list[tuple[int, int, float, float, int, int]]) -> None:
    keys = ("start", "end", "precision", "recall", "actual_size", "expected_size")
    entries = [{**dict(zip(keys, w)), "window_triples": 5, "delay": 1} for w in windows]
    (bundle / "runs" / run_id / "oracle.json").write_text(json.dumps({"verdict": "correct", "windows": entries}))


def test_two_own_bundles_pair_by_run_id_and_show_each_difference(tmp_path: Path) -> None:
    a = open_bundle(write_bundle(tmp_path / "a", "a", [run("cqels", precision=0.5), run("csparql", precision=1.0)]))
    b = open_bundle(write_bundle(tmp_path / "b", "b", [run("cqels", precision=0.75, verdict="incorrect"),
                                                       run("cqels", 1, precision=0.5)]))
    comparison = compare_bundles(a, b)
    assert [(r.engine, r.side) for r in comparison.runs] == [("cqels", BOTH), ("csparql", ONLY_A), ("cqels", ONLY_B)]
    first = comparison.runs[0]
    cells = dict(zip(("verdict", "precision", "recall", "windows"), first.cells))
    assert cells["verdict"].text == "correct → incorrect" and cells["precision"].text == "0.500 → 0.750"
    assert cells["recall"].text == "–" and not cells["recall"].differs and not cells["windows"].differs
    assert comparison.runs[1].run_b is None and comparison.runs[2].run_a is None
    assert comparison.summary_text() == "1 run(s) in both (1 judged differently); 1 only in A; 1 only in B — paired by run id"


def test_values_that_look_the_same_do_not_differ_nor_do_costs(tmp_path: Path) -> None:
    """Precision 0.5 and 0.5004 both show as 0.500; a wall time that differs is shown, yet the run is
    judged alike (costs differ between any two runs)."""
    a = open_bundle(write_bundle(tmp_path / "a", "a", [run("cqels", precision=0.5, wall_s=1.0)]))
    b = open_bundle(write_bundle(tmp_path / "b", "b", [run("cqels", precision=0.5004, wall_s=2.5)]))
    comparison = compare_bundles(a, b)
    assert comparison.differing == 0 and not comparison.runs[0].differs
    assert comparison.runs[0].cells[1].text == "0.500" and comparison.runs[0].cells[-1].text == "1 → 2.5"


def test_windows_are_aligned_by_borders_and_evaluation(tmp_path: Path) -> None:
    """Window [0, 2 s) evaluated twice in both runs, one window in each run only; a recall that differs."""
    a = window_table([(0, 2000, 1.0, 1.0, 2, 2), (0, 2000, 0.5, 1.0, 4, 2), (2000, 4000, 1.0, 1.0, 1, 1)])
    b = window_table([(4000, 6000, 1.0, 1.0, 1, 1), (0, 2000, 1.0, 0.75, 2, 2), (0, 2000, 0.5004, 1.0, 4, 2)])
    windows = compare_windows(a, b)
    assert windows.start.tolist() == [0, 0, 2000, 4000] and windows.end.tolist() == [2000, 2000, 4000, 6000]
    assert windows.in_a.tolist() == [True, True, True, False] and windows.in_b.tolist() == [True, True, False, True]
    assert windows.differs["recall"].tolist() == [True, False, False, False]
    assert not windows.differs["precision"].any()  # 0.5 and 0.5004 show alike
    assert windows.differing.tolist() == [True, False, True, True]
    assert windows.value_text("B", "recall", 0) == "0.750" and windows.value_text("B", "precision", 2) == "–"
    assert windows.summary_text() == "4 windows: 2 in both (1 differ), 1 only in A, 1 only in B"
    empty = compare_windows(a, window_table([(0, 1, 1.0, 1.0, 1, 1)]).slice(0, 0))
    assert len(empty) == 3 and not empty.in_b.any()


def test_an_own_bundle_and_a_published_folder_pair_by_engine_test_and_repetition(tmp_path: Path) -> None:
    """The own bundle of an experiment imported from the folder (TEST = small) against the folder itself:
    YABench's repetition 1 is the workbench's 0; the third window's recall differs."""
    published = build_test_folder(tmp_path / "cqels")
    own = write_bundle(tmp_path / "own", "own", [run("cqels", 0, variables={"TEST": "small"}),
                                                 run("cqels", 1, variables={"TEST": "small"})])
    write_windows(own, "case0-rep0-cqels-q1", [(0, 5000, 1.0, 1.0, 10, 10), (5000, 10000, 0.5, 1.0, 12, 6),
                                               (10000, 15000, 1.0, 1.0, 8, 8)])
    a, b = open_bundle(own), open_bundle(published)
    comparison = compare_bundles(a, b)
    assert comparison.paired_by == "engine, YABench test and repetition"
    assert [(r.run_a, r.run_b) for r in comparison.runs] == [("case0-rep0-cqels-q1", "cqels-small-rep1"),
                                                           ("case0-rep1-cqels-q1", "cqels-small-rep2")]
    verdict = comparison.runs[0].cells[0]  # a published folder has no verdict: shown, not a difference
    assert verdict.text == "correct → –" and not verdict.differs
    windows = read_window_comparison(a, "case0-rep0-cqels-q1", b, "cqels-small-rep1")
    assert windows is not None and windows.summary_text() == "3 windows: 3 in both (1 differ)"
    assert windows.differs["recall"].tolist() == [False, False, True]
    assert windows.differs["actual_size"].tolist() == [False, False, True]


def test_reads_stop_when_cancelled(tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path / "a", "a", [run("cqels")])
    assert open_for_comparison(bundle, cancelled=lambda: True) is None
    opened = open_bundle(bundle)
    steps: list[float] = []
    assert read_window_comparison(opened, "case0-rep0-cqels-q1", opened, "case0-rep0-cqels-q1",
                                  lambda: True, lambda fraction, message: steps.append(fraction)) is None
    assert steps == [0.0]


def test_a_bundle_without_an_experiment_cannot_be_rerun(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="published YABench folder holds no experiment to re-run; import it"):
        experiment_to_rerun(open_bundle(build_test_folder(tmp_path / "cqels")))
    bundle = write_bundle(tmp_path / "hand", "hand", [run("cqels")])
    with pytest.raises(UserError, match=r"the bundle holds no experiment.yaml") as raised:
        experiment_to_rerun(open_bundle(bundle))
    assert raised.value.file == str(bundle)


def test_an_engine_type_not_installed_here_cannot_be_rerun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rsp_workbench.engines.esper as esper

    monkeypatch.setattr(esper, "jar", lambda: tmp_path / "not-built.jar")
    bundle = write_bundle(tmp_path / "bundle", "b", [run("jena")])
    source = rooms_experiment(tmp_path, engines="- {id: jena, type: esper, preset: csparql}")
    (bundle / "experiment.yaml").write_text(source.read_text())
    with pytest.raises(UserError, match="cannot be re-run here: engine jena: engine type esper is not installed") as raised:
        experiment_to_rerun(open_bundle(bundle))
    assert raised.value.file == str(bundle / "experiment.yaml") and raised.value.field == "engines.jena"


@pytest.mark.slow
def test_a_bundle_reruns_the_experiment_it_holds(real_bundle: Path) -> None:
    experiment = experiment_to_rerun(open_bundle(real_bundle))
    assert experiment.seed == 1430236906 and [e.id for e in experiment.engines] == ["cqels", "csparql"]
    assert experiment.repetitions == 2 and experiment.file == real_bundle / "experiment.yaml"
    assert np.isclose(experiment.raw["variables"]["TEMP"], 50.0)
