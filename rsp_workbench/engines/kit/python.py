"""The Python wrapping kit: put any RSP engine on the test stand by writing three methods.

An engine author subclasses :class:`WrappedEngine` and writes ``register``, ``push`` and
``close`` (``advance`` is optional); :func:`serve` speaks the JSON-lines protocol of
``docs/engine-protocol.md`` around them: it reads the host's messages, answers ``ready``
and every ``done``, attributes ``emit``-ted responses to the stimulus being handled,
stamps their ``system_time``, flushes stdout after each ``done``, keeps stdout for protocol
lines only (``print`` goes to stderr), and turns an exception into a fatal ``error``
message naming it. It announces ``"batch": true`` in ``ready``: the stand may then send
several stimuli in one ``batch`` line, which the kit hands to ``push`` one by one (the
engine sees no difference) and answers with one ``done`` each, written out at the end of
the batch and at least every millisecond during it (so the stand's latency per stimulus
stays within a millisecond of the engine's work without a write per stimulus).

This module needs only the standard library (it uses orjson, several times faster, when
installed), so it can be copied next to an engine that runs in its own environment.
``python -m rsp_workbench.stand.worker`` (the built-in engines) and
``rsp_workbench/engines/examples/tumbling_bgp.py`` run on it.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import Any, BinaryIO, Callable, Mapping, Sequence

try:  # the same bytes as the standard library's compact JSON, several times faster
    import orjson as _orjson
except ImportError:  # the kit still speaks JSON without it
    _orjson = None  # type: ignore[assignment]

Bindings = Sequence[Mapping[str, str]]
FLUSH_PERIOD_S = 0.001  # in a batch, written `done`s reach the stand at least this often


def stdlib_line(message: Mapping[str, Any]) -> bytes:
    """One protocol line as the standard library writes it: compact UTF-8 JSON and ``\\n``."""
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def encode_line(message: Mapping[str, Any]) -> bytes:
    """One protocol line, the bytes of :func:`stdlib_line` (orjson if installed; the stdlib
    for what orjson does not encode — ints beyond 64 bits, non-str keys — or without it)."""
    if _orjson is not None:
        try:
            return _orjson.dumps(message, option=_orjson.OPT_APPEND_NEWLINE)
        except TypeError:
            pass
    return stdlib_line(message)


def decode_line(line: bytes | str) -> Any:
    """Decode one JSON line; ValueError if it is not JSON. The standard library reads what
    orjson does not (NaN, Infinity, lone surrogates), so whatever worked with it still works."""
    if _orjson is not None:
        try:
            return _orjson.loads(line)
        except ValueError:
            pass
    return json.loads(line)


class EngineError(Exception):
    """A problem the engine reports to the host as a fatal ``error`` (e.g. a query it cannot run)."""


class WrappedEngine:
    """Override ``register``, ``push`` and ``close``; call ``emit`` for each answer.

    Times are application times in integer milliseconds, terms N-Triples text.
    """

    def __init__(self) -> None:
        self._send: Callable[[dict[str, Any]], None] = lambda message: None
        self._stimulus: int | None = None

    # -- what an engine author writes ---------------------------------------------------

    def register(self, query: Mapping[str, Any], engine: Mapping[str, Any], static: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """Set up the query. ``query``: {id, text, syntax, dialect}; ``engine``: {type, name,
        semantics, parameters, …}; ``static``: {default: [[s,p,o]…], named: {g: […]}}.
        Return extra fields for the ``ready`` message (or None); raise EngineError to refuse."""
        raise NotImplementedError

    def push(self, t: int, elements: Sequence[Sequence[str]], streams: Sequence[str] | None) -> None:
        """All elements with application time ``t`` (``streams[i]``: stream IRI of element i, or None)."""
        raise NotImplementedError

    def advance(self, t: int) -> None:
        """Application time reached ``t`` with no more data at or before it (default: nothing)."""

    def close(self) -> None:
        """End of input: emit the final answers (default: nothing)."""

    # -- what the kit provides -------------------------------------------------------------

    def emit(self, bindings: Bindings, *, t: int | None, operation: str = "=", system_time: int | None = None) -> None:
        """Send one response: a bag of solution mappings (``[]`` = an empty-relation notification).

        ``t`` is the application time of the evaluation; ``system_time`` (epoch ms) defaults to now.
        """
        self._send({
            "type": "response", "stimulus": self._stimulus, "t": t, "operation": operation,
            "bindings": [dict(mapping) for mapping in bindings],
            "system_time": int(time.time() * 1000) if system_time is None else system_time,
        })


def serve(engine: WrappedEngine, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Run the protocol loop until ``close``; the exit code (0 after close, 2 refused, 1 failure).

    With the default streams, stdout is reserved for protocol lines first: anything the
    engine prints goes to stderr.
    """
    if stdout is None:
        stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
        sys.stdout = sys.stderr
    if stdin is None:
        stdin = sys.stdin.buffer
    out = stdout

    def send(message: dict[str, Any]) -> None:
        out.write(encode_line(message))

    def handle_stimulus(message: Mapping[str, Any]) -> None:
        engine._stimulus = int(message["id"])
        engine.push(int(message["t"]), message["elements"], message.get("streams"))
        send({"type": "done", "stimulus": engine._stimulus})

    def fatal(message: str, code: int) -> int:
        send({"type": "error", "message": message, "fatal": True})
        out.flush()
        return code

    engine._send = send
    registered = False
    try:
        for raw in stdin:
            if not raw.strip():
                continue
            message = decode_line(raw)
            kind = message.get("type")
            if kind == "register":
                info = engine.register(message.get("query") or {}, message.get("engine") or {}, message.get("static") or {})
                send({"type": "ready", "pid": os.getpid(), "batch": True, **dict(info or {})})
                registered = True
            elif not registered:
                return fatal(f"expected register first, got {kind!r}", 1)
            elif kind == "stimulus":
                handle_stimulus(message)
            elif kind == "batch":
                flushed = time.monotonic()
                for item in message["stimuli"]:
                    handle_stimulus(item)
                    now = time.monotonic()
                    if now - flushed >= FLUSH_PERIOD_S:
                        out.flush()
                        flushed = now
            elif kind == "advance":
                engine._stimulus = None
                engine.advance(int(message["t"]))
                send({"type": "done", "advance": int(message["t"])})
            elif kind == "close":
                engine._stimulus = None
                engine.close()
                send({"type": "done", "closed": True})
                out.flush()
                return 0
            else:
                return fatal(f"unknown message type {kind!r}", 1)
            out.flush()
    except EngineError as error:
        return fatal(str(error), 2)
    except BrokenPipeError:
        return 1
    except Exception as error:  # noqa: BLE001 - reported to the host, details on stderr
        traceback.print_exc(file=sys.stderr)
        try:
            return fatal(f"{type(error).__name__}: {error}", 1)
        except OSError:
            return 1
    finally:
        try:
            out.flush()
        except OSError:
            pass
    return 0
