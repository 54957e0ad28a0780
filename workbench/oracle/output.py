"""Expected answers written to a folder (``rspwb oracle --out DIR``, docs/formats.md).

The folder is built as ``DIR.partial/`` and renamed to ``DIR`` only once every file is
written and ``manifest.json`` (``"status": "complete"``, the file list) is in it. A run
that is interrupted (Ctrl-C), cancelled or fails removes its ``DIR.partial/`` and leaves an
earlier ``DIR`` untouched, so no half-written result ever looks complete.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from workbench.results.bundle import write_json_atomic, write_text_atomic
from workbench.errors import UserError

MANIFEST = "manifest.json"
FORMAT = "rspwb-oracle/1"
PARTIAL = ".partial"


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

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> bool:
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


def _is_oracle_output(folder: Path) -> bool:
    try:
        return json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False


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
) -> list[str]:
    """Write ``expected_t0_*.jsonl`` and ``windows_t0_*.json`` per t0 vector (+ YABench files).

    ``answers[vector]`` is an `ExpectedAnswer`; ``yabench_runs`` (per-window quality per
    repeated run) adds ``ORACLE_{name}_{run}`` and ``BOXPLOTS_{name}``. ``cancelled`` is
    polled between files (`OutputCancelled`); either way the folder stays consistent.
    Returns the files written.
    """
    from workbench.oracle.quality import boxplots_text
    from workbench.oracle.run import windows_summary

    with StagedFolder(out, manifest, after_file) as folder:
        def check() -> None:
            if cancelled is not None and cancelled():
                raise OutputCancelled(f"writing {out} was cancelled")

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
