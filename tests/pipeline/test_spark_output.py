"""``rspwb oracle --out`` on the Spark path: the grid files are made and written by the executors.

Every t0's grid of a single-window query follows from the distinct timestamps and its window
(`GridRecipe`); the driver writes the shared rows once and the first file (whose size says whether
the rest fits), the executors the others, in parallel — the same bytes as the Python path's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rsp_workbench.core.semantics import PRESETS
from rsp_workbench.oracle import output
from rsp_workbench.oracle.answers import columnar_expected_answers
from rsp_workbench.oracle.columnar import columns_from_elements, query_predicates
from rsp_workbench.oracle.output import MAPPINGS, ROWS, OracleOutput, write_expected_answers
from rsp_workbench.streams.parquet import ParquetStreamWriter
from tests.oracle.cases import BODIES, E, INT, S1, csparql
from rsp_workbench.streams.model import StreamElement

VECTORS = [(t,) for t in range(0, 42)]


def _elements() -> list[StreamElement]:
    return [StreamElement(E.format(f"s{i % 9}"), E.format("p"), INT.format(i % 5), i // 3) for i in range(300)]


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


@pytest.mark.spark
def test_the_grid_files_are_written_by_the_executors_with_the_python_paths_bytes(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rsp_workbench.pipeline.oracle_job import clear_annotation_cache, expected_answers, on_executors

    monkeypatch.setattr(output, "CHUNK_ENTRIES", 300)  # several t0 per file, many files
    elements = _elements()
    stream = tmp_path / "s.parquet"
    with ParquetStreamWriter(stream) as writer:
        writer.write_all(elements)
    query = csparql(BODIES["filter"], 7, 3)
    for preset in ("cqels", "yabench-content-change", "csparql"):
        semantics = PRESETS[preset]
        python = columnar_expected_answers(query, {S1: columns_from_elements(elements, query_predicates(query))},
                                           semantics, VECTORS, keep_results=False)
        write_expected_answers(tmp_path / f"python-{preset}", python, VECTORS, semantics=semantics, layout="grids")
        clear_annotation_cache()
        answers = expected_answers(spark, query, str(stream), semantics, VECTORS)
        slices: list[int] = []

        def spy(function: Any, shared: Any, items: Any) -> list[Any]:
            slices.append(len(items))
            return on_executors(spark, function, shared, items)

        answers.map_tasks = spy
        files = write_expected_answers(tmp_path / f"spark-{preset}", answers, VECTORS, semantics=semantics,
                                       layout="grids")
        assert files[:2] == [MAPPINGS, ROWS] and len(files) > 4, preset
        assert slices == [len(files) - 3], preset  # every grid file but the first by the executors
        assert _files(tmp_path / f"spark-{preset}") == _files(tmp_path / f"python-{preset}"), preset
        reader = OracleOutput(tmp_path / f"spark-{preset}")
        for vector in (VECTORS[0], VECTORS[17], VECTORS[-1]):
            assert reader.answer(vector).emissions == python[vector].emissions


def test_the_grid_files_are_the_same_bytes_whoever_writes_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """One file per slice of consecutive t0, decided before any is written: the files of a writer
    that hands the slices elsewhere (`map_tasks`) are the ones written here, file for file."""
    monkeypatch.setattr(output, "CHUNK_ENTRIES", 300)
    elements = _elements()
    query = csparql(BODIES["filter"], 7, 3)
    semantics = PRESETS["yabench-content-change"]
    answers = columnar_expected_answers(query, {S1: columns_from_elements(elements, query_predicates(query))},
                                        semantics, VECTORS, keep_results=False)
    write_expected_answers(tmp_path / "here", answers, VECTORS, semantics=semantics, layout="grids")
    handed: list[Any] = []

    def elsewhere(function: Any, shared: Any, items: Any) -> list[Any]:
        handed.extend(items)
        return [function(shared, item) for item in reversed(items)][::-1]  # any order of work

    answers.map_tasks = elsewhere
    write_expected_answers(tmp_path / "elsewhere", answers, VECTORS, semantics=semantics, layout="grids")
    assert len(handed) > 2 and _files(tmp_path / "elsewhere") == _files(tmp_path / "here")
