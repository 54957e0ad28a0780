#!/usr/bin/env python3
"""A complete external RSP engine in one file: tumbling windows + SPARQL over rdflib, Rstream out.

It speaks the JSON-lines protocol of ``docs/engine-protocol.md`` on stdin/stdout and
imports nothing from the workbench (only the standard library and rdflib), so it is a
template for wrapping any engine, in any language:

- ``register``: read the query; answer ``ready`` (or a fatal ``error`` if it cannot run).
- ``stimulus``: add the elements to the open window; a stimulus at or after the window's
  end first closes the window(s) before it. Answer ``response``s, then ``done``.
- ``advance``: application time reached ``t``: close the windows that end at or before it.
- ``close``: answer ``{"type":"done","closed":true}`` and exit 0.

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

Run ``python3 tumbling_bgp.py`` and type protocol lines to try it by hand; diagnostics go
to stderr, never to stdout (stdout carries protocol lines only).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from typing import Any

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


class TumblingEngine:
    """Window state and evaluation; ``send`` writes one protocol message."""

    def __init__(self, register: dict[str, Any], send: Any) -> None:
        from rdflib.plugins.sparql import prepareQuery

        engine = register.get("engine") or {}
        parameters = engine.get("parameters") or {}
        semantics = engine.get("semantics") or {}
        sparql, self.width = plan(register["query"]["text"], parameters)
        try:
            self.query = prepareQuery(sparql)
        except Exception as error:  # rdflib raises pyparsing errors
            raise QueryError(f"rdflib cannot parse the query: {error}") from None
        if self.query.algebra.name != "SelectQuery":
            raise QueryError("this example engine answers SELECT queries only")
        t0 = parameters.get("t0", semantics.get("t0"))
        self.t0 = int(t0) if t0 is not None else 0
        self.report_empty = bool(parameters.get("report_empty", False))
        self.send = send
        self.static = [list(t) for t in (register.get("static") or {}).get("default", [])]
        self.window_end: int | None = None  # end of the open window
        self.content: list[list[str]] = []

    def _end_of(self, t: int) -> int:
        return self.t0 + ((t - self.t0) // self.width + 1) * self.width

    def close_until(self, t: int, stimulus: int | None) -> None:
        """Close (evaluate and report) every open window that ends at or before ``t``."""
        while self.window_end is not None and self.window_end <= t:
            self.report(self.window_end, stimulus)
            self.content = []
            following = self.window_end + self.width
            self.window_end = following if following <= t else None

    def stimulus(self, message: dict[str, Any]) -> None:
        t = int(message["t"])
        self.close_until(t, message["id"])
        if self.window_end is None:
            self.window_end = self._end_of(t)
        self.content.extend(element[:3] for element in message["elements"])

    def report(self, t: int, stimulus: int | None) -> None:
        from rdflib import Graph

        graph = Graph()
        lines = "".join(f"{s} {p} {o} .\n" for s, p, o in [*self.static, *self.content])
        if lines:
            graph.parse(data=lines, format="nt")
        variables = [str(v) for v in self.query.algebra["PV"]]
        bindings = []
        for row in graph.query(self.query):
            bindings.append({name: value.n3() for name, value in zip(variables, row) if value is not None})
        if bindings or self.report_empty:
            self.send({"type": "response", "stimulus": stimulus, "t": t, "operation": "=",
                       "bindings": bindings, "system_time": int(time.time() * 1000)})


def main() -> int:
    out = sys.stdout.buffer

    def send(message: dict[str, Any]) -> None:
        out.write((json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8"))

    engine: TumblingEngine | None = None
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        message = json.loads(raw)
        kind = message.get("type")
        if kind == "register":
            try:
                engine = TumblingEngine(message, send)
            except QueryError as error:
                send({"type": "error", "message": str(error), "fatal": True})
                out.flush()
                return 2
            send({"type": "ready", "engine": "tumbling-bgp example", "pid": os.getpid()})
        elif engine is None:
            send({"type": "error", "message": "register first", "fatal": True})
            out.flush()
            return 1
        elif kind == "stimulus":
            engine.stimulus(message)
            send({"type": "done", "stimulus": message["id"]})
        elif kind == "advance":
            engine.close_until(int(message["t"]), None)
            send({"type": "done", "advance": message["t"]})
        elif kind == "close":
            send({"type": "done", "closed": True})
            out.flush()
            return 0
        else:
            print(f"ignoring unknown message type {kind!r}", file=sys.stderr)
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
