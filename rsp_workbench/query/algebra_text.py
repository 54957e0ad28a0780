"""A compact, readable rendering of rdflib's SPARQL algebra (for `query explain`).

rdflib's own ``pprintAlgebra`` prints every internal attribute (``_vars`` sets, reprs of
terms); a teaching view wants the operator tree: one operator per line, terms shortened
with the query's prefixes, expressions written back in SPARQL-like infix form.
"""

from __future__ import annotations

from typing import Any

_OPERATORS_WITH_CHILDREN = ("p", "p1", "p2")
_HIDDEN_KEYS = {"_vars", "datasetClause", "PV", "p", "p1", "p2"}


def _get(value: Any, key: str) -> Any:
    """``CompValue.get`` returns the key itself when it is missing; this returns None."""
    return value[key] if key in value else None


def render_algebra(query: Any) -> str:
    """Indented operator tree of a prepared rdflib query (``translateQuery`` result)."""
    namespace_manager = getattr(getattr(query, "prologue", None), "namespace_manager", None)
    renderer = _Renderer(namespace_manager)
    renderer.node(query.algebra, 0)
    return "\n".join(renderer.lines)


class _Renderer:
    def __init__(self, namespace_manager: Any) -> None:
        self.nm = namespace_manager
        self.lines: list[str] = []
        self.blank_labels: dict[str, str] = {}

    # -- terms and expressions ------------------------------------------------------------

    def term(self, value: Any) -> str:
        from rsp_workbench.query.rdflib_sparql import CompValue
        from rdflib.namespace import XSD
        from rdflib.term import BNode, Literal, Node

        if isinstance(value, CompValue):
            return self.expr(value)
        if isinstance(value, (list, tuple)):
            return ", ".join(self.term(v) for v in value)
        if isinstance(value, dict):  # a VALUES row
            return "(" + " ".join(f"{self.term(k)}={self.term(v)}" for k, v in value.items()) + ")"
        if isinstance(value, BNode):
            # rdflib's labels are random; number them in order of appearance instead.
            return self.blank_labels.setdefault(str(value), f"_:b{len(self.blank_labels)}")
        if isinstance(value, Literal) and value.datatype in (XSD.integer, XSD.decimal, XSD.double, XSD.boolean):
            return str(value)
        if isinstance(value, Node) or hasattr(value, "n3"):
            try:
                return str(value.n3(self.nm))
            except TypeError:
                return str(value.n3())
        return str(value)

    def expr(self, value: Any) -> str:
        from rsp_workbench.query.rdflib_sparql import CompValue

        if not isinstance(value, CompValue):
            return self.term(value)
        name = value.name
        if name in ("RelationalExpression",):
            other = _get(value, "other")
            rhs = f"({self.term(other)})" if isinstance(other, list) else self.term(other)
            return f"({self.expr(value['expr'])} {value['op']} {rhs})"
        if name in ("ConditionalAndExpression", "ConditionalOrExpression"):
            op = " && " if name == "ConditionalAndExpression" else " || "
            return "(" + op.join([self.expr(value["expr"])] + [self.expr(o) for o in _get(value, "other") or []]) + ")"
        if name in ("AdditiveExpression", "MultiplicativeExpression"):
            text = self.expr(value["expr"])
            for op, other in zip(_get(value, "op") or [], _get(value, "other") or []):
                text += f" {op} {self.expr(other)}"
            return f"({text})"
        if name in ("UnaryNot", "UnaryMinus", "UnaryPlus"):
            return {"UnaryNot": "!", "UnaryMinus": "-", "UnaryPlus": "+"}[name] + self.expr(value["expr"])
        if name.startswith("Aggregate_"):
            distinct = "DISTINCT " if _get(value, "distinct") else ""
            return f"{name[len('Aggregate_'):].upper()}({distinct}{self.term(_get(value, 'vars'))}) AS {self.term(_get(value, 'res'))}"
        if name.startswith("Builtin_"):
            args = [self.term(v) for k, v in value.items() if not k.startswith("_") and v is not None]
            return f"{name[len('Builtin_'):]}({', '.join(args)})"
        if name == "Function":
            return f"{self.term(value['iri'])}({self.term(_get(value, 'expr') or [])})"
        if name == "OrderCondition":
            return f"{_get(value, 'order') or 'ASC'}({self.expr(value['expr'])})"
        args = [f"{k}={self.term(v)}" for k, v in value.items() if not k.startswith("_") and v is not None]
        return f"{name}({', '.join(args)})"

    # -- operators ------------------------------------------------------------------------

    def node(self, value: Any, depth: int) -> None:
        from rsp_workbench.query.rdflib_sparql import CompValue

        pad = "  " * depth
        if not isinstance(value, CompValue):
            self.lines.append(pad + self.term(value))
            return
        name = value.name
        if name == "BGP":
            self.lines.append(pad + "BGP")
            for s, p, o in _get(value, "triples") or []:
                self.lines.append(pad + f"  {self.term(s)} {self.term(p)} {self.term(o)} .")
        elif name in ("SelectQuery", "DescribeQuery", "Project"):
            self.lines.append(pad + f"{name} {' '.join(self.term(v) for v in _get(value, 'PV') or [])}".rstrip())
        elif name == "ConstructQuery":
            self.lines.append(pad + "ConstructQuery template:")
            for s, p, o in _get(value, "template") or []:
                self.lines.append(pad + f"  {self.term(s)} {self.term(p)} {self.term(o)} .")
        elif name == "Extend":
            self.lines.append(pad + f"Extend {self.term(value['var'])} := {self.expr(value['expr'])}")
        elif name in ("Filter", "LeftJoin") and _get(value, "expr") is not None:
            self.lines.append(pad + f"{name} {self.expr(value['expr'])}")
        elif name == "Graph":
            self.lines.append(pad + f"Graph {self.term(value['term'])}")
        elif name == "Group":
            self.lines.append(pad + f"Group by {self.term(_get(value, 'expr') or [])}".rstrip())
        elif name == "AggregateJoin":
            self.lines.append(pad + "AggregateJoin " + "; ".join(self.expr(a) for a in _get(value, "A") or []))
        elif name == "OrderBy":
            self.lines.append(pad + "OrderBy " + ", ".join(self.expr(c) for c in _get(value, "expr") or []))
        elif name == "Slice":
            self.lines.append(pad + f"Slice offset={_get(value, 'start')} limit={_get(value, 'length')}")
        elif name == "values":
            self.lines.append(pad + f"Values {self.term(_get(value, 'res') or [])}")
        else:
            extras = [f"{k}={self.term(v)}" for k, v in value.items()
                      if k not in _HIDDEN_KEYS and not k.startswith("_") and v is not None
                      and not isinstance(v, CompValue)]
            self.lines.append(pad + " ".join([name] + extras))
        for key in _OPERATORS_WITH_CHILDREN:
            child = _get(value, key)
            if child is not None and isinstance(child, CompValue):
                self.node(child, depth + 1)
