"""Application time: durations and time units (docs/design/SEMANTICS.md "Time").

Time is stored as integer milliseconds everywhere. A *time unit* is the granularity an
engine distinguishes (CSRBench Table 1: C-SPARQL ~1 s, CQELS/SPARQLstream ~100 ms); it
bounds the admissible t0 values (one per unit within a slide, RSP-QL Theorem 1).
"""

from __future__ import annotations

import re
from enum import Enum

from rsp_workbench.errors import UserError


class TimeUnit(Enum):
    """Time units with their length in milliseconds."""

    MS = "ms"
    HUNDRED_MS = "100ms"
    S = "s"
    MIN = "m"
    H = "h"

    @property
    def millis(self) -> int:
        return _UNIT_MILLIS[self]

    @classmethod
    def parse(cls, text: str, field: str = "unit") -> "TimeUnit":
        aliases = {
            "ms": cls.MS, "millisecond": cls.MS, "milliseconds": cls.MS,
            "100ms": cls.HUNDRED_MS, "hundred-ms": cls.HUNDRED_MS,
            "s": cls.S, "sec": cls.S, "second": cls.S, "seconds": cls.S,
            "m": cls.MIN, "min": cls.MIN, "minute": cls.MIN, "minutes": cls.MIN,
            "h": cls.H, "hour": cls.H, "hours": cls.H,
        }
        try:
            return aliases[text.strip().lower()]
        except KeyError:
            raise UserError(
                f"unknown time unit {text!r}; expected one of ms, 100ms, s, m, h", field=field
            ) from None


_UNIT_MILLIS = {TimeUnit.MS: 1, TimeUnit.HUNDRED_MS: 100, TimeUnit.S: 1000, TimeUnit.MIN: 60_000, TimeUnit.H: 3_600_000}

_SUFFIX_MILLIS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d)?\s*$", re.IGNORECASE)
_ISO_DURATION = re.compile(
    r"^P(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?$",
    re.IGNORECASE,
)


def parse_duration(value: str | int | float, *, default_unit: str = "ms", field: str = "duration") -> int:
    """Parse ``5s``, ``100ms``, ``1m``, ``2h``, ``PT10S`` (xsd:duration) or a bare number to ms.

    A bare number is read in ``default_unit``. Fractions must resolve to whole milliseconds.
    """
    if isinstance(value, bool):
        raise UserError(f"expected a duration, got {value!r}", field=field)
    if isinstance(value, (int, float)):
        number, unit_ms = float(value), _SUFFIX_MILLIS[default_unit]
    else:
        text = str(value).strip()
        iso = _ISO_DURATION.match(text)
        if iso and text.upper() not in ("P", "PT"):
            total = 0.0
            for key, ms in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
                if iso.group(key):
                    total += float(iso.group(key)) * ms
            return _whole_ms(total, text, field)
        match = _DURATION.match(text)
        if not match:
            raise UserError(
                f"invalid duration {text!r}; expected e.g. 500ms, 5s, 1m, 2h or PT10S", field=field
            )
        number = float(match.group(1))
        unit_ms = _SUFFIX_MILLIS[(match.group(2) or default_unit).lower()]
    return _whole_ms(number * unit_ms, str(value), field)


# The longest duration any field accepts (about 31,700 years): windows, slides, t0 and
# stream lengths stay far inside int64 milliseconds even added to epoch-ms times.
MAX_DURATION_MS = 10**15


def _whole_ms(total: float, text: str, field: str) -> int:
    if total < 0:
        raise UserError(f"duration {text!r} is negative", field=field)
    if not total <= MAX_DURATION_MS:  # also inf and NaN
        raise UserError(f"duration {text!r} is longer than the limit of {MAX_DURATION_MS:.0e} ms "
                        "(about 31,700 years)", field=field)
    rounded = round(total)
    if abs(total - rounded) > 1e-6:
        raise UserError(f"duration {text!r} is not a whole number of milliseconds", field=field)
    return int(rounded)


def format_duration(ms: int) -> str:
    """Shortest exact text for a duration in ms (``5000`` → ``5s``)."""
    for suffix, size in (("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms and ms % size == 0:
            return f"{ms // size}{suffix}"
    return f"{ms}ms"
