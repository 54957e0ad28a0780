"""N-Triples terms as text: grammar, validation, canonical form, conversion to/from rdflib.

Stream elements and solution mappings keep terms as N-Triples text so that reading,
hashing and comparing stay cheap. Two texts denote the same RDF term iff their
*canonical* forms are equal; canonical here is RDF 1.1 canonical N-Triples plus two
normalisations that RDF 1.1 term equality implies: ``"x"^^xsd:string`` is written ``"x"``
and language tags are lower-cased (they compare case-insensitively).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Sequence

from rsp_workbench.streams.model import XSD

if TYPE_CHECKING:
    from rdflib.term import Node

XSD_STRING = XSD + "string"
XSD_INTEGER = XSD + "integer"
XSD_DECIMAL = XSD + "decimal"
XSD_DOUBLE = XSD + "double"
XSD_BOOLEAN = XSD + "boolean"

# --- grammar (N-Triples 1.1, as regular-expression source) -------------------------------

_IRI_CHAR = r'[^\x00-\x20<>"{}|^`\\]'
_UCHAR = r"\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})"
#: IRI with optional ``\uXXXX`` escapes.
IRI = rf"<{_IRI_CHAR}*+(?:{_UCHAR}{_IRI_CHAR}*+)*+>"
# A stream's IRIs are absolute, as N-Triples and N-Quads require (a relative IRI would be
# resolved against nothing, so two files could mean different things by one text): they
# start with a scheme written plainly (RFC 3987, e.g. ``http:``, ``urn:``).
_SCHEME = r"[A-Za-z][A-Za-z0-9+.\-]*:"
#: An absolute IRI without escapes: the stream readers' fast path (the common case by far).
IRI_SIMPLE = rf"<{_SCHEME}{_IRI_CHAR}*>"
#: An absolute IRI with optional ``\uXXXX`` escapes after its scheme (a stream's IRIs).
ABSOLUTE_IRI = rf"<{_SCHEME}{_IRI_CHAR}*+(?:{_UCHAR}{_IRI_CHAR}*+)*+>"
_PN_START = r"[0-9A-Za-z_\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\U00010000-\U000EFFFF]"
_PN_END = r"[0-9A-Za-z_\-\u00B7\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u037D\u037F-\u1FFF\u200C-\u200D\u203F-\u2040\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\U00010000-\U000EFFFF]"
_PN_MID = _PN_END[:-1] + ".]"
BNODE = rf"_:{_PN_START}(?:{_PN_MID}*{_PN_END})?"
_ECHAR_OR_UCHAR = r"""\\(?:[tbnrf"'\\]|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})"""
_STRING = rf'"[^"\\\n\r]*+(?:{_ECHAR_OR_UCHAR}[^"\\\n\r]*+)*+"'
LANGTAG = r"@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*"
LITERAL = rf"{_STRING}(?:{LANGTAG}|\^\^{IRI})?"
_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
#: YABench's unquoted typed literal, e.g. ``76.0^^<http://www.w3.org/2001/XMLSchema#float>``.
QUIRK_LITERAL = rf"(?:{_NUMBER}|NaN|[+-]?Infinity|[+-]?INF)\^\^{IRI}"
#: Turtle-style bare numbers (``76``, ``76.0``, ``7.6e1``), accepted in YABench QR_ files.
BARE_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"

# The terms of a stream's statements (the readers' grammar): IRIs, datatypes included, absolute.
SUBJECT = rf"(?:{ABSOLUTE_IRI}|{BNODE})"
STREAM_LITERAL = rf"{_STRING}(?:{LANGTAG}|\^\^{ABSOLUTE_IRI})?"
STREAM_QUIRK_LITERAL = rf"(?:{_NUMBER}|NaN|[+-]?Infinity|[+-]?INF)\^\^{ABSOLUTE_IRI}"
OBJECT = rf"(?:{ABSOLUTE_IRI}|{BNODE}|{STREAM_LITERAL}|{STREAM_QUIRK_LITERAL})"

_TERM_RE = re.compile(rf"{IRI}|{BNODE}|{LITERAL}")
_QUIRK_RE = re.compile(rf"({_NUMBER}|NaN|[+-]?Infinity|[+-]?INF)\^\^({IRI})")
_BARE_INTEGER_RE = re.compile(r"[+-]?[0-9]+")
_BARE_DECIMAL_RE = re.compile(r"[+-]?[0-9]*\.[0-9]+|[+-]?[0-9]+\.")
_BARE_NUMBER_RE = re.compile(BARE_NUMBER)
_ESCAPE_RE = re.compile(r"""\\(?:([tbnrf"'\\])|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))""")
_ECHARS = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_IRI_FORBIDDEN = frozenset('<>"{}|^`\\' + "".join(chr(c) for c in range(0x21)))


class TermError(ValueError):
    """Text that is not an N-Triples term; readers turn it into a located ``UserError``."""


def _unescape(text: str) -> str:
    """Resolve ECHAR and UCHAR escapes (surrogates and code points past U+10FFFF are errors)."""

    def replace(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return _ECHARS[match.group(1)]
        code = int(match.group(2) or match.group(3), 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise TermError(f"escape {match.group(0)} is not a Unicode code point")
        return chr(code)

    return _ESCAPE_RE.sub(replace, text) if "\\" in text else text


def escape_lexical(lexical: str) -> str:
    """Quote a lexical form the canonical N-Triples way (only ``"``, ``\\``, LF and CR escaped)."""
    if "\\" in lexical:
        lexical = lexical.replace("\\", "\\\\")
    if '"' in lexical:
        lexical = lexical.replace('"', '\\"')
    if "\n" in lexical:
        lexical = lexical.replace("\n", "\\n")
    if "\r" in lexical:
        lexical = lexical.replace("\r", "\\r")
    return f'"{lexical}"'


def iri_term(iri: str) -> str:
    """``<iri>``, with characters that may not appear raw in an IRIREF written as ``\\uXXXX``."""
    if any(c in _IRI_FORBIDDEN for c in iri):
        iri = "".join(f"\\u{ord(c):04X}" if c in _IRI_FORBIDDEN else c for c in iri)
    return f"<{iri}>"


def literal_term(lexical: str, datatype: str | None = None, language: str | None = None) -> str:
    """Canonical N-Triples text of a literal (datatype as bare IRI, xsd:string dropped)."""
    quoted = escape_lexical(lexical)
    if language:
        return f"{quoted}@{language.lower()}"
    if datatype and datatype != XSD_STRING:
        return f"{quoted}^^{iri_term(datatype)}"
    return quoted


def bnode_term(label: str) -> str:
    """``_:label`` (a leading ``_:`` in ``label`` is not doubled)."""
    return label if label.startswith("_:") else f"_:{label}"


def split_literal(term: str) -> tuple[str, str | None, str | None]:
    """``(lexical form, datatype IRI or None, language or None)`` of canonical literal text."""
    end = term.rindex('"')
    lexical = _unescape(term[1:end])
    rest = term[end + 1 :]
    if rest.startswith("@"):
        return lexical, None, rest[1:]
    if rest.startswith("^^<"):
        return lexical, _unescape(rest[3:-1]), None
    return lexical, None, None


@lru_cache(maxsize=1 << 16)
def canonical_term(text: str) -> str:
    """Validate one N-Triples term (or the YABench unquoted-number quirk) and canonicalise it.

    Raises ``TermError`` when ``text`` is not a term. Cached: streams repeat terms a lot.
    """
    if _TERM_RE.fullmatch(text) is None:
        quirk = _QUIRK_RE.fullmatch(text)
        if quirk is None:
            raise TermError(f"expected an N-Triples term (<iri>, _:label or \"literal\"), got {shorten(text)!r}")
        return literal_term(quirk.group(1), _unescape(quirk.group(2)[1:-1]))
    first = text[0]
    if first == "<":
        return iri_term(_unescape(text[1:-1])) if "\\" in text else text
    if first == "_":
        return text
    lexical, datatype, language = split_literal(text)
    return literal_term(lexical, datatype, language)


def canonical_triple(triple: Sequence[str]) -> tuple[str, str, str]:
    """A triple of N-Triples terms with each term canonicalised (equal triples compare equal)."""
    s, p, o = triple
    return canonical_term(s), canonical_term(p), canonical_term(o)


def number_term(text: str) -> str:
    """A Turtle bare number (``76``, ``76.0``, ``7.6e1``) as a typed literal (integer/decimal/double)."""
    if _BARE_INTEGER_RE.fullmatch(text):
        return literal_term(text, XSD_INTEGER)
    if _BARE_DECIMAL_RE.fullmatch(text):
        return literal_term(text, XSD_DECIMAL)
    if _BARE_NUMBER_RE.fullmatch(text):
        return literal_term(text, XSD_DOUBLE)
    raise TermError(f"expected a number, got {shorten(text)!r}")


def is_term(text: str) -> bool:
    """True if ``text`` is one N-Triples term (the YABench quirk counts)."""
    try:
        canonical_term(text)
    except TermError:
        return False
    return True


@lru_cache(maxsize=1 << 16)
def to_rdflib(term: str) -> "Node":
    """The rdflib term for N-Triples text; literals keep their lexical form (``normalize=False``).

    rdflib is imported lazily so that reading and writing streams does not pay for it.
    """
    from rdflib import BNode, Literal, URIRef

    text = canonical_term(term)
    first = text[0]
    if first == "<":
        return URIRef(_unescape(text[1:-1]))
    if first == "_":
        return BNode(text[2:])
    lexical, datatype, language = split_literal(text)
    return Literal(lexical, lang=language, datatype=URIRef(datatype) if datatype else None, normalize=False)


@lru_cache(maxsize=1 << 16)
def from_rdflib(node: "Node") -> str:
    """Canonical N-Triples text for an rdflib ``URIRef``, ``BNode`` or ``Literal``."""
    from rdflib import BNode, Literal, URIRef

    if isinstance(node, Literal):
        datatype = str(node.datatype) if node.datatype is not None else None
        return literal_term(str(node), datatype, node.language)
    if isinstance(node, URIRef):
        return iri_term(str(node))
    if isinstance(node, BNode):
        return f"_:{node}"
    raise TermError(f"cannot write {type(node).__name__} {node!r} as an N-Triples term")


_ANY_IRI_RE = re.compile(IRI)
_ABSOLUTE_IRI_RE = re.compile(ABSOLUTE_IRI)
_TERM_AT_RE = re.compile(rf"{IRI}|{LITERAL}|{QUIRK_LITERAL}")


def relative_iri_at(text: str, position: int) -> str | None:
    """The relative IRI that starts at ``position`` (or is the datatype of the literal there), else None.

    For the readers' diagnostics: a statement that does not parse only because an IRI lacks its
    scheme is named as such, with that token (cut short).
    """
    term = _TERM_AT_RE.match(text, position)
    if term is None:
        return None
    for iri in _ANY_IRI_RE.finditer(term.group(0)):
        if _ABSOLUTE_IRI_RE.fullmatch(iri.group(0)) is None:
            return shorten(iri.group(0), 40)
    return None


def shorten(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters with "…": error messages quote at most a short token."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
