"""How `rspwb run` judges its runs: the oracle path the `auto` rule picks (recorded in
oracle.json), external engines' declared semantics, report policies of data-driven engines,
regrouping, and the exit codes of `rspwb check`."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from tests.pipeline.support import experiment_file
from rsp_workbench.cli.main import main
from rsp_workbench.errors import UserError
from rsp_workbench.experiment import expand_runs, load_experiment
from rsp_workbench.pipeline.run_experiment import run_experiment
from rsp_workbench.results.reader import open_bundle


def oracle_of(bundle: Path, run_id: str) -> dict:
    return json.loads((bundle / "runs" / run_id / "oracle.json").read_text())


def test_small_runs_are_judged_on_the_python_fast_path(tmp_path: Path) -> None:
    path = experiment_file(tmp_path, "- {id: csparql, type: secret, preset: csparql}")
    summary = run_experiment(load_experiment(path), tmp_path / "bundle")
    oracle = oracle_of(tmp_path / "bundle", summary.rows[0]["run_id"])
    assert oracle["verdict"] == "correct"
    assert (oracle["method"], oracle["method_engine"], oracle["method_reason"]) == ("fast", "python", None)
    # the windows also as windows.parquet, which the bundle reads: the same table as oracle.json's
    windows_file = tmp_path / "bundle" / "runs" / summary.rows[0]["run_id"] / "windows.parquet"
    windows = open_bundle(tmp_path / "bundle").windows(summary.rows[0]["run_id"])
    assert windows_file.is_file() and windows["start"].to_pylist() == [w["start"] for w in oracle["windows"]]
    windows_file.unlink()
    assert open_bundle(tmp_path / "bundle").windows(summary.rows[0]["run_id"]).equals(windows)


@pytest.mark.slow
@pytest.mark.spark
def test_runs_over_the_threshold_are_judged_by_the_spark_job(tmp_path: Path, spark: object,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from rsp_workbench.oracle import paths as oracle_paths

    monkeypatch.setattr(oracle_paths, "SPARK_THRESHOLD", 3)  # the tiny stream counts as big
    path = experiment_file(tmp_path, """
        - {id: csparql, type: secret, preset: csparql}
        - {id: cqels, type: secret, preset: cqels}
        """)
    summary = run_experiment(load_experiment(path), tmp_path / "bundle")
    assert [row["verdict"] for row in summary.rows] == ["correct", "correct"]
    for row in summary.rows:
        oracle = oracle_of(tmp_path / "bundle", row["run_id"])
        assert oracle["method_engine"] == "spark", oracle["method_reason"]
        assert oracle["method"] in ("fast", "fast-vectorised")
        assert oracle["precision"] == oracle["recall"] == 1.0


# --- real engines: declared semantics, late (next-element) reports, one response per binding ---

EX = "http://example.org/"
#: a data-driven engine in the style of rsp-js: tumbling windows [kW, (k+1)W) from 0, a window
#: is evaluated when the first element after its close arrives (t = that element's time), the
#: answer (?s of every <p> triple in the window) is sent one response per binding, empty
#: answers are not sent, `advance` is ignored
DATA_DRIVEN = """
import json, sys
W = 2000
buffer, reported, received = [], -1, []
def send(message):
    sys.stdout.write(json.dumps(message) + "\\n"); sys.stdout.flush()
for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "register":
        send({"type": "ready"})
    elif kind == "stimulus":
        t = message["t"]
        close = (reported + 1) * W + W
        while close < t:
            window = [s for s, time in buffer if close - W <= time < close]
            for s in window:
                send({"type": "response", "stimulus": message["id"], "t": t, "operation": "=",
                      "bindings": [{"s": s}]})
            reported += 1
            close += W
        buffer += [(e[0], t) for e in message["elements"] if e[1] == "<%sp>"]
        send({"type": "done", "stimulus": message["id"]})
    elif kind == "advance":
        send({"type": "done", "advance": message["t"]})
    elif kind == "close":
        send({"type": "done", "closed": True})
        break
""" % EX

STREAM_TIMES = (("a", 500), ("b", 1500), ("c", 2500), ("d", 4500), ("e", 4700), ("f", 9000))
DATA_DRIVEN_SEMANTICS = ("{report: window-close & next-element & non-empty, tick: time, "
                         "empty_notification: false, time_unit: ms}")


def data_driven_experiment(tmp_path: Path, engine: str, oracle: str = "") -> Path:
    (tmp_path / "s.stream").write_text("".join(
        f'<{EX}{name}> <{EX}p> "1" "{t}" .\n' for name, t in STREAM_TIMES), encoding="utf-8")
    path = tmp_path / "data-driven.yaml"
    path.write_text(f"""name: data-driven
