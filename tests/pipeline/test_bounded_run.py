"""`rspwb run` in bounded memory: the files it writes piece by piece are the ones it
wrote whole before, byte for byte."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from rsp_workbench.oracle.quality import WindowQuality, boxplots_lines, boxplots_text
from rsp_workbench.files import write_json_atomic
from tests.paths import ROOT


def _whole(value: object) -> object:
    """The cleaning `write_json_atomic` did before it streamed (a full copy)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _whole(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_whole(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


def test_streamed_json_is_the_whole_text(tmp_path: Path) -> None:
    payload = {
        "verdict": "correct", "precision": float("nan"), "t0": (0, 5), 3: "int key", True: [1.5, float("inf")],
        "windows": [{"start": i, "end": i + 5, "delay": None, "precision": 1.0} for i in range(3)],
        "nested": {"path": Path("/x/y"), "empty": [], "none": {}, "text": "é\u2028\""},
        "plain": [[1, 2], ("a", "b")],
    }
    target = tmp_path / "oracle.json"
    write_json_atomic(target, payload)
    assert target.read_text(encoding="utf-8") == json.dumps(_whole(payload), indent=2) + "\n"
    assert not (tmp_path / "oracle.json.partial").exists()
    assert payload["precision"] != payload["precision"]  # the caller's payload is not changed
    unchanged = {"windows": [{"start": 1}]}
    write_json_atomic(target, unchanged)
    assert target.read_text(encoding="utf-8") == json.dumps(unchanged, indent=2) + "\n"


def test_boxplots_from_oracle_lines_are_those_from_the_windows() -> None:
    runs = [
        [WindowQuality(0, 5, 1.0, 0.5, 2, 4, 10, 3), WindowQuality(5, 10, 0.25, 1.0, 4, 1, 9, None, 4, 11)],
        [WindowQuality(0, 5, 0.0, 1.0, 0, 0, 10, -2)],
        [],
    ]
    lines = [[w.oracle_line() + "\n" for w in run] for run in runs]
    assert "".join(boxplots_lines("cqels", lines)) == boxplots_text("cqels", runs)
    assert boxplots_text("csparql", []) == "csparql\n"


# --- the secret engine keeps what some window still needs, nothing more ------------------------

SECRET_FAULTS = ({}, {"late_purge": True}, {"border_drift": True}, {"misaligned_first_window": True})


def _secret_run(query: str, elements: list, preset: str, faults: dict, *, trim: bool) -> tuple[list, int]:
    """The engine's answers over the stream and the most elements its buffers held at once."""
    from collections import Counter

    import rsp_workbench.engines._schedule as schedule
    from rsp_workbench.core.semantics import PRESETS
    from rsp_workbench.engine import EngineConfig, group_contemporaneous
    from rsp_workbench.engines import create_engine
    from rsp_workbench.query.parser import parse_query

    engine = create_engine(EngineConfig("secret", PRESETS[preset], faults, {"t0": 0, "drift_per_element_ms": 1}))
    engine.register(parse_query(query))
    answers, held = [], 0
    keep = schedule.StreamBuffer.trim_before
    if not trim:
        schedule.StreamBuffer.trim_before = lambda self, t: None  # type: ignore[method-assign]
    try:
        for stimulus in group_contemporaneous(elements):
            answers += engine.push(stimulus)
            held = max(held, sum(len(b.times) for b in engine.buffers.values()))
        answers += engine.advance_time(elements[-1].t + 10_000) + engine.close()
    finally:
        schedule.StreamBuffer.trim_before = keep  # type: ignore[method-assign]
    return [(r.application_time, r.operation, Counter(r.bindings)) for r in answers], held


@pytest.mark.slow
def test_secret_engine_evicts_without_changing_answers() -> None:
    """Under every preset and fault, the engine answers the same with and without eviction, as
    the oracle's reference does without faults, while holding a few windows of a long stream."""
    from collections import Counter

    from tests.engines.support import OBS_STREAM, filter_query, observations, variation_query
    from rsp_workbench.core.semantics import PRESETS
    from rsp_workbench.oracle.reference import expected_answer
    from rsp_workbench.query.parser import parse_query

    elements = observations(60, seed=11, spacing=250, stations=3)  # 15 s; windows of 2 s
    queries = (filter_query("2 S", "1 S"), variation_query("2s", "2s"))
    for query in queries:
        for preset in PRESETS:
            for faults in SECRET_FAULTS:
                kept, held = _secret_run(query, elements, preset, faults, trim=True)
                everything, _ = _secret_run(query, elements, preset, faults, trim=False)
                assert kept == everything, (preset, faults)
                assert held < len(elements) / 2, (preset, faults, held)  # 15 s of stream, 2–6 s held
                if not faults and query is queries[0]:
                    answer = expected_answer(parse_query(query), {OBS_STREAM: elements}, PRESETS[preset], [0],
                                             end=elements[-1].t + 10_000)
                    assert kept == [(e.time, e.operation, Counter(e.bindings)) for e in answer.emissions], preset


# --- the stand writes the response log as responses arrive --------------------------------------


def test_response_log_written_as_it_arrives_is_the_whole_log(tmp_path: Path) -> None:
    from rsp_workbench.responses.model import EngineResponse, ResponseLog, mapping
    from rsp_workbench.responses.readers import ResponseLogWriter, read_response_log, write_response_log

    responses = (
        EngineResponse(0, 1700000000001, "+", (mapping(s="<http://x/a>", v='"é"'), mapping(s="<http://x/b>"))),
        EngineResponse(5, None, "-", ()),  # an empty-relation notification
        EngineResponse(None, 1700000000009, "=", (mapping(extra='"1"^^<http://www.w3.org/2001/XMLSchema#integer>'),)),
    )
    whole = ResponseLog(("s", "v"), responses, source="stand", run_start=1700000000000, engine="cqels", query="q1")
    write_response_log(tmp_path / "whole.jsonl", ResponseLog(("s", "v", "extra"), responses, source="stand",
                                                             run_start=1700000000000, engine="cqels", query="q1"))
    writer = ResponseLogWriter(tmp_path / "streamed.jsonl", variables=whole.variables, engine="cqels", query="q1",
                               source="stand")
    for response in responses:
        writer.add(response)
    assert (writer.responses, writer.bindings) == (3, 3)
    assert not (tmp_path / "streamed.jsonl").exists()  # nothing that looks complete before the end
    writer.finish(1700000000000)
    assert (tmp_path / "streamed.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["streamed.jsonl", "whole.jsonl"]
    assert read_response_log(tmp_path / "streamed.jsonl").responses == responses


# --- the stand feeds a run from the stream file -------------------------------------------------


def test_run_streams_stimuli_from_the_file_without_holding_them(tmp_path: Path, monkeypatch) -> None:
    """`run_inputs` hands the stand stimuli read from the stream file as they are sent: at most
    one stimulus is alive while the stand feeds, the stream is never listed, and the count
    comes from the Parquet ``t`` column."""
    import weakref

    from rsp_workbench.engine import Stimulus, group_contemporaneous
    from rsp_workbench.pipeline.run_streams import run_inputs
    from rsp_workbench.pipeline.run_task import RunTask, StreamRef
    from rsp_workbench.query.parser import parse_query
    from rsp_workbench.streams.parquet import ParquetStreamWriter
    from rsp_workbench.streams.readers import StreamFile
    from tests.engines.support import filter_query, observations

    elements = observations(200, seed=5, spacing=100)
    (tmp_path / "streams").mkdir()
    with ParquetStreamWriter(tmp_path / "streams" / "s.parquet") as writer:
        writer.write_all(elements)
    listed = []
    monkeypatch.setattr(StreamFile, "elements", lambda self: listed.append(self) or [])
    task = RunTask.__new__(RunTask)
    object.__setattr__(task, "streams", (StreamRef("stream0", "streams/s.parquet", "parquet"),))
    object.__setattr__(task, "runs_dir", str(tmp_path / "runs"))
    streams, stimuli = run_inputs(task, parse_query(filter_query("2 S", "1 S")))
    assert len(stimuli) == len({e.t for e in elements})
    alive: list[weakref.ref[Stimulus]] = []
    most = 0
    sent = []
    for stimulus in stimuli:  # as the stand's streamer takes them, one after the other
        alive.append(weakref.ref(stimulus))
        sent.append((stimulus.id, stimulus.application_time, stimulus.elements))
        most = max(most, sum(ref() is not None for ref in alive))  # this one; the ones sent are gone
    assert most == 1 and not listed
    assert sent == [(s.id, s.application_time, s.elements) for s in group_contemporaneous(elements)]
    assert [len(e) for e in streams.values()] == [len(elements)] and not listed
    assert [list(e) for e in streams.values()] == [elements] and not listed  # iterated, read through


def test_json_rows_are_written_as_the_list_would_be(tmp_path: Path) -> None:
    from rsp_workbench.files import JsonRows

    rows = [{"start": i, "precision": 1.0 if i else float("nan"), "nested": {"a": [i, {"b": None}]}} for i in range(3)]
    for windows in (rows, []):
        payload = {"verdict": "correct", "t0": [0], "first_divergence": {"missing": [{"x": "\"y\n\""}]},
                   "windows": windows, "after": {}}
        write_json_atomic(tmp_path / "whole.json", payload)
        write_json_atomic(tmp_path / "rows.json", {**payload, "windows": JsonRows(lambda: iter(windows), len(windows))})
        assert (tmp_path / "rows.json").read_bytes() == (tmp_path / "whole.json").read_bytes()


# --- what cannot fit is refused before anything starts ------------------------------------------


def test_a_run_too_large_to_judge_is_refused_up_front_with_the_estimate(tmp_path: Path) -> None:
    import pytest

    from rsp_workbench.errors import UserError
    from rsp_workbench.experiment.loader import apply_size, load_experiment
    from rsp_workbench.experiment.runs import expand_runs
    from rsp_workbench.pipeline.run_checks import refuse_what_cannot_fit
    from rsp_workbench.pipeline.run_experiment import run_experiment

    sample = ROOT / "sample_experiments" / "yabench" / "experiment1.yaml"
    experiment = load_experiment(sample)
    big = apply_size(experiment, "big-absolute")
    refuse_what_cannot_fit(big, expand_runs(big), available=8 << 30)  # BIG fits in 8 GB
    with pytest.raises(UserError) as refused:
        refuse_what_cannot_fit(big, expand_runs(big), sizes=tuple(experiment.sizes), available=1 << 30)
    message = str(refused.value)
    assert "2,100,0" in message and "GB" in message and "smaller size" in message and "medium" in message
    huge = tmp_path / "huge.yaml"  # 10⁶ stations, 210 M elements: refused before anything is generated
    huge.write_text(sample.read_text().replace(
        "big-absolute:", "huge: {variables: {STATIONS: 1000000}, repetitions: 1}\n  big:"))
    (tmp_path / "queries").symlink_to(sample.parent / "queries")
    with pytest.raises(UserError, match="would hold about"):
        run_experiment(load_experiment(huge), tmp_path / "out", size="huge")
    assert not (tmp_path / "out").exists()


def test_quality_rows_give_back_each_window() -> None:
    from rsp_workbench.oracle.quality import QualityRows

    rows = [WindowQuality(0, 5000, 1.0, 0.5, 2, 4, 350_000, -3), WindowQuality(5, 10, 0.25, 1.0, 0, 1, 9, None, 4, 11),
            WindowQuality(-7, 2**40, 0.0, 1.0, 0, 0, 0, 2**40)]
    kept = QualityRows(iter(rows))
    assert len(kept) == 3 and list(kept) == rows and kept[-1] == rows[-1] and kept[1:] == rows[1:]
    assert [w.oracle_line() for w in kept] == [w.oracle_line() for w in rows]
