"""Published YABench test folders read as read-only bundles: `rspwb report`,
the view data and the Results browser, on a folder built by hand (tests/results/yabench_folder.py)
with a missing repetition and a missing ``P_<test>_agg``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.results.yabench_folder import build_test_folder, build_two_engines
from rsp_workbench.errors import UserError
from rsp_workbench.experiment import load_experiment
from rsp_workbench.experiment.yabench_config import read_config
from rsp_workbench.results.published import is_published, split_numbered
from rsp_workbench.results.reader import open_bundle
from rsp_workbench.results.view_data import (
    read_boxplots,
    bundle_data,
    read_resources,
    read_window_series,
    run_groups,
)
from rsp_workbench.results.yabench_files import parse_oracle, parse_performance


@pytest.fixture
def two_engines(tmp_path: Path) -> Path:
    return build_two_engines(tmp_path / "experiment")


def report_json(folder: Path) -> dict:
    result = subprocess.run([sys.executable, "-m", "rsp_workbench.cli.main", "report", str(folder), "--json"],
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def test_split_numbered_prefers_the_configs_test_names() -> None:
    assert split_numbered("ORACLE_small10", "ORACLE_", ["small"]) == ("small", 10)
    assert split_numbered("ORACLE_Q1_12", "ORACLE_", ["Q1_1"]) == ("Q1_1", 2)
    assert split_numbered("ORACLE_Q1_12", "ORACLE_", []) == ("Q1_", 12)
    assert split_numbered("BOXPLOTS_small", "ORACLE_", ["small"]) is None
    # without a repetition number: one run of the test (YABench-One's Experiment_4)
    assert split_numbered("ORACLE_non-gracious", "ORACLE_", []) == ("non-gracious", None)
    assert split_numbered("ORACLE_Q1", "ORACLE_", ["Q1"]) == ("Q1", None)
    assert split_numbered("ORACLE_12", "ORACLE_", []) is None


def test_published_files_parse_with_their_engine_line() -> None:
    lines = parse_oracle("1.0,1.0,10,10,175,0,5000,73\n0.5,0.25,12,6,175,5000,10000,\n")
    assert len(lines) == 2 and lines.mean("precision") == 0.75 and lines.mean("recall") == 0.625
    assert np.isnan(lines.columns["delay"][1])  # empty delay: the window was not reported
    samples = parse_performance("CQELS\ntime,rss_mem,cpu_percent,mem_percent,threads\n0.0,4.98,114.1,0.19,21\n")
    assert samples.engine == "CQELS" and samples.peak_rss_mb == 4.98
    with pytest.raises(UserError, match=r"ORACLE_x:2: .*expected 8"):
        parse_oracle("1.0,1.0,1,1,1,0,5,1\n1.0,1.0\n", file="ORACLE_x")


@pytest.mark.slow
def test_report_json_one_run_per_oracle_file(tmp_path: Path) -> None:
    folder = build_test_folder(tmp_path / "cqels")
    assert is_published(folder)
    report = report_json(folder)
    assert report["status"] == "published" and report["format"] == "yabench-test-folder"
    runs = report["runs"]
    assert [r["run_id"] for r in runs] == ["cqels-small-rep1", "cqels-small-rep2"]  # ORACLE_small3 is missing
    first, second = runs
    # the file's means over its windows: (1 + 0.5 + 1) / 3 and (1 + 1 + 0.5) / 3
    assert first["precision"] == pytest.approx(2.5 / 3, abs=1e-6) and first["recall"] == pytest.approx(2.5 / 3, abs=1e-6)
    assert second["precision"] == 1.0 and second["recall"] == 1.0
    assert first["windows"] == 3 and first["engine"] == "cqels" and first["query"] == "small"
    assert first["kpi_samples"] == 3 and first["peak_rss_mb"] == 106.2 and second["peak_rss_mb"] == 90.0
    assert first["verdict"] is None and first["first_divergence"] is None and first["responses"] is None
    assert first["variables"]["WSIZE"] == "5s" and first["variables"]["stations"] == "3"
    notes = "\n".join(report["notes"])
    assert "2 of 3 repetitions; ORACLE_small<n> missing for n = 3" in notes
    assert "P_small_agg missing" in notes


def test_a_folder_of_several_engines_reads_as_one_bundle(two_engines: Path) -> None:
    summary = open_bundle(two_engines)
    assert [r["run_id"] for r in summary.rows] == ["cqels-small-rep1", "cqels-small-rep2",
                                                    "csparql-small-rep1", "csparql-small-rep2"]
    assert {r["engine"] for r in summary.rows} == {"cqels", "csparql"}
    assert sum("P_small_agg missing" in n for n in summary.notes) == 1 and "cqels: small" in " ".join(summary.notes)
    bundle = open_bundle(two_engines)
    assert bundle.published and bundle.status == "published"
    groups = run_groups(bundle)
    assert [label for _, label in groups] == ["rep 1 · small", "rep 2 · small"]
    row = bundle.rows[0]
    series = read_window_series(bundle, row)
    assert series is not None and list(series.end) == [5000, 10000, 15000] and list(series.delay) == [73, 97, 134]
    resources = read_resources(bundle, row)
    assert resources is not None and list(resources.time_s) == [0.0, 0.5, 1.0]
    boxplots = read_boxplots(bundle)
    assert [(b.engine, b.case, b.query, b.repetitions) for b in boxplots] == [("cqels", None, "small", 2),
                                                                              ("csparql", None, "small", 2)]
    assert boxplots[0].start == (0, 5000, 10000)
    data = bundle_data(open_bundle(two_engines))
    assert not data.problems and data.matrix.engines == ("cqels", "csparql")


def test_unreadable_pieces_are_located_and_the_rest_is_read(two_engines: Path) -> None:
    (two_engines / "cqels" / "results" / "oracle" / "ORACLE_small2").write_text("1.0,1.0,oops,1,1,0,5000,3\n")
    (two_engines / "csparql" / "config.json").write_text('{"tests": [\n  nope\n')
    bundle = open_bundle(two_engines)
    problems = [str(p) for p in bundle.problems]
    assert any("ORACLE_small2:1: actual_size: not a number" in p for p in problems)
    assert any(f"{two_engines / 'csparql' / 'config.json'}:2:" in p for p in problems)
    bad = bundle.row("cqels-small-rep2")
    assert bad is not None and bad["status"] == "unreadable"
    assert bundle.row("csparql-small-rep1") is not None  # test names guessed from the file names


def test_report_names_a_folder_that_is_neither(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "rsp_workbench.cli.main", "report", str(tmp_path), "--json"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "nor a YABench test folder" in result.stderr and result.stdout == ""


def test_an_answer_within_the_due_millisecond_has_delay_zero_not_minus_one() -> None:
    """The −1 ms delays: the response log has whole ms (1000), the stand's due time sub-ms
    (1000.84, the stimulus's send time); on one ms grid the delay is 0."""
    from collections import Counter

    from rsp_workbench.oracle.quality import ExpectedWindow, window_quality

    window = ExpectedWindow(0, 5000, Counter({"a": 1}), 7, 5000)
    late = window_quality([window, window], [(1000, Counter({"a": 1})), (1003, Counter({"a": 1}))],
                          due_at=lambda report_time: 1000.84)
    assert [w.delay for w in late] == [0, 3]


def rspwb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rsp_workbench.cli.main", *args], capture_output=True, text=True)


@pytest.mark.slow
def test_import_yabench_config_validates_and_runs(two_engines: Path, tmp_path: Path) -> None:
    """rspwb import yabench-config → rspwb validate → rspwb run --size smoke (docs/design/CLI.md)."""
    out = tmp_path / "imported" / "exp.yaml"
    result = rspwb("import", "yabench-config", str(two_engines / "csparql"), "--out", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    query = (out.parent / "queries" / "csparql.rq").read_text(encoding="utf-8")
    assert "[RANGE ${WSIZE} STEP ${WSLIDE}]" in query and "${TEMP}" in query  # placeholders kept …
    import yaml

    document = yaml.safe_load(text)  # … and defined as the experiment's variables
    assert document["variables"]["WSIZE"] == "5s" and document["variables"]["TEMP"] == 50.0
    assert document["cases"] == [{"TEST": "small", "STATIONS": 3}] and document["repetitions"] == 3
    assert document["seed"] == 1430236906 and document["stream"]["params"]["stations"] == "${STATIONS}"
    assert document["engines"] == [{"id": "csparql", "type": "secret", "preset": "csparql"}]
    assert document["oracle"]["system"] == "yabench-window-close" and document["oracle"]["gracious"] is False
    assert "# Not mapped:" in text and "oracle.query not needed" in text and "not mapped" in result.stderr
    assert rspwb("validate", str(out)).returncode == 0
    again = rspwb("import", "yabench-config", str(two_engines / "csparql"), "--out", str(out))
    assert again.returncode == 2 and "--force" in again.stderr

    cqels = tmp_path / "cqels.yaml"
    assert rspwb("import", "yabench-config", str(two_engines / "cqels"), "--out", str(cqels)).returncode == 0
    assert yaml.safe_load(cqels.read_text())["oracle"]["system"] == "yabench-content-change"

    bundle = tmp_path / "bundle"
    run = rspwb("run", str(out), "--size", "smoke", "--out", str(bundle), "--yes", "--quiet", "--json")
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)["runs"]
    assert len(rows) == 1 and rows[0]["engine"] == "csparql" and rows[0]["verdict"] == "correct"
    assert rows[0]["variables"]["TEST"] == "small"


def test_import_names_what_cannot_be_imported(two_engines: Path, tmp_path: Path) -> None:
    folder = two_engines / "cqels"
    (folder / "engine.query").write_text("SELECT ?x WHERE { ?x ?p ${MISSING} }\n")
    result = rspwb("import", "yabench-config", str(folder), "--out", str(tmp_path / "x.yaml"))
    assert result.returncode == 2 and f"{folder / 'engine.query'}:1:" in result.stderr and "MISSING" in result.stderr
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "generator": "LUBM-X"}))
    result = rspwb("import", "yabench-config", str(folder), "--out", str(tmp_path / "x.yaml"))
    assert result.returncode == 2 and "generator" in result.stderr and "LUBM-X" in result.stderr


