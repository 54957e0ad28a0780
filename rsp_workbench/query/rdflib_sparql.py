"""The parts of rdflib's SPARQL engine beneath its public API that the workbench builds on, in one place.

The oracle, the query model and the built-in engines evaluate rdflib's algebra themselves
(expressions per solution mapping, aggregates, effective boolean values), which needs names
rdflib does not promise to keep: ``CompValue``, ``QueryContext``, ``FrozenBindings`` and the
private ``_eval``/``_ebv``. Every such import goes through this module, rdflib is pinned below
its next major version (pyproject.toml), and ``tests/query/test_rdflib_sparql.py`` checks each
name and its behaviour, so a change in rdflib fails one test loudly instead of many verdicts
quietly.
"""

from __future__ import annotations

from rdflib.plugins.sparql.aggregates import Aggregator, Average, Sum, type_safe_numbers
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.datatypes import type_promotion
from rdflib.plugins.sparql.evaluate import evalPart
from rdflib.plugins.sparql.evalutils import _ebv as ebv
from rdflib.plugins.sparql.evalutils import _eval as eval_expression
from rdflib.plugins.sparql.operators import numeric
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import FrozenBindings, NotBoundError, Query, QueryContext, SPARQLError

__all__ = [
    "Aggregator", "Average", "CompValue", "FrozenBindings", "NotBoundError", "Query", "QueryContext",
    "SPARQLError", "Sum", "ebv", "evalPart", "eval_expression", "numeric", "parseQuery", "translateQuery",
    "type_promotion", "type_safe_numbers",
]
