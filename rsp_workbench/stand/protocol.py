"""The JSON-lines engine protocol (``docs/engine-protocol.md``): message builders and parsers.

One JSON object per line, UTF-8, ``\\n``-terminated, field ``"type"`` first. Host → engine:
``register``, ``stimulus``, ``advance``, ``close`` and, to an engine whose ``ready`` says
``"batch": true``, ``batch`` (several stimuli in one line). Engine → host: ``ready``,
``response``, ``done``, ``error``. Terms are N-Triples text, times integers in ms of
application time, ``system_time`` epoch ms.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from rsp_workbench.engine import EngineConfig, StaticGraphs, Stimulus
from rsp_workbench.errors import quoted
from rsp_workbench.responses.model import EngineResponse, make_mapping
from rsp_workbench.engines.kit.python import decode_line, encode_line
from rsp_workbench.streams.model import StreamElement

PROTOCOL_VERSION = 1
HOST_MESSAGES = ("register", "stimulus", "batch", "advance", "close")
ENGINE_MESSAGES = ("ready", "response", "done", "error")
BATCH_FIELD = "batch"  # `"batch": true` in an engine's `ready`: it reads `batch` messages


class ProtocolError(ValueError):
    """A line that is not a valid protocol message."""


# The codec is the Python kit's (stdlib-only, so engines can copy it): orjson when installed,
# byte-identical to the standard library's compact JSON, which it falls back to.
dumps = encode_line  # one protocol line: compact UTF-8 JSON and "\n"
loads = decode_line  # one JSON line; ValueError if it is not JSON


def register_message(
    engine: EngineConfig, query_text: str, *, syntax: str | None = None, static: StaticGraphs = StaticGraphs(),
    query_id: str | None = None,
) -> dict[str, Any]:
    return {
        "type": "register",
        "protocol": PROTOCOL_VERSION,
        "engine": engine.to_json(),
        "query": {"id": query_id, "text": query_text, "syntax": syntax, "dialect": engine.dialect},
        "static": {
            "default": [list(t) for t in static.default],
            "named": {name: [list(t) for t in triples] for name, triples in static.named.items()},
        },
    }


def stimulus_message(stimulus: Stimulus) -> dict[str, Any]:
    elements = [
        [e.subject, e.predicate, e.object] if e.graph is None else [e.subject, e.predicate, e.object, e.graph]
        for e in stimulus.elements
    ]
    message: dict[str, Any] = {"type": "stimulus", "id": stimulus.id, "t": stimulus.application_time, "elements": elements}
    if stimulus.streams is not None:
        message["streams"] = list(stimulus.streams)
    return message


def session_bytes(engine: EngineConfig, query_text: str, stimuli: Iterable[Stimulus], *, syntax: str | None = None,
                  query_id: str | None = None) -> bytes:
    """A whole session as the stand writes it, one stimulus per line — register, stimuli, close —
    for replaying an engine without the stand (the benchmarks time an adapter alone this way)."""
    lines = [dumps(register_message(engine, query_text, syntax=syntax, query_id=query_id))]
    lines += [dumps(stimulus_message(stimulus)) for stimulus in stimuli]
    lines.append(dumps({"type": "close"}))
    return b"".join(lines)


def batch_message(stimuli: Iterable[Stimulus]) -> dict[str, Any]:
    """Several stimuli in one line, for an engine that announced ``"batch": true`` in ``ready``.

    Each item is the stimulus's own ``stimulus`` message; the engine handles them in order,
    exactly as if they had come one per line (docs/engine-protocol.md, "Batches").
    """
    return {"type": "batch", "stimuli": [stimulus_message(stimulus) for stimulus in stimuli]}


def accepts_batches(ready: Mapping[str, Any] | None) -> bool:
    """Whether the engine's ``ready`` message announced that it reads ``batch`` messages."""
    return bool(ready) and ready.get(BATCH_FIELD) is True  # type: ignore[union-attr]


def parse_stimulus(message: Mapping[str, Any]) -> Stimulus:
    t = int(message["t"])
    elements = tuple(
        StreamElement(item[0], item[1], item[2], t, item[3] if len(item) > 3 else None) for item in message["elements"]
    )
    streams = message.get("streams")
    return Stimulus(int(message["id"]), t, elements, tuple(streams) if streams is not None else None)


