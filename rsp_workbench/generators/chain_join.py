"""``chain-join``: synthetic data for the eviction experiments (eviction-strategies.txt Sect. 3).

The paper evaluates eviction strategies on the chain join
``?a :ab ?b . ?b :bc ?c . ?c :cd ?d`` over synthetic data with uniformly distributed
matches, and names bursty data as the case where windows fail. This generator controls
what decides the recall of a bounded binding cache:

- ``match_probability``: a ``:bc`` triple's subject is, with this probability, the object
  of one of the last ``history`` ``:ab`` triples (it *matches an existing key*); otherwise
  it is a key that no ``:ab`` triple ever has (``b{n}`` with ``n >= keys``). Likewise
  ``:cd`` subjects against ``:bc`` objects. Before any ``:ab``/``:bc`` triple exists the
  subject cannot match.
- ``keys`` and ``distribution``: ``a``, ``b``, ``c``, ``d`` values of fresh keys are drawn
  from ``0..keys-1``, uniformly or Zipf-skewed (P(rank r) ∝ 1/r^zipf_exponent; key 0 is the
  most frequent). Matching subjects are drawn uniformly from the history, so they inherit
  its skew.
- ``rate`` (triples per second), one stimulus per ``tick``, and bursts: every
  ``burst_every`` for ``burst_length`` the rate is multiplied by ``burst_factor``.

Each triple's predicate is ``:ab``, ``:bc`` or ``:cd`` with equal probability. The
generator is sequential (the history), drawing from one Philox stream keyed by ``seed`` in
fixed-size blocks: same parameters, same stream.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, replace
from typing import Any, Iterator, Mapping

from rsp_workbench.errors import UserError
from rsp_workbench.generators import GeneratorSpec, ParamSpec, check_volume
from rsp_workbench.generators._random import rng_for
from rsp_workbench.streams.model import StreamElement

CHAIN = "http://example.org/chain#"
PREDICATES = tuple(f"<{CHAIN}{name}>" for name in ("ab", "bc", "cd"))
#: The join the data is made for (SPARQL; prefix ``:`` is ``CHAIN``).
QUERY = f"PREFIX : <{CHAIN}>\nSELECT ?a ?b ?c ?d WHERE {{ ?a :ab ?b . ?b :bc ?c . ?c :cd ?d . }}"
_BLOCK = 4096  # triples per random-draw block

# Inherently sequential (one RNG stream in document order): the local path is the
# default; `rspwb generate --spark` runs the same code as a Spark job.
PREFERRED_ENGINE = "local"

SPEC = GeneratorSpec(
    name="chain-join",
    doc="Synthetic triples for the chain join ?a :ab ?b . ?b :bc ?c . ?c :cd ?d (eviction "
    "experiments): match probability, key space and skew, rate and bursts.",
    params=(
        ParamSpec("duration", "duration", "stream length: stimuli at start + k·tick < start + duration", required=True),
        ParamSpec("rate", "float", "triples per second outside bursts (> 0)", default=100.0),
        ParamSpec("tick", "duration", "application time between two stimuli (> 0)", default=100),
        ParamSpec("keys", "int", "key space size per variable (a, b, c, d)", default=1000, minimum=1),
        ParamSpec(
            "match_probability", "float", "probability that a :bc/:cd subject matches a recent :ab/:bc object (0..1)",
            default=0.5,
        ),
        ParamSpec("history", "int", "recent :ab/:bc triples whose objects matching subjects are drawn from", default=1000, minimum=1),
        ParamSpec("distribution", "choice", "key distribution", default="uniform", choices=("uniform", "zipf")),
        ParamSpec("zipf_exponent", "float", "skew of the zipf distribution (> 0; 1 = classic Zipf)", default=1.0),
        ParamSpec("burst_every", "duration", "time between burst starts (0: no bursts)", default=0),
        ParamSpec("burst_length", "duration", "length of a burst (<= burst_every)", default=0),
        ParamSpec("burst_factor", "float", "rate multiplier during a burst", default=10.0, minimum=0),
        ParamSpec("start", "int", "application time (ms) of the first stimulus", default=0, minimum=0),
        ParamSpec("seed", "int", "seed of all random choices", default=0),
    ),
)

ITEM_NAME = "triples"


@dataclass(frozen=True)
class ChainParams:
    """Validated parameters (times in ms)."""

    duration: int
    rate: float
    tick: int
    keys: int
    match_probability: float
    history: int
    distribution: str
    zipf_exponent: float
    burst_every: int
    burst_length: int
    burst_factor: float
    start: int
    seed: int


def check_params(params: Mapping[str, Any] | ChainParams) -> ChainParams:
    """Validate raw or resolved parameters; errors name the parameter."""
    if isinstance(params, ChainParams):
        return params
    v = SPEC.resolve(params)
    if not v["rate"] > 0:
        raise UserError(f"must be positive, got {v['rate']:g}", field="param rate")
    if v["tick"] <= 0:
        raise UserError(f"must be positive, got {v['tick']} ms", field="param tick")
    check_volume(int(v["rate"] * v["duration"] / 1000) + v["duration"] // v["tick"], "triples and stimuli "
                 "(rate × duration + duration / tick)", "param duration")
    if not 0.0 <= v["match_probability"] <= 1.0:
        raise UserError(f"must be between 0 and 1, got {v['match_probability']:g}", field="param match_probability")
    if v["distribution"] == "zipf" and not v["zipf_exponent"] > 0:
        raise UserError(f"must be positive, got {v['zipf_exponent']:g}", field="param zipf_exponent")
    if v["burst_every"] > 0 and not 0 < v["burst_length"] <= v["burst_every"]:
        raise UserError(
            f"must be in (0, burst_every = {v['burst_every']} ms], got {v['burst_length']} ms", field="param burst_length"
        )
    if v["burst_every"] == 0 and v["burst_length"] > 0:
        raise UserError("bursts need burst_every > 0", field="param burst_every")
    return ChainParams(**{**v, "rate": float(v["rate"]), "zipf_exponent": float(v["zipf_exponent"])})


def in_burst(params: Mapping[str, Any] | ChainParams, t: int) -> bool:
    """Whether time ``t`` lies in a burst: ``(t − start) mod burst_every < burst_length``."""
    p = check_params(params)
    return p.burst_every > 0 and (t - p.start) % p.burst_every < p.burst_length


def tick_sizes(params: Mapping[str, Any] | ChainParams) -> Iterator[tuple[int, int]]:
    """``(t, triples)`` per stimulus; counts follow the rate exactly on average (carried fractions)."""
    p = check_params(params)
    expected = 0.0
    emitted = 0
    t = p.start
    while t < p.start + p.duration:
        rate = p.rate * (p.burst_factor if in_burst(p, t) else 1.0)
        expected += rate * p.tick / 1000.0
        count = math.floor(expected + 1e-9) - emitted
        emitted += count
        yield t, count
        t += p.tick


def estimate_elements(params: Mapping[str, Any] | ChainParams) -> int:
    return sum(count for _, count in tick_sizes(params))


def _key_sampler(p: ChainParams) -> Any:
    """A vectorised map from uniforms in [0, 1) to keys in ``0..keys-1``."""
    import numpy as np

    if p.distribution == "uniform":
        return lambda u: np.minimum((u * p.keys).astype(np.int64), p.keys - 1)
    weights = 1.0 / np.arange(1, p.keys + 1, dtype=np.float64) ** p.zipf_exponent
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    return lambda u: np.minimum(np.searchsorted(cdf, u, side="right"), p.keys - 1)


def _triples(p: ChainParams) -> Iterator[tuple[str, str, str]]:
    """The endless triple sequence (before timestamping)."""
    sample = _key_sampler(p)
    rng = rng_for(p.seed, "chain-join")
    ab, bc, cd = PREDICATES
    recent_b: deque[str] = deque(maxlen=p.history)
    recent_c: deque[str] = deque(maxlen=p.history)
    miss = p.keys  # non-matching keys: b{n}, c{n} with n >= keys (never an :ab/:bc object)
    while True:
        draws = rng.random((_BLOCK, 5))
        which = (draws[:, 0] * 3).astype("int64").tolist()
        matches = (draws[:, 1] < p.match_probability).tolist()
        picks = draws[:, 2].tolist()
        subjects = sample(draws[:, 3]).tolist()
        objects = sample(draws[:, 4]).tolist()
        for k in range(_BLOCK):
            kind = which[k]
            if kind == 0:
                b = f"<{CHAIN}b{objects[k]}>"
                recent_b.append(b)
                yield (f"<{CHAIN}a{subjects[k]}>", ab, b)
                continue
            recent = recent_b if kind == 1 else recent_c
            letter = "b" if kind == 1 else "c"
            if matches[k] and recent:
                subject = recent[min(len(recent) - 1, int(picks[k] * len(recent)))]
            else:
                subject = f"<{CHAIN}{letter}{miss + subjects[k]}>"
            if kind == 1:
                c = f"<{CHAIN}c{objects[k]}>"
                recent_c.append(c)
                yield (subject, bc, c)
            else:
                yield (subject, cd, f"<{CHAIN}d{objects[k]}>")


def iter_elements(params: Mapping[str, Any] | ChainParams, seed: int | None = None) -> Iterator[StreamElement]:
    """The stream: the triple sequence cut into stimuli of ``tick_sizes`` (sequential generator)."""
    p = check_params(params)
    if seed is not None:
        p = replace(p, seed=seed)
    source = _triples(p)
    for t, count in tick_sizes(p):
        for _ in range(count):
            s, pr, o = next(source)
            yield StreamElement(s, pr, o, t)
