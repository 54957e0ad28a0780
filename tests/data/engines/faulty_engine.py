#!/usr/bin/env python3
"""A protocol engine with one chosen fault, for the bad-input catalogue (tests/test_bad_inputs*.py).

``faulty_engine.py MODE [SIZE]``: speaks the JSON-lines protocol (docs/engine-protocol.md)
and answers every stimulus with one response, except that MODE injects a fault:

- ``ok``: a well-formed response ``?x = <http://ex.org/a>`` per stimulus;
- ``bad-term``: a binding whose value is not an N-Triples term;
- ``stderr-flood``: writes SIZE MB to stderr first, then behaves like ``ok``;
- ``long-line``: writes one stdout line of SIZE MB without a newline, then hangs;
- ``hang``: answers ``ready`` and then never answers a stimulus;
- ``big-responses``: every response binds an IRI of SIZE MB;
- ``child``: starts a child (``sleep``) that stays after the engine ends; ``daemon``: a
  double-forked daemon in a session of its own; ``child-holds-stdout``: a child that keeps
  the engine's stdout open after the engine has exited; ``daemon-env-cleared``: a daemon that
  also clears its environment (each otherwise like ``ok``; the child's command line carries
  SIZE as a marker to find it); any of these with ``+hang`` (``daemon+hang``) then hangs;
- a protocol-field fault, the first stimulus answered with: ``t-string``, ``t-list``,
  ``t-infinity``, ``t-nan`` (its response's ``t``), ``done-list`` (``done`` naming a list),
  ``stimulus-mapping`` (a response naming a mapping as its stimulus), ``binding-nan`` (a
  binding whose value is NaN); ``advance-null``, ``advance-string`` (``advance`` acknowledged so).
Standard library only, so it starts fast.
"""

import json
import os
import subprocess
import sys
import time

FIELD_FAULTS = {
    "t-string": ("t", "12"), "t-list": ("t", [1]), "t-infinity": ("t", float("inf")), "t-nan": ("t", float("nan")),
    "stimulus-mapping": ("stimulus", {"id": 1}),
}


def leave_behind(mode: str, marker: str) -> None:
    """Start the process that ``child``/``daemon``/``child-holds-stdout`` leave behind."""
    command = ["sleep", f"36{marker}"]
    if mode == "child":
        subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elif mode == "child-holds-stdout":
        subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # inherits stdout
    elif mode in ("daemon", "daemon-env-cleared") and os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            if mode == "daemon-env-cleared":
                os.execve("/bin/sleep" if os.path.exists("/bin/sleep") else "/usr/bin/sleep", command, {})
            os.execvp("sleep", command)
        os._exit(0)


def main() -> int:
    mode, _, then = sys.argv[1].partition("+")
    size_mb = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    if mode in ("child", "daemon", "child-holds-stdout", "daemon-env-cleared"):
        leave_behind(mode, sys.argv[2] if len(sys.argv) > 2 else "00")
        mode = then or mode
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
            if mode == "big-responses":
                value = "<http://ex.org/" + "a" * (size_mb << 20) + ">"
            response = {"type": "response", "stimulus": message["id"], "t": message["t"], "operation": "=",
                        "bindings": [{"x": float("nan") if mode == "binding-nan" else value}]}
            if mode in FIELD_FAULTS:
                field, bad = FIELD_FAULTS[mode]
                response[field] = bad
            send(response)
            send({"type": "done", "stimulus": [message["id"]] if mode == "done-list" else message["id"]})
        elif kind == "advance":
            acknowledged = {"advance-null": None, "advance-string": str(message["t"])}.get(mode, message["t"])
            send({"type": "done", "advance": acknowledged})
        elif kind == "close":
            send({"type": "done", "closed": True})
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
