"""The engine interface: register a query, push stimuli, advance time, close (Heaven's E).

Pure core code (no Qt, no Spark, no process handling). The engines themselves are plug-ins
in `rsp_workbench.engines`, found by type name there (``rsp_workbench.engines.create_engine``;
imported lazily on first use, so importing the workbench never imports an engine); this
module only defines what every engine is. Measured runs never call an engine in the workbench's own process:
the test stand (`rsp_workbench.stand.host`) starts ``python -m rsp_workbench.stand.worker``,
which drives an :class:`Engine` through the JSON-lines protocol of
``docs/engine-protocol.md``. Tests and teaching views may call engines in-process.

A *stimulus* (Heaven Sect. 4) is the portion of the input streams that shares one
application time (YABench: contemporaneous elements form one stimulus). Engines assume
stimuli arrive with non-decreasing application time and that all elements of one instant
come in one stimulus (the streamer guarantees both).
"""

from __future__ import annotations

import heapq
import itertools
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from rsp_workbench.core.semantics import EngineSemantics
from rsp_workbench.errors import UserError
from rsp_workbench.query.model import ContinuousQuery
from rsp_workbench.responses.model import EngineResponse
from rsp_workbench.streams.model import StreamElement

Triple = tuple[str, str, str]
#: How a built-in window engine evaluates its BGP (``parameters.matcher``): the native
#: incremental matcher where the query allows, always that (error otherwise), or rdflib.
MATCHERS = ("auto", "native", "rdflib")


@dataclass(frozen=True)
class Stimulus:
    """Contemporaneous stream elements sent to an engine at once (Heaven's STIMULUS).

    ``streams`` names the stream IRI of each element (parallel to ``elements``); None
    means every element belongs to the query's first stream (the common one-stream case).
    """

    id: int
    application_time: int
    elements: tuple[StreamElement, ...]
    streams: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.streams is not None and len(self.streams) != len(self.elements):
            raise ValueError("streams must name one stream per element")

    def __len__(self) -> int:
        return len(self.elements)


