"""runs/RUN_ID/windows.parquet (rsp_workbench.results.windows_file): written a row group at a time
from the judge's columns, read by `Bundle.windows` in place of oracle.json's windows, which an
older bundle (no windows.parquet) still gives, equal."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rsp_workbench.errors import UserError
from rsp_workbench.files import JsonRows, write_json_atomic
from rsp_workbench.oracle.judge import Judgement
from rsp_workbench.oracle.quality import QualityRows, WindowQuality
from rsp_workbench.results.bundle import WINDOWS_FILE
from rsp_workbench.results.reader import open_bundle
from rsp_workbench.results.windows_file import SCHEMA, write_windows
from tests.api.support import build_bundle

#: start, end, precision, recall, actual, expected, triples, delay, reconstructed start, end (hand-picked:
#: a window the engine did not report, gracious borders on one window only)
QUALITY = [WindowQuality(0, 1000, 1.0, 1.0, 2, 2, 7, 12), WindowQuality(1000, 2000, 0.5, 1.0, 2, 1, 7, None),
           WindowQuality(2000, 3000, 1.0, 0.5, 1, 2, 14, 30, 1900, 3100)]


def _judged(folder: Path, quality: list[WindowQuality], *, row_group: int = 2) -> None:
    """oracle.json and windows.parquet of one judged run, by the writers `rspwb run` uses."""
    judgement = Judgement({"verdict": "incorrect", "precision": 0.8, "recall": 0.75, "windows": None},
                          QualityRows(quality))
    write_windows(folder / WINDOWS_FILE, judgement.window_batches(row_group))
    write_json_atomic(folder / "oracle.json", {**judgement.payload,
                                               "windows": JsonRows(judgement.window_rows, len(quality))})


def test_a_new_bundle_reads_windows_parquet_and_an_old_one_oracle_json_equally(tmp_path: Path) -> None:
    folder = build_bundle(tmp_path / "b") / "runs" / "ok-run"
    _judged(folder, QUALITY)
    assert pq.ParquetFile(folder / WINDOWS_FILE).metadata.num_row_groups == 2  # two windows a row group
    new = open_bundle(tmp_path / "b").windows("ok-run")
    assert new.to_pylist()[1] == {"start": 1000, "end": 2000, "precision": 0.5, "recall": 1.0, "actual_size": 2,
                                  "expected_size": 1, "window_triples": 7, "delay": None}
    assert new["delay"].to_pylist() == [12.0, None, 30.0]
    assert pq.read_table(folder / WINDOWS_FILE, columns=["reconstructed_start", "reconstructed_end"]).to_pylist() == [
        {"reconstructed_start": None, "reconstructed_end": None}] * 2 + [
        {"reconstructed_start": 1900, "reconstructed_end": 3100}]
    (folder / WINDOWS_FILE).unlink()  # as a bundle written before windows.parquet
    old = open_bundle(tmp_path / "b").windows("ok-run")
    assert old.schema == new.schema and old.equals(new)


def test_the_parquet_file_is_what_windows_reads_when_both_are_there(tmp_path: Path) -> None:
    """Proof that the Parquet file is read: its numbers differ from oracle.json's here."""
    folder = build_bundle(tmp_path / "b") / "runs" / "ok-run"  # oracle.json: windows 0, 1000, 2000
    write_windows(folder / WINDOWS_FILE, Judgement({}, QualityRows(QUALITY[:1])).window_batches(10))
    assert open_bundle(tmp_path / "b").windows("ok-run")["start"].to_pylist() == [0]


def test_an_empty_judgement_writes_an_empty_file_with_the_schema(tmp_path: Path) -> None:
    path = tmp_path / WINDOWS_FILE
    assert write_windows(path, Judgement({}, QualityRows([])).window_batches(10)) == 0
    assert pq.read_table(path).schema == SCHEMA and pq.read_table(path).num_rows == 0


@pytest.mark.parametrize("damage", ["truncated", "empty", "not parquet", "other columns"])
def test_a_damaged_windows_parquet_is_one_error_naming_it(tmp_path: Path, damage: str) -> None:
    folder = build_bundle(tmp_path / "b") / "runs" / "ok-run"
    _judged(folder, QUALITY)
    path = folder / WINDOWS_FILE
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "not parquet":
        path.write_text("start,end\n0,1000\n")
    else:
        pq.write_table(pa.table({"start": ["a"]}), path)
    with pytest.raises(UserError) as error:
        open_bundle(tmp_path / "b").windows("ok-run")
    assert error.value.file == str(path) and "\n" not in str(error.value)


def test_a_writer_that_fails_leaves_no_file(tmp_path: Path) -> None:
    def batches():  # type: ignore[no-untyped-def]
        yield from Judgement({}, QualityRows(QUALITY)).window_batches(1)
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_windows(tmp_path / WINDOWS_FILE, batches())
    assert os.listdir(tmp_path) == []


def test_a_windows_parquet_leading_outside_the_bundle_is_refused(tmp_path: Path) -> None:
    folder = build_bundle(tmp_path / "b") / "runs" / "ok-run"
    _judged(tmp_path, QUALITY)  # outside the bundle
    (folder / WINDOWS_FILE).symlink_to(tmp_path / WINDOWS_FILE)
    with pytest.raises(UserError, match="leads outside the bundle") as error:
        open_bundle(tmp_path / "b").windows("ok-run")
    assert error.value.file == str(folder / WINDOWS_FILE)
