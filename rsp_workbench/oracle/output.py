"""Expected answers written to a folder (``rspwb oracle --out DIR``, docs/formats.md).

The folder is built as ``DIR.partial/`` and renamed to ``DIR`` only once every file is
written and ``manifest.json`` (``"status": "complete"``, the file list) is in it. A run
that is interrupted (Ctrl-C), cancelled or fails removes its ``DIR.partial/`` and leaves an
earlier ``DIR`` untouched, so no half-written result ever looks complete.
"""

from __future__ import annotations

import bisect
import itertools
import json
import os
import shutil
import uuid
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii as _quoted  # json.dumps's own string quoting
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Literal, Mapping, Sequence

from rsp_workbench.files import PARTIAL, write_json_atomic, write_text_atomic
from rsp_workbench.errors import UserError

if TYPE_CHECKING:  # pragma: no cover
    from rsp_workbench.responses.model import SolutionMapping

MANIFEST = "manifest.json"
FORMAT = "rspwb-oracle/1"


class OutputCancelled(Exception):
    """The caller cancelled writing (``cancelled()`` returned True between files)."""


class StagedFolder:
    """A folder written under ``DIR.partial/`` and swapped in as ``DIR`` when complete.

    ``DIR`` may be missing, empty, or an earlier oracle output (it has our manifest); any
    other existing folder is refused before anything is computed or written, since
    replacing it would delete files the user did not ask to lose.
    """

    def __init__(self, out: str | os.PathLike[str], manifest: Mapping[str, Any] | None = None,
                 after_file: Callable[[str], None] | None = None) -> None:
        self.out = Path(out)
        self.partial = self.out.with_name(self.out.name + PARTIAL)
        self.manifest = dict(manifest or {})
        self.files: list[str] = []
        self.after_file = after_file

    def check_target(self) -> None:
        """Raise `UserError` if ``DIR`` exists and is neither empty nor an oracle output."""
        out = self.out
        if out.exists() and not out.is_dir():
            raise UserError("exists and is not a folder", file=str(out), field="--out")
        if out.is_dir() and any(out.iterdir()) and not _is_oracle_output(out):
            raise UserError("the folder exists and is not an rspwb oracle output (no manifest.json); "
                            "give a new or empty folder", file=str(out), field="--out")
        foreign = _foreign_files(out) if out.is_dir() else []
        if foreign:  # replacing the earlier output would delete them with it
            shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
            raise UserError(f"the earlier oracle output holds files rspwb did not write ({shown}); move them out "
                            "or give another folder", file=str(out), field="--out")

    def __enter__(self) -> "StagedFolder":
        self.check_target()
        if self.partial.exists():  # left by a run that was killed (SIGKILL skips cleanup)
            shutil.rmtree(self.partial)
        self.partial.mkdir(parents=True)
        return self

    def write(self, name: str, text: str) -> None:
        """One file of the result (atomic itself; the folder becomes visible at the end)."""
        write_text_atomic(self.partial / name, text)
        self.files.append(name)
        if self.after_file is not None:
            self.after_file(name)

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> Literal[False]:
        if kind is not None:
            shutil.rmtree(self.partial, ignore_errors=True)
            return False
        write_json_atomic(self.partial / MANIFEST, {"format": FORMAT, "status": "complete", **self.manifest,
                                                    "files": self.files})
        if self.out.exists():  # an empty folder or an earlier output: move it aside, swap, delete
            old = self.out.with_name(f"{self.out.name}.old-{uuid.uuid4().hex[:8]}")
            os.replace(self.out, old)
            os.replace(self.partial, self.out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(self.partial, self.out)
        return False


def _foreign_files(folder: Path) -> list[str]:
    """Entries of an earlier oracle output that its manifest does not list (the user's, not ours)."""
    try:
        listed = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("files")
    except (OSError, ValueError, AttributeError):
        return []
    ours = {MANIFEST, *(str(name) for name in listed or ())} if isinstance(listed, list) else None
    if ours is None:
        return []
    return sorted(entry.name for entry in folder.iterdir() if entry.name not in ours)


def _is_oracle_output(folder: Path) -> bool:
    try:
        return bool(json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("format") == FORMAT)
    except (OSError, ValueError, AttributeError):
        return False


LEGACY_MAX_T0 = 20  # up to this many t0 (and LEGACY_MAX_EVALUATIONS each): readable per-t0 files
LEGACY_MAX_EVALUATIONS = 100_000
MAPPINGS = "mappings.jsonl"
ROWS = "rows.npz"
LAYOUTS = ("runs", "grids")  # the compact layouts, oldest first (both are read)
CHUNK_ENTRIES = 1 << 20  # a grids file holds consecutive t0 up to about this many evaluations + runs
EVALUATION_COLUMNS = ("time", "sequence", "hi")  # grids files: per evaluation
SEGMENT_COLUMNS = ("segment_index", "segment_start", "segment_end", "segment_lo", "segment_length")
RUN_COLUMNS = ("run_mapping", "run_first", "run_last", "run_count")


def write_expected_answers(
    out: str | os.PathLike[str],
    answers: Mapping[tuple[int, ...], Any],
    vectors: Sequence[tuple[int, ...]],
    *,
    manifest: Mapping[str, Any] | None = None,
    yabench_runs: Sequence[Sequence[Any]] | None = None,
    engine_name: str = "engine",
    cancelled: Callable[[], bool] | None = None,
    after_file: Callable[[str], None] | None = None,
    semantics: Any = None,
    layout: str = "runs",
) -> list[str]:
    """Write the expected answers of every t0 vector (+ YABench files); docs/formats.md.

    Few t0 with few evaluations: ``expected_t0_*.jsonl`` and ``windows_t0_*.json`` per t0.
    Otherwise a compact ``layout``: ``runs``, the distinct mappings once
    (``mappings.jsonl``) and per t0 one ``t0_*.npz`` with the evaluation grid and the
    mappings' presence runs; or ``grids`` (what ``rspwb oracle --out`` writes), the
    annotated rows once (``rows.npz``, whose rule gives every t0's runs) and the grids of
    consecutive t0 together in ``grids_*.npz`` (`OracleOutput` reads any t0's full answer
    back from either). One t0's answer is held at a time.
    ``answers[vector]`` is an `ExpectedAnswer` or a `DeltaAnswer`; ``yabench_runs``
    (per-window quality per repeated run) adds ``ORACLE_{name}_{run}`` and
    ``BOXPLOTS_{name}``. ``cancelled`` is polled between files (`OutputCancelled`); either
    way the folder stays consistent. Returns the files written.
    """
    from rsp_workbench.oracle.quality import boxplots_text
    from rsp_workbench.oracle.run import evaluation_times, windows_summary

    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}")
    compact = len(vectors) > LEGACY_MAX_T0 or (
        bool(vectors) and len(evaluation_times(answers, vectors[0])) > LEGACY_MAX_EVALUATIONS)
    extra = dict(manifest or {})
    if compact:
        extra.update({"layout": layout, "t0": [list(v) for v in vectors]})
        if semantics is not None:
            extra.update({"r2s": (semantics.r2s.value), "empty_notification": semantics.empty_notification,
                          "border": semantics.border.value})
    with StagedFolder(out, extra, after_file) as folder:
        def check() -> None:
            if cancelled is not None and cancelled():
                raise OutputCancelled(f"writing {out} was cancelled")

        if compact and layout == "grids":
            _write_grids(folder, answers, vectors, check)
        elif compact:
            _write_runs(folder, answers, vectors, check)
        else:
            for vector in vectors:
                check()
                label = "-".join(str(v) for v in vector)
                answer = answers[vector]
                lines = [
                    json.dumps({"time": e.time, "operation": e.operation, "binding": dict(sorted(mapping))}) + "\n"
                    for e in answer.emissions for mapping in e.bindings.elements()
                ]
                folder.write(f"expected_t0_{label}.jsonl", "".join(lines))
                folder.write(f"windows_t0_{label}.json", json.dumps(windows_summary(answer), indent=1) + "\n")
        if yabench_runs:
            for index, run in enumerate(yabench_runs, 1):
                check()
                folder.write(f"ORACLE_{engine_name}_{index}", "".join(w.oracle_line() + "\n" for w in run))
            folder.write(f"BOXPLOTS_{engine_name}", boxplots_text(engine_name, yabench_runs))
        return list(folder.files)


