"""A run's ``oracle.json`` read in bounded memory (docs/result-bundle.md, "oracle.json").

The verdict fields of ``oracle.json`` are small, but its ``windows`` list has one entry per
evaluation: a content-change run over YABench BIG holds 2.1 M of them (~560 MB of text,
several GB as Python objects when read with ``json.load``). :func:`read_oracle` reads the
file in chunks and gives back every top-level field but ``windows``, the number of windows,
and only the per-window columns a caller asks for, straight into numpy arrays.

The windows are decoded a few MB at a time: the text up to the last ``},`` of a chunk is
decoded as one JSON array by orjson (in the writer's layout that is a run of whole
windows; if the cut falls elsewhere, or orjson refuses something ``json`` accepts such as
``NaN``, those windows are decoded one by one with ``json``'s own decoder instead), so any
valid JSON layout reads the same as with ``json.load``. Bad JSON gives the message, line
and column ``json.load`` gives, as :func:`rsp_workbench.results.json_files.read_json`'s
`UserError`; a window without a column the caller needs names the field
(``windows[i].key``), once the whole file has been read (bad JSON further on comes first,
as with ``json.load``).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, Mapping

import numpy as np
import orjson

from rsp_workbench.errors import UserError
from rsp_workbench.results.json_files import json_file_errors, read_json

ColumnKind = Literal["int", "number", "optional"]
"""``int``: an integer in every window (int64); ``number``: a number in every window
(float64); ``optional``: a number or null/absent (float64, NaN where null)."""

CHUNK_CHARS = 1 << 22  # text read at a time: 4 M characters (the windows of one decoding step)
_BATCH_WINDOWS = 32_768  # windows turned into columns at a time
_MARGIN = 64  # a value ending (or failing) this close to the end of the text read may go on in the next chunk
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_NUMBER_TYPES = frozenset((int, float, bool))
_OPTIONAL_TYPES = _NUMBER_TYPES | {type(None)}
_INT_TYPES = frozenset((int, bool))


@dataclass(frozen=True)
class OracleFile:
    """What :func:`read_oracle` found: the fields, the window count and the requested columns."""

    path: Path
    fields: dict[str, Any]  # every top-level field except ``windows``
    window_count: int | None  # None: no ``windows`` (or null)
    columns: dict[str, np.ndarray] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)


def read_oracle(path: str | os.PathLike[str], columns: Mapping[str, ColumnKind] | None = None, *,
                progress: Callable[[float], None] | None = None) -> OracleFile:
    """``oracle.json`` without materialising its ``windows``: their count, and ``columns`` of them.

    ``progress(fraction_of_the_file)`` is called per chunk (it may raise to cancel). A file
    that is not a JSON object, or not valid JSON, raises the `UserError` of
    :func:`rsp_workbench.results.json_files.read_json`."""
    file = Path(path)
    wanted = dict(columns or {})
    with json_file_errors(file):
        size = file.stat().st_size
        with open(file, encoding="utf-8") as handle:
            text = _ChunkedText(handle, size, progress)
            if text.peek() != "{":  # not an object (or empty, or a BOM): the reader of every bundle file says why
                return OracleFile(file, read_json(file), None)
            return _read_object(text, file, wanted)


class _ChunkedText:
    """A window onto the file's text: ``buffer`` holds the characters from absolute offset
    ``base`` on; ``pos`` is relative to ``buffer``. Positions in errors are absolute (as in
    ``json.loads`` of the whole text), with their line and column."""

    def __init__(self, handle: Any, size: int, progress: Callable[[float], None] | None) -> None:
        self.handle = handle
        self.size = max(size, 1)
        self.progress = progress
        self.buffer = ""
        self.pos = 0
        self.base = 0
        self.lines_before = 0  # newlines before ``base``
        self.last_newline = -1  # absolute offset of the last newline before ``base``
        self.eof = False
        self.read_chars = 0

    def more(self) -> bool:
        """Drop what was consumed and append the next chunk; False at the end of the file."""
        if self.eof:
            return False
        chunk = self.handle.read(CHUNK_CHARS)
        if not chunk:  # the buffer (and positions into it) stay as they are
            self.eof = True
            return False
        consumed = self.buffer[:self.pos]
        newlines = consumed.count("\n")
        if newlines:
            self.lines_before += newlines
            self.last_newline = self.base + consumed.rfind("\n")
        self.base += self.pos
        self.buffer = self.buffer[self.pos:] + chunk
        self.pos = 0
        self.read_chars += len(chunk)
        if self.progress is not None:
            self.progress(min(1.0, self.read_chars / self.size))  # characters of bytes: exact for ASCII
        return True

    def peek(self) -> str:
        """The next character that is not whitespace ('' at the end of the file), not consumed."""
        while True:
            blank = _WHITESPACE.match(self.buffer, self.pos)
            assert blank is not None  # the pattern matches the empty string
            self.pos = blank.end()
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if not self.more():
                return ""

    def error(self, message: str, at: int | None = None) -> json.JSONDecodeError:
        """``json.JSONDecodeError`` at buffer position ``at`` (default ``pos``), located in the whole text."""
        relative = self.pos if at is None else at
        error = json.JSONDecodeError(message, "", 0)
        head = self.buffer[:relative]
        newlines = head.count("\n")
        error.pos = self.base + relative
        error.lineno = self.lines_before + newlines + 1
        last = self.base + head.rfind("\n") if newlines else self.last_newline
        error.colno = error.pos - last
        error.args = (f"{message}: line {error.lineno} column {error.colno} (char {error.pos})",)
        return error

    def value(self) -> Any:
        """Decode the JSON value at ``pos`` (after whitespace), reading on while it may continue."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as error:
                if self._may_continue(error) and self.more():
                    continue
                raise self.error(error.msg, error.pos) from None
            if end > len(self.buffer) - _MARGIN and self.more():  # a number ("0." of "0.875") may go on
                continue
            self.pos = end
            return value

    def _may_continue(self, error: json.JSONDecodeError) -> bool:
        """Whether the decoding failed because the text ends in this buffer (not in the file)."""
        return (error.msg.startswith("Unterminated string") or error.pos > len(self.buffer) - _MARGIN
                or self.buffer[error.pos:].isspace())

    def expect(self, allowed: str, message: str) -> str:
        """Consume the next non-space character if it is one of ``allowed``, else the error json gives."""
        char = self.peek()
        if not char or char not in allowed:
            raise self.error(message)
        self.pos += 1
        return char


