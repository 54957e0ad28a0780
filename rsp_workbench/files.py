"""Files written atomically: ``NAME.partial`` then a rename, so no reader ever sees half a file.

The lowest room: result bundles and the oracle's ``--out`` folders both write through it (a
generic concern, so neither has to import the other).
"""

from __future__ import annotations

import itertools
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

#: The suffix of a file being written; renamed away when complete.
PARTIAL = ".partial"


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` via ``path.partial`` + rename (never a half-written ``path``)."""
    write_lines_atomic(path, (text,))


def write_lines_atomic(path: str | os.PathLike[str], pieces: Iterable[str]) -> None:
    """Write the concatenated ``pieces`` to ``path`` via ``path.partial`` + rename, holding a
    few MB of them at a time (a run's per-window files grow with the stream)."""
    target = Path(path)
    partial = target.with_name(target.name + PARTIAL)
    try:
        with open(partial, "w", encoding="utf-8") as handle:
            batch: list[str] = []
            for piece in pieces:
                batch.append(piece)
                if len(batch) >= _WRITE_BATCH:
                    handle.write("".join(batch))
                    batch.clear()
            handle.write("".join(batch))
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, target)


_WRITE_BATCH = 65_536  # pieces joined per write: few syscalls, bounded memory


@dataclass(frozen=True)
class JsonRows:
    """A JSON array that is written row by row from ``rows()`` and never built (a top-level
    value of :func:`write_json_atomic`'s object): ``oracle.json``'s windows of a long run."""

    rows: Callable[[], Iterable[Any]]
    count: int

    def __len__(self) -> int:
        return self.count


def write_json_atomic(path: str | os.PathLike[str], payload: Any) -> None:
    """``json.dumps(payload, indent=2)`` + newline, atomically, encoded piece by piece: the
    text of a long-stream ``oracle.json`` (one entry per window) is never held whole, nor,
    for a `JsonRows` value, the entries themselves."""
    write_lines_atomic(path, itertools.chain(_json_pieces(json_safe(payload)), ("\n",)))


def _json_pieces(value: Any, level: int = 0) -> Iterator[str]:
    """The text of ``json.dumps(value, indent=2)`` nested at ``level``, in pieces."""
    if isinstance(value, dict) and any(isinstance(item, JsonRows) for item in value.values()):
        if not value:
            yield "{}"
            return
        inner = "\n" + "  " * (level + 1)
        yield "{"
        for index, (key, item) in enumerate(value.items()):
            yield ("," if index else "") + inner + json.dumps(key) + ": "
            yield from _json_pieces(item, level + 1)
        yield "\n" + "  " * level + "}"
    elif isinstance(value, JsonRows):
        inner = "\n" + "  " * (level + 1)
        written = 0
        flat = json.JSONEncoder(separators=("," + inner + "  ", ": "))
        for row in value.rows():
            yield ("," if written else "[") + inner
            row = json_safe(row)
            if type(row) is dict and row and _SCALARS.issuperset(map(type, row.values())):
                # a flat row (a window's numbers) through the C encoder: the same text, 3x faster
                yield "{" + inner + "  " + flat.encode(row)[1:-1] + inner + "}"
            else:
                yield from _json_pieces(row, level + 1)
            written += 1
        yield "\n" + "  " * level + "]" if written else "[]"
    else:
        pieces = _ENCODER.iterencode(value)
        if level == 0:
            yield from pieces
        else:
            indent = "\n" + "  " * level
            for piece in pieces:
                yield piece.replace("\n", indent) if "\n" in piece else piece


_ENCODER = json.JSONEncoder(indent=2)
_SCALARS = frozenset((str, int, float, bool, type(None)))


def json_safe(value: Any) -> Any:
    """JSON-safe: NaN/inf become null, paths become strings, mappings dicts with string keys.

    Copies only what changes (the payload of a long run holds millions of window entries)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:  # the common case, before the ABC checks
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if kind is dict or isinstance(value, Mapping):
        copy: dict[str, Any] | None = None
        for index, (key, item) in enumerate(value.items()):
            cleaned = json_safe(item)
            if copy is None and (cleaned is not item or type(key) is not str):
                copy = dict(itertools.islice(value.items(), index))
            if copy is not None:
                copy[str(key)] = cleaned
        if copy is not None:
            return copy
        return value if isinstance(value, dict) else dict(value)
    if isinstance(value, (list, tuple)):
        items: list[Any] | None = None
        for index, item in enumerate(value):
            cleaned = json_safe(item)
            if items is None and cleaned is not item:
                items = list(value[:index])
            if items is not None:
                items.append(cleaned)
        return value if items is None else items
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value
