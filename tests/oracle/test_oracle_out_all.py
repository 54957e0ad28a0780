"""``rspwb oracle --out`` for every t0 writes what the per-t0 computation wrote, file for file.

The writer numbers mappings with array lookups and takes each mapping's presence run from
its single requirement (`rsp_workbench.oracle.deltas.SingleRequirements`) instead of merging
runs per t0; `_per_t0_files` below is the per-t0 writer as it was (runs merged per row and
mapping, mappings numbered one run at a time), kept here as the definition to compare with.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.oracle.cases import BODIES, E, INT, S1, STATIC, csparql
from rsp_workbench.core.semantics import PRESETS
from rsp_workbench.oracle import deltas
from rsp_workbench.oracle.columnar import columns_from_elements, query_predicates
from rsp_workbench.oracle.output import MAPPINGS, _grid_and_runs, _packed, write_expected_answers
from rsp_workbench.oracle.answers import columnar_expected_answers
from rsp_workbench.streams.model import StreamElement
from tests.paths import DATA

VECTORS = [(t,) for t in range(21)]  # above 20: the runs layout


def _stream(seed: int, subjects: int, count: int = 160) -> list[StreamElement]:
    """Random elements; with many ``subjects`` most mappings are distinct (one row each, as
    YABench observations are), with few they repeat (runs merged per mapping)."""
    rng = random.Random(seed)
    t, out = 0, []
    for _ in range(count):
        t += rng.choice([0, 0, 1, 1, 2, 3])
        subject = E.format(f"s{rng.randrange(subjects)}")
        if rng.random() < 0.6:
            out.append(StreamElement(subject, E.format("p"), INT.format(rng.randrange(4 if subjects < 100 else 1000)), t))
        else:
            out.append(StreamElement(subject, E.format("r"), E.format(f"s{rng.randrange(subjects)}"), t))
    return out


def _per_t0_files(out: Path, answers: Any, vectors: list[tuple[int, ...]]) -> None:
    """The runs layout's data files as the per-t0 writer wrote them before `_MappingNumbers`."""
    out.mkdir()
    ids: dict[frozenset, int] = {}
    with open(out / MAPPINGS, "w", encoding="utf-8") as mappings:
        for vector in vectors:
            grid, runs, solution = _grid_and_runs(answers[vector])
            local = np.empty(len(runs[0]), dtype=np.int64)
            for r, m in enumerate(runs[0].tolist()):
                mapping = solution(m)
                index = ids.get(mapping)
                if index is None:
                    index = ids[mapping] = len(ids)
                    mappings.write(json.dumps(dict(sorted(mapping))) + "\n")
                local[r] = index
            columns = {"time": grid.time, "sequence": grid.sequence, "start": grid.open, "end": grid.close,
                       "index": grid.index, "lo": grid.lo, "hi": grid.hi, "run_mapping": local,
                       "run_first": runs[1], "run_last": runs[2], "run_count": runs[3]}
            with open(out / f"t0_{'-'.join(map(str, vector))}.npz", "wb") as handle:
                np.savez_compressed(handle, **{key: packed for name, column in columns.items()
                                               for key, packed in _packed(name, column)})


def _arrays(path: Path) -> list[tuple[str, str, bytes]]:
    """An .npz file's arrays in order: name, dtype, bytes (zip timestamps differ between runs)."""
    with np.load(path) as data:
        return [(name, str(data[name].dtype), data[name].tobytes()) for name in data.files]


@pytest.mark.parametrize(("body", "subjects"), [("filter", 6), ("filter", 2000), ("union", 2000),
                                                ("join-across-timestamps", 6)])