def _write_runs(folder: StagedFolder, answers: Mapping[tuple[int, ...], Any], vectors: Sequence[tuple[int, ...]],
                check: Callable[[], None]) -> None:
    """The ``runs`` layout: mappings once, then one compressed grid + runs file per t0.

    After the first t0 the rest is estimated from its size; an output that would not fit
    on the disk is refused before more is written.
    """
    import numpy as np

    with open(folder.partial / MAPPINGS, "w", encoding="utf-8") as mappings:
        numbering = _MappingNumbers(mappings)
        for n, vector in enumerate(vectors):
            check()
            grid, runs, solution = _grid_and_runs(answers[vector])
            local = numbering.of(runs[0], solution)
            name = f"t0_{'-'.join(str(v) for v in vector)}.npz"
            columns = {"time": grid.time, "sequence": grid.sequence, "start": grid.open, "end": grid.close,
                       "index": grid.index, "lo": grid.lo, "hi": grid.hi, "run_mapping": local,
                       "run_first": runs[1], "run_last": runs[2], "run_count": runs[3]}
            with open(folder.partial / name, "wb") as handle:
                np.savez_compressed(handle, **{key: packed for name_, column in columns.items()
                                               for key, packed in _packed(name_, column)})
            del grid, runs, local, columns  # before the next t0's arrays are made
            folder.files.append(name)
            if n == 0 and len(vectors) > 1:
                _refuse_if_too_big(folder.partial, (folder.partial / name).stat().st_size, len(vectors) - 1)
            if folder.after_file is not None:
                folder.after_file(name)
    folder.files.insert(0, MAPPINGS)


