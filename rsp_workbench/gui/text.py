"""Texts the views share, without Qt: HTML escaping for rich-text labels, counted nouns."""

from __future__ import annotations


def escape_html(text: str) -> str:
    """``text`` shown literally in a rich-text label (``&``, ``<``, ``>``; quotes stay as they are)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plural(count: int, noun: str) -> str:
    """``1 sample``, ``2 samples``, ``1,024 samples``."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


RECALL_JUDGED = "recall"  # the oracle's verdict for a bounded-memory (eviction) join: judged by recall alone


def verdict_text(verdict: object, recall: object = None) -> str:
    """What a run's verdict column says: the verdict, except for a bounded-memory join, which the
    oracle judges by recall against the unbounded answer (no correct/incorrect): ``complete``
    when it found every answer, else ``partial · recall 0.833``."""
    if verdict != RECALL_JUDGED:
        return "" if verdict is None else str(verdict)
    if not isinstance(recall, (int, float)):
        return "recall unknown"
    return "complete" if recall >= 1.0 else f"partial · recall {recall:.3g}"
