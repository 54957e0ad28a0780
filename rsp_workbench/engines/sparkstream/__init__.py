"""Spark Structured Streaming as the experiment engine ``type: spark-streaming``.

The continuous query is compiled onto Structured Streaming (`plan`: the fragment, decided without
Spark; `job`: the DataFrames) and run by a Python program of its own (`adapter`, on the Python kit),
so that Spark — its JVM, its threads, its memory — is confined to the engine's process, measured as
the engine's. Output mode, watermark and trigger are engine parameters; the semantics of each
combination (a preset each) are in README.md. Nothing here imports Spark: ``command`` starts the
program, ``check`` is ``rspwb validate``'s question to it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, Mapping

from rsp_workbench.engine import isolated_python_command
from rsp_workbench.errors import UserError

#: The program's module: run in the engine's process (``python -m``), never imported by the workbench.
PROGRAM = f"{__name__}.adapter"


def java_missing() -> str | None:
    """Why Spark cannot start here (no Java on PATH or in JAVA_HOME), or None."""
    import os
    import shutil
    from pathlib import Path

    home = os.environ.get("JAVA_HOME")
    if home and os.access(Path(home) / "bin" / "java", os.X_OK):
        return None
    return None if shutil.which("java") else "engine type spark-streaming needs Java 17 (no java on PATH or in JAVA_HOME); run ./install.sh"


def command(config: Any = None) -> list[str]:
    """This interpreter running the adapter, isolated; UserError (one line) when Spark cannot run."""
    missing = java_missing()
    if missing:
        raise UserError(missing, field="type")
    try:
        import importlib.util

        found = importlib.util.find_spec("pyspark") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise UserError("engine type spark-streaming needs pyspark in the workbench's Python; run ./install.sh", field="type")
    return isolated_python_command(PROGRAM)


def check(register: Mapping[str, Any], timeout_s: float = 600) -> str | None:
    """Whether the engine can run a query: the plan's refusal (no Spark needed), else Spark's own
    (its planner, in the adapter's process, on the register message), None if both accept it."""
    from rsp_workbench.engines.sparkstream.plan import check_static, compile_plan
    from rsp_workbench.query.parser import parse_query

    query = register.get("query") or {}
    engine = register.get("engine") or {}
    try:
        compile_plan(parse_query(str(query.get("text") or ""), syntax=query.get("syntax")), engine.get("parameters") or {})
        check_static(register.get("static") or {})
    except UserError as error:
        return error.message
    try:
        done = subprocess.run([*command(), "--check"], input=json.dumps(register) + "\n", capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f"Spark did not answer within {timeout_s:.0f} s"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not lines:
        tail = [line for line in done.stderr.splitlines() if line.strip()][-1:] or ["no output"]
        return f"the Spark check failed (exit {done.returncode}): {tail[0][:300]}"
    refused = json.loads(lines[-1]).get("refused")
    return None if refused is None else str(refused)
