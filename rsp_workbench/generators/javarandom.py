"""``java.util.Random`` reproduced exactly, plus a vectorised ``nextInt`` for long runs.

YABench's generators draw from ``java.util.Random``; streams are byte-identical only if
every draw is. :class:`JavaRandom` is the plain definition (48-bit LCG, Java SE API docs of
``Random``); :func:`next_int_block` produces many consecutive ``nextInt(bound)`` results
at numpy speed by computing LCG states with jump-ahead constants (affine composition of the
LCG step) and *filtering* the rejected draws: a draw that the rejection loop refuses just
consumes one more state, so the accepted outputs are exactly the accepted states' values,
in order.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

MULTIPLIER = 0x5DEECE66D
ADDEND = 0xB
MASK48 = (1 << 48) - 1
LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1
INT_MAX = (1 << 31) - 1


def scramble_seed(seed: int) -> int:
    """``Random(seed)``'s initial state: ``(seed ^ 0x5DEECE66D) & (2^48 - 1)``.

    ``seed`` is a Java long; Python's ``&`` on a negative int sees its two's complement,
    so negative seeds and ``Long.MIN_VALUE`` give the same low 48 bits as in Java.
    """
    if not LONG_MIN <= seed <= LONG_MAX:
        raise ValueError(f"seed {seed} is outside the Java long range")
    return (seed ^ MULTIPLIER) & MASK48


def lcg_step(state: int) -> int:
    """One step of the generator: ``state * 0x5DEECE66D + 0xB mod 2^48``."""
    return (state * MULTIPLIER + ADDEND) & MASK48


def r31(state: int) -> int:
    """``next(31)`` read from an (already advanced) state: its top 31 bits."""
    return state >> 17


def accepts(r: int, bound: int) -> bool:
    """Whether ``nextInt(bound)``'s rejection loop accepts ``r = next(31)``.

    Java tests ``u - (u % bound) + (bound - 1) < 0`` in 32-bit ``int`` arithmetic: the sum
    is never negative mathematically, so it is negative exactly when it overflows 2^31 - 1.
    Power-of-two bounds never reject.
    """
    if bound & (bound - 1) == 0:
        return True
    return r - r % bound + (bound - 1) <= INT_MAX


class JavaRandom:
    """A plain, sequential ``java.util.Random`` (the reference for the vectorised path)."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = scramble_seed(seed)

    def next(self, bits: int) -> int:
        """``next(bits)``: advance, return the top ``bits`` bits as a signed 32-bit int."""
        self.state = (self.state * MULTIPLIER + ADDEND) & MASK48
        value = self.state >> (48 - bits)
        if value >= 1 << 31:  # Java's (int) cast of the 32-bit value
            value -= 1 << 32
        return value

    def next_int(self, bound: int | None = None) -> int:
        """``nextInt()`` or ``nextInt(bound)`` with Java's power-of-two path and rejection loop."""
        if bound is None:
            return self.next(32)
        if not 0 < bound <= INT_MAX:
            raise ValueError(f"bound must be positive and fit a Java int, got {bound}")
        r = self.next(31)
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        r = u % bound
        while u - r + m > INT_MAX:
            u = self.next(31)
            r = u % bound
        return r


@lru_cache(maxsize=8)
def _jump_tables(size: int) -> tuple[Any, Any]:
    """``A[k] = a^k``, ``C[k] = c (a^k - 1)/(a - 1)`` mod 2^48 for k = 1..size (uint64).

    State k steps ahead of ``x`` is ``A[k] x + C[k] mod 2^48``. Built by doubling:
    composing ``s`` then ``k`` steps gives ``A[s+k] = A[k] A[s]``, ``C[s+k] = A[k] C[s] + C[k]``.
    uint64 products wrap mod 2^64, and 2^48 divides 2^64, so masking after the wrap is exact.
    """
    import numpy as np

    mask = np.uint64(MASK48)
    a = np.empty(size + 1, dtype=np.uint64)
    c = np.empty(size + 1, dtype=np.uint64)
    a[0], c[0] = 1, 0
    filled = 1  # a[0:filled] is valid
    a[1], c[1] = MULTIPLIER, ADDEND
    filled = 2
    while filled < size + 1:
        s = filled - 1  # we know 0..s; extend with s+k for k = 1..s
        take = min(s, size - s)
        a_s = np.full(take, a[s], dtype=np.uint64)
        c_s = np.full(take, c[s], dtype=np.uint64)
        a[s + 1 : s + 1 + take] = (a[1 : 1 + take] * a_s) & mask
        c[s + 1 : s + 1 + take] = (a[1 : 1 + take] * c_s + c[1 : 1 + take]) & mask
        filled = s + 1 + take
    a.flags.writeable = False
    c.flags.writeable = False
    return a[1:], c[1:]


BLOCK = 1 << 18


def lcg_states(state: int, count: int) -> Any:
    """The next ``count`` states after ``state`` as a uint64 array (vectorised)."""
    import numpy as np

    out = np.empty(count, dtype=np.uint64)
    mask = np.uint64(MASK48)
    done = 0
    while done < count:
        take = min(BLOCK, count - done)
        a, c = _jump_tables(BLOCK)
        start = np.full(take, state, dtype=np.uint64)
        block = out[done : done + take]
        np.multiply(a[:take], start, out=block)
        block += c[:take]
        block &= mask
        state = int(block[-1])
        done += take
    return out


def next_int_block(state: int, bound: int, count: int) -> tuple[Any, int]:
    """``count`` consecutive ``nextInt(bound)`` results from ``state``; returns ``(values, new_state)``.

    ``values`` is an int64 numpy array; ``new_state`` is the generator state afterwards,
    exactly as if the sequential loop had run (rejected draws consumed their states too).
    """
    import numpy as np

    if not 0 < bound <= INT_MAX:
        raise ValueError(f"bound must be positive and fit a Java int, got {bound}")
    if count <= 0:
        return np.empty(0, dtype=np.int64), state
    power_of_two = bound & (bound - 1) == 0
    pieces = []
    needed = count
    while needed > 0:
        # rejection probability is < 1/2 per state; ask a little more than needed
        states = lcg_states(state, needed + (needed >> 4) + 16 if not power_of_two else needed)
        r = (states >> np.uint64(17)).astype(np.int64)
        if power_of_two:
            values = (r * bound) >> 31
            pieces.append(values)
            state = int(states[-1])
            needed = 0
            break
        values = r % bound
        ok = (r - values + (bound - 1)) <= INT_MAX
        accepted = np.flatnonzero(ok)
        if len(accepted) >= needed:
            last = int(accepted[needed - 1])
            pieces.append(values[accepted[:needed]])
            state = int(states[last])
            needed = 0
        else:
            pieces.append(values[accepted])
            state = int(states[-1])
            needed -= len(accepted)
    result = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
    return result, state