def _write_grids(folder: StagedFolder, answers: Mapping[tuple[int, ...], Any], vectors: Sequence[tuple[int, ...]],
                 check: Callable[[], None]) -> None:
    """The ``grids`` layout: mappings and annotated rows once, then the grids of consecutive
    t0 together, compressed, one file per `CHUNK_ENTRIES`.

    A t0 whose answer is the first t0's rows over its own grid (every `DeltaAnswer` of one
    oracle) costs its grid alone: no runs are computed or stored for it — what consecutive
    t0 share (the rows and their mappings) is written once. Any other answer (the per-content
    path, a grid that is not monotone) carries its own runs. After the first file the rest
    is estimated from its size; an output that would not fit on the disk is refused.
    """
    if _write_shared_grids(folder, answers, vectors, check):
        return
    shared: Any = None
    index: list[list[Any]] = []
    folder.manifest["grid_files"] = index  # [file, number of t0] in t0 order; in the manifest at the end
    with open(folder.partial / MAPPINGS, "w", encoding="utf-8") as mappings:
        numbering = _MappingNumbers(mappings)
        chunk = _GridChunk()
        written = 0
        for n, vector in enumerate(vectors):
            check()
            answer = answers[vector]
            rows = getattr(answer, "rows", None)
            if n == 0 and rows is not None:
                shared = rows
                _write_rows(folder, rows, numbering.of(rows.mapping_of, answer.solution))
            if rows is not None and rows is shared:
                chunk.add(answer.grid, None)
            else:
                grid, runs, solution = _grid_and_runs(answer)
                chunk.add(grid, (numbering.of(runs[0], solution), runs[1], runs[2], runs[3]))
            del answer, rows
            if chunk.entries >= CHUNK_ENTRIES or n == len(vectors) - 1:
                name = f"grids_{len(index):05d}.npz"
                _save_npz(folder.partial / name, chunk.columns())
                index.append([name, chunk.count])
                folder.files.append(name)
                written += chunk.count
                if len(index) == 1 and written < len(vectors):
                    each = (folder.partial / name).stat().st_size / chunk.count
                    _refuse_if_too_big(folder.partial, int(each), len(vectors) - written, "t0")
                chunk.clear()
                if folder.after_file is not None:
                    folder.after_file(name)
    folder.files.insert(0, MAPPINGS)
    if shared is not None:
        folder.files.insert(1, ROWS)