@pytest.mark.slow
def test_out_writes_the_per_t0_files_for_every_preset(tmp_path: Path, body: str, subjects: int,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    elements = _stream(len(body) + subjects, subjects)
    query = csparql(BODIES[body], 7, 3)
    columns = {S1: columns_from_elements(elements, query_predicates(query))}
    for preset, sem in PRESETS.items():
        answers = columnar_expected_answers(query, columns, sem, VECTORS, static=STATIC, keep_results=False)
        new = tmp_path / f"{preset}-new"
        files = write_expected_answers(new, answers, VECTORS, semantics=sem)
        with monkeypatch.context() as patch:  # the runs merged per row and mapping, as before
            patch.setattr(deltas.SingleRequirements, "of", classmethod(lambda cls, table: None))
            old = tmp_path / f"{preset}-old"
            _per_t0_files(old, columnar_expected_answers(query, columns, sem, VECTORS, static=STATIC,
                                                         keep_results=False), VECTORS)
        assert files == [MAPPINGS] + [f"t0_{v[0]}.npz" for v in VECTORS]
        assert (new / MAPPINGS).read_bytes() == (old / MAPPINGS).read_bytes(), preset
        assert (new / MAPPINGS).stat().st_size > 0
        for name in files[1:]:
            assert _arrays(new / name) == _arrays(old / name), (preset, name)


def test_out_that_would_not_fit_on_the_disk_is_refused_after_the_first_t0(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from collections import namedtuple

    from rsp_workbench.errors import UserError
    from rsp_workbench.oracle import output

    elements = _stream(1, 2000)
    query = csparql(BODIES["filter"], 7, 3)
    sem = PRESETS["cqels"]
    answers = columnar_expected_answers(query, {S1: columns_from_elements(elements, query_predicates(query))}, sem,
                                        VECTORS, keep_results=False)
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(output.shutil, "disk_usage", lambda where: usage(10_000, 9_000, 1_000))
    with pytest.raises(UserError) as refused:
        write_expected_answers(tmp_path / "out", answers, VECTORS, semantics=sem)
    assert "the 20 remaining t0 files need about" in str(refused.value) and "1000 B free" in str(refused.value)
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()


# --- the grids layout (what `rspwb oracle --out` writes) ------------------------------------------


def _runs_as_mappings(answer: Any) -> Counter[tuple[frozenset, int, int, int]]:
    """An answer's presence runs with each mapping resolved: equal bags, equal answers."""
    runs = answer.runs
    return Counter((answer.solution(int(m)), int(f), int(l), int(c))  # noqa: E741
                   for m, f, l, c in zip(runs.mapping, runs.first, runs.last, runs.count))


def _assert_grids_read_back(folder: Path, answers: Any, vectors: list[tuple[int, ...]]) -> None:
    from rsp_workbench.oracle.output import OracleOutput

    reader = OracleOutput(folder)
    assert reader.t0_values == vectors
    for vector in vectors:  # every t0: the reader's answer is the per-t0 computation's
        expected, read = answers[vector], reader.answer(vector)
        for name in ("time", "sequence", "open", "close", "index", "lo", "hi"):
            assert np.array_equal(getattr(read.grid, name), getattr(expected.grid, name)), (vector, name)
        assert _runs_as_mappings(read) == _runs_as_mappings(expected), vector


@pytest.mark.parametrize(("body", "subjects"), [("filter", 6), ("filter", 2000), ("union", 2000),
                                                ("join-across-timestamps", 6), ("static-join", 6)])
@pytest.mark.slow
def test_grids_layout_reads_back_every_t0_for_every_preset(tmp_path: Path, body: str, subjects: int,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from rsp_workbench.oracle import output

    elements = _stream(len(body) + subjects, subjects)
    query = csparql(BODIES[body], 7, 3)
    columns = {S1: columns_from_elements(elements, query_predicates(query))}
    monkeypatch.setattr(output, "CHUNK_ENTRIES", 700)  # several t0 per file, and several files
    for preset, sem in PRESETS.items():
        answers = columnar_expected_answers(query, columns, sem, VECTORS, static=STATIC, keep_results=False)
        out = tmp_path / preset
        files = write_expected_answers(out, answers, VECTORS, semantics=sem, layout="grids")
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["layout"] == "grids" and files[:2] == [MAPPINGS, "rows.npz"], preset
        assert files[2:] == [name for name, _ in manifest["grid_files"]] and len(files) > 3, preset
        assert sum(count for _, count in manifest["grid_files"]) == len(VECTORS)
        with np.load(out / files[2]) as data:  # the rows' rule, not runs, gives these t0's answers
            assert not data["own_runs"].any() and len(data["run_mapping"]) == 0
        _assert_grids_read_back(out, answers, VECTORS)


@pytest.mark.slow
def test_grids_layout_keeps_the_runs_of_answers_not_from_the_shared_rows(tmp_path: Path) -> None:
    """Aggregates (runs from each evaluation's relation), and a t0 in the middle computed by
    the per-content path: those t0 carry their own runs; the reader gives every one back."""
    from tests.oracle.cases import assert_same
    from rsp_workbench.oracle.output import OracleOutput
    from rsp_workbench.oracle.reference import expected_answer
    from rsp_workbench.oracle.annotated import fast_expected_answers

    elements = _stream(3, 6, 60)
    sem = PRESETS["cqels"]
    for body in ("group-by", "filter"):
        query = csparql(BODIES[body], 7, 3)
        answers = dict(columnar_expected_answers(query, {S1: columns_from_elements(elements, query_predicates(query))},
                                                 sem, VECTORS, keep_results=False).items())
        answers[VECTORS[9]] = fast_expected_answers(query, {S1: elements}, sem, [VECTORS[9]])[VECTORS[9]]
        out = tmp_path / body
        write_expected_answers(out, answers, VECTORS, semantics=sem, layout="grids")
        reader = OracleOutput(out)
        for vector in (VECTORS[0], VECTORS[9], VECTORS[20]):
            assert_same(expected_answer(query, {S1: elements}, sem, vector), reader.answer(vector))


@pytest.mark.slow
def test_a_folder_in_the_runs_layout_is_still_read() -> None:
    """tests/data/oracle_out_runs: written by `rspwb oracle --out` before the grids layout
    (commit c452f4d; CQELS on `_stream(7, 6, 60)`, the filter query, t0 0..20)."""
    from tests.oracle.cases import assert_same
    from rsp_workbench.oracle.output import OracleOutput
    from rsp_workbench.oracle.reference import expected_answer

    folder = DATA / "oracle_out_runs"
    reader = OracleOutput(folder)
    assert reader.manifest["layout"] == "runs" and reader.t0_values == VECTORS
    elements = _stream(7, 6, 60)
    query = csparql(BODIES["filter"], 7, 3)
    for vector in VECTORS:
        assert_same(expected_answer(query, {S1: elements}, PRESETS["cqels"], vector), reader.answer(vector))


def _filter_answers(preset: str) -> Any:
    """Every t0's answers of the filter query on a stream of distinct observations."""
    query = csparql(BODIES["filter"], 7, 3)
    columns = {S1: columns_from_elements(_stream(1, 2000), query_predicates(query))}
    return columnar_expected_answers(query, columns, PRESETS[preset], VECTORS, keep_results=False)


def test_grids_that_would_not_fit_on_the_disk_are_refused_after_the_first_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from collections import namedtuple

    from rsp_workbench.errors import UserError
    from rsp_workbench.oracle import output

    monkeypatch.setattr(output, "CHUNK_ENTRIES", 1)  # one t0 per file
    free = namedtuple("usage", "total used free")(10_000, 9_000, 1_000)
    monkeypatch.setattr(output.shutil, "disk_usage", lambda where: free)
    with pytest.raises(UserError) as refused:
        write_expected_answers(tmp_path / "out", _filter_answers("cqels"), VECTORS, semantics=PRESETS["cqels"],
                               layout="grids")
    assert "the 20 remaining t0 need about" in str(refused.value) and "1000 B free" in str(refused.value)
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()


def test_interrupting_the_grids_layout_leaves_nothing_that_looks_complete(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rsp_workbench.oracle import output

    sem = PRESETS["yabench-content-change"]
    answers = _filter_answers("yabench-content-change")
    monkeypatch.setattr(output, "CHUNK_ENTRIES", 1)
    earlier = tmp_path / "out"
    write_expected_answers(earlier, answers, VECTORS[:3], semantics=sem, layout="grids")
    before = sorted(p.name for p in earlier.iterdir())

    def ctrl_c(name: str) -> None:
        if name == "grids_00002.npz":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_expected_answers(earlier, answers, VECTORS, semantics=sem, layout="grids", after_file=ctrl_c)
    assert sorted(p.name for p in earlier.iterdir()) == before and not (tmp_path / "out.partial").exists()


def test_packed_columns_hold_steps_at_the_edge_of_their_type() -> None:
    """A step of +128 needs int16 (the smallest type of -128 is int8, which cannot hold +128)."""
    from rsp_workbench.oracle.output import _unpacked

    for column in ([0, 128, 0, -128], [0, 127, 0, -127], [0, 32768, 1], [0, -32768, 1], [7], []):
        packed = dict(_packed("c", np.asarray(column, dtype=np.int64)))
        assert _unpacked(packed, "c").tolist() == column


def test_columns_packed_per_t0_come_back_with_empty_and_single_t0() -> None:
    from rsp_workbench.oracle.output import _packed_per_t0, _unpacked_per_t0

    column = [5, 6, 9, 100, 0, 1, 7, -3, -3]
    for offsets in ([0, 3, 3, 5, 9], [0, 9], [0, 0, 9, 9], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]):
        packed = dict(_packed_per_t0("c", np.asarray(column), np.asarray(offsets)))
        assert _unpacked_per_t0(packed, "c", np.asarray(offsets)).tolist() == column
    empty = dict(_packed_per_t0("c", np.empty(0, np.int64), np.asarray([0, 0])))
    assert _unpacked_per_t0(empty, "c", np.asarray([0, 0])).tolist() == []


def test_mapping_lines_are_json_dumps_byte_for_byte() -> None:
    from rsp_workbench.oracle.output import _mapping_line

    for mapping in (frozenset(), frozenset({("b", '"x\\"y"@en'), ("a", "<http://e/é>")}),
                    frozenset({("v", '"tab\there\u2028"'), ("ü", "_:b0")})):
        assert _mapping_line(mapping) == json.dumps(dict(sorted(mapping))) + "\n"
