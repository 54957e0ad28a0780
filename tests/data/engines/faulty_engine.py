#!/usr/bin/env python3
"""A protocol engine with one chosen fault, for the bad-input catalogue (tests/test_bad_inputs*.py).

``faulty_engine.py MODE [SIZE]``: speaks the JSON-lines protocol (docs/engine-protocol.md)
and answers every stimulus with one response, except that MODE injects a fault:

- ``ok``: a well-formed response ``?x = <http://ex.org/a>`` per stimulus;
- ``bad-term``: a binding whose value is not an N-Triples term;
- ``stderr-flood``: writes SIZE MB to stderr first, then behaves like ``ok``;
- ``long-line``: writes one stdout line of SIZE MB without a newline, then hangs;
- ``hang``: answers ``ready`` and then never answers a stimulus.
Standard library only, so it starts fast.
"""

import json
import sys
import time


def main() -> int:
    mode = sys.argv[1]
    size_mb = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    out = sys.stdout.buffer

    def send(message: dict) -> None:
        out.write((json.dumps(message) + "\n").encode())
        out.flush()

    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        kind = message.get("type")
        if kind == "register":
            if mode == "stderr-flood":
                chunk = b"e" * (1 << 20)
                for _ in range(size_mb):
                    sys.stderr.buffer.write(chunk)
                sys.stderr.buffer.flush()
            send({"type": "ready"})
            if mode == "long-line":
                chunk = b"x" * (1 << 20)
                for _ in range(size_mb):
                    out.write(chunk)
                out.flush()
                time.sleep(3600)
        elif kind == "stimulus":
            if mode == "hang":
                time.sleep(3600)
            value = "not a term" if mode == "bad-term" else "<http://ex.org/a>"
            send({"type": "response", "stimulus": message["id"], "t": message["t"], "operation": "=",
                  "bindings": [{"x": value}]})
            send({"type": "done", "stimulus": message["id"]})
        elif kind == "advance":
            send({"type": "done", "advance": message["t"]})
        elif kind == "close":
            send({"type": "done", "closed": True})
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
