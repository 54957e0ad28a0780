"""An experiment's static data (Heaven's T) read into N-Triples term text, as engines and the oracle take it.

Shared by ``rspwb run`` (which hands it to every engine run) and the window timeline (which
recomputes the oracle on one window of a recorded run).
"""

from __future__ import annotations

from typing import Any

from rsp_workbench.errors import UserError
from rsp_workbench.experiment.model import Experiment


def load_static(experiment: Experiment) -> dict[str, Any]:
    """Static data (Heaven's T) as N-Triples term text: ``{"default": [...], "named": {g: [...]}}``."""
    if not experiment.static:
        return {"default": [], "named": {}}
    import rdflib

    formats = {"ntriples": "nt", "json-ld": "json-ld", "nquads": "nquads", "trig": "trig", "xml": "xml",
               "n3": "n3", "turtle": "turtle"}
    default: list[tuple[str, str, str]] = []
    named: dict[str, list[tuple[str, str, str]]] = {}
    for item in experiment.static:
        path = item.file  # the loader already resolved it against the experiment's folder
        fmt = formats.get(item.format, item.format)
        try:
            if fmt in ("nquads", "trig"):
                dataset = rdflib.Dataset()
                dataset.parse(str(path), format=fmt)
                triples = [(s, p, o) for s, p, o, _ in dataset.quads((None, None, None, None))]
            else:
                graph = rdflib.Graph()
                graph.parse(str(path), format=fmt)
                triples = list(graph)
        except Exception as error:  # rdflib raises many kinds
            raise _static_error(error, str(path), item.format) from None
        rows = [(s.n3(), p.n3(), o.n3()) for s, p, o in triples]
        if item.graph:
            named.setdefault(f"<{item.graph}>" if not item.graph.startswith("<") else item.graph, []).extend(rows)
        else:
            default.extend(rows)
    return {"default": default, "named": named}


def _static_error(error: Exception, path: str, fmt: str) -> UserError:
    """A static file that does not parse, in one line that never quotes the file's contents
    (rdflib's messages show the text around the fault): the reason, cut short, and the line."""
    why = getattr(error, "_why", None)  # rdflib's notation3 BadSyntax: the reason apart from the quoted text
    line = getattr(error, "lines", None)
    line = line + 1 if isinstance(line, int) else None
    if callable(getattr(error, "getLineNumber", None)):  # the XML parser's SAXParseException
        line = error.getLineNumber()  # type: ignore[attr-defined]
    if isinstance(why, str) and why.strip():
        reason = why.strip().splitlines()[0]
    elif isinstance(error, OSError):
        reason = error.strerror or type(error).__name__
    else:
        reason = f"not valid {fmt} ({type(error).__name__})"
    if len(reason) > 80:
        reason = reason[:79] + "…"
    return UserError(f"cannot read static data as {fmt}: {reason}", file=path, line=line, field="static")
