"""The Python API over one bundle model: tables checked against hand-made bundles, and bad input
refused with one error naming the file (docs/api.md)."""

from __future__ import annotations

import fcntl
import json
import math
from pathlib import Path

import pytest

import rsp_workbench as rsp
from rsp_workbench.cli.main import main
from tests.api.support import FAILURE, STREAM, WINDOWS, build_bundle, build_published


def test_a_bundle_gives_its_runs_and_each_runs_tables(tmp_path: Path) -> None:
    bundle = rsp.open_bundle(build_bundle(tmp_path / "b"))
    runs = bundle.runs()
    assert runs["run_id"].to_pylist() == ["ok-run", "bad-run"]
    assert runs["verdict"].to_pylist() == ["incorrect", "failed"]
    assert json.loads(runs["variables"][0].as_py()) == {"N": 1}
    assert json.loads(runs["first_divergence"][0].as_py())["t"] == 2000

    windows = bundle.windows("ok-run")
    assert windows["start"].type == "int64" and windows["end"].to_pylist() == [1000, 2000, 3000]
    assert windows["precision"].to_pylist() == [w[2] for w in WINDOWS]
    assert windows["delay"].to_pylist() == [12.0, None, 30.0]  # the engine did not report window 2
    assert windows["window_triples"].to_pylist() == [7, 7, 14]
    assert bundle.windows("bad-run").num_rows == 0  # no oracle.json: nothing judged

    responses = bundle.responses("ok-run")  # one row per binding; the empty emission is one row of nulls
    assert responses["response"].to_pylist() == [0, 0, 1, 2]
    assert responses["x"].to_pylist() == ["<http://ex.org/a>", "<http://ex.org/b>", None, "<http://ex.org/b>"]
    assert responses["application_time"].to_pylist() == [1000, 1000, 2000, 3000]

    stream = bundle.stream("ok-run")
    assert stream["t"].to_pylist() == [t for *_, t in STREAM] and stream["subject"][1].as_py() == "<http://ex.org/b>"
    kpis = bundle.kpis("ok-run")
    assert kpis["rss_mb"].to_pylist() == [20.0, 41.5] and kpis["time_s"].to_pylist() == [0.1, 0.6]
    assert bundle.kpis("bad-run").num_rows == 0


def test_tables_become_dataframes_when_pandas_is_installed(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    frame = rsp.open_bundle(build_bundle(tmp_path / "b")).windows("ok-run").to_pandas()
    assert list(frame["end"]) == [1000, 2000, 3000] and math.isnan(frame["delay"][1])


def test_a_published_folder_opens_as_a_bundle_without_stream_or_responses(tmp_path: Path) -> None:
    bundle = rsp.open_bundle(build_published(tmp_path / "Experiment_1"))
    assert bundle.published and bundle.status == "published"
    first = bundle.rows[0]["run_id"]
    assert first == "cqels-small-rep1"
    assert bundle.windows(first)["delay"].to_pylist() == [73.0, 97.0, 134.0]  # ORACLE_small1's last column
    assert bundle.kpis(first)["rss_mb"].to_pylist() == [4.98, 79.16, 106.2]  # P_small1
    with pytest.raises(rsp.UserError, match="published YABench folder keeps no responses"):
        bundle.responses(first)
    with pytest.raises(rsp.UserError, match='no run "nope"'):
        bundle.windows("nope")


def test_what_is_not_a_bundle_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(rsp.UserError) as error:
        rsp.open_bundle(tmp_path / "empty")
    assert str(error.value).startswith(f"{tmp_path / 'empty'}: not a result bundle")
    with pytest.raises(rsp.UserError, match="no such directory"):
        rsp.open_bundle(tmp_path / "nowhere")


def test_a_bundle_of_a_newer_format_is_refused_naming_its_manifest(tmp_path: Path) -> None:
    folder = build_bundle(tmp_path / "b")
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "format": "rspwb-result-bundle/2"}))
    with pytest.raises(rsp.UserError) as error:
        rsp.open_bundle(folder)
    assert str(error.value).startswith(f"{folder / 'manifest.json'}: format: written as bundle format")


def test_a_bundle_still_being_written_is_refused_and_one_whose_writer_stopped_is_read(tmp_path: Path,
                                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    folder = build_bundle(tmp_path / "b", status="running")
    with open(folder / ".rspwb-lock", "w") as lock:  # what rspwb run holds while it writes the bundle
        fcntl.flock(lock, fcntl.LOCK_EX)
        with pytest.raises(rsp.UserError, match="still writing this bundle") as error:
            rsp.open_bundle(folder)
        assert str(error.value).startswith(f"{folder / 'manifest.json'}: status:")
        assert main(["report", str(folder)]) == 2
        assert capsys.readouterr().err.count("\n") == 1
    bundle = rsp.open_bundle(folder)  # the lock is gone: a writer that stopped, read as far as it got
    assert bundle.status == "running" and any("still running (or its writer stopped)" in n for n in bundle.notes)


def test_the_report_command_keeps_its_json_and_writes_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = build_bundle(tmp_path / "b")
    assert main(["report", str(folder), "--json", "--html", str(tmp_path / "r.html")]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in payload["runs"]] == ["ok-run", "bad-run"]
    assert payload["runs"][0]["first_divergence"]["t"] == 2000 and payload["runs"][1]["error"] == FAILURE
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    returned = rsp.report(folder, tmp_path / "api.html")
    assert returned == tmp_path / "api.html" and returned.is_file()
