"""The folder ``rspwb run --out DIR`` writes a bundle into: claimed, locked, and cleared of our own files only.

A module of its own because it decides what may be deleted on the user's disk. The rules
(docs/result-bundle.md, "The output folder"):

* a missing or empty folder is ours to fill;
* a folder that holds a complete bundle of ours (a ``manifest.json`` in
  :data:`~rsp_workbench.results.bundle.BUNDLE_FORMAT`) is rerun into: only the entries a
  bundle consists of (:data:`BUNDLE_ENTRIES`) are replaced, every other file in it is kept;
* any other folder is refused, unless the caller forces it (``--force``): the bundle is then
  written into it, again replacing only :data:`BUNDLE_ENTRIES` and keeping the rest;
* one writer at a time: :func:`locked_bundle_folder` holds an exclusive lock on
  ``DIR/.rspwb-lock`` for the whole run, so a second concurrent run into ``DIR`` is refused
  with one line instead of the two corrupting each other's files.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Iterator

from rsp_workbench.errors import UserError
from rsp_workbench.files import PARTIAL
from rsp_workbench.results.bundle import (
    BUNDLE_FORMAT,
    EXPERIMENT_COPY,
    MANIFEST,
    RUNS_DIR,
    STREAMS_DIR,
    SUMMARY,
    YABENCH_DIR,
)

LOCK_FILE = ".rspwb-lock"
#: What a bundle consists of at its top level: the only names a rerun deletes.
BUNDLE_ENTRIES = (MANIFEST, SUMMARY, EXPERIMENT_COPY, STREAMS_DIR, RUNS_DIR, YABENCH_DIR)


def is_own_bundle(folder: Path) -> bool:
    """Whether ``folder`` holds a result bundle this workbench wrote (its manifest names our format)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(manifest, dict) and manifest.get("format") == BUNDLE_FORMAT


def check_out_folder(out: Path, *, force: bool) -> None:
    """`UserError` (naming ``--out``) unless a bundle may be written into ``out`` (see the module's rules)."""
    if out.exists() and not out.is_dir():
        raise UserError("exists and is not a folder", file=str(out), field="--out")
    if not out.is_dir() or force:
        return
    entries = [entry.name for entry in out.iterdir() if entry.name != LOCK_FILE]
    if entries and not is_own_bundle(out):
        raise UserError("the output folder exists and is not a result bundle of rspwb; choose an empty or new "
                        "folder, or pass --force to write the bundle into it (its other files are kept)",
                        file=str(out), field="--out")


@contextlib.contextmanager
def locked_bundle_folder(out: Path, *, force: bool = False) -> Iterator[Path]:
    """Claim ``out`` for one run: check it, lock it, clear the previous bundle's entries; unlock at the end.

    Nothing is created or deleted when the folder is refused or another run holds the lock.
    """
    check_out_folder(out, force=force)
    out.mkdir(parents=True, exist_ok=True)
    with _exclusive_lock(out / LOCK_FILE, out):
        for name in BUNDLE_ENTRIES:
            for path in (out / name, out / (name + PARTIAL)):
                _remove(path)
        yield out


def _remove(path: Path) -> None:
    """Delete one entry of the previous bundle (a link is removed, never followed)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


@contextlib.contextmanager
def _exclusive_lock(path: Path, out: Path) -> Iterator[None]:
    """Hold ``flock(LOCK_EX)`` on ``path`` (created if missing, removed at the end); a `UserError`
    at once if another process holds it. Where there is no ``fcntl``, no lock is taken."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not a POSIX system
        yield
        return
    while True:
        handle = open(path, "a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read(40).strip()
            handle.close()
            raise UserError(f"another rspwb run is writing this bundle{f' (pid {holder})' if holder.isdigit() else ''}; "
                            "wait for it to finish or choose another folder", file=str(out), field="--out") from None
        try:  # the file may have been removed (and recreated) by the previous holder between open and lock
            same = os.fstat(handle.fileno()).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        handle.close()
    try:
        handle.truncate(0)
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        handle.close()
