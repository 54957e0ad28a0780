"""The architecture README's layout table claims, enforced on the source (docs/design/ARCHITECTURE.md layers; docs/design/STYLE.md).

Each rule also runs on a planted tree with one violation of its kind, so a rule that silently
stopped seeing anything would fail here too.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.architecture.rules import (
    QT,
    SPARK,
    SourceTree,
    is_model,
    module_cycles,
    private_imports,
    read_tree,
    reaching,
    readme_mismatches,
    room_cycles,
    strongly_connected,
    unlisted_rooms,
    upward_imports,
)
from tests.paths import ROOT

#: Rooms from the bottom up; a module may import its own layer or a lower one, never a higher.
#: README.md's layout table lists the same rooms with the same layers (checked below).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("rsp_workbench", "rsp_workbench.errors", "rsp_workbench.files"),
    ("rsp_workbench.core",),
    ("rsp_workbench.streams", "rsp_workbench.query"),
    ("rsp_workbench.responses", "rsp_workbench.generators"),
    ("rsp_workbench.engine", "rsp_workbench.experiment"),
    ("rsp_workbench.oracle", "rsp_workbench.results", "rsp_workbench.stand", "rsp_workbench.engines"),
    ("rsp_workbench.pipeline", "rsp_workbench.probe"),
    ("rsp_workbench.cli", "rsp_workbench.gui", "rsp_workbench.api"),
)
#: The only rooms that may reach Qt, and the only ones that may reach Spark.
QT_ROOMS = ("rsp_workbench.gui",)
#: Besides, the Spark streaming engine's program: its adapter and job run in the engine's own process,
#: never in the workbench's, so Spark stays confined to that process (the rest of its room — the command
#: line, the plan that `rspwb validate` compiles — is held to the rule like every engine).
SPARK_ROOMS = ("rsp_workbench.pipeline", "rsp_workbench.cli", "rsp_workbench.gui", "rsp_workbench.api",
               "rsp_workbench.engines.sparkstream.adapter", "rsp_workbench.engines.sparkstream.job")
#: The one import that points up: the package top re-exports the Python API lazily (PEP 562
#: ``__getattr__``), so ``import rsp_workbench`` loads none of it (checked at run time below).
LAZY_REEXPORT = ("rsp_workbench", "rsp_workbench.api")


@pytest.fixture(scope="module")
def tree() -> SourceTree:
    found = read_tree(ROOT, "rsp_workbench")
    package, api = LAZY_REEXPORT
    found.imports[package].discard(api)
    return found


def test_the_package_top_reexports_the_api_lazily() -> None:
    code = (
        "import sys, rsp_workbench\n"
        "heavy = sorted(m for m in sys.modules if m == 'rsp_workbench.api' or m.split('.')[0] in "
        "('pyarrow', 'pyspark', 'PySide6', 'rdflib', 'numpy'))\n"
        "print(','.join(heavy))\n"
        "print(rsp_workbench.open_bundle.__module__, 'run' in dir(rsp_workbench))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == ["", "rsp_workbench.api True"]


@pytest.mark.slow
def test_every_room_is_in_a_layer_and_every_listed_room_exists(tree: SourceTree) -> None:
    assert unlisted_rooms(tree, LAYERS) == []


def test_imports_point_down_the_layers(tree: SourceTree) -> None:
    assert upward_imports(tree, LAYERS) == []


def test_the_judge_imports_nothing_from_the_engines(tree: SourceTree) -> None:
    """The oracle's ground truth is its own (docs/oracle.md, "Which verdicts are independent")."""
    assert [f"{module} imports {target}" for module in tree.files if tree.room(module) == "rsp_workbench.oracle"
            for target in sorted(tree.imports[module]) if tree.room(target) == "rsp_workbench.engines"] == []


def test_no_private_names_cross_modules(tree: SourceTree) -> None:
    assert private_imports(tree) == []


def test_no_import_cycles_between_modules(tree: SourceTree) -> None:
    assert module_cycles(tree) == []


def test_no_import_cycles_between_rooms(tree: SourceTree) -> None:
    assert room_cycles(tree) == []


def test_qt_only_in_the_gui_and_spark_only_in_the_pipeline_and_its_callers(tree: SourceTree) -> None:
    assert "rsp_workbench.core.report" in tree.files and "rsp_workbench.oracle.verdict" in tree.files
    not_qt = [m for m in tree.files if not m.startswith(QT_ROOMS)]
    not_spark = [m for m in tree.files if not m.startswith(SPARK_ROOMS)]
    assert reaching(tree, not_qt, QT) == []
    assert reaching(tree, not_spark, SPARK) == []


