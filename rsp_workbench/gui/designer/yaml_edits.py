"""Edit the experiment's YAML text in place: a form edit changes only the edited node.

The designer's model holds the document twice: as the plain mapping the loader validates
(read with PyYAML's safe loader, so ``!!python`` tags are refused and errors name
FILE:LINE) and as the text the user sees. A form edit gives a new mapping; this module
carries the difference into the text with ruamel.yaml's round-trip mode, which keeps
comments, blank lines, flow style, quoting and ``>``/``|`` block text. Only the nodes whose
value changed are written anew. ruamel.yaml never decides what a value *is* here: values
come from the safe-loaded mapping.

When ruamel.yaml would reformat lines nobody edited (an indentation it does not reproduce),
the changed lines of its output are spliced into the original text instead; when even
that cannot be located, the whole document is dumped as before.
"""

from __future__ import annotations

import difflib
import io
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError as RuamelError
from ruamel.yaml.scalarbool import ScalarBoolean
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)


def edit_text(text: str, after: dict[str, Any], fallback: Any) -> str:
    """``text`` (a YAML document) changed so that it reads as ``after``, everything else kept.

    ``fallback(after)`` writes the whole document when ``text`` is not a YAML mapping
    ruamel.yaml can read (the text of a file whose YAML is broken).
    """
    yaml = _round_trip(text)
    try:
        document = yaml.load(text)
    except (RuamelError, ValueError, TypeError):
        return fallback(after)
    if not isinstance(document, CommentedMap):
        return fallback(after)
    unchanged = _dump(yaml, document)
    _patch(document, after)
    edited = _dump(yaml, document)
    if unchanged == text:
        return edited
    spliced = _splice(text, unchanged, edited)
    return spliced if spliced is not None else edited


def _round_trip(text: str) -> YAML:
    """A round-trip YAML with the document's own indentation (``- item`` under its key or indented)."""
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap a long line nobody edited
    mapping, sequence, offset = _indentation(text)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    return yaml


_DASH = re.compile(r"( *)-( +)\S")


def _indentation(text: str) -> tuple[int, int, int]:
    """The document's block indentation as ruamel.yaml's (mapping, sequence, offset).

    Read from the first nested mapping (``key:`` then a deeper ``key``) and the first block
    sequence under a key (``key:`` then ``  - x``: the dash's offset, and where the item starts).
    """
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    mapping: int | None = None
    sequence: tuple[int, int] | None = None
    for line, following in zip(lines, lines[1:]):
        if not line.rstrip().endswith(":") or line.lstrip().startswith("-"):
            continue
        depth = len(following) - len(following.lstrip(" ")) - (len(line) - len(line.lstrip(" ")))
        dash = _DASH.match(following)
        if dash is not None and sequence is None and depth >= 0:
            sequence = (depth + 1 + len(dash.group(2)), depth)
        elif dash is None and mapping is None and depth > 0:
            mapping = depth
        if mapping is not None and sequence is not None:
            break
    sequence_indent, offset = sequence if sequence is not None else (2, 0)
    return mapping or 2, max(sequence_indent, offset + 2), offset


def _dump(yaml: YAML, document: Any) -> str:
    stream = io.StringIO()
    yaml.dump(document, stream)
    return stream.getvalue()


# --------------------------------------------------------------------------- patching


