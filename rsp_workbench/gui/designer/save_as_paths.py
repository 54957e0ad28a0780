"""The path fields of an experiment document, and moving them when the file moves.

Paths in an experiment file are relative to the file (docs/experiment-format.md), so
"Save as" into another folder must rewrite them or the copy no longer finds its query
files, recorded streams, static data or engine files. Which fields hold paths: a stream's
``file`` (``stream`` or each of ``streams``), each query's ``file``, each ``static`` entry,
and the engine parameters whose kind is ``file`` or ``directory`` (``ENGINE_PARAMETERS``:
``tbox``, ``likelihoods``, ``training``, ``cwd``, …) — at the top level and inside every
size's overrides.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

FieldPath = tuple[str | int, ...]  # as in the designer's model, which imports this module


@dataclass(frozen=True)
class MovedPath:
    """One path field rewritten for the new folder."""

    field: FieldPath
    old: str
    new: str


def path_fields(raw: Any) -> Iterator[FieldPath]:
    """Every field of ``raw`` that holds a path relative to the experiment file, in file order."""
    if not isinstance(raw, dict):
        return
    yield from _document_paths(raw, (), raw)
    sizes = raw.get("sizes")
    for name, size in sizes.items() if isinstance(sizes, dict) else ():
        if isinstance(size, dict):
            yield from _document_paths(size, ("sizes", name), raw)


def _document_paths(node: dict[str, Any], prefix: FieldPath, root: dict[str, Any]) -> Iterator[FieldPath]:
    from rsp_workbench.experiment.runs import ENGINE_PARAMETERS

    stream = node.get("stream")
    if isinstance(stream, dict) and "file" in stream:
        yield (*prefix, "stream", "file")
    streams = node.get("streams")
    for iri, item in streams.items() if isinstance(streams, dict) else ():
        if isinstance(item, dict) and "file" in item:
            yield (*prefix, "streams", iri, "file")
    queries = node.get("queries")
    for index, query in enumerate(queries if isinstance(queries, list) else []):
        if isinstance(query, dict) and "file" in query:
            yield (*prefix, "queries", index, "file")
    static = node.get("static")
    for index, entry in enumerate(static if isinstance(static, list) else []):
        if isinstance(entry, str):
            yield (*prefix, "static", index)
        elif isinstance(entry, dict) and "file" in entry:
            yield (*prefix, "static", index, "file")
    engines = node.get("engines")
    given = root.get("engines")
    base_engines: list[Any] = given if isinstance(given, list) else []
    for index, engine in enumerate(engines if isinstance(engines, list) else []):
        if not isinstance(engine, dict) or not isinstance(engine.get("parameters"), dict):
            continue
        engine_type = engine.get("type")
        if engine_type is None and index < len(base_engines) and isinstance(base_engines[index], dict):
            engine_type = base_engines[index].get("type")  # a size overriding only some fields
        kinds = ENGINE_PARAMETERS.get(str(engine_type), {})
        for name in engine["parameters"]:
            if kinds.get(name, ("",))[0] in ("file", "directory"):
                yield (*prefix, "engines", index, "parameters", name)


def moved_paths(raw: Any, old_folder: Path, new_folder: Path) -> tuple[dict[str, Any], list[MovedPath]]:
    """``raw`` with every relative path rewritten to name the same file from ``new_folder``.

    Absolute paths, templates that start with ``${…}`` (the variable decides the folder) and
    non-text values are left alone.
    """
    old_folder, new_folder = old_folder.resolve(), new_folder.resolve()
    result = copy.deepcopy(raw)
    moved: list[MovedPath] = []
    if old_folder == new_folder:
        return result, moved
    for field in list(path_fields(result)):
        value = _get(result, field)
        if not isinstance(value, str) or not value.strip() or value.startswith("${") or os.path.isabs(value):
            continue
        new = Path(os.path.relpath(os.path.normpath(old_folder / value), new_folder)).as_posix()
        if new != value:
            _put(result, field, new)
            moved.append(MovedPath(field, value, new))
    return result, moved


def _get(node: Any, field: FieldPath) -> Any:
    for key in field:
        node = node[key]
    return node


def _put(node: Any, field: FieldPath, value: Any) -> None:
    for key in field[:-1]:
        node = node[key]
    node[field[-1]] = value