def test_gui_models_are_qt_free(tree: SourceTree) -> None:
    models = [m for m in tree.files if is_model(m)]
    assert len(models) >= 3, models  # the runs, teaching and designer models at least
    assert reaching(tree, models, QT) == []
    views = [f"{m} imports the view {t}" for m in models for t in tree.imports[m]
             if t.startswith("rsp_workbench.gui") and not is_model(t) and tree.external[t] & set(QT)]
    assert views == []


#: The GUI's shell (not a tab) may stay at the top of rsp_workbench/gui; everything of one tab is in its package.
GUI_SHELL = {"__init__", "app", "main_window", "qt", "tasks", "highlight", "platform_check", "text", "fit"}
#: One package per tab, each with a Qt-free model (the Results tab's reads through rsp_workbench.results).
GUI_ROOMS = ("library", "designer", "runs", "results", "results.timeline", "teaching", "probe")
GUI_MODULE_LINES, GUI_CLASS_LINES = 800, 400


def test_every_gui_room_is_a_package_with_a_model(tree: SourceTree) -> None:
    gui = ROOT / "rsp_workbench" / "gui"
    assert sorted(path.stem for path in gui.glob("*.py") if path.stem not in GUI_SHELL) == []
    packages = sorted(m.removeprefix("rsp_workbench.gui.") for m, path in tree.files.items()
                      if m.startswith("rsp_workbench.gui.") and path.name == "__init__.py")
    assert packages == sorted(GUI_ROOMS)
    models = sorted(m.removeprefix("rsp_workbench.gui.") for m in tree.files if is_model(m))
    assert models == sorted(f"{room}.model" for room in GUI_ROOMS)


def test_gui_modules_and_classes_stay_small(tree: SourceTree) -> None:
    """A view that outgrows these is split into cohesive pieces (as the Runs tab into form, queue and detail)."""
    import ast

    big = []
    for module, path in sorted(tree.files.items()):
        if not module.startswith("rsp_workbench.gui"):
            continue
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > GUI_MODULE_LINES:
            big.append(f"{path.name}: {lines} lines")
        big += [f"{path.name}: class {node.name} {node.end_lineno - node.lineno + 1} lines"
                for node in ast.walk(tree.syntax[module])
                if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > GUI_CLASS_LINES]
    assert big == []


#: Modules over ~800 lines and classes over ~400 anywhere: single algorithms, each named in the README.
SINGLE_ALGORITHMS = ("rsp_workbench/oracle/annotated.py", "rsp_workbench/query/parser.py: class _QueryScanner")


def test_modules_and_classes_stay_small_outside_the_single_algorithms_the_readme_names(tree: SourceTree) -> None:
    import ast

    big = []
    for module, path in sorted(tree.files.items()):
        name = path.relative_to(ROOT).as_posix()
        if len(path.read_text(encoding="utf-8").splitlines()) > GUI_MODULE_LINES:
            big.append(name)
        big += [f"{name}: class {node.name}" for node in ast.walk(tree.syntax[module])
                if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > GUI_CLASS_LINES]
    assert sorted(big) == sorted(SINGLE_ALGORITHMS)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert all(f"`{entry.split(': class ')[-1] if ': class ' in entry else entry}`" in readme
               for entry in SINGLE_ALGORITHMS)


def test_readme_layout_table_matches_the_layers() -> None:
    assert readme_mismatches((ROOT / "README.md").read_text(encoding="utf-8"), LAYERS) == []


@pytest.mark.slow
def test_core_imports_neither_qt_nor_spark_when_imported() -> None:
    """The same rule at run time: importing every module outside the outer rooms loads no Qt or Spark."""
    tree = read_tree(ROOT, "rsp_workbench")
    modules = sorted(m for m in tree.files if not m.startswith(SPARK_ROOMS))
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {QT + SPARK!r})\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
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


# --- a test of the test: each rule catches a planted violation of its kind ---------------------

PLANTED_LAYERS: tuple[tuple[str, ...], ...] = (
    ("pkg", "pkg.errors"),
    ("pkg.core",),
    ("pkg.oracle", "pkg.results", "pkg.engines"),
    ("pkg.gui",),
)


