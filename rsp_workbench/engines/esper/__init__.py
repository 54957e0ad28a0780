"""C-SPARQL's architecture on its own libraries — Esper 9 windows (S2R, R2S) feeding Jena ARQ
(R2R) — as the experiment engine ``type: esper``.

The engine is a Java program (``src/main/java``, built with Maven from ``pom.xml``, every version
pinned) that translates the stand's JSON-lines protocol to Esper and Jena calls and back.
``./install.sh --engines esper`` builds ``target/rspwb-esper.jar`` here; until then an experiment
with ``type: esper`` stops with one line saying so. Esper is GPL-2.0: the workbench only talks to
that separate program through the protocol (README.md, "Licence"). The EPL window and output
clause are engine parameters; the semantics of each combination (a preset each) are in README.md.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from rsp_workbench.errors import UserError

HERE = Path(__file__).resolve().parent
JAR = "rspwb-esper.jar"
#: The JVM options every run gets: the serial collector (no GC threads competing with the stand
#: on small machines, a smaller footprint); otherwise the JVM's defaults, JIT included.
JVM_OPTIONS = ("-XX:+UseSerialGC",)


def jar() -> Path:
    """Where ``mvn package`` puts the program (one jar with Esper and Jena in it)."""
    return HERE / "target" / JAR


def install_hint() -> str:
    """How to build the plug-in, with the folder as the user would type it."""
    try:
        folder = os.path.relpath(HERE)
    except ValueError:  # another drive (Windows)
        folder = str(HERE)
    return f"run ./install.sh --engines esper or: mvn -q -B package -f {folder}/pom.xml"


def java() -> str | None:
    """The Java the program runs on: JAVA_HOME's, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(Path(home) / "bin" / "java", os.X_OK):
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def command(config: Any = None) -> list[str]:
    """The JVM running the built program; UserError (one line) when it has not been built."""
    program = jar()
    if not program.is_file():
        raise UserError(f"engine type esper is not installed (no {HERE.name}/target/{JAR}); {install_hint()}",
                        field="type")
    executable = java()
    if executable is None:
        raise UserError(f"engine type esper needs Java 17 (no java on PATH or in JAVA_HOME); {install_hint()}",
                        field="type")
    heap = (getattr(config, "parameters", None) or {}).get("heap")
    return [executable, *JVM_OPTIONS, *([f"-Xmx{heap}"] if heap else []), "-jar", str(program)]