def _write_shared_grids(folder: StagedFolder, answers: Mapping[tuple[int, ...], Any],
                        vectors: Sequence[tuple[int, ...]], check: Callable[[], None]) -> bool:
    """The ``grids`` layout when every t0's answer is the shared rows over its own grid (a single
    window's `DeltaOracle`): the rows once, then the grids of `CHUNK_ENTRIES` // (the first t0's
    evaluations) consecutive t0 per file, each file made from a `GridRecipe` alone — so that
    ``answers.map_tasks`` (the Spark path) makes and writes them on the executors, in parallel,
    the files the same whoever writes them. False (nothing left behind) when the answers are not
    of that kind, or when some t0's contents do not move forward: the general writer then runs."""
    recipe_of = getattr(answers, "grid_recipe", None)
    recipe = recipe_of(vectors) if recipe_of is not None and len(vectors) > 1 else None
    if recipe is None:
        return False
    first = answers[vectors[0]]
    rows = getattr(first, "rows", None)
    if rows is None:
        return False
    per_file = max(1, CHUNK_ENTRIES // max(1, len(first.grid)))
    slices = [(k, list(vectors[i:i + per_file])) for k, i in enumerate(range(0, len(vectors), per_file))]
    shared = (recipe, os.path.abspath(folder.partial))
    written: list[str] = []

    def undo() -> bool:
        for name in written:
            (folder.partial / name).unlink(missing_ok=True)
        return False

    with open(folder.partial / MAPPINGS, "w", encoding="utf-8") as mappings:
        written.append(MAPPINGS)
        _write_rows(folder, rows, _MappingNumbers(mappings).of(rows.mapping_of, first.solution))
        written.append(ROWS)
    del first, rows
    files: list[tuple[str, int, int]] = []

    def done(result: tuple[str, int, int]) -> None:
        files.append(result)
        written.append(result[0])
        if folder.after_file is not None:
            folder.after_file(result[0])

    head = write_grid_file(shared, slices[0])  # here: the other files are estimated from its size
    if head is None:
        return undo()
    done(head)
    if len(slices) > 1:
        _refuse_if_too_big(folder.partial, head[2] // head[1], len(vectors) - head[1], "t0")
    map_tasks = getattr(answers, "map_tasks", None)
    rest = slices[1:]
    if map_tasks is None:
        for item in rest:
            check()
            result = write_grid_file(shared, item)
            if result is None:
                return undo()
            done(result)
    elif rest:
        check()
        results = map_tasks(write_grid_file, shared, rest)
        if any(result is None for result in results):
            written.extend(result[0] for result in results if result is not None)
            return undo()
        for result in results:
            done(result)
    folder.manifest["grid_files"] = [[name, count] for name, count, _size in files]
    folder.files += [MAPPINGS, ROWS] + [name for name, _count, _size in files]
    return True


def write_grid_file(shared: tuple[Any, str], item: tuple[int, Sequence[tuple[int, ...]]]
                    ) -> tuple[str, int, int] | None:
    """Task: the grids of one slice of consecutive t0 (``item``: the file's number and its t0) as
    ``grids_NNNNN.npz`` in the folder of ``shared`` (`GridRecipe`, folder) — written whole under a
    hidden name, then renamed; (name, t0, bytes), or None (nothing written) if some t0's contents
    do not move forward (its answer then needs runs of its own)."""
    recipe, partial = shared
    number, vectors = item
    chunk = _GridChunk()
    for vector in vectors:
        grid = recipe.grid(tuple(vector))
        if not grid.monotone():
            return None
        chunk.add(grid, None)
    name = f"grids_{number:05d}.npz"
    hidden = Path(partial) / f".{name}.{os.getpid()}.partial"
    _save_npz(hidden, chunk.columns())
    os.replace(hidden, Path(partial) / name)
    return name, len(vectors), (Path(partial) / name).stat().st_size


def _write_rows(folder: StagedFolder, rows: Any, mapping: Any) -> None:
    """``rows.npz``: every annotated row's requirements (element positions) and its mapping's
    number in ``mappings.jsonl`` — from which any t0's runs follow (`_StoredRows`)."""
    _save_npz(folder.partial / ROWS, [pair for name, column in (
        ("requirement_row", rows.row_of), ("pmin", rows.pmin[0]), ("pmax", rows.pmax[0]), ("row_mapping", mapping))
        for pair in _packed(name, column)])


class _GridChunk:
    """The grids (and own runs, if any) of consecutive t0, until written as one file.

    Per evaluation only ``time``, ``sequence`` and ``hi`` are stored; ``index``, ``start``,
    ``end`` and ``lo`` are the same along a window's evaluations, so they are stored once
    per *segment* of consecutive evaluations that share all four (for content change, a
    segment per window) — a third of the bytes to pack and compress. One chunk per output,
    emptied after each file: the int64 buffers a file's columns are joined and differenced
    in are reused from file to file (a fresh array of a million entries per column and file
    cost more in page faults than the packing itself).
    """

    def __init__(self) -> None:
        self._buffers: dict[str, Any] = {}
        self.clear()

    def clear(self) -> None:
        self.count = 0
        self.entries = 0
        self.grids: list[Any] = []
        self.segments: list[tuple[Any, ...]] = []
        self.runs: list[tuple[Any, Any, Any, Any] | None] = []

    def add(self, grid: Any, runs: tuple[Any, Any, Any, Any] | None) -> None:
        import numpy as np

        n = len(grid)
        changes = np.zeros(max(n - 1, 0), dtype=bool)
        for column in (grid.index, grid.open, grid.close, grid.lo):
            changes |= column[1:] != column[:-1]
        first = np.concatenate([[0], np.flatnonzero(changes) + 1]) if n else np.empty(0, np.int64)
        length = np.diff(np.concatenate([first, [n]])) if n else np.empty(0, np.int64)
        self.segments.append((grid.index[first], grid.open[first], grid.close[first], grid.lo[first], length))
        self.grids.append(grid)
        self.runs.append(runs)
        self.count += 1
        self.entries += n + (len(runs[0]) if runs is not None else 0)

    def _buffer(self, key: str, size: int) -> Any:
        import numpy as np

        buffer = self._buffers.get(key)
        if buffer is None or len(buffer) < size:
            buffer = self._buffers[key] = np.empty(size, dtype=np.int64)
        return buffer[:size]

    def columns(self) -> Iterator[tuple[str, Any]]:
        """The file's arrays, one column at a time (docs/formats.md): ``own_runs``;
        ``offsets``, ``segment_offsets``, ``run_offsets`` (t0 i has evaluations
        ``offsets[i]:offsets[i + 1]``, and so on); the segments' columns; the evaluations'
        ``time``, ``sequence``, ``hi`` (`_packed_per_t0`); the own runs' columns."""
        import numpy as np

        def joined(parts: list[Any]) -> Any:
            return np.concatenate([np.asarray(p, dtype=np.int64) for p in parts]) if parts else np.empty(0, np.int64)

        def offsets_of(lengths: list[int]) -> Any:
            return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])

        offsets = offsets_of([len(g) for g in self.grids])
        yield "own_runs", np.asarray([r is not None for r in self.runs], dtype=np.int8)
        yield from _packed("offsets", offsets)
        yield from _packed("segment_offsets", offsets_of([len(s[0]) for s in self.segments]))
        for i, name in enumerate(SEGMENT_COLUMNS):
            yield from _packed(name, joined([s[i] for s in self.segments]))
        for name in EVALUATION_COLUMNS:
            column = self._buffer("column", int(offsets[-1]))
            if len(column):
                np.concatenate([getattr(g, name) for g in self.grids], out=column)
            yield from _packed_per_t0(name, column, offsets, steps=self._buffer("steps", len(column)))
        own = [r for r in self.runs if r is not None]
        yield from _packed("run_offsets", offsets_of([len(r[0]) if r is not None else 0 for r in self.runs]))
        for i, name in enumerate(RUN_COLUMNS):
            yield from _packed(name, joined([r[i] for r in own]))