def _patch(node: Any, new: Any) -> Any:
    """``node`` (ruamel) made equal to ``new`` (plain), in place where it can; returns the node to keep."""
    if isinstance(node, CommentedMap) and isinstance(new, dict):
        for key in [key for key in node if key not in new]:
            del node[key]
        for position, (key, value) in enumerate(new.items()):
            if key in node:
                kept = _patch(node[key], value)
                if kept is not node[key]:
                    node[key] = kept
            else:
                node.insert(position, key, _fresh(value))
        for position, key in enumerate(new):  # a renamed key goes where the old one was
            if list(node)[position] != key:
                value = node.pop(key)
                node.insert(position, key, value)
        return node
    if isinstance(node, CommentedSeq) and isinstance(new, list):
        if len(node) == len(new):
            for index, value in enumerate(new):
                kept = _patch(node[index], value)
                if kept is not node[index]:
                    node[index] = kept
            return node
        # an item added or removed: keep the equal head and tail, rewrite the middle
        shortest = min(len(node), len(new))
        head = 0
        while head < shortest and _same(node[head], new[head]):
            head += 1
        tail = 0
        while tail < shortest - head and _same(node[len(node) - 1 - tail], new[len(new) - 1 - tail]):
            tail += 1
        for _ in range(len(node) - head - tail):
            del node[head]
        for offset, value in enumerate(new[head:len(new) - tail]):
            node.insert(head + offset, _fresh(value))
        return node
    if _same(node, new):
        return node
    return _fresh(new, like=node)


def _same(node: Any, value: Any) -> bool:
    """Equal as YAML values: ``1`` is not ``true`` nor ``1.0``, ``'10'`` is not ``10``."""
    if isinstance(node, (dict, list)) or isinstance(value, (dict, list)):
        return isinstance(node, dict) == isinstance(value, dict) and _plain(node) == value
    return _kind(node) == _kind(value) and node == value


def _kind(value: Any) -> str:
    if isinstance(value, (bool, ScalarBoolean)):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    return type(value).__name__


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: _plain(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_plain(value) for value in node]
    if isinstance(node, ScalarBoolean):
        return bool(node)
    return node


def _fresh(value: Any, like: Any = None) -> Any:
    """A new node for ``value``; text keeps the quoting or block style of the node it replaces."""
    if isinstance(value, dict):
        return {key: _fresh(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_fresh(item) for item in value]
    if not isinstance(value, str):
        return value
    if isinstance(like, FoldedScalarString) and "\n" not in value.rstrip("\n"):
        return FoldedScalarString(value)
    if isinstance(like, (LiteralScalarString, FoldedScalarString)) or "\n" in value.rstrip("\n"):
        return LiteralScalarString(value) if "\n" in value else value
    if isinstance(like, DoubleQuotedScalarString):
        return DoubleQuotedScalarString(value)
    if isinstance(like, SingleQuotedScalarString):
        return SingleQuotedScalarString(value)
    return value


# --------------------------------------------------------------------------- splicing


def _splice(original: str, unchanged: str, edited: str) -> str | None:
    """Apply the line changes ``unchanged`` → ``edited`` to ``original`` (None if they cannot be located).

    ``unchanged`` is ruamel.yaml's rendering of ``original`` with no edit: the lines it kept
    verbatim anchor each changed block of ``edited`` in the original text.
    """
    source, before, after = (text.splitlines(keepends=True) for text in (original, unchanged, edited))
    where: dict[int, int] = {}  # line of `before` → the same line in `source`
    for block in difflib.SequenceMatcher(None, before, source, autojunk=False).get_matching_blocks():
        for step in range(block.size):
            where[block.a + step] = block.b + step
    where[len(before)] = len(source)
    result: list[str] = []
    done = 0
    for tag, first, last, new_first, new_last in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if first == last:  # an insertion: after the line before it, or before the line after it
            start = where[first - 1] + 1 if first > 0 and first - 1 in where else where.get(first)
            end = None  # nothing replaced: the block ends where it starts
        else:
            found = [where.get(line) for line in range(first, last)]
            lines = [line for line in found if line is not None]
            if len(lines) < len(found) or lines != list(range(lines[0], lines[0] + len(lines))):
                return None
            start, end = lines[0], lines[-1] + 1
        if start is None or start < done:
            return None
        result.extend(source[done:start])
        result.extend(after[new_first:new_last])
        done = start if end is None else end
    result.extend(source[done:])
    return "".join(result)
