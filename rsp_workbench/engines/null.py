"""``null``: an engine that computes nothing — it answers every message with ``done`` only.

It measures the test stand itself: with an engine that does no work, the rate the stand
sustains in absolute-time mode is the ceiling of the stand's streamer, codec and process
boundary. Any engine measured on the stand can absorb at
most this rate, so a researcher reads an engine's rate next to this one to tell engine
cost from stand cost. It still decodes every stimulus it receives (the worker does), so
the ceiling includes the full protocol round trip; it never emits a response.
"""

from __future__ import annotations

from rsp_workbench.engine import Engine, StaticGraphs, Stimulus
from rsp_workbench.query.model import ContinuousQuery
from rsp_workbench.responses.model import EngineResponse


class NullEngine(Engine):
    """Accepts any query and any stimulus; emits no response (a stand ceiling probe)."""

    type_name = "null"

    def register(self, query: ContinuousQuery, static: StaticGraphs = StaticGraphs()) -> None:
        self.elements = 0

    def push(self, stimulus: Stimulus) -> list[EngineResponse]:
        self.elements += len(stimulus.elements)
        return []

    def advance_time(self, t: int) -> list[EngineResponse]:
        return []

    def close(self) -> list[EngineResponse]:
        return []
