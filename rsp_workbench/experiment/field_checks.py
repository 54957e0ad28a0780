"""The type and shape checks of experiment fields, each failing with a located ``UserError``.

Split from ``loader``: the ``Checker`` that every section's validation (``loader``,
``query_section``) calls to read a value as a mapping, list, text, number, duration, id,
existing path or SECRET semantics, naming FILE:LINE and the field path when it is not one.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Sequence

from rsp_workbench.core.semantics import SEMANTICS_FIELDS, EngineSemantics
from rsp_workbench.core.time import parse_duration
from rsp_workbench.errors import UserError, quoted, unknown_key_message
from rsp_workbench.experiment.source import SourceMap, join_path

ID_CHARACTERS = "letters, digits, '_', '-' and '.'"


def describe(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({quoted(value)})"
    if isinstance(value, str):
        return f"a string ({quoted(value)})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__} ({quoted(value)})"


def is_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


class Checker:
    """Type and shape checks that raise located errors."""

    def __init__(self, file: str | None, source: SourceMap, base_dir: Path) -> None:
        self.file = file
        self.source = source
        self.base_dir = base_dir

    def error(self, path: str, message: str, *, key: bool = False) -> UserError:
        return UserError(
            message, file=self.file, line=self.source.line(path, key=key), field=self.source.origin(path) or None
        )

    def mapping(
        self, value: Any, path: str, allowed: Sequence[str], required: Sequence[str] = (), *, what: str = "field"
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(path, f"expected a mapping, got {describe(value)}")
        for key in value:
            if not isinstance(key, str):
                raise self.error(join_path(path, key), f"field names must be text, got {quoted(key)}", key=True)
            if key not in allowed:
                raise self.error(join_path(path, key), unknown_key_message(key, allowed, what), key=True)
        for name in required:
            if value.get(name) is None:
                raise self.error(
                    join_path(path, name), "is required" if name not in value else "is required (got null)", key=True
                )
        return value

    def names(self, value: Any, path: str) -> dict[str, Any]:
        """A mapping keyed by free-form names (parameters, settings)."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(path, f"expected a mapping, got {describe(value)}")
        for key in value:
            if not isinstance(key, str):
                raise self.error(join_path(path, key), f"names must be text, got {quoted(key)}", key=True)
        return value

    def sequence(self, value: Any, path: str, *, nonempty: bool = False) -> list[Any]:
        if not isinstance(value, list):
            raise self.error(path, f"expected a list, got {describe(value)}")
        if nonempty and not value:
            raise self.error(path, "must not be empty")
        return value

    def string(self, value: Any, path: str, *, allow_empty: bool = False) -> str:
        if not isinstance(value, str):
            raise self.error(path, f"expected text, got {describe(value)}")
        if not allow_empty and not value.strip():
            raise self.error(path, "must not be empty")
        return value

    def integer(self, value: Any, path: str, *, minimum: int | None = None, maximum: int | None = None,
                why_maximum: str = "") -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(path, f"expected an integer, got {describe(value)}")
        if minimum is not None and value < minimum:
            raise self.error(path, f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise self.error(path, f"must be at most {maximum}" + (f" ({why_maximum})" if why_maximum else "")
                             + f", got {value}")
        return value

    def positive_number(self, value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(path, f"expected a number, got {describe(value)}")
        if value <= 0:
            raise self.error(path, f"must be positive, got {value}")
        return float(value)

    def boolean(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, f"expected true or false, got {describe(value)}")
        return value

    def choice(self, value: Any, path: str, choices: Sequence[str]) -> str:
        if not isinstance(value, str) or value not in choices:
            close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise self.error(path, f"{quoted(value)} is not one of {', '.join(choices)}{hint}")
        return value

    def duration(self, value: Any, path: str, *, positive: bool = False) -> int:
        try:
            millis = parse_duration(value, field=path)
        except UserError as error:
            raise self.error(path, error.message) from None
        if positive and millis <= 0:
            raise self.error(path, f"must be positive, got {quoted(value)}")
        return millis

    def identifier(self, value: Any, path: str) -> str:
        text = self.string(value, path)
        if not all(ch.isalnum() or ch in "_-." for ch in text) or not text[0].isalnum():
            raise self.error(path, f"{quoted(text)} is not a valid id; use {ID_CHARACTERS}, starting with a letter or digit (ids name result folders)")
        return text

    def existing(self, value: Any, path: str, *, directory: bool | None = False) -> Path:
        """A path relative to the experiment file that must exist (a file, a directory, or either)."""
        text = self.string(value, path)
        resolved = self.base_dir / text
        if not resolved.exists():
            raise self.error(path, f"not found: {text} (paths are relative to the experiment file)")
        if directory is True and not resolved.is_dir():
            raise self.error(path, f"expected a directory: {text}")
        if directory is False and not resolved.is_file():
            raise self.error(path, f"expected a file: {text}{_special(resolved)}")
        if directory is None and not (resolved.is_file() or resolved.is_dir()):
            # a FIFO nobody writes would block the run in open(), beyond the reach of Ctrl-C; a device never ends
            raise self.error(path, f"expected a file or a folder: {text}{_special(resolved)}")
        return resolved

    def semantics(self, value: Any, path: str, base: EngineSemantics) -> tuple[EngineSemantics, dict[str, Any]]:
        """SECRET parameters via ``EngineSemantics.with_overrides``; its errors get the full path and line."""
        overrides = self.names(value, path)
        for key in overrides:
            if key.replace("-", "_") not in SEMANTICS_FIELDS:
                raise self.error(join_path(path, key), unknown_key_message(key, SEMANTICS_FIELDS, "semantics parameter"), key=True)
        try:
            return base.with_overrides(overrides), dict(overrides)
        except UserError as error:
            field = error.field if error.field in overrides else None
            raise self.error(join_path(path, field) if field else path, error.message) from None


def _special(path: Path) -> str:
    """What a path that is neither a regular file nor a folder is, for errors."""
    if path.is_fifo():
        return " is a named pipe (FIFO); the workbench reads a stream several times, so it must be a file"
    if path.is_char_device() or path.is_block_device():
        return " is a device"
    if path.is_socket():
        return " is a socket"
    return ""