def planted(tmp_path: Path, files: dict[str, str]) -> SourceTree:
    """A package ``pkg`` under ``tmp_path`` with the given modules (paths relative to ``pkg/``)."""
    for name in ("", "core", "oracle", "results", "engines", "gui", "gui/runs"):
        (tmp_path / "pkg" / name).mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / name / "__init__.py").touch()
    (tmp_path / "pkg" / "errors.py").touch()
    for name, text in files.items():
        (tmp_path / "pkg" / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return read_tree(tmp_path, "pkg")


def test_a_clean_planted_tree_passes(tmp_path: Path) -> None:
    tree = planted(tmp_path, {"core/a.py": "from pkg.errors import *\n", "oracle/b.py": "from ..core import a\n"})
    assert upward_imports(tree, PLANTED_LAYERS) == [] and module_cycles(tree) == [] and room_cycles(tree) == []
    assert unlisted_rooms(tree, PLANTED_LAYERS) == [] and reaching(tree, ["pkg.core.a"], QT) == []


def test_a_relative_upward_import_is_caught(tmp_path: Path) -> None:
    tree = planted(tmp_path, {"core/a.py": "def f():\n    from ..oracle import b\n", "oracle/b.py": ""})
    assert upward_imports(tree, PLANTED_LAYERS) == ["pkg.core.a imports pkg.oracle.b"]


def test_a_plugin_named_in_a_string_is_an_import(tmp_path: Path) -> None:
    tree = planted(tmp_path, {"core/a.py": 'PLUGINS = {"x": "pkg.engines.secret:SecretEngine"}\n', "engines/secret.py": ""})
    assert upward_imports(tree, PLANTED_LAYERS) == ["pkg.core.a imports pkg.engines.secret"]


def test_a_lazy_spark_import_in_the_core_is_caught(tmp_path: Path) -> None:
    tree = planted(tmp_path, {"core/a.py": "from . import b\n", "core/b.py": "def go():\n    import pyspark.sql\n"})
    assert reaching(tree, ["pkg.core.a"], SPARK) == ["pkg.core.a reaches pyspark through pkg.core.b"]


def test_a_gui_model_reaching_qt_is_caught(tmp_path: Path) -> None:
    tree = planted(tmp_path, {"gui/runs/model.py": "from .view import RunsView\n",
                              "gui/runs/view.py": "from PySide6.QtWidgets import QWidget\n"})
    models = [m for m in tree.files if is_model(m)]
    assert models == ["pkg.gui.runs.model"]
    assert reaching(tree, models, QT) == ["pkg.gui.runs.model reaches PySide6 through pkg.gui.runs.view"]


def test_a_cycle_between_rooms_without_a_module_cycle_is_caught(tmp_path: Path) -> None:
    tree = planted(tmp_path, {"oracle/out.py": "from pkg.results import files\n", "results/files.py": "",
                              "results/view.py": "from pkg.oracle import quality\n", "oracle/quality.py": ""})
    assert module_cycles(tree) == []
    assert room_cycles(tree) == [["pkg.oracle", "pkg.results"]]


def test_a_private_name_taken_from_another_module_is_caught(tmp_path: Path) -> None:
    tree = planted(tmp_path, {"core/a.py": "def _key(): ...\n_cache = {}\n__all__ = ['x']\n",
                              "core/b.py": "from ._own import y\n",  # a private module's public name: fine
                              "core/_own.py": "y = 1\n",
                              "oracle/c.py": "from pkg.core.a import _key, __all__\n",
                              "oracle/d.py": "from ..core import a\nimport pkg.core.a as m\nprint(a._cache, m._key, a.__all__)\n",
                              "results/e.py": "def _mine(): ...\nprint(_mine())\n"})
    assert private_imports(tree) == ["pkg.oracle.c imports pkg.core.a._key", "pkg.oracle.d uses pkg.core.a._cache",
                                     "pkg.oracle.d uses pkg.core.a._key"]


def test_a_module_cycle_is_caught(tmp_path: Path) -> None:
    tree = planted(tmp_path, {"core/a.py": "from pkg.core import b\n", "core/b.py": "import pkg.core.a\n"})
    assert module_cycles(tree) == [["pkg.core.a", "pkg.core.b"]]
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_an_unlisted_room_and_a_stale_one_are_caught(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "probe").mkdir(parents=True)
    (tmp_path / "pkg" / "probe" / "__init__.py").touch()
    tree = planted(tmp_path, {})
    stale = PLANTED_LAYERS + (("pkg.bundle",),)
    assert unlisted_rooms(tree, stale) == ["pkg.probe is in no layer", "pkg.bundle is listed but does not exist"]


def test_a_readme_table_that_disagrees_is_caught() -> None:
    readme = "| layer | folder | what |\n| --- | --- | --- |\n| 1 | `pkg/core` | x |\n| 2 | `pkg/oracle`, `pkg/gone` | y |\n"
    layers = (("pkg",), ("pkg.core",), ("pkg.oracle", "pkg.results"))
    assert readme_mismatches(readme, layers) == [
        "pkg.gone: in README's table but not a room", "pkg.results: README says layer None, the rules say 2"]
