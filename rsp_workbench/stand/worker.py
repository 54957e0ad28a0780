"""``python -m rsp_workbench.stand.worker``: run a built-in engine behind the JSON-lines protocol.

The protocol loop is the wrapping kit's (`rsp_workbench.engines.kit.python`): reads host messages on
stdin, writes engine messages on stdout (flushed after every ``done``), diagnostics on
stderr; anything the engine code prints goes to stderr. Exit code 0 after ``close``, 2 on
an engine error such as a query it cannot run (reported as an ``error`` message first),
1 on an unexpected failure.
"""

from __future__ import annotations

import gc
import sys
from contextlib import contextmanager
from typing import Any, Iterator, Mapping, Sequence

from rsp_workbench.engines.kit.python import EngineError, WrappedEngine, serve
from rsp_workbench.stand.protocol import parse_static, parse_stimulus


class BuiltinEngine(WrappedEngine):
    """A `rsp_workbench.engine.Engine` (found by type in the registry) behind the kit."""

    def __init__(self) -> None:
        super().__init__()
        self.engine: Any = None

    def register(self, query: Mapping[str, Any], engine: Mapping[str, Any], static: Mapping[str, Any]) -> dict[str, Any]:
        from rsp_workbench.engine import EngineConfig
        from rsp_workbench.engines import create_engine
        from rsp_workbench.query.parser import parse_query

        config = EngineConfig.from_json(engine)
        with _engine_errors():
            self.engine = create_engine(config)
            self.engine.register(parse_query(query["text"], syntax=query.get("syntax")), parse_static(static))
        return {"engine": config.type, "matcher": getattr(self.engine, "matcher", None)}

    def push(self, t: int, elements: Sequence[Sequence[str]], streams: Sequence[str] | None) -> None:
        stimulus = parse_stimulus({"id": self._stimulus, "t": t, "elements": elements, "streams": streams})
        with _engine_errors():
            self._emit_all(self.engine.push(stimulus))

    def advance(self, t: int) -> None:
        with _engine_errors():
            self._emit_all(self.engine.advance_time(t))

    def close(self) -> None:
        with _engine_errors():
            self._emit_all(self.engine.close())

    def _emit_all(self, responses: list[Any]) -> None:
        for response in responses:
            self.emit([dict(sorted(mapping)) for mapping in response.bindings], t=response.application_time,
                      operation=response.operation, system_time=response.system_time)


@contextmanager
def _engine_errors() -> Iterator[None]:
    """Turn the engines' UserError (a query or input they cannot handle) into the kit's EngineError."""
    from rsp_workbench.errors import UserError

    try:
        yield
    except UserError as error:
        raise EngineError(str(error)) from None


# The built-in engines keep millions of small long-lived objects (stream buffers, triple
# indexes) and make millions of short-lived acyclic ones (one evaluation per element under a
# tuple tick): with the default thresholds (700, 10, 10) the cyclic collector walks those
# long-lived objects again and again, a third of the worker's CPU at YABench BIG. Reference
# counting frees the acyclic garbage anyway; the collector still runs, just less often.
GC_THRESHOLDS = (100_000, 50, 100)


def main() -> int:
    gc.set_threshold(*GC_THRESHOLDS)
    return serve(BuiltinEngine())


if __name__ == "__main__":
    sys.exit(main())
