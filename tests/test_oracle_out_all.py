"""``rspwb oracle --out`` for every t0 writes what the per-t0 computation wrote, file for file.

The writer numbers mappings with array lookups and takes each mapping's presence run from
its single requirement (`workbench.oracle.deltas.SingleRequirements`) instead of merging
runs per t0; `_per_t0_files` below is the per-t0 writer as it was (runs merged per row and
mapping, mappings numbered one run at a time), kept here as the definition to compare with.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.test_oracle_fast import BODIES, E, INT, S1, STATIC, csparql
from workbench.core.semantics import PRESETS
from workbench.oracle import deltas
from workbench.oracle.columnar import columns_from_elements, query_predicates
from workbench.oracle.output import MAPPINGS, _grid_and_runs, _packed, write_expected_answers
from workbench.pipeline.oracle_job import columnar_expected_answers
from workbench.streams.model import StreamElement

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

    from workbench.errors import UserError
    from workbench.oracle import output

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