def _save_npz(path: Path, arrays: Iterable[tuple[str, Any]], level: int = 1) -> None:
    """``numpy.savez_compressed`` of ``(name, array)`` pairs, each written as it comes, at
    zlib ``level`` (numpy's own is level 6, slower on these small-step columns); read by
    ``numpy.load``."""
    import zipfile

    import numpy as np

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=level, allowZip64=True) as zf:
        for name, array in arrays:
            with zf.open(name + ".npy", "w", force_zip64=True) as handle:
                np.lib.format.write_array(handle, np.asanyarray(array), allow_pickle=False)


class _MappingNumbers:
    """Numbers the distinct mappings of every t0 in order of first appearance and writes each
    once to ``mappings.jsonl``. A t0's runs carry the answer's own mapping indices; those of
    answers sharing one ``solution`` (every `DeltaAnswer` of one oracle) are translated with
    one array lookup, so a t0 costs no Python work per run — only per new mapping."""

    def __init__(self, handle: Any) -> None:
        import numpy as np

        self.handle = handle
        self.ids: dict[SolutionMapping, int] = {}
        self.source: Callable[[int], SolutionMapping] | None = None
        self.known = np.empty(0, dtype=np.int64)  # answer's mapping index -> number, -1 if not seen

    def of(self, mappings: Any, solution: Callable[[int], SolutionMapping]) -> Any:
        """The numbers of ``mappings`` (an answer's indices, resolved by ``solution``)."""
        import numpy as np

        mappings = np.asarray(mappings, dtype=np.int64)
        if solution != self.source:
            self.source, self.known = solution, np.empty(0, dtype=np.int64)
        if not len(mappings):
            return np.empty(0, dtype=np.int64)
        top = int(mappings.max()) + 1
        if top > len(self.known):
            self.known = np.concatenate([self.known, np.full(top - len(self.known), -1, np.int64)])
        new = mappings[self.known[mappings] < 0]
        if len(new):
            _, first = np.unique(new, return_index=True)
            lines = []
            for m in new[np.sort(first)].tolist():  # in order of first appearance
                mapping = solution(m)
                number = self.ids.get(mapping)
                if number is None:
                    number = self.ids[mapping] = len(self.ids)
                    lines.append(_mapping_line(mapping))
                self.known[m] = number
            self.handle.write("".join(lines))
        return self.known[mappings]