def _read_object(text: _ChunkedText, file: Path, columns: Mapping[str, ColumnKind]) -> OracleFile:
    """The top-level object, as ``json``'s object decoder reads it (same messages, same positions)."""
    text.expect("{", "Expecting value")
    fields: dict[str, Any] = {}
    count: int | None = None
    found: dict[str, np.ndarray] | UserError = _no_windows(columns)
    if text.peek() == "}":
        text.pos += 1
    else:
        while True:
            if text.peek() != '"':
                raise text.error("Expecting property name enclosed in double quotes")
            key = text.value()
            text.expect(":", "Expecting ':' delimiter")
            if key == "windows" and text.peek() == "[":
                fields.pop("windows", None)
                count, found = _read_windows(text, file, columns)
            else:
                fields[key] = text.value()
                if key == "windows":
                    count, found = _windows_value(fields.pop(key), file, columns)
            if text.expect(",}", "Expecting ',' delimiter") == "}":
                break
    if text.peek():
        raise text.error("Extra data")
    if isinstance(found, UserError):
        raise found
    return OracleFile(file, fields, count, found)


def _windows_value(value: Any, file: Path,
                   columns: Mapping[str, ColumnKind]) -> tuple[int | None, dict[str, np.ndarray] | UserError]:
    """``windows`` that is not an array: null (or another empty value) is no windows, anything else
    is an error."""
    if not value:
        return None, _no_windows(columns)
    return None, UserError("expected a list of windows", file=str(file), field="windows")  # raised after the parse


def _read_windows(text: _ChunkedText, file: Path,
                  columns: Mapping[str, ColumnKind]) -> tuple[int, dict[str, np.ndarray] | UserError]:
    """The ``windows`` array from its ``[``: decoded a chunk at a time, collected into columns
    (or the first window that lacks one, raised by the caller once the file is read whole)."""
    collector = _Columns(file, columns, lambda: (text.base + text.pos) / text.size)
    text.expect("[", "Expecting value")
    if text.peek() == "]":
        text.pos += 1
        return 0, collector.arrays()
    one_by_one_until = -1  # absolute offset: a chunk that did not decode whole is read window by window
    while True:
        if text.peek() == "":
            raise text.error("Expecting value")
        if len(text.buffer) - text.pos < CHUNK_CHARS // 2:
            text.more()
        cut = text.buffer.rfind("},", text.pos)
        if cut > text.pos and text.base + text.pos > one_by_one_until:
            try:
                windows = orjson.loads("[" + text.buffer[text.pos:cut + 1] + "]")
            except (orjson.JSONDecodeError, RecursionError):  # json's own decoder, window by window, says why
                one_by_one_until = text.base + cut
            else:
                text.pos = cut + 1
                collector.add(windows)
                text.expect(",", "Expecting ',' delimiter")  # always there: the cut is before a comma
                continue
        collector.add((text.value(),))
        if text.expect(",]", "Expecting ',' delimiter") == "]":
            collector.flush()
            return collector.count, collector.problem or collector.arrays()


