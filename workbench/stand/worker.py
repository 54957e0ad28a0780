"""``python -m workbench.stand.worker``: run a built-in engine behind the JSON-lines protocol.

Reads host messages on stdin, writes engine messages on stdout (flushed after every
``done``), diagnostics on stderr. Anything the engine code prints goes to stderr, so
stdout carries protocol lines only. Exit code 0 after ``close``, 2 on a registration
error (reported as an ``error`` message first), 1 on an unexpected failure.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any, BinaryIO

from workbench.stand.protocol import dumps, loads, parse_static, parse_stimulus, response_message


def serve(stdin: BinaryIO, stdout: BinaryIO) -> int:
    from workbench.engine import EngineConfig, create_engine
    from workbench.errors import UserError
    from workbench.query.parser import parse_query

    engine: Any = None

    def send(message: dict[str, Any]) -> None:
        stdout.write(dumps(message))

    def emit(responses: list[Any], stimulus: int | None) -> None:
        for response in responses:
            send(response_message(response, stimulus))

    for raw in stdin:
        if not raw.strip():
            continue
        message = loads(raw)
        kind = message.get("type")
        try:
            if kind == "register":
                config = EngineConfig.from_json(message["engine"])
                query = message["query"]
                engine = create_engine(config)
                parsed = parse_query(query["text"], syntax=query.get("syntax"))
                engine.register(parsed, parse_static(message.get("static")))
                send({"type": "ready", "engine": config.type, "pid": os.getpid(),
                      "matcher": getattr(engine, "matcher", None)})
            elif kind == "stimulus":
                stimulus = parse_stimulus(message)
                emit(engine.push(stimulus), stimulus.id)
                send({"type": "done", "stimulus": stimulus.id})
            elif kind == "advance":
                emit(engine.advance_time(int(message["t"])), None)
                send({"type": "done", "advance": int(message["t"])})
            elif kind == "close":
                emit(engine.close(), None)
                send({"type": "done", "closed": True})
                stdout.flush()
                return 0
            else:
                send({"type": "error", "message": f"unknown message type {kind!r}", "fatal": True})
                stdout.flush()
                return 1
        except UserError as error:
            send({"type": "error", "message": str(error), "fatal": True})
            stdout.flush()
            return 2
        stdout.flush()
    return 0


def main() -> int:
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr  # engine prints must not corrupt the protocol stream
    try:
        return serve(sys.stdin.buffer, protocol_out)
    except BrokenPipeError:
        return 1
    except Exception:  # noqa: BLE001 - reported to the host through stderr and the exit code
        traceback.print_exc(file=sys.stderr)
        try:
            protocol_out.write(dumps({"type": "error", "message": traceback.format_exc(limit=1).strip().splitlines()[-1], "fatal": True}))
            protocol_out.flush()
        except OSError:
            pass
        return 1
    finally:
        try:
            protocol_out.close()
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main())
