"""Spark Structured Streaming as the experiment engine ``type: spark-streaming``.

The continuous query is compiled onto Structured Streaming (`plan`: the fragment, decided without
Spark; `job`: the DataFrames) and run by a Python program of its own (`adapter`, on the Python kit),
so that Spark — its JVM, its threads, its memory — is confined to the engine's process, measured as
the engine's. Output mode, watermark and trigger are engine parameters; the semantics of each
combination (a preset each) are in README.md. Nothing here imports Spark: ``command`` starts the
program, ``check`` is ``rspwb validate``'s question to it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
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


#: Folder of Spark's kept verdicts (``off``: ask Spark every time); default: the user's cache folder.
CHECK_CACHE_ENV = "RSPWB_SPARK_CHECK_CACHE"


def check_cache_folder() -> Path | None:
    """Where Spark's planner verdicts are kept, so that validating the same query again (the designer
    validates as one edits, a sample at each of its sizes) does not start a JVM of 20-40 s each time."""
    value = os.environ.get(CHECK_CACHE_ENV, "")
    if value == "off":
        return None
    if value:
        return Path(value)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rsp-workbench" / "spark-check"


@functools.cache
def _judge_digest() -> bytes:
    """What Spark's verdicts depend on besides the message, read once per process: the Spark version
    and this engine's own code (the plan and the job compile the query; the adapter starts it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        spark = version("pyspark")
    except PackageNotFoundError:
        spark = "none"
    digest = hashlib.sha256(spark.encode())
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.read_bytes())
    return digest.digest()


def _verdict_key(register: Mapping[str, Any]) -> str:
    """What Spark's verdict on a register message depends on: the query, the engine's parameters and
    the static data (not the engine's or the query's name), and ``_judge_digest()``."""
    query, engine = register.get("query") or {}, register.get("engine") or {}
    asked = {"query": {key: query.get(key) for key in ("text", "syntax", "dialect")},
             "parameters": engine.get("parameters") or {}, "static": register.get("static") or {}}
    return hashlib.sha256(json.dumps(asked, sort_keys=True, default=str).encode() + _judge_digest()).hexdigest()


def _kept(folder: Path | None, key: str) -> tuple[bool, str | None]:
    """(True, verdict) when Spark answered this message before, else (False, None)."""
    if folder is None:
        return False, None
    try:
        kept = json.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
        return True, kept["refused"] if kept["refused"] is None else str(kept["refused"])
    except (OSError, ValueError, KeyError, TypeError):
        return False, None


def _keep(folder: Path | None, key: str, verdict: str | None) -> None:
    """Keep Spark's verdict (whole file or none: written aside, then renamed); a cache that cannot
    be written costs only the next JVM start."""
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        aside = folder / f".{key}.{os.getpid()}.tmp"
        aside.write_text(json.dumps({"refused": verdict}), encoding="utf-8")
        os.replace(aside, folder / f"{key}.json")
    except OSError:
        pass


def check(registers: Sequence[Mapping[str, Any]], timeout_s: float = 600, kept: bool = True) -> list[str | None]:
    """Whether the engine can run each register message: the plan's refusal (no Spark needed), else
    Spark's own (its planner, asked in one adapter process for all of them: one JVM start, and only
    about messages whose verdict is not kept in ``check_cache_folder()``; ``kept=False`` asks about
    every one), None if both accept it."""
    folder = check_cache_folder() if kept else None
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
    pending: list[tuple[int, str]] = []  # (index, key) of the messages Spark must be asked about
    for index, register in enumerate(registers):
        if verdicts[index] is None:
            key = _verdict_key(register)
            found, verdict = _kept(folder, key)
            if found:
                verdicts[index] = verdict
            else:
                pending.append((index, key))
    if not pending:
        return verdicts
    ask = [registers[index] for index, _ in pending]
    answered = False  # the planner's own verdicts (kept), not a failure to ask it (asked again next time)
    try:
        done = subprocess.run([*command(), "--check"], input="".join(json.dumps(r) + "\n" for r in ask),
                              capture_output=True, text=True, timeout=timeout_s)
        answers = [json.loads(line).get("refused") for line in done.stdout.splitlines() if line.strip()]
        answered = len(answers) == len(ask)
    except subprocess.TimeoutExpired:
        answers = [f"Spark did not answer within {timeout_s:.0f} s"] * len(ask)
    except UserError as error:
        answers = [error.message] * len(ask)
    if len(answers) != len(ask):
        tail = [line for line in done.stderr.splitlines() if line.strip()][-1:] or ["no output"]
        answers = [f"the Spark check failed (exit {done.returncode}): {tail[0][:300]}"] * len(ask)
    for (index, key), answer in zip(pending, answers):
        verdicts[index] = answer
        if answered:
            _keep(folder, key, answer)
    return verdicts
