"""Opening a result bundle: the one way in, for own bundles and published YABench folders alike.

:func:`open_bundle` gives a :class:`~rsp_workbench.results.bundle.Bundle` for ``rspwb report``,
the API, the Results and Timeline views and the pipeline. Bad input is one `UserError` naming
the file: a folder that is neither a bundle nor a YABench test folder, a bundle another
``rspwb run`` is still writing (it holds the bundle's lock), a bundle of another format
version. Damaged run files do not stop it: their runs are ``unreadable`` rows and the files
are located ``problems``. ``partial=True`` (the Results browser, which shows a bundle while it
is written or after its writer crashed) also takes a running bundle and a damaged manifest,
rebuilding the rows from the run folders.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from rsp_workbench.errors import UserError
from rsp_workbench.files import PARTIAL
from rsp_workbench.results.bundle import (
    MANIFEST,
    RUN_SPEC_FILE,
    RUNS_DIR,
    SUMMARY,
    Bundle,
    check_format,
    own_rows,
    run_folder,
    tolerant_run_row,
)
from rsp_workbench.results.bundle_folder import LOCK_FILE
from rsp_workbench.results.json_files import read_json


def not_a_bundle(folder: str | os.PathLike[str]) -> UserError | None:
    """Why ``folder`` cannot be opened as a bundle at all (None if it can, even partly: a manifest,
    run folders or a published YABench folder)."""
    root = Path(folder)
    if not root.is_dir():
        return UserError("not a result bundle folder (no such directory)", file=str(root))
    if (root / MANIFEST).is_file() or (root / RUNS_DIR).is_dir() or _published(root):
        return None
    return UserError(f"not a result bundle (no {MANIFEST}, no {RUNS_DIR}/) nor a YABench test folder "
                     "(no config.json with a results/ folder)", file=str(root))


def _published(root: Path) -> bool:
    """A published YABench folder (`rsp_workbench.results.published.is_published`), whose reader — and the
    experiment package it reads ``config.json`` with — is imported only for a folder without a manifest:
    opening an own bundle stays a few imports (its tables are read in milliseconds)."""
    if (root / MANIFEST).is_file():
        return False
    from rsp_workbench.results.published import is_published

    return is_published(root)


def open_bundle(folder: str | os.PathLike[str], *, partial: bool = False) -> Bundle:
    """The bundle at ``folder`` (an own result bundle or a published YABench folder), its rows read,
    its runs' tables read when asked for."""
    root = Path(folder)
    refused = not_a_bundle(root)
    if refused is not None:
        raise refused
    if _published(root):
        from rsp_workbench.results.published import PUBLISHED, read_published

        published = read_published(root)
        return Bundle(root, published.name, PUBLISHED, published.rows, published.manifest,
                      published.notes, published.problems)
    if partial:
        return _partial_bundle(root)
    if not (root / MANIFEST).is_file():
        raise UserError(f"not a result bundle (no {MANIFEST}); its writer stopped before writing one",
                        file=str(root))
    manifest = read_json(root / MANIFEST)
    check_format(manifest, root)
    status = str(manifest.get("status", "running"))
    if status == "running" and writer_active(root):
        raise UserError("another rspwb run is still writing this bundle; open it when the run has finished",
                        file=str(root / MANIFEST), field="status")
    problems: list[UserError] = []
    try:
        rows = own_rows(root, manifest, problems)
    except (AttributeError, TypeError) as error:  # valid JSON of the wrong shape
        raise UserError(f"unexpected JSON structure in {MANIFEST} or {SUMMARY}: {error}", file=str(root)) from None
    return Bundle(root, str(manifest.get("name", "")), status, rows, manifest, _notes(root, manifest, status),
                  tuple(problems))