stream: {{file: s.stream}}
queries:
  - id: q
    syntax: csparql
    text: "REGISTER QUERY q AS SELECT ?s FROM STREAM <{EX}S> [RANGE 2s STEP 2s] WHERE {{ ?s <{EX}p> ?o }}"
engines:
{textwrap.indent(textwrap.dedent(engine).strip(), "  ")}
stand: {{mode: absolute-time}}
{oracle}
""", encoding="utf-8")
    return path


def external_engine(extra: str = "") -> str:
    return f"""
        - id: dd
          type: external
          {extra}
          parameters: {{command: {json.dumps([sys.executable, "-c", DATA_DRIVEN])}, t0: 0s}}
        """


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


def test_a_data_driven_engine_answering_per_binding_is_judged_correct(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = data_driven_experiment(tmp_path, external_engine(f"semantics: {DATA_DRIVEN_SEMANTICS}"),
                                  "oracle: {regroup: true}")
    out = tmp_path / "bundle"
    code, summary = run_json(["run", str(path), "--out", str(out), "--yes", "--quiet", "--json"], capsys)
    assert code == 0
    (row,) = summary["runs"]
    assert (row["verdict"], row["precision"], row["recall"], row["first_divergence"]) == ("correct", 1.0, 1.0, None)
    oracle = oracle_of(out, row["run_id"])
    assert oracle["semantics_declared"] is True and "warning" not in oracle
    # evaluated when 2500, 4500 and 9000 arrive; [8000, 10000) has no later element
    assert [(w["start"], w["end"], w["expected_size"]) for w in oracle["windows"]] == [
        (0, 2000, 2), (2000, 4000, 1), (4000, 6000, 2)]

    # the same responses, judged per response (no regrouping): the first evaluation's two
    # responses are two relations; rspwb check exits 1 and report --json names where
    responses = out / "runs" / row["run_id"] / "responses.jsonl"
    check = ["check", "--stream", str(tmp_path / "s.stream"), "--stream-format", "yabench", "--query", str(path.parent / "q.rq"),
             "--system", "csparql", "--report", "window-close & next-element & non-empty", "--tick", "time",
             "--no-empty-notification", "--time-unit", "ms", "--t0", "0", "--engine-output", str(responses), "--json"]
    (path.parent / "q.rq").write_text(f"REGISTER QUERY q AS SELECT ?s FROM STREAM <{EX}S> [RANGE 2s STEP 2s] "
                                      f"WHERE {{ ?s <{EX}p> ?o }}", encoding="utf-8")
    code, verdict = run_json(check, capsys)
    assert (code, verdict["verdict"]) == (1, "incorrect")
    assert verdict["first_divergence"]["expected_time"] == 2500
    code, verdict = run_json([*check, "--regroup"], capsys)
    assert (code, verdict["verdict"]) == (0, "correct")

    path.write_text(path.read_text().replace("oracle: {regroup: true}", ""), encoding="utf-8")
    code, summary = run_json(["run", str(path), "--out", str(out), "--yes", "--quiet", "--json"], capsys)
    (row,) = summary["runs"]
    assert row["verdict"] == "incorrect" and row["first_divergence"]["t"] == 2500
    code, report = run_json(["report", str(out), "--json"], capsys)
    assert report["runs"][0]["first_divergence"]["t"] == 2500


@pytest.mark.slow
def test_an_engine_declaring_grouping_by_binding_is_judged_regrouped_unless_the_oracle_overrides(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    declared = DATA_DRIVEN_SEMANTICS.replace("}", ", grouping: binding}")
    out = tmp_path / "bundle"
    for oracle, verdict in (("", "correct"), ("oracle: {regroup: false}", "incorrect"),
                            ("oracle: {system: csparql, semantics: {report: window-close & next-element & non-empty, "
                             "tick: time, empty_notification: false}, t0: 0s}", "correct")):
        path = data_driven_experiment(tmp_path, external_engine(f"semantics: {declared}"), oracle)
        code, summary = run_json(["run", str(path), "--out", str(out), "--yes", "--quiet", "--json"], capsys)
        (row,) = summary["runs"]
        assert row["verdict"] == verdict, oracle
        # the engine's grouping is the engine's, also under a preset the oracle names
        assert oracle_of(out, row["run_id"])["semantics"]["grouping"] == "binding"
    assert row["first_divergence"] is None
    # an engine declaring nothing is judged per response, as before
    path = data_driven_experiment(tmp_path, external_engine(f"semantics: {DATA_DRIVEN_SEMANTICS}"))
    code, summary = run_json(["run", str(path), "--out", str(out), "--yes", "--quiet", "--json"], capsys)
    assert summary["runs"][0]["verdict"] == "incorrect"


def test_an_external_engine_without_declared_semantics_is_judged_under_stated_defaults(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = data_driven_experiment(tmp_path, external_engine(), "oracle: {regroup: true}")
    out = tmp_path / "bundle"
    capsys.readouterr()
    assert main(["run", str(path), "--out", str(out), "--yes"]) == 0
    captured = capsys.readouterr()
    assert "warning: engine dd: the engine declares no preset or semantics" in captured.err  # before it runs
    assert "warning: the engine declares no preset" in captured.out  # under the table
    oracle = oracle_of(out, "case0-rep0-dd-q")
    assert oracle["semantics_declared"] is False and "window-close & non-empty" in oracle["warning"]
    assert oracle["verdict"] == "incorrect"  # the defaults expect reports at the close


@pytest.mark.slow
def test_oracle_end_last_element_expects_no_window_after_the_data(tmp_path: Path) -> None:
    from rsp_workbench.experiment.loader import loads_experiment

    engines = "- {id: csparql, type: secret, preset: csparql, semantics: {time_unit: ms}, parameters: {t0: 0s}}"
    rows = {}
    for end in ("after-last-window", "last-element", "5s"):
        path = data_driven_experiment(tmp_path, engines, f"oracle: {{end: {end}}}")
        summary = run_experiment(load_experiment(path), tmp_path / f"bundle-{end}")
        (rows[end],) = summary.rows
        assert rows[end]["verdict"] == "correct", rows[end]  # the stand's final advance follows the end
    # windows [0,2), [2,4), [4,6), [8,10) s hold elements; the last element is at 9 s
    assert [rows[end]["windows"] for end in ("after-last-window", "last-element", "5s")] == [4, 3, 2]
    with pytest.raises(UserError, match="oracle.end"):
        loads_experiment("name: x\nstream: {file: s.stream}\nqueries: [{id: q, text: 'SELECT * WHERE {?s ?p ?o}'}]\n"
                         "engines: [{id: e, type: secret}]\noracle: {end: soon}\n", base_dir=tmp_path)


def test_external_engines_accept_t0_and_report_window_declarations(tmp_path: Path) -> None:
    path = data_driven_experiment(tmp_path, external_engine("preset: csparql").replace("t0: 0s", "t0: 0s, report_window: 0"))
    spec = expand_runs(load_experiment(path))[0]
    assert spec.engine_parameters["t0"] == 0 and spec.engine_parameters["report_window"] == 0


SPIKY = """
import json, sys
held = None
for n, line in enumerate(sys.stdin):
    message = json.loads(line)
    kind = message["type"]
    if kind == "register":
        out = {"type": "ready"}
    elif kind == "stimulus":
        held = b"x" * (120 << 20) if message["id"] == 1 else None  # 120 MiB, touched, held until the next stimulus
        out = {"type": "done", "stimulus": message["id"]}
    elif kind == "advance":
        out = {"type": "done", "advance": message["t"]}
    else:
        out = {"type": "done", "closed": True}
    sys.stdout.write(json.dumps(out) + "\\n"); sys.stdout.flush()
    if kind == "close":
        break
