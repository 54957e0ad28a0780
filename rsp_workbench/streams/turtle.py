"""A fast reader for the plain Turtle that CSRBench's ``data_NN.ttl`` files are written in.

rdflib's Turtle parser takes ~100 µs a triple: most of the time of the first ``rspwb check`` of
a CSRBench answer (15,000 triples, 1.5 s). The files use a small part of Turtle (W3C Turtle 1.1,
Sect. 2): ``@prefix``/``PREFIX`` lines, absolute IRIs, prefixed names, ``a``, predicate lists
(``;``), object lists (``,``) and quoted literals with a datatype. This module reads exactly
that part and gives the triples as the workbench's N-Triples text, as the rdflib path does: a
typed literal's lexical form goes through rdflib's ``Literal`` (which normalises it: ``"54"^^xsd:double``
is read as ``"54.0"``), once per distinct literal. Anything else — blank nodes, escapes, long or
single-quoted strings, numbers, booleans, language tags, ``@base``, relative IRIs, a syntax
error — makes it return None, and the caller parses the file with rdflib as before (which also
names a syntax error's line and column). ``tests/streams/test_turtle.py`` compares both on every
CSRBench file.
"""

from __future__ import annotations

import re

from rsp_workbench.streams.terms import iri_term, literal_term

Triple = tuple[str, str, str]

_NAME = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?"
_TOKEN = re.compile(
    r"""(?P<space>[ \t\r\n]+|\#[^\n]*)
      | <(?P<iri>[^<>"{}|^`\\\x00-\x20]*)>
      | "(?P<string>[^"\\\r\n]*)"(?!")
      | (?P<prefix_kw>@prefix|(?i:PREFIX))(?=[ \t\r\n])
      | (?P<datatype>\^\^)
      | (?P<pname>(?:[A-Za-z](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?)?:(?:""" + _NAME + r""")?)(?=[ \t\r\n;,.\#]|$)
      | (?P<a>a)(?=[ \t\r\n])
      | (?P<punct>[;,.])
    """,
    re.VERBOSE,
)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


class _NotPlain(Exception):
    """The text leaves the plain subset: the caller falls back to rdflib."""


def plain_turtle_triples(text: str) -> list[Triple] | None:
    """The distinct triples of a plain Turtle document as N-Triples text, or None when it uses
    anything beyond the plain subset (see the module docstring)."""
    try:
        return sorted(set(_Reader(text).triples()))
    except _NotPlain:
        return None


class _Reader:
    def __init__(self, text: str) -> None:
        self.tokens = self._tokenize(text)
        self.position = 0
        self.prefixes: dict[str, str] = {}
        self.literals: dict[tuple[str, str], str] = {}

    @staticmethod
    def _tokenize(text: str) -> list[tuple[str, str]]:
        tokens: list[tuple[str, str]] = []
        position, end = 0, len(text)
        while position < end:
            match = _TOKEN.match(text, position)
            if match is None:
                raise _NotPlain
            kind = match.lastgroup
            assert kind is not None
            if kind != "space":
                tokens.append((kind, match.group(kind)))
            position = match.end()
        return tokens

    def _next(self) -> tuple[str, str]:
        if self.position >= len(self.tokens):
            raise _NotPlain
        token = self.tokens[self.position]
        self.position += 1
        return token

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _expect(self, punct: str) -> None:
        if self._next() != ("punct", punct):
            raise _NotPlain

    def _iri(self, token: tuple[str, str]) -> str:
        kind, value = token
        if kind == "iri":
            iri = value
        elif kind == "pname":
            prefix, _, local = value.partition(":")
            if prefix not in self.prefixes:
                raise _NotPlain
            iri = self.prefixes[prefix] + local
        else:
            raise _NotPlain
        if _SCHEME.match(iri) is None:  # relative: rdflib resolves it against the file
            raise _NotPlain
        return iri

    def triples(self) -> list[Triple]:
        found: list[Triple] = []
        while self._peek() is not None:
            kind, _ = self._next()
            if kind == "prefix_kw":
                self._directive(sparql_style=self.tokens[self.position - 1][1] != "@prefix")
                continue
            subject = iri_term(self._iri(self.tokens[self.position - 1]))
            self._predicate_objects(subject, found)
            self._expect(".")
        return found

    def _directive(self, *, sparql_style: bool) -> None:
        kind, name = self._next()
        if kind != "pname" or not name.endswith(":") or name.count(":") != 1:
            raise _NotPlain
        kind, iri = self._next()
        if kind != "iri" or _SCHEME.match(iri) is None:
            raise _NotPlain
        self.prefixes[name[:-1]] = iri
        if not sparql_style:
            self._expect(".")

    def _predicate_objects(self, subject: str, found: list[Triple]) -> None:
        while True:
            token = self._next()
            predicate = iri_term(_RDF_TYPE if token[0] == "a" else self._iri(token))
            while True:
                found.append((subject, predicate, self._object()))
                if self._peek() != ("punct", ","):
                    break
                self.position += 1
            if self._peek() != ("punct", ";"):
                return
            while self._peek() == ("punct", ";"):
                self.position += 1
            if self._peek() == ("punct", "."):
                return

    def _object(self) -> str:
        token = self._next()
        if token[0] != "string":
            return iri_term(self._iri(token))
        if self._peek() != ("datatype", "^^"):
            return literal_term(token[1], None, None)
        self.position += 1
        return self._typed_literal(token[1], self._iri(self._next()))

    def _typed_literal(self, lexical: str, datatype: str) -> str:
        """The literal as rdflib reads it (its lexical form normalised for the XSD types it knows)."""
        key = (lexical, datatype)
        term = self.literals.get(key)
        if term is None:
            from rdflib.term import Literal, URIRef

            from rsp_workbench.streams.terms import from_rdflib

            term = self.literals[key] = from_rdflib(Literal(lexical, datatype=URIRef(datatype)))
        return term


_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
