"""A continuous query read from a file (or given as text), its template filled, parsed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from rsp_workbench.errors import UserError
from rsp_workbench.query.model import ContinuousQuery


def load_query(source: str | os.PathLike[str], *, syntax: str | None = None,
               variables: Mapping[str, str] | None = None, text: str | None = None) -> ContinuousQuery:
    """Read, fill (if it is a template: ``${NAME}``, ``%NAME%``) and parse a query.

    ``source`` names the file, in errors too; ``text``, when given, is its content (nothing is read).
    """
    from rsp_workbench.query.parser import parse_query
    from rsp_workbench.query.template import fill_template, template_variables

    path = os.fspath(source)
    if text is None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as error:
            raise UserError(f"cannot read query file: {error.strerror or error}", file=path) from None
        except UnicodeDecodeError:
            raise UserError("query file is not UTF-8 text", file=path) from None
    if template_variables(text, source=path) or "$${" in text:
        text = fill_template(text, dict(variables or {}), source=path)
    return parse_query(text, syntax=syntax, source=path)
