"""The domain core imports neither Qt nor Spark (ARCHITECTURE.md layers; STYLE.md)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import workbench

ROOT = Path(workbench.__file__).resolve().parent
OUTER_LAYERS = ("workbench.gui", "workbench.pipeline", "workbench.cli")


def core_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages([str(ROOT)], prefix="workbench."):
        if not info.name.startswith(OUTER_LAYERS):
            names.append(info.name)
    return sorted(names)


def test_core_imports_neither_qt_nor_spark() -> None:
    modules = core_modules()
    assert "workbench.core.report" in modules and "workbench.oracle.verdict" in modules
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
        "from workbench.cli.main import build_parser\n"
        "build_parser()\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'PySide6', 'rdflib'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