"""


def test_peak_rss_is_the_maximum_over_every_measurement_of_the_run(tmp_path: Path) -> None:
    """A 120 MiB spike between two stimuli, far shorter than the 500 ms sampler's period: the
    per-stimulus KPIs in the trace see it, so the run's peak must too."""
    path = data_driven_experiment(tmp_path, f"""
        - id: spiky
          type: external
          preset: csparql
          parameters: {{command: {json.dumps([sys.executable, "-c", SPIKY])}}}
        """)
    summary = run_experiment(load_experiment(path), tmp_path / "bundle", assume_yes=True)
    folder = tmp_path / "bundle" / "runs" / summary.rows[0]["run_id"]
    trace = [json.loads(line) for line in (folder / "trace.jsonl").read_text().splitlines()]
    measured = [k["rss_mb"] for record in trace for k in (record["kpis_before"], record["kpis_after"]) if k]
    sampled = [float(line.split(",")[1]) for line in (folder / "P_spiky.csv").read_text().splitlines()[1:] if line]
    peak = json.loads((folder / "run.json").read_text())["peak_rss_mb"]
    assert max(measured) > 120  # the trace saw the spike
    assert peak == pytest.approx(max(measured + sampled), abs=0.01)
    assert summary.rows[0]["peak_rss_mb"] == peak
