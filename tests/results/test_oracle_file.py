"""oracle.json read in bounded memory (rsp_workbench.results.oracle_file): the same as json.load.

The reader decodes the windows a chunk at a time; tiny chunks and batches here put every
chunk boundary and every cut of the fast path somewhere inside the text."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from rsp_workbench.errors import UserError
from rsp_workbench.results import oracle_file
from rsp_workbench.results.bundle import read_json, run_row
from rsp_workbench.files import JsonRows, write_json_atomic
from rsp_workbench.results.oracle_file import read_oracle
from rsp_workbench.results.reader import open_bundle
from rsp_workbench.results.tables import WINDOW_COLUMNS
from rsp_workbench.results.view_data import read_window_series
from rsp_workbench.results.yabench_files import first_of_each_pair, window_positions

COLUMNS = {"start": "int", "end": "int", "precision": "number", "delay": "optional", "recall": "optional"}


def _window(i: int) -> dict:
    return {"start": (i // 3) * 1000, "end": (i // 3) * 1000 + 1000, "precision": 1.0 if i % 4 else 0.5,
            "recall": 1.0, "actual_size": i % 5, "expected_size": 4, "window_triples": i + 1,
            "delay": None if i % 3 == 0 else i, "note": None}


def _payload(count: int) -> dict:
    return {"verdict": "incorrect", "t0": [0], "first_divergence": {"t0": 0, "missing": [{"binding": {"s": "a},b"}}]},
            "semantics": {"report": "content-change"}, "precision": 0.875, "recall": None,
            "windows": [_window(i) for i in range(count)]}


def _layouts(tmp_path: Path) -> dict[str, Path]:
    """The writer's layout and others a person or another tool may have written."""
    payload = _payload(11)
    files = {}

    def put(name: str, text: str) -> None:
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(text, encoding="utf-8")

    writer = tmp_path / "writer.json"
    write_json_atomic(writer, {**payload, "windows": JsonRows(lambda: iter(payload["windows"]), 11)})
    files["writer"] = writer
    put("one-line", json.dumps(payload))
    put("compact", json.dumps(payload, separators=(",", ":")))
    put("indent-4", json.dumps(payload, indent=4))
    put("windows-first", json.dumps({"windows": payload["windows"], **{k: v for k, v in payload.items() if k != "windows"}}))
    odd = [{**w, "note": "},{\"x\": 1}, ]"} if i % 2 else {**w, "extra": {"nested": [1, {"a": "}"}]}}
           for i, w in enumerate(payload["windows"])]  # text that looks like a cut between windows
    odd = [{k: v for k, v in w.items() if k != "note"} if i % 2 == 0 else w for i, w in enumerate(odd)]
    put("braces-in-strings", json.dumps({**payload, "windows": odd}, indent=1))
    put("nan-and-unicode", json.dumps({**payload, "precision": math.nan, "name": "fenêtre ☃",
                                       "windows": [{**w, "precision": math.inf if i == 2 else w["precision"]}
                                                   for i, w in enumerate(payload["windows"])]}))
    put("duplicate-keys", '{"verdict": "a", "windows": [{"start": 1, "end": 2, "precision": 1}], '
                          '"verdict": "b", "windows": [{"start": 5, "end": 6, "precision": 0}]}')
    put("no-windows", json.dumps({k: v for k, v in payload.items() if k != "windows"}))
    put("null-windows", json.dumps({**payload, "windows": None}))
    put("empty-windows", json.dumps({**payload, "windows": []}, indent=2))
    put("empty-object", " { } \n")
    put("crlf", json.dumps(payload, indent=2).replace("\n", "\r\n"))
    return files


def _expected(path: Path) -> tuple[dict, list | None]:
    document = json.loads(path.read_text(encoding="utf-8"))
    windows = document.pop("windows", None)
    return document, windows


@pytest.mark.parametrize("chunk,batch", [(7, 2), (64, 3), (1 << 22, 32_768)])
def test_reads_like_json_load_in_every_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, batch: int) -> None:
    monkeypatch.setattr(oracle_file, "CHUNK_CHARS", chunk)
    monkeypatch.setattr(oracle_file, "_BATCH_WINDOWS", batch)
    for name, path in _layouts(tmp_path).items():
        fields, windows = _expected(path)
        found = read_oracle(path, COLUMNS)
        assert json.dumps(found.fields, sort_keys=True) == json.dumps(fields, sort_keys=True), name  # NaN == NaN
        assert found.window_count == (len(windows) if windows is not None else None), name
        for key, kind in COLUMNS.items():
            values = [w.get(key) for w in windows or ()]
            want = np.array([math.nan if v is None else v for v in values], dtype=np.int64 if kind == "int" else float)
            assert found.columns[key].dtype == want.dtype, (name, key)
            np.testing.assert_array_equal(found.columns[key], want, err_msg=f"{name} {key}")
        assert read_oracle(path).window_count == found.window_count  # the count alone (rspwb report)