@pytest.mark.slow
def test_unnumbered_results_directly_under_results_are_runs(tmp_path: Path) -> None:
    """Experiment_4's layout: `results/ORACLE_gracious`, `results/ORACLE_non-gracious`, `results/P_…`."""
    from tests.results.yabench_folder import build_unnumbered_folder

    folder = build_unnumbered_folder(tmp_path / "cqels")
    report = report_json(folder)
    runs = {r["run_id"]: r for r in report["runs"]}
    assert list(runs) == ["cqels-gracious", "cqels-non-gracious"]
    gracious, strict = runs.values()
    # means over the windows: precision (1 + 1 + 1) / 3, recall (1 + 0.5 + 1) / 3; (0.5 + 0.25) / 2, (1 + 0.5) / 2
    assert (gracious["precision"], gracious["recall"]) == (1.0, pytest.approx(2.5 / 3, abs=1e-6))
    assert (strict["precision"], strict["recall"]) == (0.375, 0.75)
    assert gracious["repetition"] is None and gracious["windows"] == 3 and gracious["peak_rss_mb"] == 79.16
    assert strict["peak_rss_mb"] == 5.5 and strict["variables"]["graceful"] == "false"
    notes = report["notes"]
    assert not any("no ORACLE_" in n or "repetitions" in n or "_agg" in n or "BOXPLOTS" in n for n in notes), notes
    # the files' windows are not what the configured station count generates: said once
    (line,) = [n for n in notes if "not of this configuration" in n]
    assert line == ("gracious, non-gracious: the ORACLE files hold 175 triples a window where the configured "
                    "1 station gives 35 (5s windows, 1s interval, 7 triples an observation): the results are not "
                    "of this configuration")
    bundle = open_bundle(folder)
    assert [label for _, label in run_groups(bundle)] == ["gracious (graceful=true)", "non-gracious (graceful=false)"]
    series = read_window_series(bundle, bundle.rows[0])
    assert series is not None and list(series.end) == [5000, 10000, 15000]


