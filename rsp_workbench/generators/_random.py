"""Counter-based randomness: every draw is a pure function of (seed, key…, counter).

Generators that run as parallel Spark tasks must produce the same stream however the
keys are grouped into tasks (docs/design/ARCHITECTURE.md "Reproducible by construction"). So no
global or shared RNG state: each key gets its own stream, derived from the experiment
seed and the key (numpy ``Philox`` seeded by a ``SeedSequence`` built from a hash of the
parts), and single decisions (a station's phase, an observation's delivery delay) come
from a keyed hash.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

_U64 = (1 << 64) - 1
_TWO_TO_53 = float(1 << 53)


def _digest(parts: tuple[object, ...]) -> bytes:
    text = "\x1f".join(f"{type(part).__name__}:{part}" for part in parts)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def hash64(*parts: object) -> int:
    """A 64-bit unsigned integer determined by ``parts`` (ints and strings; order matters)."""
    return int.from_bytes(_digest(parts)[:8], "little")


def unit_hash(*parts: object) -> float:
    """A float in [0, 1) determined by ``parts``: one reproducible uniform draw."""
    return (hash64(*parts) >> 11) / _TWO_TO_53


def rng_for(*parts: object) -> "np.random.Generator":
    """A numpy Generator (Philox) whose stream is determined by ``parts`` alone.

    Draw in blocks of a fixed size from the start so that the draws do not depend on how
    a caller chunks its output.
    """
    import numpy as np

    words = [int.from_bytes(_digest(parts)[i : i + 4], "little") for i in range(0, 16, 4)]
    return np.random.Generator(np.random.Philox(np.random.SeedSequence(words)))
