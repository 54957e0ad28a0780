"""End to end: `rspwb run` (generate → engines on the stand → oracle → bundle) and `rspwb report`.

A tiny sg1 stream (3 stations, 1 s interval, 6 s) in absolute-time mode keeps each engine
run well under a second. Misbehaving engines are inline Python programs run as
``external`` engines.
"""

from __future__ import annotations

import json
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from rsp_workbench.results.bundle import MANIFEST, SUMMARY
from rsp_workbench.results.reader import open_bundle
from rsp_workbench.cli.main import main
from rsp_workbench.errors import UserError
from rsp_workbench.experiment import load_experiment
from rsp_workbench.pipeline.run_experiment import run_experiment
from rsp_workbench.pipeline.run_task import ExperimentProgress
from tests.pipeline.support import PREFIX, STREAM, experiment_file  # noqa: F401


def external(body: str) -> str:
    """An external engine command (YAML flow list) running an inline Python program."""
    return json.dumps([sys.executable, "-c", textwrap.dedent(body)])


def no_partial_files(root: Path) -> bool:
    return not any(path.name.endswith(".partial") for path in root.rglob("*"))


def report_json(bundle: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(["report", str(bundle), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_run_and_report_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = experiment_file(tmp_path, """
        - {id: csparql, type: secret, preset: csparql}
        - {id: cqels, type: secret, preset: cqels}
        """, extra="sizes:\n  smoke: {repetitions: 2}\n")
    out = tmp_path / "bundle"
    assert main(["run", str(path), "--size", "smoke", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "case0-rep0-csparql-filter" in captured.err  # progress on stderr
    assert "peak RSS MB" in captured.out and "correct" in captured.out  # the summary table

    payload = report_json(out, capsys)
    assert payload["status"] == "ok" and len(payload["runs"]) == 4
    for run in payload["runs"]:
        assert {"engine", "query", "verdict", "precision", "recall", "responses", "kpi_samples", "peak_rss_mb"} <= set(run)
        assert run["verdict"] == "correct", run
        assert run["precision"] == run["recall"] == 1.0
        assert run["responses"] > 0 and run["kpi_samples"] >= 1 and run["peak_rss_mb"] > 0
    assert {r["engine"] for r in payload["runs"]} == {"csparql", "cqels"}

    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["status"] == "ok" and manifest["seed"] == 7 and manifest["size"] == "smoke"
    assert manifest["versions"]["python"] and manifest["versions"]["workbench"]
    assert manifest["machine"]["cpus"] >= 1 and manifest["machine"]["memory_mb"] > 0
    assert manifest["started"] <= manifest["finished"]
    assert [s["generator"] for s in manifest["streams"]] == ["sg1", "sg1"]  # one per repetition (seeds differ)
    # the experiment as run: the size applied
    assert "repetitions: 2" in (out / "experiment.yaml").read_text() and "sizes" not in (out / "experiment.yaml").read_text()
    assert load_experiment(out / "experiment.yaml").repetitions == 2
    run_dir = out / "runs" / "case0-rep0-csparql-filter"
    assert {p.name for p in run_dir.iterdir()} >= {
        "trace.jsonl", "responses.jsonl", "P_csparql.csv", "stderr.log", "run.json", "oracle.json", "ORACLE_csparql",
    }
    assert (out / "streams" / "stream0.parquet").is_file()
    boxplots = (out / "yabench" / "case0-filter" / "BOXPLOTS_cqels").read_text().splitlines()
    assert boxplots[0] == "cqels" and boxplots[1].count(";") == 2
    assert (out / "yabench" / "case0-filter" / "ORACLE_cqels_2").is_file()
    assert no_partial_files(out)
    # report without --json prints the same table again
    assert main(["report", str(out)]) == 0
    assert "case0-rep1-cqels-filter" in capsys.readouterr().out


@pytest.mark.slow
def test_fault_knob_is_judged_incorrect(tmp_path: Path) -> None:
    avg = f"""
  - id: avg
    syntax: csparql
    text: |
      {PREFIX}
      REGISTER QUERY q AS SELECT (AVG(?v) AS ?avg)
      FROM STREAM <{STREAM}> [RANGE 2s STEP 2s]
      WHERE {{ ?obs om-owl:result [om-owl:floatValue ?v] . FILTER(?v > 1000) }}
"""
    path = experiment_file(tmp_path, """
        - {id: sparqlstream, type: secret, preset: sparqlstream}
        - {id: nullagg, type: secret, preset: sparqlstream, faults: {null_aggregate: true}}
        """, queries=avg)
    summary = run_experiment(load_experiment(path), tmp_path / "bundle")
    verdicts = {row["engine"]: row["verdict"] for row in summary.rows}
    assert verdicts == {"sparqlstream": "correct", "nullagg": "incorrect"}
    oracle = json.loads((tmp_path / "bundle" / "runs" / "case0-rep0-nullagg-avg" / "oracle.json").read_text())
    assert oracle["first_divergence"]["reason"] == "different bindings"
    assert oracle["precision"] < 1.0 and summary.status == "ok"  # the runs themselves succeeded


@pytest.mark.slow
def test_crashing_external_engine_is_recorded_and_others_continue(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crash = external("""
        import sys
        sys.stderr.write("engine blew up\\n")
        sys.exit(3)
        """)
    path = experiment_file(tmp_path, f"""
        - id: crash
          type: external
          parameters: {{command: {crash}}}
        - {{id: csparql, type: secret, preset: csparql}}
        """)
    out = tmp_path / "bundle"
    # not confirmed, stdin is not a terminal: exit 2 before anything starts
    assert main(["run", str(path), "--out", str(out)]) == 2
    assert "--yes" in capsys.readouterr().err and not out.exists()
    assert main(["run", str(path), "--out", str(out), "--yes", "--quiet"]) == 1
    rows = {row["engine"]: row for row in report_json(out, capsys)["runs"]}
    assert rows["crash"]["status"] == "failed" and rows["crash"]["verdict"] == "failed"
    assert "engine blew up" in rows["crash"]["error"]
    assert rows["csparql"]["verdict"] == "correct"
    assert json.loads((out / MANIFEST).read_text())["status"] == "failed"
    assert "engine blew up" in (out / "runs" / "case0-rep0-crash-filter" / "stderr.log").read_text()


@pytest.mark.slow
def test_cancel_leaves_a_consistent_bundle(tmp_path: Path) -> None:
    hang = external("""
        import json, sys, time
        for line in sys.stdin:
            if json.loads(line)["type"] == "register":
                print(json.dumps({"type": "ready"}), flush=True)
            else:
                time.sleep(60)
        """)
    path = experiment_file(tmp_path, f"""
        - {{id: csparql, type: secret, preset: csparql}}
        - id: hang
          type: external
          parameters: {{command: {hang}}}
        - {{id: cqels, type: secret, preset: cqels}}
        """)
    cancel = threading.Event()

    def progress(event: ExperimentProgress) -> None:
        if event.stage == "engine" and event.run_id and "hang" in event.run_id:
            threading.Timer(0.5, cancel.set).start()

    summary = run_experiment(load_experiment(path), tmp_path / "bundle", assume_yes=True, cancel=cancel,
                             progress=progress)
    assert summary.status == "cancelled"
    statuses = {row["engine"]: row["status"] for row in summary.rows}
    assert statuses == {"csparql": "ok", "hang": "cancelled", "cqels": "cancelled"}
    bundle = tmp_path / "bundle"
    assert json.loads((bundle / MANIFEST).read_text())["status"] == "cancelled"
    assert json.loads((bundle / SUMMARY).read_text())["status"] == "cancelled"
    assert json.loads((bundle / "runs" / "case0-rep0-hang-filter" / "run.json").read_text())["status"] == "cancelled"
    assert not (bundle / "runs" / "case0-rep0-cqels-filter").exists()
    assert no_partial_files(bundle)
    again = open_bundle(bundle)
    assert again.status == "cancelled" and [r["status"] for r in again.rows] == ["ok", "cancelled", "cancelled"]


def test_bad_input_fails_before_anything_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    windowless = """
  - id: plain
    text: |
      SELECT ?s WHERE { ?s ?p ?o }
"""
    path = experiment_file(tmp_path, "- {id: csparql, type: secret, preset: csparql}", queries=windowless)
    out = tmp_path / "bundle"
    with pytest.raises(UserError, match="engine csparql, query plain"):
        run_experiment(load_experiment(path), out)
    assert not out.exists()
    missing = experiment_file(tmp_path, "- {id: x, type: external, parameters: {command: [no-such-engine-program]}}")
    assert main(["run", str(missing), "--out", str(out), "--yes"]) == 2
    assert "not found" in capsys.readouterr().err and not out.exists()
    bad_preset = experiment_file(tmp_path, "- {id: csparql, type: secret, preset: nonsense}")
    assert main(["run", str(bad_preset), "--out", str(out)]) == 2
    assert "nonsense" in capsys.readouterr().err
    assert main(["report", str(tmp_path), "--json"]) == 2  # not a bundle


def test_engine_parameters_that_do_not_fit_the_query_fail_before_anything_starts(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    for parameters, message in (("{report_window: 1}", "report_window 1 is not a window of the query"),
                                ("{t0: [0s, 1s]}", "t0 lists 2 values; the query has 1 windows")):
        path = experiment_file(tmp_path, f"- {{id: csparql, type: secret, preset: csparql, parameters: {parameters}}}")
        with pytest.raises(UserError, match=message) as caught:
            run_experiment(load_experiment(path), out)
        assert caught.value.field == "engines.csparql" and "engine csparql, query filter" in caught.value.message
        assert not out.exists()


@pytest.mark.slow
@pytest.mark.spark
def test_spark_scheduler_runs_each_engine_run_as_a_task(tmp_path: Path, spark: object) -> None:
    path = experiment_file(tmp_path, """
        - {id: csparql, type: secret, preset: csparql}
        - {id: cqels, type: secret, preset: cqels}
        """)
    summary = run_experiment(load_experiment(path), tmp_path / "bundle", scheduler="spark")
    assert summary.status == "ok"
    assert [(row["engine"], row["verdict"]) for row in summary.rows] == [("csparql", "correct"), ("cqels", "correct")]
    assert json.loads((tmp_path / "bundle" / MANIFEST).read_text())["scheduler"] == "spark"


@pytest.mark.slow
def test_eviction_runs_report_recall_against_the_unbounded_answer(tmp_path: Path) -> None:
    from rsp_workbench.experiment.loader import loads_experiment
    from rsp_workbench.pipeline.run_experiment import run_experiment

    text = """
name: eviction-smoke
stream:
  generator: chain-join
  params: {duration: 2s, rate: 300, seed: 5, history: 200}
queries:
  - id: chain
    syntax: sparql
    text: |
      PREFIX : <http://example.org/chain#>
      SELECT * WHERE { ?a :ab ?b . ?b :bc ?c . ?c :cd ?d }
engines:
  - {id: tiny, type: eviction, parameters: {strategy: fifo, cache_size: 5}}
  - {id: big, type: eviction, parameters: {strategy: fifo, cache_size: 100000}}
stand: {mode: absolute-time}
"""
    experiment = loads_experiment(text, file=str(tmp_path / "e.yaml"), base_dir=tmp_path)
    summary = run_experiment(experiment, tmp_path / "bundle")
    recalls = {row["engine"]: row["recall"] for row in summary.to_json()["runs"]}
    assert recalls["big"] == 1.0
    assert 0.0 <= recalls["tiny"] < 1.0


@pytest.mark.slow
def test_secret_drift_parameters_from_the_experiment_file_shift_the_windows(tmp_path: Path) -> None:
    """`parameters: {drift_ms: 300}` with the border_drift fault: the engine reads [o+300, c+300)
    (YABench Fig. 5), and the gracious oracle reconstructs exactly those borders."""
    ex = "http://example.org/"
    (tmp_path / "ticks.stream").write_text("".join(
        f'<{ex}tick{t}> <{ex}at> "{t}"^^<http://www.w3.org/2001/XMLSchema#integer> "{t}" .\n'
        for t in range(0, 6000, 100)), encoding="utf-8")
    (tmp_path / "drift.yaml").write_text(f"""name: drift
stream: {{file: ticks.stream}}
queries:
  - id: ticks
    syntax: csparql
    text: |
      REGISTER QUERY q AS SELECT ?tick ?t FROM STREAM <{ex}s> [RANGE 2s STEP 2s] WHERE {{ ?tick <{ex}at> ?t }}
engines:
  - id: drifting
    type: secret
    preset: csparql
    faults: {{border_drift: true}}
    parameters: {{drift_ms: 300, drift_per_element_ms: 0}}
oracle: {{gracious: true}}
stand: {{mode: absolute-time}}
""", encoding="utf-8")
    from rsp_workbench.responses.readers import read_response_log

    summary = run_experiment(load_experiment(tmp_path / "drift.yaml"), tmp_path / "bundle")
    assert summary.status == "ok" and summary.rows[0]["verdict"] == "incorrect"
    run = tmp_path / "bundle" / "runs" / "case0-rep0-drifting-ticks"
    responses = read_response_log(run / "responses.jsonl").responses
    assert [r.application_time for r in responses] == [2000, 4000, 6000]  # reported at the nominal closes
    for response in responses:  # … with the content of [c − 2 s + 300 ms, c + 300 ms)
        times = sorted(int(dict(m)["t"].split('"')[1]) for m in response.bindings)
        close = response.application_time
        assert times == list(range(close - 2000 + 300, min(close + 300, 6000), 100))
    windows = json.loads((run / "oracle.json").read_text())["windows"]
    shifts = [(w["reconstructed_start"] - w["start"], w["reconstructed_end"] - w["end"]) for w in windows[:2]]
    assert shifts == [(300, 300), (300, 300)]
    assert all(w["precision"] == w["recall"] == 1.0 for w in windows)  # at the reconstructed borders


TWO_STREAMS = {  # the same predicate in both streams: only the stream tells the elements apart
    "a.nq": [("a1", "1", 1000), ("a2", "2", 3000), ("a3", "1", 5000), ("a4", "3", 7000)],
    "b.nq": [("b1", "1", 1500), ("b2", "2", 2500), ("b3", "3", 3000)],
}


@pytest.mark.slow
def test_two_streams_bind_to_their_windows_end_to_end(tmp_path: Path) -> None:
    """`streams:` (IRI → file): each window reads only its own stream. A 2 s window over S_a
    joins a 6 s window over S_b on ?v; merged into one stream, both windows would hold
    both streams and the answer would differ."""
    ex = "http://example.org/"
    for name, rows in TWO_STREAMS.items():
        (tmp_path / name).write_text("".join(
            f'<{ex}{s}> <{ex}p> "{v}" <urn:rspwb:t:{t}> .\n' for s, v, t in rows), encoding="utf-8")
    query = f"""PREFIX : <{ex}>
      REGISTER RSTREAM :out AS
      SELECT ?x ?y
      FROM NAMED WINDOW :wa ON :S_a [RANGE PT2S STEP PT2S]
      FROM NAMED WINDOW :wb ON :S_b [RANGE PT6S STEP PT2S]
      WHERE {{ WINDOW :wa {{ ?x :p ?v }} WINDOW :wb {{ ?y :p ?v }} }}"""
    (tmp_path / "two.yaml").write_text(f"""name: two-streams
streams:
  {ex}S_a: {{file: a.nq}}
  {ex}S_b: {{file: b.nq}}
queries:
  - id: pairs
    syntax: rspql
    text: |
      {query}
engines:
  - id: wc
    type: secret
    semantics: {{report: window-close & non-empty, r2s: rstream, empty_notification: false}}
    parameters: {{t0: 0s}}
  - {{id: cqels, type: secret, preset: cqels}}
stand: {{mode: absolute-time}}
""", encoding="utf-8")
    from rsp_workbench.core.semantics import EngineSemantics
    from rsp_workbench.oracle.reference import expected_answer
    from rsp_workbench.query.parser import parse_query
    from rsp_workbench.responses.readers import read_response_log
    from rsp_workbench.streams.readers import read_stream

    summary = run_experiment(load_experiment(tmp_path / "two.yaml"), tmp_path / "bundle")
    assert summary.status == "ok"
    assert {(row["engine"], row["verdict"], row["recall"]) for row in summary.rows} == {
        ("wc", "correct", 1.0), ("cqels", "correct", 1.0)}

    def rows(log_path: Path) -> list[tuple[int | None, str, str]]:
        return sorted((r.application_time, dict(m)["x"], dict(m)["y"])
                      for r in read_response_log(log_path).responses for m in r.bindings)

    # by hand: at 2 s wa=[0,2)={a1}, wb=[0,6)∋b1 → (a1,b1); at 4 s wa={a2}, wb={b1,b2,b3} → (a2,b2);
    # at 6 s wa={a3} but wb=[2,8)={b2,b3} (b1 left), at 8 s wb=[4,10) is empty: nothing
    wc = rows(tmp_path / "bundle" / "runs" / "case0-rep0-wc-pairs" / "responses.jsonl")
    assert wc == [(2000, f"<{ex}a1>", f"<{ex}b1>"), (4000, f"<{ex}a2>", f"<{ex}b2>")]
    cqels = rows(tmp_path / "bundle" / "runs" / "case0-rep0-cqels-pairs" / "responses.jsonl")
    assert cqels and all(x.startswith(f"<{ex}a") and y.startswith(f"<{ex}b") for _, x, y in cqels)
    # the stimuli carried each element's stream; the manifest lists both streams with their IRIs
    manifest = json.loads((tmp_path / "bundle" / MANIFEST).read_text())
    assert [(s["id"], s["iri"]) for s in manifest["streams"]] == [("stream0", f"{ex}S_a"), ("stream1", f"{ex}S_b")]
    assert manifest["runs"][0]["streams"] == {f"{ex}S_a": "stream0", f"{ex}S_b": "stream1"}
    # one merged stream read by both windows gives another answer (a1 joins itself, b1 joins a1 …)
    merged = sorted([*read_stream(tmp_path / "a.nq", "nquads"), *read_stream(tmp_path / "b.nq", "nquads")],
                    key=lambda e: e.t)
    parsed = parse_query(query, syntax="rspql")
    semantics = EngineSemantics().with_overrides({"empty_notification": False})
    one_stream = expected_answer(parsed, {f"{ex}S_a": merged, f"{ex}S_b": merged}, semantics, (0, 0), end=14_000)
    merged_rows = sorted((e.time, dict(m)["x"], dict(m)["y"]) for e in one_stream.emissions for m in e.bindings)
    assert merged_rows != wc and (2000, f"<{ex}b1>", f"<{ex}a1>") in merged_rows


def test_merged_stimuli_order_equal_times_by_stream_then_file_order_lazily(tmp_path: Path) -> None:
    """The stand's stimuli of a `streams:` run, read lazily from the files. Hand-checked: at
    t=1000 the elements of S_a (in file order a1, a2) come before those of S_b (b1), whatever
    the order of the IRIs inside the query; each element carries its stream."""
    from itertools import count, islice

    from rsp_workbench.engine import iter_merged_stimuli, merge_streams
    from rsp_workbench.pipeline.run_streams import run_inputs
    from rsp_workbench.pipeline.run_task import RunTask, StreamRef
    from rsp_workbench.query.parser import parse_query
    from rsp_workbench.streams.model import StreamElement
    from rsp_workbench.streams.readers import StreamFile

    ex = "http://example.org/"
    rows = {"a.nq": [("a1", 1000), ("a2", 1000), ("a3", 2000), ("a4", 4000)],
            "b.nq": [("b0", 500), ("b1", 1000), ("b2", 2000), ("b3", 2000), ("b4", 3000)]}
    for name, items in rows.items():
        (tmp_path / name).write_text("".join(f'<{ex}{s}> <{ex}p> "x" <urn:rspwb:t:{t}> .\n' for s, t in items),
                                     encoding="utf-8")
    streams = {f"{ex}S_a": StreamFile(tmp_path / "a.nq", "nquads"), f"{ex}S_b": StreamFile(tmp_path / "b.nq", "nquads")}
    expected = [(0, 500, ["b0"], ["S_b"]), (1, 1000, ["a1", "a2", "b1"], ["S_a", "S_a", "S_b"]),
                (2, 2000, ["a3", "b2", "b3"], ["S_a", "S_b", "S_b"]), (3, 3000, ["b4"], ["S_b"]),
                (4, 4000, ["a4"], ["S_a"])]

    def shown(stimuli: object) -> list[tuple]:
        return [(s.id, s.application_time, [e.subject.removeprefix(f"<{ex}").rstrip(">") for e in s.elements],
                 [iri.removeprefix(ex) for iri in s.streams]) for s in stimuli]

    assert shown(iter_merged_stimuli({iri: file.read() for iri, file in streams.items()})) == expected
    # the in-memory merge (each stream sorted first) gives the same stimuli
    assert shown(merge_streams({iri: file.elements() for iri, file in streams.items()})) == expected
    # a run's stimuli: the query names S_b first; the order is the `streams:` section's
    query = parse_query(f"""PREFIX : <{ex}>
      REGISTER RSTREAM :out AS SELECT ?x ?y
      FROM NAMED WINDOW :wb ON :S_b [RANGE PT2S STEP PT2S]
      FROM NAMED WINDOW :wa ON :S_a [RANGE PT2S STEP PT2S]
      WHERE {{ WINDOW :wa {{ ?x :p ?v }} WINDOW :wb {{ ?y :p ?v }} }}""", syntax="rspql")
    refs = tuple(StreamRef(key=f"stream{i}", path=str(tmp_path / name), format="nquads", iri=f"{ex}S_{name[0]}")
                 for i, name in enumerate(rows))
    task = RunTask(spec=None, streams=refs, runs_dir=str(tmp_path / "bundle" / "runs"), stand={}, oracle={}, static={})
    _, stimuli = run_inputs(task, query)  # type: ignore[arg-type]
    assert shown(stimuli) == shown(stimuli) == expected and len(stimuli) == 5  # re-read from the files each time
    assert not any(file._elements for file in run_inputs(task, query)[0].values())  # nothing kept

    # lazy: endless streams give their first stimuli
    def endless(name: str, step: int) -> object:
        return (StreamElement(f"<{ex}{name}{i}>", f"<{ex}p>", '"x"', i * step) for i in count())

    first = list(islice(iter_merged_stimuli({"A": endless("a", 2), "B": endless("b", 3)}), 4))
    assert [(s.application_time, s.streams) for s in first] == [(0, ("A", "B")), (2, ("A",)), (3, ("B",)), (4, ("A",))]
    # a stream that goes back in time is named
    back = [StreamElement("<s>", "<p>", '"x"', 5), StreamElement("<s>", "<p>", '"x"', 4)]
    with pytest.raises(UserError, match=r"streams.B: the stream is not time-ordered: 4 after 5"):
        list(iter_merged_stimuli({"A": [], "B": back}))


def test_streams_section_errors_name_file_line_and_field(tmp_path: Path) -> None:
    ex = "http://example.org/"
    (tmp_path / "a.nq").write_text(f'<{ex}a1> <{ex}p> "1" <urn:rspwb:t:1000> .\n', encoding="utf-8")
    body = f"""name: bad
streams:
  {ex}S_a: {{file: a.nq}}
queries:
  - id: q
    syntax: rspql
    text: |
      PREFIX : <{ex}>
      SELECT ?x FROM NAMED WINDOW :w ON :S_other [RANGE PT2S STEP PT2S] WHERE {{ WINDOW :w {{ ?x :p ?v }} }}
engines:
  - {{id: e, type: secret}}
"""
    path = tmp_path / "bad.yaml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(UserError) as caught:
        run_experiment(load_experiment(path), tmp_path / "bundle")
    assert str(caught.value).startswith(f"{path}:9: queries[0].text: query q has a window over <{ex}S_other>, "
                                        f"which 'streams' does not declare (declared: <{ex}S_a>)")
    assert not (tmp_path / "bundle").exists()


def test_report_due_times_follow_the_stand_mode(tmp_path: Path) -> None:
    """YABench delay = emission − when the report became due: real time scales application time
    from the first stimulus; absolute time waits for the first stimulus at or after the report."""
    from rsp_workbench.oracle.judge import report_due_at

    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps({"stimulus": i, "application_time": t, "sent": sent}) + "\n"
                             for i, (t, sent) in enumerate([(1000, 10_500.0), (3000, 10_700.0), (6000, 11_000.0)])))
    real = report_due_at(trace, {"mode": "real-time", "time_scale": 10.0}, run_start=10_000)
    assert real is not None and real(1000) == 500.0 and real(5000) == 900.0  # (5000 − 1000) / 10 after the first
    absolute = report_due_at(trace, {"mode": "absolute-time"}, run_start=10_000)
    assert absolute is not None
    assert [absolute(t) for t in (0, 1000, 2000, 3000, 5000, 9000)] == [500.0, 500.0, 700.0, 700.0, 1000.0, 1000.0]
    assert report_due_at(tmp_path / "missing.jsonl", {"mode": "real-time"}, run_start=0) is None


@pytest.mark.slow
def test_misbehaving_external_engines_fail_their_runs_only_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loop = """
        import json, sys
        def send(m):
            sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["type"] == "register":
                send({"type": "ready"})
            elif msg["type"] == "stimulus":
                %s
                send({"type": "done", "stimulus": msg["id"]})
            elif msg["type"] == "advance":
                send({"type": "done", "advance": msg["t"]})
            elif msg["type"] == "close":
                send({"type": "done", "closed": True}); break
        """
    chatter = external(loop % 'print("processing", msg["id"], flush=True)')
    stranger = external(loop % 'send({"type": "response", "stimulus": 99, "t": msg["t"], "bindings": []})')
    path = experiment_file(tmp_path, f"""
        - id: chatter
          type: external
          parameters: {{command: {chatter}}}
        - id: stranger
          type: external
          parameters: {{command: {stranger}}}
        - {{id: csparql, type: secret, preset: csparql}}
        """)
    out = tmp_path / "bundle"
    assert main(["run", str(path), "--out", str(out), "--yes", "--quiet"]) == 1
    rows = {row["engine"]: row for row in report_json(out, capsys)["runs"]}
    assert rows["chatter"]["status"] == "failed" and "protocol error" in rows["chatter"]["error"]
    assert "processing 0" in rows["chatter"]["error"]
    assert rows["stranger"]["status"] == "failed"
    assert "response for stimulus 99, which the stand never sent" in rows["stranger"]["error"]
    assert rows["csparql"]["verdict"] == "correct"
