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

import logging
from typing import Any

from rdflib.plugins.sparql.aggregates import Aggregator, Average, Sum, type_safe_numbers
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.datatypes import type_promotion
from rdflib.plugins.sparql.evaluate import evalPart
from rdflib.plugins.sparql.evalutils import _ebv as _rdflib_ebv
from rdflib.plugins.sparql.evalutils import _eval as _rdflib_eval
from rdflib.plugins.sparql.operators import numeric
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.plugins.sparql.parserutils import CompValue, Expr
from rdflib.plugins.sparql.sparql import FrozenBindings, NotBoundError, Query, QueryContext, SPARQLError

#: Operators whose operands must be numbers (or comparable values): an ill-typed literal there is a
#: type error (SPARQL 1.1 Sect. 17.3), which rdflib turns into Python exceptions or wrong answers.
_VALUE_OPERATORS = frozenset({"AdditiveExpression", "MultiplicativeExpression", "RelationalExpression",
                              "UnaryMinus", "UnaryPlus"})
#: What rdflib's operators raise on values they cannot handle, instead of a SPARQL type error.
_PYTHON_ERRORS = (TypeError, ValueError, ArithmeticError, RecursionError)


def _ill_typed_operand(expr: Any, bindings: Any) -> bool:
    """True if an arithmetic or comparison operator in ``expr`` has an operand bound to an ill-typed
    literal (``"abc"^^xsd:integer``)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, CompValue):
            if node.name in _VALUE_OPERATORS:
                # dict.get, not node.get: CompValue.get resolves and evaluates children while a context is set
                other = dict.get(node, "other")
                operands = [dict.get(node, "expr"), *(other if isinstance(other, list) else [other])]
                for operand in operands:
                    value = bindings.get(operand) if operand is not None and not isinstance(operand, CompValue) else None
                    if getattr(value, "ill_typed", False) or getattr(operand, "ill_typed", False):
                        return True
            stack.extend(value for key, value in dict.items(node) if not key.startswith("_"))
        elif isinstance(node, list):
            stack.extend(node)
    return False


def ebv(expr: Any, ctx: Any) -> bool:
    """The effective boolean value of ``expr`` under ``ctx``: False on a SPARQL error, as in FILTER (a
    type error drops the solution) — including ill-typed operands and rdflib's Python errors."""
    if _ill_typed_operand(expr, ctx):
        return False
    try:
        return bool(_rdflib_ebv(expr, ctx))
    except _PYTHON_ERRORS:
        return False


def eval_expression(expr: Any, ctx: Any, raise_not_bound_error: bool = True) -> Any:
    """The value of ``expr`` under ``ctx``; a SPARQLError (raised or returned, as rdflib does) on an
    error — including ill-typed operands and rdflib's Python errors — so BIND leaves it unbound."""
    if _ill_typed_operand(expr, ctx):
        raise SPARQLError(f"type error: an ill-typed literal in {getattr(expr, 'name', 'an expression')}")
    try:
        return _rdflib_eval(expr, ctx, raise_not_bound_error)
    except _PYTHON_ERRORS as error:
        raise SPARQLError(f"type error: {type(error).__name__}") from None


class _IllTypedLiteralWarning(logging.Filter):
    """rdflib logs a warning with a traceback for every ill-typed literal it builds; an ill-typed literal
    in a stream is data (judged by the SPARQL rules above), not a fault of the workbench."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Failed to convert Literal lexical form to value")


logging.getLogger("rdflib.term").addFilter(_IllTypedLiteralWarning())

__all__ = [
    "Aggregator", "Average", "CompValue", "Expr", "FrozenBindings", "NotBoundError", "Query", "QueryContext",
    "SPARQLError", "Sum", "ebv", "evalPart", "eval_expression", "numeric", "parseQuery", "translateQuery",
    "type_promotion", "type_safe_numbers",
]