@dataclass(frozen=True)
class StaticGraphs:
    """Static data registered with the query (Heaven's T): default and named graphs."""

    default: tuple[Triple, ...] = ()
    named: Mapping[str, tuple[Triple, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class EngineConfig:
    """What it takes to build an engine: type, semantics, injected faults, parameters.

    The same information as ``rsp_workbench.experiment.model.EngineSpec`` without the
    experiment's templating; :func:`engine_config_from_spec` converts.
    """

    type: str
    semantics: EngineSemantics = field(default_factory=EngineSemantics)
    faults: Mapping[str, bool] = field(default_factory=dict)
    parameters: Mapping[str, Any] = field(default_factory=dict)
    name: str | None = None
    dialect: str | None = None  # the query dialect the engine reads (None: the experiment's text as is)

    def to_json(self) -> dict[str, Any]:
        """A JSON-friendly form (the ``engine`` part of the protocol's register message)."""
        semantics = self.semantics.describe()
        semantics["batch_size"] = self.semantics.batch_size
        return {
            "type": self.type,
            "name": self.name,
            "semantics": semantics,
            "faults": {key: bool(value) for key, value in self.faults.items()},
            "parameters": dict(self.parameters),
            "dialect": self.dialect,
        }

    @classmethod
    def from_json(cls, payload: Mapping[str, Any]) -> "EngineConfig":
        semantics = EngineSemantics().with_overrides(dict(payload.get("semantics") or {}))
        return cls(
            type=str(payload["type"]),
            semantics=semantics,
            faults=dict(payload.get("faults") or {}),
            parameters=dict(payload.get("parameters") or {}),
            name=payload.get("name"),
            dialect=payload.get("dialect"),
        )


class Engine(ABC):
    """An RSP engine behind the test stand (docs/design/ARCHITECTURE.md layer 3).

    Lifecycle: ``register`` once, then any number of ``push``/``advance_time`` calls in
    non-decreasing application time, then ``close``. Every call returns the responses the
    engine emitted while handling it, in emission order; ``system_time`` on a response is
    the epoch ms at which the engine produced it (the stand records its own receive time
    next to it).
    """

    #: Registry name (``secret``, ``naive`` …); set by subclasses.
    type_name: str = ""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config

    @abstractmethod
    def register(self, query: ContinuousQuery, static: StaticGraphs = StaticGraphs()) -> None:
        """Register the continuous query and the static data. Raise UserError if unsupported."""

    @abstractmethod
    def push(self, stimulus: Stimulus) -> list[EngineResponse]:
        """Process one stimulus; return the responses it caused."""

    @abstractmethod
    def advance_time(self, t: int) -> list[EngineResponse]:
        """Application time reached ``t`` with no more data at or before ``t`` (time-driven progress).

        Used e.g. to close the windows that end after the last element of a stream.
        """

    @abstractmethod
    def close(self) -> list[EngineResponse]:
        """End of input: return the final responses and release resources."""

    def run(self, stimuli: Iterable[Stimulus], *, end: int | None = None) -> list[EngineResponse]:
        """Convenience for tests: push everything, advance to ``end`` if given, close."""
        responses: list[EngineResponse] = []
        for stimulus in stimuli:
            responses.extend(self.push(stimulus))
        if end is not None:
            responses.extend(self.advance_time(end))
        responses.extend(self.close())
        return responses


#: The folder that holds the ``rsp_workbench`` package this process runs (a checkout or site-packages).
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
# ``python -I -c BOOTSTRAP ROOT MODULE ARGS…``: ROOT first on the import path (unless it is there
# already), then MODULE run as ``__main__`` — ``python -m MODULE`` without the current directory.
_BOOTSTRAP = ("import runpy, sys; root = sys.argv.pop(1); module = sys.argv.pop(1); "
              "root in sys.path or sys.path.insert(0, root); "
              "runpy.run_module(module, run_name='__main__', alter_sys=True)")


def isolated_python_command(module: str, *args: str) -> list[str]:
    """``python -m MODULE ARGS`` for this interpreter, isolated from the working directory and environment.

    ``-I`` would also hide a workbench found only through ``PYTHONPATH``; the package's own
    folder is therefore put on the path explicitly (the same code as this process runs).
    ``-u``: unbuffered, as ``PYTHONUNBUFFERED`` (ignored under ``-I``) made it before.
    """
    return [sys.executable, "-I", "-u", "-c", _BOOTSTRAP, str(PACKAGE_ROOT), module, *args]


#: ``external`` engines are programs, not classes: the stand runs their command directly.
EXTERNAL_TYPE = "external"


@dataclass(frozen=True)
class ProgramEngine:
    """What an experiment needs to know of a shipped engine that is a program (another language)
    behind the protocol: the semantics it runs under unless the experiment says otherwise
    (``preset``) and the query text it reads (``dialect``, `rsp_workbench.query.writer`).

    How to start it is the plug-in's own business (`rsp_workbench.engines.program_command`).
    """

    preset: str
    dialect: str
    #: Presets of parameter combinations, the first whose every ``(parameter, value)`` the engine's
    #: parameters have wins (value :data:`GIVEN`: any value); no match: ``preset``.
    variants: tuple[tuple[tuple[tuple[str, Any], ...], str], ...] = ()

    #: A value for each parameter a variant requires as :data:`GIVEN` (to probe that variant).
    examples: tuple[tuple[str, Any], ...] = ()

    def combinations(self) -> list[dict[str, Any]]:
        """Every parameter combination the engine declares a preset for: none (its default), then
        each variant's parameters (a :data:`GIVEN` one with its example value)."""
        examples = dict(self.examples)
        return [{}, *({key: examples[key] if value is GIVEN else value for key, value in condition}
                      for condition, _ in self.variants)]

    def preset_for(self, parameters: Mapping[str, Any]) -> str:
        """The preset the engine runs under with these parameters."""
        for condition, name in self.variants:
            if all(parameters.get(key) is not None if value is GIVEN else parameters.get(key) == value
                   for key, value in condition):
                return name
        return self.preset


#: A ``ProgramEngine.variants`` value that matches any value the parameter is given.
GIVEN = "<given>"

#: Shipped program engines by type.
PROGRAM_ENGINES: dict[str, ProgramEngine] = {
    "rspjs": ProgramEngine(preset="rspjs", dialect="rspjs"),
    # rsp-rs's parser is a port of RSP-JS's line-based one (rsp_workbench/engines/rsprs/README.md)
    "rsprs": ProgramEngine(preset="rsprs", dialect="rspjs"),
    # C-SPARQL's architecture: Esper's EPL window (S2R, R2S) and Jena ARQ (R2R), one preset per
    # window/output combination (rsp_workbench/engines/esper/README.md)
    "esper": ProgramEngine(preset="esper-time-batch", dialect="csparql", variants=(
        ((("window", "time"), ("output", "all")), "esper-time-all"),
        ((("window", "time"),), "esper-time-snapshot"),
        ((("stream", "rstream"),), "esper-time-batch-rstream"),
        ((("reference_point", GIVEN),), "esper-time-batch-ref"),
    ), examples=(("reference_point", 0),)),
    # the query compiled onto Spark Structured Streaming, one preset per output mode
    # (rsp_workbench/engines/sparkstream/README.md; an aggregate query in append mode: spark-append-aggregate)
    "spark-streaming": ProgramEngine(preset="spark-append", dialect="rspql", variants=(
        ((("output", "update"),), "spark-update"),
        ((("output", "complete"),), "spark-complete"),
    )),
}


def engine_config_from_spec(spec: Any, parameters: Mapping[str, Any] | None = None) -> EngineConfig:
    """An EngineConfig from an experiment ``EngineSpec`` (resolved ``parameters`` may be given)."""
    return EngineConfig(
        type=spec.type,
        semantics=spec.semantics,
        faults={key: bool(value) for key, value in spec.faults.items()},
        parameters=dict(parameters if parameters is not None else spec.parameters),
        name=spec.id,
        dialect=spec.dialect,
    )


def group_contemporaneous(
    elements: Iterable[StreamElement], *, stream: str | None = None, first_id: int = 0
) -> list[Stimulus]:
    """Group a time-ordered sequence of elements into one stimulus per application time."""
    stimuli: list[Stimulus] = []
    batch: list[StreamElement] = []
    current: int | None = None
    for element in elements:
        if current is not None and element.t != current:
            stimuli.append(_stimulus(first_id + len(stimuli), current, batch, stream))
            batch = []
        if current is not None and element.t < current:
            raise ValueError(f"stream is not time-ordered: {element.t} after {current}")
        current = element.t
        batch.append(element)
    if batch and current is not None:
        stimuli.append(_stimulus(first_id + len(stimuli), current, batch, stream))
    return stimuli


def merge_streams(streams: Mapping[str, Sequence[StreamElement]], *, first_id: int = 0) -> list[Stimulus]:
    """One stimulus per application time over several streams held in memory, each element
    tagged with its stream: `iter_merged_stimuli` over each stream sorted by time (stably, so
    equal times keep their order)."""
    return list(iter_merged_stimuli({name: sorted(elements, key=_time) for name, elements in streams.items()},
                                    first_id=first_id))


def iter_merged_stimuli(streams: Mapping[str, Iterable[StreamElement]], *, first_id: int = 0) -> Iterator[Stimulus]:
    """One stimulus per application time over several time-ordered streams, lazily (each
    stream is read once, as it goes: a run's streams are files of 200 k elements and more).

    Each element is tagged with its stream. Elements with equal times come in the order of
    ``streams``, and within one stream in its own order. A stream that goes back in time is
    an error naming it (the stream files' readers already refuse that at its line).
    """
    merged = heapq.merge(*(_checked_order(name, elements) for name, elements in streams.items()), key=_tagged_time)
    for ident, (t, part) in enumerate(itertools.groupby(merged, key=_tagged_time), start=first_id):
        tagged = tuple(part)
        yield Stimulus(ident, t, tuple(element for _, element in tagged), tuple(name for name, _ in tagged))


def _time(element: StreamElement) -> int:
    return element.t


def _tagged_time(item: tuple[str, StreamElement]) -> int:
    return item[1].t


def _checked_order(name: str, elements: Iterable[StreamElement]) -> Iterator[tuple[str, StreamElement]]:
    last: int | None = None
    for element in elements:
        if last is not None and element.t < last:
            raise UserError(f"the stream is not time-ordered: {element.t} after {last}", field=f"streams.{name}")
        last = element.t
        yield name, element


def _stimulus(ident: int, t: int, batch: list[StreamElement], stream: str | None) -> Stimulus:
    return Stimulus(ident, t, tuple(batch), None if stream is None else tuple(stream for _ in batch))
