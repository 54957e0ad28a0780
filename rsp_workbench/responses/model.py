"""One model for what engines answer, whatever file it came from.

A *solution mapping* (SPARQL's µ) is a frozenset of ``(variable, term)`` pairs: the
variable without ``?``, the term as canonical N-Triples text. Frozensets are hashable, so
multisets of mappings are ``collections.Counter``s and set/bag differences (Istream,
Dstream; docs/design/SEMANTICS.md "R2S") are cheap. An unbound variable is simply absent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

SolutionMapping = frozenset[tuple[str, str]]
#: Another name for a solution mapping (the term the issue uses).
Binding = SolutionMapping
#: ``+`` Istream insertion, ``-`` Dstream deletion, ``=`` Rstream (the whole relation).
Operation = Literal["+", "-", "="]
OPERATIONS: tuple[str, ...] = ("+", "-", "=")


def make_mapping(values: Mapping[str, str | None]) -> SolutionMapping:
    """A solution mapping from ``{variable: term}``; ``?``/``$`` prefixes dropped, None = unbound.

    Terms are taken as given (callers that read files canonicalise them first).
    """
    return frozenset((name.lstrip("?$"), term) for name, term in values.items() if term is not None)


def mapping(**values: str | None) -> SolutionMapping:
    """Keyword shorthand for tests: ``mapping(sensor="<http://x/s1>")``."""
    return make_mapping(values)


def mapping_dict(solution: SolutionMapping) -> dict[str, str]:
    """``{variable: term}`` sorted by variable (for JSON and display)."""
    return dict(sorted(solution))


@dataclass(frozen=True)
class EngineResponse:
    """One emission of an engine: the bindings it reported at one instant.

    ``application_time`` is ms of stream time if the engine says (CSRBench JSON does,
    YABench QR_ files do not); ``system_time`` is epoch ms of the emission if recorded.
    ``bindings`` is a tuple (a bag: duplicates are kept); empty for an empty-relation
    notification.
    """

    application_time: int | None
    system_time: int | None
    operation: str
    bindings: tuple[SolutionMapping, ...]

    def __post_init__(self) -> None:
        if self.operation not in OPERATIONS:
            raise ValueError(f"operation must be one of {OPERATIONS}, not {self.operation!r}")


@dataclass(frozen=True)
class ResponseLog:
    """All responses of one engine run for one query, in emission order.

    ``run_start`` is the run's start in epoch ms when the file records it (YABench QR_).
    ``engine``/``query``/``run`` identify the run in the workbench's own log.
    """

    variables: tuple[str, ...]
    responses: tuple[EngineResponse, ...]
    source: str = ""
    run_start: int | None = None
    engine: str | None = None
    query: str | None = None
    run: str | None = None

    def binding_count(self) -> int:
        """Total number of solution mappings over all responses."""
        return sum(len(response.bindings) for response in self.responses)
