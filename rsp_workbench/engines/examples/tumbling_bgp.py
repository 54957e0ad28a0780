#!/usr/bin/env python3
"""A complete external RSP engine in one file: tumbling windows + SPARQL over rdflib, Rstream out.

It runs on the Python wrapping kit (`rsp_workbench.engines.kit.python`, standard library only: copy
it next to an engine that lives elsewhere), which speaks the JSON-lines protocol of
``docs/engine-protocol.md`` on stdin/stdout; the engine writes only:

- ``register``: read the query; raise ``EngineError`` if it cannot run it (the kit sends
  the fatal ``error``), else the kit answers ``ready``.
- ``push``: add the elements to the open window; a stimulus at or after the window's end
  first closes the window(s) before it (``emit`` each answer; the kit sends ``done``).
- ``advance``: application time reached ``t``: close the windows that end at or before it.
- ``close``: nothing is left open at the end here (the kit answers and exits 0).

Semantics (say what your engine does: the oracle compares against it):

- Tumbling windows ``[t0 + k·ω, t0 + (k+1)·ω)`` (closed-open), ω = the RANGE of the query's
  one ``FROM NAMED WINDOW <w> ON <s> [RANGE … STEP …]`` clause (RSP-QL; STEP must equal
  RANGE here) or ``parameters.window_ms`` for a plain SPARQL query; t0 =
  ``parameters.t0``, else the register message's ``semantics.t0``, else 0.
- Report at window close; Rstream (``"operation": "="``) of the query's answer over the
  window content; a window without results is reported only with
  ``parameters.report_empty: true`` (as ``"bindings": []``). A response's ``t`` is the
  window's close time.
- The query is evaluated by rdflib over the window content in the default graph: the
  ``FROM NAMED WINDOW`` clause is removed and ``WINDOW <w> { … }`` becomes ``{ … }``.

Run ``python3 tumbling_bgp.py`` and type protocol lines to try it by hand; ``print`` goes
to stderr (the kit keeps stdout for protocol lines only).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

try:
    from rsp_workbench.engines.kit.python import EngineError, WrappedEngine, serve
except ImportError:  # run from a checkout without the workbench installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from rsp_workbench.engines.kit.python import EngineError, WrappedEngine, serve

_WINDOW_CLAUSE = re.compile(
    r"FROM\s+NAMED\s+WINDOW\s+(\S+)\s+ON\s+(\S+)\s*\[\s*RANGE\s+(\S+)(?:\s+STEP\s+(\S+))?\s*\]", re.IGNORECASE
)
_WINDOW_GROUP = re.compile(r"\bWINDOW\s+(?:<[^>]*>|[A-Za-z0-9_.-]*:[A-Za-z0-9_.-]*|\?\w+)\s*\{", re.IGNORECASE)
_DURATION = re.compile(r"^PT(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?$", re.IGNORECASE)


class QueryError(Exception):
    """The query is one this engine cannot run (reported as a fatal protocol error)."""


def duration_ms(text: str) -> int:
    """An xsd:duration like ``PT10S`` / ``PT1.5S`` / ``PT1M`` in milliseconds."""
    match = _DURATION.match(text)
    if not match or not any(match.groups()):
        raise QueryError(f"cannot read the window duration {text!r} (expected e.g. PT10S)")
    hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    return int(round(((hours * 60 + minutes) * 60 + seconds) * 1000))


def plan(query_text: str, parameters: dict[str, Any]) -> tuple[str, int]:
    """The plain SPARQL to evaluate per window and the window size ω (ms)."""
    clauses = _WINDOW_CLAUSE.findall(query_text)
    if len(clauses) > 1:
        raise QueryError("this example engine supports one window")
    if clauses:
        _, _, size, step = clauses[0]
        width = duration_ms(size)
        if step and duration_ms(step) != width:
            raise QueryError("this example engine runs tumbling windows only (STEP must equal RANGE)")
        sparql = _WINDOW_GROUP.sub("{", _WINDOW_CLAUSE.sub("", query_text))
    else:
        width = int(parameters.get("window_ms", 0) or 0)
        if width <= 0:
            raise QueryError("no FROM NAMED WINDOW clause: set parameters.window_ms")
        sparql = query_text
    if width <= 0:
        raise QueryError("the window range must be positive")
    return sparql, width


class TumblingEngine(WrappedEngine):
    """Window state and evaluation; the kit (`rsp_workbench.engines.kit.python`) speaks the protocol."""

    def register(self, query: Mapping[str, Any], engine: Mapping[str, Any], static: Mapping[str, Any]) -> dict[str, Any]:
        from rdflib.plugins.sparql import prepareQuery

        parameters = engine.get("parameters") or {}
        semantics = engine.get("semantics") or {}
        try:
            sparql, self.width = plan(query["text"], parameters)
        except QueryError as error:
            raise EngineError(str(error)) from None
        try:
            self.query = prepareQuery(sparql)
        except Exception as error:  # rdflib raises pyparsing errors
            raise EngineError(f"rdflib cannot parse the query: {error}") from None
        if self.query.algebra.name != "SelectQuery":
            raise EngineError("this example engine answers SELECT queries only")
        t0 = parameters.get("t0", semantics.get("t0"))
        self.t0 = int(t0) if t0 is not None else 0
        self.report_empty = bool(parameters.get("report_empty", False))
        self.static = [list(t) for t in static.get("default", [])]
        self.window_end: int | None = None  # end of the open window
        self.content: list[list[str]] = []
        return {"engine": "tumbling-bgp example"}

    def _end_of(self, t: int) -> int:
        return self.t0 + ((t - self.t0) // self.width + 1) * self.width

    def close_until(self, t: int) -> None:
        """Close (evaluate and report) every open window that ends at or before ``t``."""
        while self.window_end is not None and self.window_end <= t:
            self.report(self.window_end)
            self.content = []
            following = self.window_end + self.width
            self.window_end = following if following <= t else None

    def push(self, t: int, elements: Sequence[Sequence[str]], streams: Sequence[str] | None) -> None:
        self.close_until(t)
        if self.window_end is None:
            self.window_end = self._end_of(t)
        self.content.extend(list(element[:3]) for element in elements)

    def advance(self, t: int) -> None:
        self.close_until(t)

    def report(self, t: int) -> None:
        from rdflib import Graph
        from rdflib.query import ResultRow

        graph = Graph()
        lines = "".join(f"{s} {p} {o} .\n" for s, p, o in [*self.static, *self.content])
        if lines:
            graph.parse(data=lines, format="nt")
        variables = [str(v) for v in self.query.algebra["PV"]]
        bindings = []
        for row in graph.query(self.query):
            assert isinstance(row, ResultRow)  # a SELECT query: rows, never triples or a boolean
            bindings.append({name: value.n3() for name, value in zip(variables, row) if value is not None})
        if bindings or self.report_empty:
            self.emit(bindings, t=t)


if __name__ == "__main__":
    sys.exit(serve(TumblingEngine()))