def _mapping_line(mapping: SolutionMapping) -> str:
    """``json.dumps(dict(sorted(mapping))) + "\\n"``, byte for byte, for the variable → term
    strings of a mapping, formatted without json.dumps's per-call machinery (one line per
    distinct mapping: 146,741 for YABench BIG)."""
    return "{" + ", ".join([_quoted(v) + ": " + _quoted(t) for v, t in sorted(mapping)]) + "}\n"


def _packed(name: str, column: Any) -> list[tuple[str, Any]]:
    """A column as its first value (``NAME__first``) and first differences (``NAME``) in the
    smallest integer type: grids move by small steps, so this is small and fast to compress."""
    import numpy as np

    column = np.asarray(column, dtype=np.int64)
    steps = np.diff(column) if len(column) else column
    first = np.asarray([column[0]] if len(column) else [], dtype=np.int64)
    return [(name + "__first", first), (name, steps.astype(_step_type(steps)))]


def _step_type(steps: Any) -> Any:
    """The smallest signed integer type that holds every step of ``steps`` (int64)."""
    import numpy as np

    if not len(steps):
        return np.int8
    # the type of -(largest step + 1) holds ±largest step (the type of -128 is int8, which cannot hold +128)
    return np.min_scalar_type(-max(abs(int(steps.min())), abs(int(steps.max())), 1) - 1)


def _packed_per_t0(name: str, column: Any, offsets: Any, steps: Any = None) -> list[tuple[str, Any]]:
    """`_packed` for the t0 that a grids file holds one after the other (t0 i at
    ``offsets[i]:offsets[i + 1]``): ``NAME__first`` the first value of each non-empty t0,
    ``NAME`` the steps within each t0 (0 at a t0's first entry) — a step from one t0's
    grid to the next would be as large as the stream and widen every step's type."""
    import numpy as np

    column = np.asarray(column, dtype=np.int64)
    starts = np.asarray(offsets[:-1], dtype=np.int64)[np.diff(offsets) > 0]
    steps = np.empty(len(column), dtype=np.int64) if steps is None else steps  # ``steps``: a buffer to reuse
    np.subtract(column[1:], column[:-1], out=steps[1:])
    steps[starts] = 0
    return [(name + "__first", column[starts]), (name, steps.astype(_step_type(steps)))]


