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
from typing import Any, Mapping, Sequence

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


def check(registers: Sequence[Mapping[str, Any]], timeout_s: float = 600) -> list[str | None]:
    """Whether the engine can run each register message: the plan's refusal (no Spark needed), else
    Spark's own (its planner, asked in one adapter process for all of them: one JVM start), None if
    both accept it."""
    from rsp_workbench.engines.sparkstream.plan import check_static, compile_plan
    from rsp_workbench.query.parser import parse_query

    verdicts: list[str | None] = []
    for register in registers:
        query, engine = register.get("query") or {}, register.get("engine") or {}
        try:
            compile_plan(parse_query(str(query.get("text") or ""), syntax=query.get("syntax")), engine.get("parameters") or {})
            check_static(register.get("static") or {})
            verdicts.append(None)
        except UserError as error:
            verdicts.append(error.message)
    ask = [register for register, verdict in zip(registers, verdicts) if verdict is None]
    if not ask:
        return verdicts
    try:
        done = subprocess.run([*command(), "--check"], input="".join(json.dumps(r) + "\n" for r in ask),
                              capture_output=True, text=True, timeout=timeout_s)
        answers = [json.loads(line).get("refused") for line in done.stdout.splitlines() if line.strip()]
    except subprocess.TimeoutExpired:
        answers = [f"Spark did not answer within {timeout_s:.0f} s"] * len(ask)
    except UserError as error:
        answers = [error.message] * len(ask)
    if len(answers) != len(ask):
        tail = [line for line in done.stderr.splitlines() if line.strip()][-1:] or ["no output"]
        answers = [f"the Spark check failed (exit {done.returncode}): {tail[0][:300]}"] * len(ask)
    spark = iter(answers)
    return [verdict if verdict is not None else next(spark) for verdict in verdicts]
