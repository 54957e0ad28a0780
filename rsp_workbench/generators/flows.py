"""Flow shapes: how many triples each stimulus carries and when (Heaven's streamer).

Heaven's RDF2RDF-Stream (Heaven Sect. 5) cuts any RDF file into STIMULI — sets of
triples sharing one application time — whose cardinality over time follows a function F:
flows that stay stable, that are stable and then suddenly increase, or that follow a
distribution (Poisson, Gaussian). A :class:`FlowShape` is that F as a pure value: it
yields ``(t_ms, size)`` per stimulus; :func:`apply_flow` timestamps a triple source with
it. :func:`retime` replays a recorded stream at another rate and :func:`merge_streams`
merges time-ordered streams.

Shapes (``FLOW_SHAPES`` lists every parameter; stimulus ``k`` counts from 0, regular
shapes send stimulus ``k`` at ``start + k·period``):

- ``constant``: ``size`` triples each.
- ``step``: ``initial + step·⌊k / every⌋`` (+y every x stimuli).
- ``step-factor``: ``initial · factor^⌊k / every⌋`` (×y every x stimuli), rounded.
- ``custom-step``: ``initial``, then from stimulus ``x`` on the size ``y`` for each ``x:y`` in ``jumps``.
- ``linear``: ``initial + slope·k``, rounded.
- ``exponential``: ``initial · e^(rate·k)``, rounded.
- ``random``: uniform integer in ``[min, max)`` per stimulus (seeded).
- ``constant-random``: plateaus of ``every`` stimuli, each at a uniform integer in ``[min, max)``.
- ``poisson``: ``size`` triples; inter-arrival times exponential with mean ``mean`` (a Poisson process).
- ``gaussian``: ``size`` triples; inter-arrival times ``max(0, N(mean, stddev))``.
- ``burst``: ``size`` triples, ``round(size·factor)`` while ``(t − start) mod burst_every < burst_length``.

Sizes are rounded half up, never negative, and capped at ``max_size`` if given. Random
shapes draw from a Philox stream keyed by ``seed`` in fixed-size blocks, so
``stimulus_sizes(n)`` is always a prefix of ``schedule()``. With ``poisson``/``gaussian``
times are floored to whole ms: two stimuli landing on the same ms form one in the stream.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, cast

from rsp_workbench.core.time import parse_duration
from rsp_workbench.errors import UserError
from rsp_workbench.generators import ParamSpec
from rsp_workbench.generators._random import rng_for
from rsp_workbench.streams.model import StreamElement

__all__ = [
    "FLOW_SHAPES", "SHAPE_DOCS", "FlowShape", "apply_flow", "merge_streams", "parse_flow", "rate_preview",
    "read_triples", "retime",
]

_BLOCK = 1024  # random draws per block (fixed: prefixes must agree)

_COMMON = (
    ParamSpec("period", "duration", "application time between two stimuli (regular shapes)", default=100, minimum=1),
    ParamSpec("stimuli", "int", "number of stimuli (default: until the source is exhausted)", minimum=1),
    ParamSpec("start", "int", "application time (ms) of the first stimulus", default=0, minimum=0),
    ParamSpec("max_size", "int", "cap on the triples of one stimulus", minimum=1),
)
_SEED = ParamSpec("seed", "int", "seed of the random draws", default=0)
_SIZE = ParamSpec("size", "int", "triples per stimulus", default=1, minimum=1)
_INITIAL = ParamSpec("initial", "int", "triples in the first stimulus", default=1, minimum=0)
_EVERY = ParamSpec("every", "int", "stimuli between two changes", default=1, minimum=1)
_MIN = ParamSpec("min", "int", "smallest size (inclusive)", default=0, minimum=0)
_MAX = ParamSpec("max", "int", "largest size (exclusive; > min and >= 2)", required=True, minimum=1)

#: Every shape's own parameters (the common ``period``, ``stimuli``, ``start``, ``max_size`` come first).
FLOW_SHAPES: dict[str, tuple[ParamSpec, ...]] = {
    "constant": _COMMON + (_SIZE,),
    "step": _COMMON + (_INITIAL, ParamSpec("step", "int", "triples added at each change (may be negative)", default=1), _EVERY),
    "step-factor": _COMMON + (
        _INITIAL, ParamSpec("factor", "float", "size multiplier at each change (> 0)", default=2.0), _EVERY,
    ),
    "custom-step": _COMMON + (
        _INITIAL,
        ParamSpec("jumps", "str", "'x:y, x:y …': from stimulus x on the size is y", required=True),
    ),
    "linear": _COMMON + (_INITIAL, ParamSpec("slope", "float", "triples added per stimulus (may be negative)", default=1.0)),
    "exponential": _COMMON + (
        ParamSpec("initial", "int", "triples in the first stimulus", default=1, minimum=1),
        ParamSpec("rate", "float", "growth rate per stimulus: size = initial·e^(rate·k)", default=0.01),
    ),
    "random": _COMMON + (_MIN, _MAX, _SEED),
    "constant-random": _COMMON + (_MIN, _MAX, ParamSpec("every", "int", "stimuli per plateau", default=10, minimum=1), _SEED),
    "poisson": _COMMON + (_SIZE, ParamSpec("mean", "duration", "mean inter-arrival time (> 0)", required=True), _SEED),
    "gaussian": _COMMON + (
        _SIZE,
        ParamSpec("mean", "duration", "mean inter-arrival time (> 0)", required=True),
        ParamSpec("stddev", "duration", "standard deviation of the inter-arrival time", default=0),
        _SEED,
    ),
    "burst": _COMMON + (
        _SIZE,
        ParamSpec("burst_every", "duration", "time between the starts of two bursts (> 0)", required=True),
        ParamSpec("burst_length", "duration", "length of a burst (<= burst_every)", required=True),
        ParamSpec("factor", "float", "size multiplier during a burst", default=10.0, minimum=0),
    ),
}

SHAPE_DOCS: dict[str, str] = {
    "constant": "the same number of triples in every stimulus (Heaven's regular flow)",
    "step": "+step triples every `every` stimuli",
    "step-factor": "×factor every `every` stimuli",
    "custom-step": "jump to size y at stimulus x, for each x:y",
    "linear": "initial + slope·k triples in stimulus k",
    "exponential": "initial·e^(rate·k) triples in stimulus k",
    "random": "uniform random size in [min, max)",
    "constant-random": "random plateaus: a uniform size in [min, max) held for `every` stimuli",
    "poisson": "Poisson process: exponential inter-arrival times with mean `mean`",
    "gaussian": "Gaussian inter-arrival times N(mean, stddev), cut at 0",
    "burst": "size·factor during bursts of burst_length every burst_every",
}

_REGULAR = frozenset(FLOW_SHAPES) - {"poisson", "gaussian"}


def _round(value: float) -> int:
    """Round half up, never negative."""
    return max(0, math.floor(value + 0.5))


def _parse_jumps(raw: Any, field: str) -> tuple[tuple[int, int], ...]:
    """``"100:50, 200:10"``, a mapping ``{100: 50}`` or pairs ``[[100, 50]]`` → sorted pairs."""
    try:
        if isinstance(raw, Mapping):
            pairs = [(int(x), int(y)) for x, y in raw.items()]
        elif isinstance(raw, str):
            pairs = []
            for part in raw.replace(";", ",").split(","):
                if part.strip():
                    index, size = part.split(":")
                    pairs.append((int(index.strip()), int(size.strip())))
        else:
            pairs = [(int(x), int(y)) for x, y in raw]
    except (TypeError, ValueError):
        raise UserError(f"expected 'x:y, x:y …' (stimulus index: size), got {raw!r}", field=field) from None
    if not pairs:
        raise UserError("needs at least one x:y jump", field=field)
    for x, y in pairs:
        if x < 0 or y < 0:
            raise UserError(f"jump {x}:{y} has a negative stimulus index or size", field=field)
    if len({x for x, _ in pairs}) != len(pairs):
        raise UserError("two jumps at the same stimulus index", field=field)
    return tuple(sorted(pairs))


@dataclass(frozen=True)
class FlowShape:
    """A validated flow shape (Heaven's F): stimulus sizes and application times.

    Build it with :meth:`parse`; fields a shape does not use keep their defaults. Times in ms.
    """

    shape: str = "constant"
    period: int = 100
    stimuli: int | None = None
    start: int = 0
    max_size: int | None = None
    seed: int = 0
    size: int = 1
    initial: int = 1
    step: int = 1
    factor: float = 2.0
    every: int = 1
    jumps: tuple[tuple[int, int], ...] = ()
    slope: float = 1.0
    rate: float = 0.01
    min: int = 0
    max: int = 2
    mean: int = 100
    stddev: int = 0
    burst_every: int = 1000
    burst_length: int = 100

    @classmethod
    def parse(cls, raw: Mapping[str, Any], *, field: str = "flow") -> "FlowShape":
        """Build from ``{shape: step, initial: 10, step: 5, every: 100, period: 100ms, …}``.

        Errors name the setting as ``{field}.{name}`` (e.g. ``flow.period``); an unknown
        shape lists the known ones, an unknown setting lists the shape's settings.
        """
        settings = dict(raw)
        shape = settings.pop("shape", None)
        if shape is None:
            raise UserError(f"is required; expected one of {', '.join(FLOW_SHAPES)}", field=f"{field}.shape")
        return cls.from_settings(str(shape), settings, field=field)

    @classmethod
    def from_settings(cls, shape: str, settings: Mapping[str, Any], *, field: str = "flow") -> "FlowShape":
        """Build from a shape name and its settings (the experiment's ``FlowSpec``)."""
        specs = FLOW_SHAPES.get(shape)
        if specs is None:
            raise UserError(f"unknown flow shape {shape!r}; expected one of {', '.join(FLOW_SHAPES)}", field=f"{field}.shape")
        by_name = {spec.name: spec for spec in specs}
        values: dict[str, Any] = {}
        for name, raw in settings.items():
            spec = by_name.get(str(name))
            if spec is None:
                raise UserError(
                    f"unknown setting for flow shape {shape}; expected one of {', '.join(by_name)}", field=f"{field}.{name}"
                )
            if spec.name == "jumps":
                values["jumps"] = _parse_jumps(raw, f"{field}.jumps")
                continue
            try:
                values[spec.name] = spec.parse(raw)
            except UserError as error:
                raise UserError(error.message, field=f"{field}.{spec.name}") from None
        for spec in specs:
            if spec.name not in values:
                if spec.required:
                    raise UserError(f"is required for flow shape {shape}", field=f"{field}.{spec.name}")
                values[spec.name] = spec.default  # shape-specific defaults (burst factor 10, plateaus of 10)
        values = {k: v for k, v in values.items() if v is not None}
        flow = cls(shape=shape, **values)
        flow._check(field)
        return flow

    def _check(self, field: str) -> None:
        def fail(name: str, message: str) -> None:
            raise UserError(message, field=f"{field}.{name}")

        if self.period <= 0:
            fail("period", f"must be positive, got {self.period} ms")
        if self.shape == "step-factor" and self.factor <= 0:
            fail("factor", f"must be positive, got {self.factor:g}")
        if self.shape in ("random", "constant-random"):
            if self.max <= self.min:
                fail("max", f"must be greater than min ({self.min}), got {self.max}")
            if self.max < 2:
                fail("max", f"must be at least 2 (sizes are drawn from [min, max)), got {self.max}")
        if self.shape in ("poisson", "gaussian") and self.mean <= 0:
            fail("mean", f"must be positive, got {self.mean} ms")
        if self.shape == "burst":
            if self.burst_every <= 0:
                fail("burst_every", f"must be positive, got {self.burst_every} ms")
            if not 0 < self.burst_length <= self.burst_every:
                fail("burst_length", f"must be in (0, burst_every = {self.burst_every} ms], got {self.burst_length} ms")

    # ------------------------------------------------------------------ sizes and times

    def _size_at(self, k: int) -> int:
        """Size of stimulus ``k`` for the deterministic shapes."""
        s = self.shape
        if s in ("constant", "poisson", "gaussian"):
            return self.size
        if s == "step":
            return max(0, self.initial + self.step * (k // self.every))
        if s == "step-factor":
            return _round(self.initial * self.factor ** (k // self.every))
        if s == "custom-step":
            size = self.initial
            for x, y in self.jumps:
                if k >= x:
                    size = y
            return size
        if s == "linear":
            return _round(self.initial + self.slope * k)
        if s == "exponential":
            exponent = self.rate * k
            return _round(self.initial * math.exp(exponent)) if exponent < 700 else 1 << 62
        raise AssertionError(s)

    def _dead_after(self, k: int, size: int) -> bool:
        """True when stimulus ``k`` and all later ones are empty (the flow has ended)."""
        if size != 0 or self.shape in ("random", "constant-random", "burst"):
            return False
        s = self.shape
        if s == "step":
            return self.step <= 0
        if s == "step-factor":
            return self.factor <= 1 or self.initial == 0
        if s == "custom-step":
            return all(x <= k or y == 0 for x, y in self.jumps)
        if s == "linear":
            return self.slope <= 0
        return s in ("constant", "poisson", "gaussian", "exponential")

    def _sizes(self) -> Iterator[int]:
        cap = self.max_size
        if self.shape in ("random", "constant-random"):
            raw: Iterator[int] = self._random_sizes()
        elif self.shape == "burst":
            raw = (self._burst_size(t) for t in self._times())
        else:
            raw = self._deterministic_sizes()
        for size in raw:
            yield size if cap is None else min(size, cap)

    def _deterministic_sizes(self) -> Iterator[int]:
        k = 0
        while True:
            size = self._size_at(k)
            if self._dead_after(k, size):
                return
            yield size
            k += 1

    def _random_sizes(self) -> Iterator[int]:
        rng = rng_for(self.seed, "flow", self.shape)
        span = self.max - self.min
        repeat = 1 if self.shape == "random" else self.every  # constant-random: one draw per plateau
        while True:
            for u in rng.random(_BLOCK).tolist():
                value = self.min + min(span - 1, int(u * span))
                for _ in range(repeat):
                    yield value

    def _burst_size(self, t: int) -> int:
        in_burst = (t - self.start) % self.burst_every < self.burst_length
        return _round(self.size * self.factor) if in_burst else self.size

    def _times(self) -> Iterator[int]:
        if self.shape in _REGULAR:
            k = 0
            while True:
                yield self.start + k * self.period
                k += 1
        rng = rng_for(self.seed, "flow", self.shape, "gaps")
        clock = float(self.start)
        while True:
            if self.shape == "poisson":
                gaps = -self.mean * _log1p_neg(rng.random(_BLOCK))
            else:
                gaps = rng.normal(self.mean, self.stddev, _BLOCK) if self.stddev > 0 else [float(self.mean)] * _BLOCK
            for gap in gaps:
                clock += max(0.0, float(gap))
                yield math.floor(clock)

    def schedule(self) -> Iterator[tuple[int, int]]:
        """``(t_ms, size)`` per stimulus, non-decreasing in t; ends after ``stimuli`` or when
        the shape can only produce empty stimuli from then on."""
        pairs = zip(self._times(), self._sizes())
        return islice(pairs, self.stimuli) if self.stimuli is not None else pairs

    def stimulus_sizes(self, n: int) -> list[int]:
        """The sizes of the first ``n`` stimuli (fewer if the flow ends earlier)."""
        return [size for _, size in islice(self.schedule(), n)]


def _log1p_neg(u: Any) -> Any:
    import numpy as np

    return np.log1p(-u)


def parse_flow(raw: Mapping[str, Any] | FlowShape, *, field: str = "flow") -> FlowShape:
    """A FlowShape from a mapping with ``shape`` (or an existing FlowShape)."""
    return raw if isinstance(raw, FlowShape) else FlowShape.parse(raw, field=field)


# ---------------------------------------------------------------------- applying shapes


def apply_flow(
    source: Iterable[tuple[str, str, str]] | Iterable[StreamElement], shape: FlowShape | Mapping[str, Any]
) -> Iterator[StreamElement]:
    """Cut a triple source into stimuli and timestamp them (Heaven's RDF2RDF-Stream step 2–3).

    ``source`` yields ``(s, p, o)`` N-Triples term text or StreamElements (their time is
    replaced, their graph kept). Stops when the source or the schedule ends; a last
    stimulus may be partial, triples left over after the schedule are dropped.
    """
    flow = parse_flow(shape)
    items = iter(source)
    for t, size in flow.schedule():
        if size == 0:
            continue
        taken = 0
        for item in islice(items, size):
            taken += 1
            if isinstance(item, StreamElement):
                yield item._replace(t=t)
            else:
                s, p, o = cast(tuple[str, str, str], item)  # not a StreamElement: a triple of term texts
                yield StreamElement(s, p, o, t)
        if taken < size:
            return


def read_triples(path: str | Path, fmt: str | None = None) -> Iterator[tuple[str, str, str]]:
    """All triples of an RDF file (any rdflib format) as N-Triples term text, in file order.

    Heaven's streamer "parses the incoming data in order": triples come in the order the
    parser produces them (document order for N-Triples, Turtle, RDF/XML; duplicates
    dropped). Blank nodes are relabelled ``_:b0, _:b1 …`` in order of appearance so that
    two reads give the same text. Parsers that bypass ``Graph.add`` (JSON-LD) fall back to
    rdflib's canonical blank-node labelling and sorted order.
    """
    from rdflib import BNode, Graph
    from rdflib.util import guess_format

    from rsp_workbench.streams.terms import from_rdflib

    class _InOrder(Graph):
        """A Graph that remembers the order in which the parser adds triples."""

        def __init__(self) -> None:
            super().__init__()
            self.order: list[Any] = []

        def add(self, triple: Any) -> Any:
            self.order.append(triple)
            return super().add(triple)

    name = str(path)
    fmt = fmt or guess_format(name)
    if fmt is None:
        raise UserError("cannot tell the RDF format from the file name; give it explicitly", file=name, field="format")
    graph = _InOrder()
    try:
        graph.parse(name, format=fmt)
    except FileNotFoundError:
        raise UserError("file not found", file=name) from None
    except Exception as error:  # rdflib raises many parser-specific types
        raise UserError(f"cannot parse as {fmt}: {error}", file=name) from None
    ordered = list(dict.fromkeys(graph.order))
    if len(ordered) != len(graph):
        from rdflib.compare import to_canonical_graph

        ordered = sorted(to_canonical_graph(graph), key=lambda triple: tuple(node.n3() for node in triple))
    labels: dict[BNode, str] = {}

    def text(node: Any) -> str:
        if isinstance(node, BNode):
            if node not in labels:
                labels[node] = f"_:b{len(labels)}"
            return labels[node]
        return from_rdflib(node)

    for s, p, o in ordered:
        yield (text(s), text(p), text(o))


def retime(
    elements: Iterable[StreamElement], factor: float | None = None, *, rate: float | None = None, origin: int | None = None
) -> Iterator[StreamElement]:
    """Replay a recorded stream faster or slower: ``t' = t0 + round((t − t0) / factor)``.

    ``factor`` 2 plays twice as fast. Alternatively ``rate`` (triples per second) picks the
    factor that gives the stream that mean rate (elements ÷ time span; reads the stream
    into memory). ``t0`` is ``origin`` or the first element's time. Order and
    contemporaneity are kept (rounding is monotone).
    """
    if (factor is None) == (rate is None):
        raise UserError("give exactly one of factor and rate", field="factor")
    if rate is not None:
        if rate <= 0:
            raise UserError(f"must be positive, got {rate:g}", field="rate")
        recorded = list(elements)
        if len(recorded) < 2 or recorded[-1].t == recorded[0].t:
            raise UserError("the stream spans no time, so it has no rate to change", field="rate")
        current = len(recorded) * 1000.0 / (recorded[-1].t - recorded[0].t)
        factor = rate / current
        elements = recorded
    assert factor is not None
    if not factor > 0:
        raise UserError(f"must be positive, got {factor:g}", field="factor")
    t0 = origin
    for element in elements:
        if t0 is None:
            t0 = element.t
        yield element._replace(t=t0 + math.floor((element.t - t0) / factor + 0.5))


def merge_streams(*streams: Iterable[StreamElement]) -> Iterator[StreamElement]:
    """Merge time-ordered streams into one; equal times keep argument order (stable)."""
    return heapq.merge(*streams, key=lambda e: e.t)


def rate_preview(
    shape: FlowShape | Mapping[str, Any], duration: int | str, *, bins: int = 100
) -> list[tuple[int, float]]:
    """``(bin start ms, triples/s)`` over ``[start, start + duration)`` for a preview plot."""
    flow = parse_flow(shape)
    span = parse_duration(duration, field="duration")
    if span <= 0:
        raise UserError(f"must be positive, got {span} ms", field="duration")
    if bins < 1:
        raise UserError(f"must be at least 1, got {bins}", field="bins")
    width = max(1, -(-span // bins))
    count = -(-span // width)
    totals = [0] * count
    end = flow.start + span
    for t, size in flow.schedule():
        if t >= end:
            break
        totals[(t - flow.start) // width] += size
    return [(flow.start + i * width, total * 1000.0 / width) for i, total in enumerate(totals)]