@pytest.mark.slow
def test_numbered_results_directly_under_results_and_a_matching_configuration(tmp_path: Path) -> None:
    folder = build_test_folder(tmp_path / "cqels", agg=True)
    for sub in ("oracle", "performance"):
        for path in (folder / "results" / sub).iterdir():
            path.rename(folder / "results" / path.name)
        (folder / "results" / sub).rmdir()
    config = json.loads((folder / "config.json").read_text())
    config["tests"][0]["stations"] = "5"  # 175 triples a 5 s window: 5 stations × 5 observations × 7
    (folder / "config.json").write_text(json.dumps(config))
    report = report_json(folder)
    assert [r["run_id"] for r in report["runs"]] == ["cqels-small-rep1", "cqels-small-rep2"]
    assert report["runs"][0]["peak_rss_mb"] == 106.2
    notes = "\n".join(report["notes"])
    assert "ORACLE_small<n> missing for n = 3" in notes and "_agg missing" not in notes and "BOXPLOTS" not in notes
    assert "not of this configuration" not in notes
    assert [b.repetitions for b in read_boxplots(open_bundle(folder))] == [2]


@pytest.mark.slow
def test_a_config_with_a_trailing_comma_imports_with_a_located_warning(two_engines: Path, tmp_path: Path) -> None:
    config = two_engines / "cqels" / "config.json"
    text = config.read_text()
    config.write_text(text.replace('"runs": 3\n', '"runs": 3,\n', 1))  # Experiment_3/cqels
    line = text[:text.index('"runs": 3')].count("\n") + 1
    column = len(text.split("\n")[line - 1]) + 1
    out = tmp_path / "exp" / "e.yaml"
    result = subprocess.run([sys.executable, "-m", "rsp_workbench.cli.main", "import", "yabench-config",
                             str(two_engines / "cqels"), "--out", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    warnings = [w for w in result.stderr.splitlines() if "warning" in w]
    assert warnings == [f"rspwb: warning: {config}:{line}:{column}: trailing comma before a closing bracket, read as "
                        "if it were not there (YABench's reader took it)"]
    assert load_experiment(out).repetitions == 3
    assert any(f"{config}:{line}:{column}: trailing comma" in n for n in open_bundle(two_engines).notes)
    config.write_text(text.replace('"runs": 3\n', '"runs": 3,,\n', 1))  # not just a trailing comma: still refused
    with pytest.raises(UserError, match="not valid JSON"):
        read_config(config.parent)
