"""Syntax highlighting and a code editor for queries (SPARQL, RSP-QL, C-SPARQL, CQELS-QL) and YAML."""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QKeyEvent,
    QKeySequence,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

QUERY_KEYWORDS = (
    "SELECT CONSTRUCT ASK DESCRIBE WHERE FROM NAMED PREFIX BASE FILTER OPTIONAL UNION MINUS GRAPH "
    "BIND VALUES GROUP BY ORDER HAVING LIMIT OFFSET DISTINCT REDUCED AS NOT EXISTS IN COUNT SUM AVG MIN "
    "MAX SAMPLE ASC DESC "
    # continuous extensions (RSP-QL, C-SPARQL, CQELS-QL, SPARQLstream)
    "REGISTER QUERY STREAM WINDOW ON RANGE STEP SLIDE TRIPLES NOW RSTREAM ISTREAM DSTREAM COMPUTED EVERY "
    "TUMBLING"
).split()


def _format(color: str, *, bold: bool = False, italic: bool = False, background: str | None = None) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    if italic:
        fmt.setFontItalic(True)
    if background:
        fmt.setBackground(QColor(background))
    return fmt


class QueryHighlighter(QSyntaxHighlighter):
    """Keywords, IRIs, prefixed names, variables, literals, durations, comments and ``${VAR}``."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        keyword = r"\b(?:" + "|".join(QUERY_KEYWORDS) + r")\b"
        self._rules = [
            (re.compile(keyword, re.IGNORECASE), _format("#1a4fa0", bold=True)),
            (re.compile(r"\b[A-Za-z][\w-]*:[\w-]*|(?<![\w<]):[\w-]+"), _format("#7a3e9d")),
            (re.compile(r"<[^<>\s]*>"), _format("#0b7a75")),
            (re.compile(r"[?$][A-Za-z_]\w*"), _format("#b35900", bold=True)),
            (re.compile(r"\b\d+(?:\.\d+)?(?:ms|s|m|h|d)?\b|\bPT[\d.]+[HMS]\b"), _format("#2e7d32")),
            (re.compile(r'"(?:[^"\\]|\\.)*"(?:@[\w-]+|\^\^\S+)?'), _format("#a31515")),
            (re.compile(r"\$\{[^}]*\}"), _format("#ffffff", bold=True, background="#c2185b")),
            (re.compile(r"#[^\n]*$"), _format("#888888", italic=True)),
        ]

    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt API)
        for pattern, fmt in self._rules:
            for match in pattern.finditer(text):
                if pattern.pattern.startswith("#") and _inside_iri(text, match.start()):
                    continue
                self.setFormat(match.start(), match.end() - match.start(), fmt)


def _inside_iri(text: str, position: int) -> bool:
    return text.rfind("<", 0, position) > text.rfind(">", 0, position)


class YamlHighlighter(QSyntaxHighlighter):
    """Keys, comments, strings and ``${VAR}`` in the YAML pane."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._rules = [
            (re.compile(r"^\s*-?\s*[\w.-]+(?=\s*:)"), _format("#1a4fa0", bold=True)),
            (re.compile(r"'[^']*'|\"[^\"]*\""), _format("#a31515")),
            (re.compile(r"\$\{[^}]*\}"), _format("#c2185b", bold=True)),
            (re.compile(r"(?:^|\s)#.*$"), _format("#888888", italic=True)),
        ]

    def highlightBlock(self, text: str) -> None:  # noqa: N802
        for pattern, fmt in self._rules:
            for match in pattern.finditer(text):
                self.setFormat(match.start(), match.end() - match.start(), fmt)


class CodeEditor(QPlainTextEdit):
    """A monospace editor that leaves Undo/Redo to the window (the designer's command stack)
    and can mark one line as erroneous."""

    def __init__(self, parent: QWidget | None = None, *, language: str = "query") -> None:
        super().__init__(parent)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSize(max(9, font.pointSize()))
        self.setFont(font)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * 2)
        self.setUndoRedoEnabled(False)
        self.highlighter = QueryHighlighter(self.document()) if language == "query" else YamlHighlighter(self.document())

    def event(self, event: QEvent) -> bool:  # noqa: D102
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            if event.matches(QKeySequence.StandardKey.Undo) or event.matches(QKeySequence.StandardKey.Redo):
                event.ignore()  # let the designer's Undo/Redo actions run
                return True
        return super().event(event)

    def set_text_keep_view(self, text: str) -> None:
        """Replace the text without moving the view or emitting textChanged."""
        if text == self.toPlainText():
            return
        bar = self.verticalScrollBar().value()
        position = self.textCursor().position()
        blocked = self.blockSignals(True)
        self.setPlainText(text)
        self.blockSignals(blocked)
        cursor = self.textCursor()
        cursor.setPosition(min(position, len(text)))
        self.setTextCursor(cursor)
        self.verticalScrollBar().setValue(bar)

    def mark_line(self, line: int | None, color: str = "#ffd6d6", *, scroll: bool = False) -> None:
        """Highlight a 1-based line (None clears); ``scroll`` brings it into view."""
        if line is None or line < 1:
            self.setExtraSelections([])
            return
        selection = QTextEdit.ExtraSelection()
        selection.format.setBackground(QColor(color))
        selection.format.setProperty(QTextCharFormat.Property.FullWidthSelection, True)
        block = self.document().findBlockByNumber(line - 1)
        cursor = QTextCursor(block)
        selection.cursor = cursor
        self.setExtraSelections([selection])
        if scroll:
            first = self.firstVisibleBlock().blockNumber()
            visible = max(1, self.viewport().height() // max(1, self.fontMetrics().lineSpacing()))
            if not first <= line - 1 < first + visible - 1:
                self.verticalScrollBar().setValue(max(0, line - 1 - visible // 3))

