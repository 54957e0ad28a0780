"""Window clauses located in a query template's text, so that a form can edit size and slide.

A text scan, not a parse: it works on templates whose ``${…}`` are not filled yet and keeps
character offsets, so the designer writes a new size or slide back into the text in place
(the query parser, :mod:`rsp_workbench.query.parser`, is what validates the result).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DURATION = r"\$\{[A-Za-z_]\w*\}|P[T\d][\w.]*|\d+(?:\.\d+)?\s*[A-Za-z]+"
_WINDOW = re.compile(
    r"(?P<stream><[^<>\s]*>|(?:[A-Za-z][\w-]*)?:[\w-]*)?\s*\[\s*(?P<kind>RANGE|NOW\s*-)\s*(?P<size>" + _DURATION + r")"
    r"(?:\s+(?P<keyword>STEP|SLIDE)\s+(?P<slide>" + _DURATION + r")|\s+(?P<tumbling>TUMBLING))?\s*\]",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class WindowField:
    """One window clause of a query template, located in the text so a form can edit it.

    ``size``/``slide`` are the text as written (``5s``, ``PT2S`` or ``${WSIZE}``); the spans
    are character offsets of that text. ``slide`` is None for a tumbling or slide-less
    window, whose ``insert_at`` is where a slide clause goes (before ``]`` or over ``TUMBLING``).
    """

    stream: str
    size: str
    size_span: tuple[int, int]
    slide: str | None
    slide_span: tuple[int, int] | None
    keyword: str  # STEP or SLIDE (the one a new slide clause uses)
    tumbling: bool
    insert_span: tuple[int, int]

    @staticmethod
    def variable(text: str | None) -> str | None:
        """``${WSIZE}`` → ``WSIZE``; None for a literal duration."""
        match = re.fullmatch(r"\$\{([A-Za-z_]\w*)\}", text or "")
        return match.group(1) if match else None


def query_windows(template: str, syntax: str | None = None) -> list[WindowField]:
    """The window clauses of a query template in text order (the parser's window order).

    A text scan, not a parse: it works on templates whose ``${…}`` are not filled and keeps
    the offsets, so the designer can write a new size or slide back into the text.
    """
    fields = []
    for match in _WINDOW.finditer(template):
        now = match.group("kind").upper().startswith("NOW")
        keyword = (match.group("keyword") or ("SLIDE" if now or syntax in ("cqels", "sparqlstream") else "STEP")).upper()
        if match.group("tumbling"):
            insert = match.span("tumbling")
        else:
            end = match.end() - 1  # the "]"
            insert = (end, end)
        fields.append(WindowField(
            stream=match.group("stream") or "",
            size=match.group("size"),
            size_span=match.span("size"),
            slide=match.group("slide"),
            slide_span=match.span("slide") if match.group("slide") else None,
            keyword=keyword,
            tumbling=bool(match.group("tumbling")),
            insert_span=insert,
        ))
    return fields


def set_window_value(template: str, window: WindowField, part: str, text: str) -> str:
    """The template with window ``part`` ("size" or "slide") written as ``text``.

    An empty slide makes the window slide-less (tumbling in RSP-QL/SPARQLstream, required
    in C-SPARQL: the validation then says so at the query).
    """
    text = text.strip()
    if part == "size":
        start, end = window.size_span
        return template[:start] + text + template[end:]
    if window.slide_span is not None:
        start, end = window.slide_span
        if text:
            return template[:start] + text + template[end:]
        # drop " STEP 5s" entirely: from the end of the size to the end of the slide
        return template[: window.size_span[1]] + template[end:]
    if not text:
        return template
    start, end = window.insert_span
    clause = f"{window.keyword} {text}"
    if window.tumbling:
        return template[:start] + clause + template[end:]
    return template[:start].rstrip() + f" {clause}" + template[end:]


_PREFIX = re.compile(r"\bPREFIX\s+([A-Za-z][\w.-]*)?:\s*<([^<>\s]*)>", re.IGNORECASE)


def window_stream_iri(template: str, window: WindowField) -> str | None:
    """The absolute stream IRI a window names (``:S_a`` resolved with the template's PREFIXes).

    None when the window names none or an undeclared prefix (the query checks report that).
    """
    text = window.stream
    if text.startswith("<") and text.endswith(">"):
        return text[1:-1] or None
    prefix, colon, local = text.partition(":")
    if not colon:
        return None
    prefixes = {match.group(1) or "": match.group(2) for match in _PREFIX.finditer(template)}
    return prefixes[prefix] + local if prefix in prefixes else None
