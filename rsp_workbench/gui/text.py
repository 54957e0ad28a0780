"""Texts the views share, without Qt: HTML escaping for rich-text labels, counted nouns."""

from __future__ import annotations


def escape_html(text: str) -> str:
    """``text`` shown literally in a rich-text label (``&``, ``<``, ``>``; quotes stay as they are)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plural(count: int, noun: str) -> str:
    """``1 sample``, ``2 samples``, ``1,024 samples``."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")
