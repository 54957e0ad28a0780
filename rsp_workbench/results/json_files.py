"""A result bundle's JSON files read with clear errors (file, line, column): shared by
:mod:`rsp_workbench.results.bundle` and :mod:`rsp_workbench.results.oracle_file` (which reads the one
file that can be too large to load whole)."""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from rsp_workbench.errors import UserError


def read_json(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A bundle's JSON file (each is one object); anything else is a `UserError` naming the file."""
    with json_file_errors(path):
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(document, dict):
        raise UserError(f"expected a JSON object, found a {type(document).__name__}", file=str(path))
    return document


@contextmanager
def json_file_errors(path: str | os.PathLike[str]) -> Iterator[None]:
    """Reading a bundle's JSON file: what goes wrong becomes a `UserError` naming the file (and line)."""
    try:
        yield
    except FileNotFoundError:
        raise UserError("no such file", file=str(path)) from None
    except json.JSONDecodeError as error:
        raise UserError(f"not valid JSON: {error.msg}", file=str(path), line=error.lineno, column=error.colno) from None
    except UnicodeDecodeError:
        raise UserError("not valid JSON: not UTF-8 text", file=str(path)) from None
    except RecursionError:
        raise UserError("not a bundle file: JSON nested too deeply", file=str(path)) from None
    except OSError as error:  # a directory, unreadable
        raise UserError(f"cannot read: {error.strerror or error}", file=str(path)) from None


__all__ = ["json_file_errors", "read_json"]
