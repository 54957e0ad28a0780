"""The experiment model: Heaven's tuple ⟨E engines, T static data, D streams, Q queries, K KPIs⟩.

Plus what makes a study out of it: variables for query templates, sweeps and explicit
cases (YABench's ``config.json`` ``tests``), repetitions, a seed, named sizes, the oracle
and the test stand. Values are frozen dataclasses built by
:func:`rsp_workbench.experiment.loader.load_experiment`, which validates everything; the
documented schema is ``docs/experiment-format.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from rsp_workbench.core.semantics import EngineSemantics

if TYPE_CHECKING:
    from rsp_workbench.experiment.source import SourceMap

# A variable value: what may be written into a query template or a parameter.
Scalar = str | int | float | bool

ENGINE_TYPES = ("secret", "naive", "incremental", "eviction", "null", "external", "rspjs", "rsprs", "esper",
                "spark-streaming")
FAULTS = ("late_purge", "border_drift", "null_aggregate", "misaligned_first_window")
KPI_NAMES = ("latency", "throughput", "memory", "cpu", "threads", "correctness")
FLOW_SHAPES = (
    "constant", "step", "step-factor", "custom-step", "linear", "exponential", "random",
    "constant-random", "poisson", "gaussian", "burst",
)
STREAM_FILE_FORMATS = ("yabench", "csrbench-dir", "nquads", "parquet")
STATIC_FORMATS = ("turtle", "ntriples", "n3", "xml", "json-ld", "trig", "nquads")
QUERY_SYNTAXES = ("rspql", "csparql", "cqels", "sparqlstream", "sparql")
EVICTION_STRATEGIES = ("fifo", "lru", "random", "likelihood")
ORACLE_MATCHES = ("strict", "csrbench")
#: ``oracle.end`` rules besides a time (docs/experiment-format.md)
END_RULES = ("after-last-window", "last-element")
STAND_MODES = ("real-time", "absolute-time")
#: the most stimuli ``stand.batch`` may put in one ``batch`` message: the stand also caps a batch
#: at about this many elements (`rsp_workbench.stand.feeding.BATCH_ELEMENTS`, a stimulus has at least
#: one), so a larger limit would change nothing
STAND_BATCH_MAX = 1024


@dataclass(frozen=True)
class StaticData:
    """Static data or ontology loaded before the stream starts (Heaven's T)."""

    file: Path
    format: str
    graph: str | None = None


@dataclass(frozen=True)
class FlowSpec:
    """How fast stimuli are sent (flow shape name + shape-specific settings, validated later)."""

    shape: str
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StreamSpec:
    """The stream description (Heaven's D): a recorded file or a generator with parameters.

    Exactly one of ``file`` and ``generator`` is set. Generator ``params`` may hold
    ``${NAME}`` templates; :class:`RunSpec` carries them resolved. ``iri`` is the stream
    IRI that queries' windows name (``FROM STREAM <iri>`` / ``ON <iri>``) for a stream of
    the ``streams:`` section; None for the single ``stream:``, which every window reads.
    """

    generator: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    file: Path | None = None
    format: str | None = None
    interval_ms: int | None = None
    flow: FlowSpec | None = None
    iri: str | None = None

    @property
    def path(self) -> str:
        """The field path of this stream in the experiment file (for located errors)."""
        return "stream" if self.iri is None else f"streams.{self.iri}"


@dataclass(frozen=True)
class QuerySpec:
    """A continuous query template; ``variables`` are the ``${NAME}`` it references."""

    id: str
    template: str
    file: Path | None = None
    syntax: str | None = None
    variables: tuple[str, ...] = ()


@dataclass(frozen=True)
class EngineSpec:
    """An engine under test (Heaven's E) with its semantics, injected faults and parameters.

    ``parameters`` are as written (values may be ``${NAME}`` templates); the resolved,
    typed values are on each :class:`RunSpec`.
    """

    id: str
    type: str
    semantics: EngineSemantics
    preset: str | None = None
    semantics_overrides: Mapping[str, Any] = field(default_factory=dict)
    faults: Mapping[str, bool] = field(default_factory=dict)
    parameters: Mapping[str, Any] = field(default_factory=dict)
    dialect: str | None = None  # the query dialect the stand sends the engine (None: the text as written)

    @property
    def requires_confirmation(self) -> bool:
        """External engines run a user-given program, which must be shown and confirmed first."""
        return self.type == "external"

    @property
    def declares_semantics(self) -> bool:
        """Whether the file says which semantics the engine has (a preset or semantics overrides).

        A built-in engine's are its own; an external program's are only what the file declares
        — without it the oracle falls back to the defaults, and says so in the verdict.
        """
        return self.type != "external" or self.preset is not None or bool(self.semantics_overrides)

    @property
    def command(self) -> tuple[str, ...] | None:
        command = self.parameters.get("command") if self.type == "external" else None
        return tuple(command) if command is not None else None


@dataclass(frozen=True)
class KpiSpec:
    """KPIs to collect (Heaven's K) and the probe's sampling period."""

    names: tuple[str, ...] = KPI_NAMES
    sampling_ms: int = 500


@dataclass(frozen=True)
class OracleSpec:
    """Expected answers: whose semantics (a preset or ``engine``: each engine's own) and how to match."""

    system: str = "engine"
    semantics_overrides: Mapping[str, Any] = field(default_factory=dict)
    match: str = "strict"
    gracious: bool = False
    t0: int | None = None  # None: all admissible t0 (RSP-QL Theorem 1)
    #: the last instant judged (and the stand's final ``advance``): ``after-last-window``
    #: (the last element + the largest window: every window holding an element closes),
    #: ``last-element`` (the stream ends with its last element), or a time in ms
    end: int | str = "after-last-window"
    #: merge consecutive responses with the same time and operation into one evaluation's output
    #: before judging (``rspwb check --regroup``): None as each engine's ``grouping`` declares,
    #: True/False for every engine
    regroup: bool | None = None


@dataclass(frozen=True)
class StandSpec:
    """Test-stand settings: real-time feeding or as fast as possible, time scale, timeout,
    and the most stimuli per ``batch`` message (None: the stand's default)."""

    mode: str = "real-time"
    time_scale: float = 1.0
    timeout_ms: int | None = None
    batch: int | None = None
    max_output_mb: int | None = None  # MiB an engine may write on stdout in one run (None: the stand's default)
    max_message_mb: int | None = None  # MiB of one protocol line from an engine (None: the stand's default)


@dataclass(frozen=True)
class Experiment:
    """A validated experiment file. ``raw`` is the plain YAML mapping, key order kept.

    ``sweep`` maps variable names to their values (Cartesian product); ``cases`` lists
    explicit combinations. ``applied_size`` names the size whose overrides are merged in.
    """

    name: str
    engines: tuple[EngineSpec, ...]
    queries: tuple[QuerySpec, ...]
    streams: tuple[StreamSpec, ...]  # one unnamed (`stream:`) or several by IRI (`streams:`)
    static: tuple[StaticData, ...] = ()
    kpis: KpiSpec = field(default_factory=KpiSpec)
    description: str = ""
    seed: int = 0
    repetitions: int = 1
    variables: Mapping[str, Scalar] = field(default_factory=dict)
    sweep: Mapping[str, tuple[Scalar, ...]] = field(default_factory=dict)
    cases: tuple[Mapping[str, Scalar], ...] = ()
    sizes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    oracle: OracleSpec = field(default_factory=OracleSpec)
    stand: StandSpec = field(default_factory=StandSpec)
    spark_master: str | None = None  # `spark: {master: URL}`; None: settings, environment, local[*]
    applied_size: str | None = None
    file: Path | None = field(default=None, compare=False)
    base_dir: Path = field(default=Path("."), compare=False)
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    source: "SourceMap | None" = field(default=None, compare=False, repr=False)

    @property
    def stream(self) -> StreamSpec:
        """The first (with ``stream:``, the only) stream."""
        return self.streams[0]

    @property
    def named_streams(self) -> bool:
        """True for a ``streams:`` experiment: windows bind to the stream of their IRI."""
        return self.streams[0].iri is not None

    @property
    def requires_confirmation(self) -> bool:
        """True if any engine runs an external program (docs/design/FORMATS.md: confirm before running)."""
        return any(engine.requires_confirmation for engine in self.engines)


@dataclass(frozen=True)
class RunStream:
    """One input stream of a run: its spec with generator parameters and flow resolved."""

    spec: StreamSpec
    params: Mapping[str, Any]
    flow: FlowSpec | None

    @property
    def iri(self) -> str | None:
        return self.spec.iri


@dataclass(frozen=True)
class RunSpec:
    """One concrete run: an engine, a query filled with one variable combination, a repetition.

    ``seed`` is shared by all engines and queries of the same repetition so that they see
    the same stream and the same random choices (see ``derive_seed``). ``streams`` follow
    the experiment's; ``stream``, ``stream_params`` and ``flow`` are the first one's.
    """

    index: int
    run_id: str
    case_index: int
    repetition: int
    variables: Mapping[str, Scalar]
    engine: EngineSpec
    engine_parameters: Mapping[str, Any]
    query: QuerySpec
    query_text: str
    streams: tuple[RunStream, ...]
    seed: int

    @property
    def stream(self) -> StreamSpec:
        return self.streams[0].spec

    @property
    def stream_params(self) -> Mapping[str, Any]:
        return self.streams[0].params

    @property
    def flow(self) -> FlowSpec | None:
        return self.streams[0].flow

    @property
    def requires_confirmation(self) -> bool:
        return self.engine.requires_confirmation