def _unpacked_per_t0(data: Any, name: str, offsets: Any) -> Any:
    """`_packed_per_t0` undone: the int64 column."""
    import numpy as np

    offsets = np.asarray(offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    running = np.cumsum(data[name], dtype=np.int64)
    starts = offsets[:-1][lengths > 0]
    return np.repeat(data[name + "__first"] - running[starts], lengths[lengths > 0]) + running


def _unpacked(data: Any, name: str) -> Any:
    """`_packed` undone: the int64 column."""
    import numpy as np

    first = data[name + "__first"]
    if not len(first):
        return np.empty(0, dtype=np.int64)
    return np.concatenate([first, first[0] + np.cumsum(data[name], dtype=np.int64)])


def _refuse_if_too_big(where: Path, each: int, remaining: int, unit: str = "t0 files") -> None:
    """One line, before more is written, when ``remaining`` more t0 (files) of about ``each``
    bytes would not fit in 90 % of the free space of ``where``'s disk."""
    estimate = each * remaining
    free = shutil.disk_usage(where).free
    if estimate > 0.9 * free:
        raise UserError(f"the {remaining:,} remaining {unit} need about {_size(estimate)} ({_size(each)} each), "
                        f"{_size(free)} free: ask for fewer t0 (--t0 VALUE) or another --out disk",
                        file=str(where), field="--out")


def _size(count: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


def _grid_and_runs(answer: Any) -> tuple[Any, tuple[Any, Any, Any, Any], Callable[[int], SolutionMapping]]:
    """An answer's evaluation grid and presence runs (mapping, first, last, count) — from a
    `DeltaAnswer` directly, else by one pass over its relations."""
    import numpy as np

    from rsp_workbench.core.semantics import BorderConvention
    from rsp_workbench.oracle.deltas import EvaluationGrid

    if hasattr(answer, "runs"):
        runs = answer.runs
        return answer.grid, (runs.mapping, runs.first, runs.last, runs.count), answer.solution
    evaluations = answer.evaluations
    # without evaluations no window needs a border: any convention gives the same empty grid
    border = evaluations[0].window.border if len(evaluations) else BorderConvention.CLOSED_OPEN
    grid = EvaluationGrid.of(evaluations, border)
    ids: dict[SolutionMapping, int] = {}
    mappings: list[SolutionMapping] = []
    open_runs: dict[int, tuple[int, int]] = {}  # mapping -> (count, first)
    closed: list[tuple[int, int, int, int]] = []
    for j, relation in enumerate(answer.relations):
        now = {}
        for mapping, count in relation.items():
            m = ids.get(mapping)
            if m is None:
                m = ids[mapping] = len(mappings)
                mappings.append(mapping)
            now[m] = count
        for m, (count, first) in list(open_runs.items()):
            if now.get(m) != count:
                closed.append((m, first, j - 1, count))
                del open_runs[m]
        for m, count in now.items():
            if m not in open_runs:
                open_runs[m] = (count, j)
    closed += [(m, first, len(evaluations) - 1, count) for m, (count, first) in open_runs.items()]
    closed.sort()
    table = np.asarray(closed, dtype=np.int64).reshape(-1, 4)
    return grid, (table[:, 0], table[:, 1], table[:, 2], table[:, 3]), mappings.__getitem__


@dataclass
class _StoredRows:
    """``rows.npz`` read back, shaped as the `RowTable` fields `presence_runs` reads: a t0's
    runs are those rows over its grid, as the writer's oracle computed them."""

    row_of: Any
    pmin: Any  # shape (1, requirements): one window
    pmax: Any
    mapping_of: Any


class OracleOutput:
    """Reads an ``rspwb oracle --out`` folder back: any t0's full answer (`DeltaAnswer`).

    Reads both compact layouts (``runs``: a file per t0; ``grids``: the rows once, grids of
    consecutive t0 per file); the mappings are loaded once, a t0's file when asked for (the
    last grids file read is kept: t0 are usually read in order).
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        from rsp_workbench.core.semantics import R2S, BorderConvention

        self.folder = Path(folder)
        try:
            self.manifest = json.loads((self.folder / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise UserError(f"not a complete oracle output ({error})", file=str(self.folder)) from None
        if self.manifest.get("format") != FORMAT or self.manifest.get("status") != "complete":
            raise UserError("not a complete rspwb oracle output", file=str(self.folder / MANIFEST), field="format")
        self.layout = self.manifest.get("layout")
        if self.layout not in LAYOUTS:
            raise UserError("this output has per-t0 files (expected_t0_*.jsonl); read them directly"
                            if self.layout is None else f"unknown layout {self.layout!r} (a newer rspwb?)",
                            file=str(self.folder / MANIFEST), field="layout")
        self.t0_values = [tuple(v) for v in self.manifest["t0"]]
        self.r2s = R2S(self.manifest.get("r2s", "rstream"))
        self.empty_notification = bool(self.manifest.get("empty_notification", True))
        self.border = BorderConvention(self.manifest.get("border", "closed-open"))
        self._mappings: list[SolutionMapping] | None = None
        self._position = {vector: i for i, vector in enumerate(self.t0_values)}
        self._files: list[tuple[str, int]] = [(name, int(count)) for name, count in self.manifest.get("grid_files", [])]
        self._first = list(itertools.accumulate((count for _, count in self._files), initial=0))
        self._chunk: tuple[str, dict[str, Any]] | None = None
        self._rows: _StoredRows | None = None

    def mapping(self, m: int) -> SolutionMapping:
        if self._mappings is None:
            with open(self.folder / MAPPINGS, encoding="utf-8") as handle:
                self._mappings = [frozenset(json.loads(line).items()) for line in handle]
        return self._mappings[m]

    def answer(self, t0: Sequence[int] | int) -> Any:
        """The full answer of one t0: evaluations, relations, emissions (a `DeltaAnswer`)."""
        import numpy as np

        from rsp_workbench.oracle.deltas import DeltaAnswer, EvaluationGrid, PresenceRuns, presence_runs

        vector = (t0,) if isinstance(t0, int) else tuple(t0)
        if vector not in self._position:
            raise KeyError(vector)
        rows = None
        if self.layout == "runs":
            with np.load(self.folder / f"t0_{'-'.join(str(v) for v in vector)}.npz") as data:
                arrays = {name: _unpacked(data, name) for name in data.files if not name.endswith("__first")}
            own = True
        else:
            arrays, own = self._grids_entry(self._position[vector])
        grid = EvaluationGrid(arrays["time"], arrays["sequence"], arrays["start"], arrays["end"], arrays["index"],
                              arrays["lo"], arrays["hi"], self.border)
        if own:
            runs = PresenceRuns(grid, arrays["run_mapping"], arrays["run_first"], arrays["run_last"],
                                arrays["run_count"])
            make_runs: Callable[[], Any] = lambda: runs
        else:
            rows = self.rows()
            make_runs = lambda: presence_runs(rows, grid)
        return DeltaAnswer(vector, grid, make_runs, self.mapping, self.r2s, self.empty_notification, rows=rows)

    def rows(self) -> _StoredRows:
        """The annotated rows of a ``grids`` output (``rows.npz``), read once."""
        import numpy as np

        if self._rows is None:
            with np.load(self.folder / ROWS) as data:
                get = {name: _unpacked(data, name) for name in ("requirement_row", "pmin", "pmax", "row_mapping")}
            self._rows = _StoredRows(get["requirement_row"], get["pmin"][None, :], get["pmax"][None, :],
                                     get["row_mapping"])
        return self._rows

    def _grids_entry(self, position: int) -> tuple[dict[str, Any], bool]:
        """One t0's grid columns (and own runs) from its ``grids_*.npz`` file."""
        import numpy as np

        f = bisect.bisect_right(self._first, position) - 1
        name = self._files[f][0]
        if self._chunk is None or self._chunk[0] != name:
            self._chunk = None  # let the previous file's arrays go first
            with np.load(self.folder / name) as data:
                offsets = _unpacked(data, "offsets")
                self._chunk = (name, {key: data[key] if key == "own_runs" else
                                      _unpacked_per_t0(data, key, offsets) if key in EVALUATION_COLUMNS else
                                      _unpacked(data, key) for key in data.files if not key.endswith("__first")})
        columns = self._chunk[1]
        i = position - self._first[f]
        a, b = int(columns["offsets"][i]), int(columns["offsets"][i + 1])
        arrays = {name: columns[name][a:b] for name in EVALUATION_COLUMNS}
        a, b = int(columns["segment_offsets"][i]), int(columns["segment_offsets"][i + 1])
        length = columns["segment_length"][a:b]
        for name in ("index", "start", "end", "lo"):
            arrays[name] = np.repeat(columns["segment_" + name][a:b], length)
        own = bool(columns["own_runs"][i])
        if own:
            a, b = int(columns["run_offsets"][i]), int(columns["run_offsets"][i + 1])
            arrays.update({name: columns[name][a:b] for name in RUN_COLUMNS})
        return arrays, own