def _no_windows(columns: Mapping[str, ColumnKind]) -> dict[str, np.ndarray]:
    return {name: np.empty(0, dtype=_dtype(kind)) for name, kind in columns.items()}


def _dtype(kind: ColumnKind) -> type:
    return np.int64 if kind == "int" else np.float64


class _Columns:
    """Windows turned into numpy columns a batch at a time (with the checks the views need)."""

    def __init__(self, file: Path, columns: Mapping[str, ColumnKind], read_fraction: Callable[[], float]) -> None:
        self.file = file
        self.columns = dict(columns)
        self.read_fraction = read_fraction
        self.count = 0
        self.problem: UserError | None = None  # the first window without a column's value
        self.pending: list[Any] = []
        self.storage: dict[str, np.ndarray] = {name: np.empty(0, dtype=_dtype(kind)) for name, kind in columns.items()}

    def add(self, windows: Iterable[Any]) -> None:
        self.pending.extend(windows)
        if len(self.pending) >= _BATCH_WINDOWS:
            self.flush()

    def flush(self) -> None:
        batch, self.pending = self.pending, []
        end = self.count + len(batch)
        if batch and self.columns and self.problem is None:
            try:
                self._collect(batch, end)
            except UserError as problem:  # raised once the whole file is read: bad JSON further on comes first
                self.problem = problem
        self.count = end

    def _collect(self, batch: list[Any], end: int) -> None:
        if set(map(type, batch)) != {dict}:
            index = next(i for i, w in enumerate(batch) if not isinstance(w, dict))
            raise UserError(f"window {self.count + index} is not a JSON object", file=str(self.file),
                            field=f"windows[{self.count + index}]")
        self._reserve(end)
        for name, kind in self.columns.items():
            values = [w.get(name) for w in batch]
            allowed = _INT_TYPES if kind == "int" else _NUMBER_TYPES if kind == "number" else _OPTIONAL_TYPES
            if not allowed.issuperset(map(type, values)):
                self._bad(batch, name, kind, allowed)
            try:
                self.storage[name][self.count:end] = values
            except OverflowError:
                index = next(i for i, v in enumerate(values) if isinstance(v, int) and not -2**63 <= v < 2**63)
                raise UserError(f"window {self.count + index}: {name!r} is out of range", file=str(self.file),
                                field=f"windows[{self.count + index}].{name}") from None

    def _reserve(self, needed: int) -> None:
        """Room for ``needed`` windows: the count the file's size suggests (one allocation per
        column in the writer's layout, not a list of parts joined at the end)."""
        capacity = len(next(iter(self.storage.values()), ()))
        if not self.storage or needed <= capacity:
            return
        estimate = int(needed / max(self.read_fraction(), 1e-3) * 1.05) + _BATCH_WINDOWS
        capacity = max(estimate, needed, capacity + capacity // 2)
        for name, column in self.storage.items():
            grown = np.empty(capacity, dtype=column.dtype)
            grown[:self.count] = column[:self.count]
            self.storage[name] = grown

    def _bad(self, batch: list[dict[str, Any]], name: str, kind: ColumnKind, allowed: frozenset[type]) -> None:
        index = next(i for i, w in enumerate(batch) if type(w.get(name)) not in allowed)
        value = batch[index].get(name)
        file, field = str(self.file), f"windows[{self.count + index}].{name}"
        if value is None:
            raise UserError(f"window {self.count + index} has no {name!r}", file=file, field=field)
        expected = "an integer" if kind == "int" else "a number"
        raise UserError(f"window {self.count + index}: {name!r} is not {expected}: {value!r}", file=file, field=field)

    def arrays(self) -> dict[str, np.ndarray]:
        """The columns (views of the storage: a copy only where much of it is unused)."""
        self.flush()
        arrays = {}
        for name in self.columns:
            column = self.storage.pop(name)
            arrays[name] = column[:self.count].copy() if len(column) > self.count * 1.25 + 1024 else column[:self.count]
            del column
        return arrays


__all__ = ["CHUNK_CHARS", "ColumnKind", "OracleFile", "read_oracle"]
