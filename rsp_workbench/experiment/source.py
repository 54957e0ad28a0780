"""Safe YAML loading that remembers where every value came from (docs/design/FORMATS.md "Experiment files").

``yaml.safe_load`` loses line numbers, and experiment errors must name FILE:LINE and the
field. So we compose the document into nodes with PyYAML's ``SafeLoader`` and build the
plain Python value ourselves, recording the position of every key and value under its
field path (``engines[1].parameters.report``). Scalars are constructed by PyYAML's
``SafeConstructor`` (so any non-safe tag such as ``!!python/object`` is refused exactly as
``yaml.safe_load`` refuses it); mappings and sequences must carry the standard tags.
Duplicate keys, which ``safe_load`` silently collapses, are an error here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from rsp_workbench.errors import UserError

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"
# Expanding aliases can blow up exponentially ("billion laughs"); no real experiment is this big.
MAX_NODES = 200_000
# PyYAML's composer needs 10-70 s and ~80 MB per MB of YAML (dense flow lists are the slowest):
# a bigger file is refused before parsing (the largest sample experiment has 5 KB;
# docs/experiment-format.md, "Bounds").
MAX_TEXT_CHARS = 128 * 1024
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class Position:
    """A 1-based line and column in the source text."""

    line: int
    column: int


@dataclass(frozen=True)
class SourceMap:
    """Positions of values and keys by field path; ``""`` is the document root.

    Lookups fall back to the nearest enclosing field, so a value that was synthesised
    (a default, a merged size override) still points at a sensible line.
    """

    values: dict[str, Position] = field(default_factory=dict)
    keys: dict[str, Position] = field(default_factory=dict)
    # field path (prefix) in a derived document -> where it was written; e.g. after applying
    # a size, ``variables.STATIONS`` -> ``sizes.smoke.variables.STATIONS``
    aliases: dict[str, str] = field(default_factory=dict)
    text: str | None = None  # the source text, to locate a placeholder inside a block scalar

    def origin(self, path: str) -> str:
        """The path under which ``path`` is written in the file (differs inside merged sizes)."""
        current: str | None = path
        while current is not None:
            if current in self.aliases:
                return self.aliases[current] + path[len(current) :]
            current = parent_path(current)
        return path

    def with_aliases(self, aliases: dict[str, str]) -> "SourceMap":
        return SourceMap(self.values, self.keys, {**self.aliases, **aliases}, self.text)

    def position(self, path: str, *, key: bool = False) -> Position | None:
        """Where the field at ``path`` is written (its key if ``key`` and it has one)."""
        current: str | None = self.origin(path)
        while current is not None:
            if key and current in self.keys:
                return self.keys[current]
            if current in self.values:
                return self.values[current]
            current = parent_path(current)
        return None

    def line(self, path: str, *, key: bool = False) -> int | None:
        found = self.position(path, key=key)
        return found.line if found else None


def join_path(parent: str, key: Any) -> str:
    """``engines[0]`` + ``semantics`` → ``engines[0].semantics``; ints index sequences."""
    if isinstance(key, int) and not isinstance(key, bool):
        return f"{parent}[{key}]"
    text = str(key)
    return f"{parent}.{text}" if parent else text


def parent_path(path: str) -> str | None:
    """The enclosing field of ``path`` (``None`` for the root)."""
    if not path:
        return None
    if path.endswith("]"):
        return path[: path.rindex("[")]
    cut = path.rfind(".")
    bracket = path.rfind("]")
    if cut > bracket:
        return path[:cut]
    return path[: bracket + 1] if bracket >= 0 else ""


def _position(node: Node) -> Position:
    return Position(node.start_mark.line + 1, node.start_mark.column + 1)


def _short_tag(tag: str) -> str:
    return "!!" + tag[len("tag:yaml.org,2002:") :] if tag.startswith("tag:yaml.org,2002:") else tag


class _Builder:
    """Turns a composed node graph into plain values plus a :class:`SourceMap`."""

    def __init__(self, file: str | None) -> None:
        self.file = file
        self.constructor = SafeConstructor()
        self.source = SourceMap()
        self.visited = 0
        self.active: set[int] = set()
        self.built: set[int] = set()  # nodes built once: building one again is an alias expansion
        self.expansions = 0

    def error(self, node: Node, message: str, path: str) -> UserError:
        return UserError(message, file=self.file, line=node.start_mark.line + 1, field=path or None)

    def build(self, node: Node, path: str) -> Any:
        self.visited += 1
        if id(node) in self.built:
            self.expansions += 1
        else:
            self.built.add(id(node))
        if self.visited > MAX_NODES:
            if self.expansions:
                raise self.error(node, f"the document expands to more than {MAX_NODES:,} values through its "
                                       f"aliases ({self.expansions:,} alias expansions; alias bomb?)", path)
            raise self.error(node, f"the document has more than {MAX_NODES:,} values; that is the limit for "
                                   "an experiment file", path)
        self.source.values.setdefault(path, _position(node))
        if isinstance(node, ScalarNode):
            return self._scalar(node, path)
        if id(node) in self.active:
            raise self.error(node, "recursive YAML alias", path)
        self.active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                if node.tag != _SEQ_TAG:
                    raise self._tag_error(node, path)
                return [self.build(item, join_path(path, index)) for index, item in enumerate(node.value)]
            if isinstance(node, MappingNode):
                if node.tag != _MAP_TAG:
                    raise self._tag_error(node, path)
                return self._mapping(node, path)
        finally:
            self.active.discard(id(node))
        raise self.error(node, f"unsupported YAML node {type(node).__name__}", path)  # pragma: no cover

    def _tag_error(self, node: Node, path: str) -> UserError:
        return self.error(
            node,
            f"YAML tag {_short_tag(node.tag)!r} is not allowed; experiment files are loaded "
            "with safe_load semantics (plain mappings, lists and scalars only)",
            path,
        )

    def _scalar(self, node: ScalarNode, path: str) -> Any:
        try:
            return self.constructor.construct_object(node, deep=True)
        except ConstructorError:
            raise self._tag_error(node, path) from None

    def _key(self, node: Node, path: str) -> Any:
        if not isinstance(node, ScalarNode):
            raise self.error(node, "mapping keys must be plain scalars", path)
        key = self._scalar(node, path)
        try:
            hash(key)
        except TypeError:  # pragma: no cover - safe scalars are hashable
            raise self.error(node, "mapping keys must be plain scalars", path) from None
        return key

    def _mapping(self, node: MappingNode, path: str) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        merges: list[tuple[Node, Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merges.append((key_node, value_node))
                continue
            key = self._key(key_node, path)
            child = join_path(path, key)
            if key in result:
                first = self.source.keys.get(child)
                where = f" (first set on line {first.line})" if first else ""
                raise self.error(key_node, f"duplicate key {key!r}{where}", child)
            # setdefault: positions of explicit keys must survive a later merge of the same key
            self.source.keys.setdefault(child, _position(key_node))
            self.source.values.setdefault(child, _position(value_node))
            result[key] = self.build(value_node, child)
        # YAML merge keys (``<<: *defaults``): explicit keys win, then earlier merged mappings.
        for key_node, value_node in merges:
            sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
            for source in sources:
                if not isinstance(source, MappingNode) or source.tag != _MAP_TAG:
                    raise self.error(key_node, "'<<' (merge key) needs a mapping or a list of mappings", path)
                for merged_key, merged_value in self._mapping(source, path).items():
                    result.setdefault(merged_key, merged_value)
        return result


def load_yaml(text: str, file: str | None = None) -> tuple[Any, SourceMap]:
    """Parse one YAML document safely; return its plain value and the positions of its fields.

    YAML syntax errors become a :class:`UserError` with the line of the problem.
    """
    if len(text) > MAX_TEXT_CHARS:
        raise UserError(f"the file has {len(text):,} characters; the limit for an experiment file is "
                        f"{MAX_TEXT_CHARS:,} (128 KiB)", file=file, line=1)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        parts = [p for p in (error.context, error.problem) if p]
        raise UserError(
            "invalid YAML: " + (", ".join(parts) or "syntax error"),
            file=file,
            line=mark.line + 1 if mark else None,
        ) from None
    except yaml.YAMLError as error:
        raise UserError(f"invalid YAML: {error}", file=file) from None
    if node is None:
        return None, SourceMap(text=text)
    builder = _Builder(file)
    value = builder.build(node, "")
    return value, SourceMap(builder.source.values, builder.source.keys, text=text)


def is_identifier(text: str) -> bool:
    """Names usable as size names (letters, digits, ``_`` and ``-``)."""
    return bool(_IDENTIFIER.match(text))