def parse_static(payload: Mapping[str, Any] | None) -> StaticGraphs:
    payload = payload or {}
    default = tuple(tuple(t) for t in payload.get("default", ()))
    named = {name: tuple(tuple(t) for t in triples) for name, triples in (payload.get("named") or {}).items()}
    return StaticGraphs(default, named)


def parse_engine_line(line: bytes) -> dict[str, Any]:
    """Decode one line from an engine; raise ProtocolError for anything not in the protocol.

    Every field the stand uses is checked here, so that a malformed one is an immediate
    protocol error naming the message and the field, never an exception in the stand's
    receiver (docs/engine-protocol.md, "Engine → host").
    """
    try:
        message = loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ProtocolError(f"not a JSON line: {_shorten(line)}") from None
    if not isinstance(message, dict) or message.get("type") not in ENGINE_MESSAGES:
        raise ProtocolError(f"not an engine message (ready/response/done/error): {_shorten(line)}")
    kind = message["type"]
    if kind == "response":
        bindings = message.get("bindings")
        if not isinstance(bindings, list) or not all(isinstance(b, dict) for b in bindings):
            raise ProtocolError(f"response without a list of bindings: {_shorten(line)}")
        if message.get("operation", "=") not in ("+", "-", "="):
            raise ProtocolError(f"response operation must be +, - or =: {_shorten(line)}")
        _check_time(message, "t", kind, optional=True)
        _check_id(message, "stimulus", kind, optional=True)
        for binding in bindings:
            for name, term in binding.items():
                if term is not None and not isinstance(term, str):
                    raise ProtocolError(f"response: field 'bindings', variable {name!r} must be a term "
                                        f"(N-Triples text) or null, not {_token(term)}")
    elif kind == "done":
        named = [key for key in ("stimulus", "advance", "closed") if key in message]
        if len(named) != 1:
            raise ProtocolError(f"done must name exactly one of stimulus, advance, closed: {_shorten(line)}")
        if named[0] == "stimulus":
            _check_id(message, "stimulus", kind, optional=False)
        elif named[0] == "advance":
            _check_time(message, "advance", kind, optional=False)
        elif message["closed"] is not True:
            raise ProtocolError(f"done: field 'closed' must be true, not {_token(message['closed'])}")
    elif kind == "error" and not isinstance(message.get("fatal", True), bool):
        raise ProtocolError(f"error: field 'fatal' must be true or false, not {_token(message['fatal'])}")
    return message


_INT64 = 1 << 63


def _check_time(message: Mapping[str, Any], field: str, kind: str, *, optional: bool) -> None:
    """A time field: an integer number of ms (a float with an integral value is read as one) in int64."""
    value = message.get(field)
    if value is None and optional:
        return
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not -_INT64 <= value < _INT64:
        raise ProtocolError(f"{kind}: field {field!r} must be an integer time in ms"
                            f"{' or null' if optional else ''}, not {_token(message.get(field))}")


def _check_id(message: Mapping[str, Any], field: str, kind: str, *, optional: bool) -> None:
    """A stimulus id: an integer (the stand's ids are)."""
    value = message.get(field)
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError(f"{kind}: field {field!r} must be a stimulus id (an integer)"
                            f"{' or absent' if optional else ''}, not {_token(value)}")


def _token(value: Any, limit: int = 40) -> str:
    """The offending value as JSON text, cut short (an error quotes the token, not the line)."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def response_from_message(message: Mapping[str, Any], receive_time_ms: int) -> EngineResponse:
    """The workbench model of a response; ``system_time`` is the stand's receive time."""
    t = message.get("t")  # checked by parse_engine_line
    return EngineResponse(
        int(t) if t is not None else None,
        receive_time_ms,
        message.get("operation", "="),
        tuple(make_mapping(b) for b in message["bindings"]),
    )


def _shorten(line: bytes) -> str:
    """The start of an engine's line as an error quotes it: its first word, cut short (the line's
    number on the engine's stdout says where the rest is; an engine may echo any file)."""
    return quoted(line.decode("utf-8", "replace").rstrip("\n"))
