"""The project's architecture rules as functions over a source tree, so that a test can also run them
on a planted tree and see each kind of violation caught (a test of the test).

The import graph is read from the source (``ast``), never by importing: lazy imports inside
functions, ``TYPE_CHECKING`` blocks, relative imports and plug-in modules named in strings
(``"pkg.engines.secret:SecretEngine"``, ``importlib.import_module("pkg.x")``) all count.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

QT = ("PySide6", "pyqtgraph", "shiboken6")
SPARK = ("pyspark", "py4j")


@dataclass(frozen=True)
class SourceTree:
    """Every module of one top-level package, with its project imports and its third-party imports."""

    package: str
    files: dict[str, Path]
    imports: dict[str, set[str]]
    external: dict[str, set[str]]
    syntax: dict[str, ast.Module]  # each module parsed once: every rule walks these

    def room(self, module: str) -> str:
        """The room a module lives in: ``pkg.x`` for ``pkg.x.y.z``; ``pkg`` itself for ``pkg``."""
        parts = module.split(".")
        return ".".join(parts[:2]) if len(parts) > 1 else parts[0]

    def closure(self, module: str) -> set[str]:
        """Every project module ``module`` reaches through imports (itself included)."""
        seen, todo = {module}, [module]
        while todo:
            for target in self.imports[todo.pop()]:
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return seen


def read_tree(root: Path, package: str) -> SourceTree:
    """The import graph of the package folder ``root / package``."""
    files: dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py")):
        if "node_modules" in path.parts:
            continue
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    string_import = re.compile(rf"^({re.escape(package)}(?:\.\w+)+)(?::\w+)?$")
    imports: dict[str, set[str]] = {name: set() for name in files}
    external: dict[str, set[str]] = {name: set() for name in files}
    syntax = {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, path in files.items()}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(syntax[name]):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".")
                    base = base[: len(base) - node.level + (1 if is_package else 0)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                # `from pkg.x import y` imports the module pkg.x.y if there is one, else (a name in) pkg.x
                targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in files else module
                           for alias in node.names]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                match = string_import.match(node.value)
                if match:
                    targets = [match.group(1)]
            for target in targets:
                if target.split(".")[0] == package:
                    resolved = known(target)
                    if resolved and resolved != name:
                        imports[name].add(resolved)
                elif target and not isinstance(node, ast.Constant):
                    external[name].add(target.split(".")[0])
    return SourceTree(package, files, imports, external, syntax)


def layer_of(room: str, layers: tuple[tuple[str, ...], ...]) -> int | None:
    for level, rooms in enumerate(layers):
        if room in rooms:
            return level
    return None


def unlisted_rooms(tree: SourceTree, layers: tuple[tuple[str, ...], ...]) -> list[str]:
    """Rooms that exist but are in no layer, and listed rooms that no longer exist."""
    existing = {tree.room(module) for module in tree.files}
    listed = {room for rooms in layers for room in rooms}
    return sorted(f"{room} is in no layer" for room in existing - listed) + sorted(
        f"{room} is listed but does not exist" for room in listed - existing)


def upward_imports(tree: SourceTree, layers: tuple[tuple[str, ...], ...]) -> list[str]:
    """Imports from a room to a room of a higher layer."""
    found = []
    for module, targets in tree.imports.items():
        here = layer_of(tree.room(module), layers)
        for target in targets:
            there = layer_of(tree.room(target), layers)
            if here is not None and there is not None and there > here:
                found.append(f"{module} imports {target}")
    return sorted(found)


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components with more than one node: each is an import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def module_cycles(tree: SourceTree) -> list[list[str]]:
    # a package's __init__ importing its own submodules is not a cycle between rooms' modules
    graph = {m: {t for t in targets if not m or not t.startswith(m + ".")} for m, targets in tree.imports.items()}
    return strongly_connected(graph)


def room_cycles(tree: SourceTree) -> list[list[str]]:
    """Cycles between rooms (packages), even where no two modules import each other."""
    graph: dict[str, set[str]] = {}
    for module, targets in tree.imports.items():
        here = tree.room(module)
        graph.setdefault(here, set()).update(tree.room(t) for t in targets if tree.room(t) != here)
    top = tree.package
    return strongly_connected({room: {t for t in targets if t != top} for room, targets in graph.items() if room != top})


def reaching(tree: SourceTree, modules: list[str], libraries: tuple[str, ...]) -> list[str]:
    """Each of ``modules`` that imports one of ``libraries``, directly or through project modules."""
    direct = {m for m, names in tree.external.items() if names & set(libraries)}
    found = []
    for module in modules:
        path = tree.closure(module) & direct
        if path:
            culprit = sorted(path)[0]
            found.append(f"{module} reaches {sorted(tree.external[culprit] & set(libraries))[0]} through {culprit}")
    return sorted(found)


def is_model(module: str) -> bool:
    """A GUI room's Qt-free model: ``…gui.<room>.model`` (or inside a ``model`` package) or ``…gui.<x>_model``."""
    parts = module.split(".")
    return len(parts) > 2 and parts[1] == "gui" and ("model" in parts[2:] or parts[-1].endswith("_model"))


def readme_layers(readme: str) -> dict[str, int]:
    """The rooms of README's layout table (``| 3 | `pkg/x`, `pkg/y.py` | … |``) with their layer."""
    rooms: dict[str, int] = {}
    for line in readme.splitlines():
        match = re.match(r"^\|\s*(\d+)\s*\|([^|]*)\|", line)
        if not match:
            continue
        for folder in re.findall(r"`([\w/]+?)(?:\.py)?/?`", match.group(2)):
            rooms[folder.replace("/", ".")] = int(match.group(1))
    return rooms


def readme_mismatches(readme: str, layers: tuple[tuple[str, ...], ...]) -> list[str]:
    """Differences between README's layout table and ``layers`` (the README must list each room once)."""
    table = readme_layers(readme)
    wanted = {room: level for level, rooms in enumerate(layers) for room in rooms if "." in room}
    found = [f"{room}: README says layer {table.get(room)}, the rules say {level}"
             for room, level in wanted.items() if table.get(room) != level]
    found += [f"{room}: in README's table but not a room" for room in table if room not in wanted]
    return sorted(found)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(tree: SourceTree) -> list[str]:
    """Private names (``_x``) one module takes from another project module: ``from pkg.m import _x``,
    relative or absolute, and ``m._x`` on a project module imported as ``m``. A name another module
    needs is public, with a proper name, or the code using it moves next to it."""
    found = []
    for name, path in tree.files.items():
        is_package = path.name == "__init__.py"
        modules: dict[str, str] = {}  # local alias -> project module
        nodes = list(ast.walk(tree.syntax[name]))
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == tree.package and alias.name in tree.files:
                        modules[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".")
                    base = base[: len(base) - node.level + (1 if is_package else 0)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                if module.split(".")[0] != tree.package:
                    continue
                for alias in node.names:
                    if f"{module}.{alias.name}" in tree.files:
                        modules[alias.asname or alias.name] = f"{module}.{alias.name}"
                    elif _is_private(alias.name) and module != name:
                        found.append(f"{name} imports {module}.{alias.name}")
        for node in nodes:
            if (isinstance(node, ast.Attribute) and _is_private(node.attr) and isinstance(node.value, ast.Name)
                    and node.value.id in modules and modules[node.value.id] != name):
                found.append(f"{name} uses {modules[node.value.id]}.{node.attr}")
    return sorted(set(found))