def writer_active(root: Path) -> bool:
    """Whether an ``rspwb run`` holds the bundle's lock (`rsp_workbench.results.bundle_folder`): a bundle
    whose manifest says ``running`` without one is a run whose writer stopped."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not a POSIX system: no lock is ever taken
        return False
    try:
        handle = open(root / LOCK_FILE, encoding="utf-8")
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def _notes(root: Path, manifest: Mapping[str, Any], status: str) -> tuple[str, ...]:
    """What a reader should know about a bundle that did not simply finish."""
    notes: list[str] = []
    if status == "running":
        notes.append("manifest.json says the run is still running (or its writer stopped): "
                     "the rows come from the run folders written so far")
    elif status == "cancelled":
        notes.append("the run was cancelled: runs that never started are listed as cancelled")
    elif status == "failed" and manifest.get("error"):
        notes.append(f"the run failed: {manifest['error']}")
    partial = sorted(p.name for p in (root / RUNS_DIR).glob(f"*{PARTIAL}")) if (root / RUNS_DIR).is_dir() else []
    if partial:
        notes.append(f"run folder(s) still being written: {', '.join(partial)}")
    return tuple(notes)


def _partial_bundle(root: Path) -> Bundle:
    """Read tolerantly: every problem becomes a located `UserError` in ``problems``, never an exception."""
    problems: list[UserError] = []
    notes: list[str] = []
    try:
        if not (root / MANIFEST).is_file():
            raise UserError(f"not a result bundle (no {MANIFEST})", file=str(root))
        manifest = read_json(root / MANIFEST)
        check_format(manifest, root)
        try:
            rows = own_rows(root, manifest, problems)
        except (AttributeError, TypeError) as error:  # valid JSON of the wrong shape
            raise UserError(f"unexpected JSON structure in {MANIFEST} or {SUMMARY}: {error}", file=str(root)) from None
        status, name = str(manifest.get("status", "running")), str(manifest.get("name", ""))
        if not all(isinstance(row, Mapping) for row in rows):
            problems.append(UserError("runs: expected a list of JSON objects", file=str(root / SUMMARY)))
            rows = tuple(row for row in rows if isinstance(row, Mapping))
    except UserError as error:
        problems.append(error)
        try:
            manifest = read_json(root / MANIFEST) if (root / MANIFEST).is_file() else {}
        except UserError:
            manifest = {}  # already reported
        if not isinstance(manifest, Mapping):
            problems.append(UserError("expected a JSON object", file=str(root / MANIFEST)))
            manifest = {}
        specs = [spec for spec in manifest.get("runs") or () if isinstance(spec, Mapping)]
        specs = _inside(root, specs, problems) or _specs_from_run_folders(root, problems)
        rows = tuple(tolerant_run_row(root, spec, problems) for spec in specs)
        status = str(manifest.get("status", "unreadable" if not manifest else "running"))
        name = str(manifest.get("name") or root.name)
        if rows:
            notes.append(f"{len(rows)} run(s) rebuilt from the run folders")
    notes += _notes(root, manifest, status)
    return Bundle(root, name, status, tuple(rows), manifest, tuple(notes), tuple(problems))


def _inside(root: Path, specs: Sequence[Mapping[str, Any]], problems: list[UserError]) -> list[Mapping[str, Any]]:
    """The run specs whose run folder lies inside the bundle; each other one is a problem, not a row."""
    kept = []
    for index, spec in enumerate(specs):
        try:
            run_folder(root, spec.get("run_id"), file=root / MANIFEST, field=f"runs[{index}].run_id")
        except UserError as error:
            if str(error) not in map(str, problems):
                problems.append(error)
            continue
        kept.append(spec)
    return kept


def _specs_from_run_folders(root: Path, problems: list[UserError]) -> list[Mapping[str, Any]]:
    """No manifest: the run specs of the complete run folders (``runs/*/run-spec.json``)."""
    specs: list[Mapping[str, Any]] = []
    for spec_file in sorted((root / RUNS_DIR).glob(f"*/{RUN_SPEC_FILE}")):
        if spec_file.parent.name.endswith(PARTIAL):
            continue
        try:
            spec = read_json(spec_file)
        except UserError as error:
            problems.append(error)
            continue
        specs.append({**spec, "run_id": spec_file.parent.name})  # the folder it is in, whatever the file says
    return specs
