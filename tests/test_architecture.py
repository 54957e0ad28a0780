"""The domain core imports neither Qt nor Spark (ARCHITECTURE.md layers; STYLE.md)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import rsp_workbench

ROOT = Path(rsp_workbench.__file__).resolve().parent
OUTER_LAYERS = ("rsp_workbench.gui", "rsp_workbench.pipeline", "rsp_workbench.cli")


def core_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages([str(ROOT)], prefix="rsp_workbench."):
        if not info.name.startswith(OUTER_LAYERS):
            names.append(info.name)
    return sorted(names)


def test_core_imports_neither_qt_nor_spark() -> None:
    modules = core_modules()
    assert "rsp_workbench.core.report" in modules and "rsp_workbench.oracle.verdict" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'pyspark', 'py4j'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"core modules import {result.stdout.strip()}"


def test_cli_help_does_not_start_heavy_dependencies() -> None:
    code = (
        "import sys\n"
        "from rsp_workbench.cli.main import build_parser\n"
        "build_parser()\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'PySide6', 'rdflib'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


# --- the import graph: layer order and no cycles (issue: "rooms a newcomer can find") ---

PROJECT = ROOT.parent
#: Rooms from the bottom up; a module may import its own layer or a lower one, never a higher.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("rsp_workbench", "rsp_workbench.errors"),
    ("rsp_workbench.core",),
    ("rsp_workbench.streams", "rsp_workbench.query"),
    ("rsp_workbench.responses", "rsp_workbench.generators"),
    ("rsp_workbench.engine", "rsp_workbench.experiment"),
    ("rsp_workbench.oracle", "rsp_workbench.results", "rsp_workbench.bundle", "rsp_workbench.results_data", "rsp_workbench.stand", "rsp_workbench.engines"),
    ("rsp_workbench.pipeline", "rsp_workbench.probe"),
    ("rsp_workbench.cli", "rsp_workbench.gui"),
)


def _module_files() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for package in ("rsp_workbench",):
        for path in (PROJECT / package).rglob("*.py"):
            parts = list(path.relative_to(PROJECT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def import_graph() -> dict[str, set[str]]:
    """Module → project modules it imports anywhere in its body (lazy and TYPE_CHECKING imports count)."""
    import ast

    modules = _module_files()

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [known(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [
                    f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else known(node.module)
                    for alias in node.names
                ]
            graph[name].update(t for t in targets if t and t != name)
    return graph


def _room(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "rsp_workbench" and len(parts) > 1 else parts[0]


def _layer_of(room: str) -> int:
    for level, rooms in enumerate(LAYERS):
        if room in rooms:
            return level
    raise AssertionError(f"{room} is in no layer: add it to LAYERS in tests/test_architecture.py (and README's layout)")


def test_imports_point_down_the_layers() -> None:
    upward = [
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        for target in targets
        if _layer_of(_room(target)) > _layer_of(_room(module))
    ]
    assert not upward, "imports that point upward:\n" + "\n".join(sorted(upward))


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components with more than one module: each is an import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
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


def test_no_import_cycles_between_modules() -> None:
    cycles = strongly_connected(import_graph())
    assert not cycles, "modules that import each other (directly or around a loop): " + "; ".join(
        " ↔ ".join(cycle) for cycle in cycles
    )


def test_cycle_detection_finds_a_loop() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# --- the GUI in rooms: one package per tab, each with a Qt-free model ---

GUI = ROOT / "gui"
#: The GUI's shell (not a tab): may stay at the top of rsp_workbench/gui.
GUI_SHELL = {"__init__", "app", "main_window", "qt", "tasks", "highlight", "platform_check", "text", "fit"}
#: One package per tab (the Results tab's model is rsp_workbench.results; its timeline has its own).
GUI_ROOMS = ("library", "designer", "runs", "results", "results.timeline", "teaching", "probe")
#: Qt-free helpers a room's model may import besides other models.
QT_FREE_HELPERS = {"rsp_workbench.gui.text", "rsp_workbench.gui.designer.yaml_edits",
                   "rsp_workbench.gui.designer.save_as_paths", "rsp_workbench.gui.designer.window_clauses",
                   "rsp_workbench.gui.designer.stream_edits"}


def test_every_gui_room_is_a_package() -> None:
    loose = sorted(path.stem for path in GUI.glob("*.py") if path.stem not in GUI_SHELL)
    assert not loose, f"modules of a tab outside its package: {loose}"
    rooms = sorted(path.parent.relative_to(GUI).as_posix().replace("/", ".") for path in GUI.rglob("__init__.py"))
    assert rooms[1:] == sorted(GUI_ROOMS), rooms  # rooms[0] is the gui package itself
    for room in GUI_ROOMS:
        if room != "results":
            assert (GUI / room.replace(".", "/") / "model.py").is_file(), f"{room} has no model module"


def test_gui_room_models_import_neither_qt_nor_views() -> None:
    models = [f"rsp_workbench.gui.{room}.model" for room in GUI_ROOMS if room != "results"]
    code = (
        "import importlib, sys\n"
        f"for name in {models!r}:\n"
        "    importlib.import_module(name)\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph'))))\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('rsp_workbench.gui'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    qt, gui = result.stdout.split("\n")[:2]
    assert qt == "", f"a room's model imports {qt}"
    packages = {"rsp_workbench.gui", *(f"rsp_workbench.gui.{room}" for room in GUI_ROOMS)}
    others = set(gui.split(",")) - packages - set(models) - QT_FREE_HELPERS
    assert not others, f"a room's model imports GUI modules: {sorted(others)}"


GUI_MODULE_LINES, GUI_CLASS_LINES = 800, 400


def test_gui_modules_and_classes_stay_small() -> None:
    """A view that outgrows these is split into cohesive pieces (as the Runs tab into form, queue and detail)."""
    import ast

    big = []
    for path in sorted(GUI.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > GUI_MODULE_LINES:
            big.append(f"{path.relative_to(GUI)}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > GUI_CLASS_LINES:
                big.append(f"{path.relative_to(GUI)}: class {node.name} {node.end_lineno - node.lineno + 1} lines")
    assert not big, "\n".join(big)
