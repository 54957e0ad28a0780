"""The stream element: one timestamped RDF statement.

Terms are kept as N-Triples term text (``<iri>``, ``_:b0``, ``"lex"^^<dt>``, ``"lex"@en``)
so that reading, writing and hashing stay cheap; convert to rdflib terms only where
SPARQL evaluation needs them (``rsp_workbench.streams.terms``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

XSD = "http://www.w3.org/2001/XMLSchema#"
# Application time is int64 milliseconds (the Parquet ``t`` column, the oracle's numpy arrays);
# readers refuse a time outside this range with file:line instead of overflowing later.
MIN_TIME_MS = -(1 << 63)
MAX_TIME_MS = (1 << 63) - 1


class StreamElement(NamedTuple):
    """``(s, p, o, t)`` with optional graph name; ``t`` is application time in ms (int).

    RSP-QL Def. 9: a timestamped RDF statement. A NamedTuple (not a dataclass) because
    readers create millions of them and tuple construction is the fastest option.
    """

    subject: str
    predicate: str
    object: str
    t: int
    graph: str | None = None

    def triple(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)


@dataclass(frozen=True)
class StreamSource:
    """A stream file (or CSRBench folder) and how to read it, for a reader that is not this
    process (the Spark job reads it on its executors, partitioned by file ranges)."""

    path: str
    format: str
    interval_ms: int = 1000  # csrbench-dir: time between data_NN.ttl files
    on_disorder: str = "error"  # "error" or "warn" (sort by time, count the steps back)