@pytest.mark.slow
def test_a_damaged_file_gives_the_error_json_load_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut anywhere, or with a stray character: the same message, line and column as read_json."""
    monkeypatch.setattr(oracle_file, "CHUNK_CHARS", 16)
    monkeypatch.setattr(oracle_file, "_BATCH_WINDOWS", 2)
    good = _layouts(tmp_path)["writer"].read_text(encoding="utf-8")
    damaged = tmp_path / "oracle.json"
    variants = [good[:cut] for cut in range(len(good))]
    variants += [good[:at] + junk + good[at:] for at in range(0, len(good), 37) for junk in ("x", ",", "}", "\x01", '"')]
    variants += [good + " x", "\ufeff" + good, "[1, 2]", "", "null"]
    for text in variants:
        damaged.write_text(text, encoding="utf-8")
        try:
            read_json(damaged)
        except UserError as error:
            expected = str(error)
        else:
            continue  # still valid (e.g. a space added)
        with pytest.raises(UserError) as found:
            read_oracle(damaged, COLUMNS)
        assert str(found.value) == expected, repr(text[-40:])


def test_window_fields_are_named_when_missing_or_not_numbers(tmp_path: Path) -> None:
    path = tmp_path / "oracle.json"
    windows = [_window(i) for i in range(5)]
    for broken, message, field in ((dict(windows[3], precision=None), "window 3 has no 'precision'", "windows[3].precision"),
                                   ({k: v for k, v in windows[3].items() if k != "start"}, "window 3 has no 'start'",
                                    "windows[3].start"),
                                   (dict(windows[3], end=1.5), "window 3: 'end' is not an integer: 1.5", "windows[3].end"),
                                   (dict(windows[3], delay="soon"), "'delay' is not a number", "windows[3].delay"),
                                   ([1, 2], "window 3 is not a JSON object", "windows[3]")):
        path.write_text(json.dumps({"verdict": "correct", "windows": windows[:3] + [broken] + windows[4:]}, indent=2))
        with pytest.raises(UserError) as error:
            read_oracle(path, COLUMNS)
        assert message in str(error.value) and error.value.field == field and error.value.file == str(path)
    path.write_text(json.dumps({"verdict": "correct", "windows": {"start": 1}}))
    with pytest.raises(UserError, match="expected a list of windows") as error:
        read_oracle(path)
    assert error.value.field == "windows"


def test_bundle_readers_use_it(tmp_path: Path) -> None:
    """run_row counts the windows, the Results view gets the columns, a bad window names its field."""
    folder = tmp_path / "bundle" / "runs" / "r1"
    folder.mkdir(parents=True)
    windows = [_window(i) for i in range(7)]
    write_json_atomic(folder / "oracle.json", {**_payload(0), "windows": JsonRows(lambda: iter(windows), 7)})
    row = run_row(folder, {"run_id": "r1", "status": "ok"})
    assert (row["verdict"], row["windows"], row["precision"]) == ("incorrect", 7, 0.875)
    (tmp_path / "bundle" / "manifest.json").write_text(json.dumps({"name": "b", "status": "ok", "runs": [
        {"run_id": "r1", "engine": "e", "status": "ok"}]}))
    bundle = open_bundle(tmp_path / "bundle")
    series = read_window_series(bundle, bundle.rows[0])
    assert series is not None and len(series) == 7
    np.testing.assert_array_equal(series.start, [w["start"] for w in windows])
    np.testing.assert_array_equal(series.delay, [math.nan if w["delay"] is None else w["delay"] for w in windows])
    assert series.windows() == [(0, 1000), (1000, 2000), (2000, 3000)]
    assert set(WINDOW_COLUMNS) <= set(windows[0])
    write_json_atomic(folder / "oracle.json", {**_payload(0), "windows": [*windows[:2], {"start": 0, "end": 1}]})
    with pytest.raises(UserError, match="window 2 has no 'precision'") as error:
        read_window_series(bundle, bundle.rows[0])
    assert error.value.field == "windows[2].precision"


def test_window_positions_and_distinct_windows_by_hand() -> None:
    start = np.array([0, 0, 0, 1000, 0, 1000])
    end = np.array([1000, 1000, 1000, 2000, 1000, 2000])
    # three evaluations of [0, 1000) spread over it, then single windows at their end
    np.testing.assert_allclose(window_positions(start, end), [1000 / 3, 2000 / 3, 1000, 2000, 1000, 2000])
    assert first_of_each_pair(start, end).tolist() == [0, 3]
    assert first_of_each_pair(np.array([5, 1, 5]), np.array([6, 2, 6])).tolist() == [0, 1]
    assert window_positions(np.zeros(0), np.zeros(0)).size == 0
