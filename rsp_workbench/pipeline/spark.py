"""The one SparkSession factory: a long-lived session per process, quiet and in UTC.

A cold JVM start costs 8-13 s here, so the session is created once (thread-safe) and
reused by every job and test. The master comes from the argument, else the environment
variable ``RSPWB_SPARK_MASTER``, else ``spark.master`` in the user settings file
(``$XDG_CONFIG_HOME/rsp-workbench/settings.yaml``, default ``~/.config/...``), else
``local[*]``. Java is checked before Py4J tries to start it, so a missing or old Java is
an actionable :class:`SparkUnavailable` instead of "Java gateway process exited".
Cancellation uses job groups (``setJobGroup(..., interruptOnCancel=True)`` +
``cancelJobGroup``), which works on PySpark 4.3 (``interruptTag`` did not in a trial).

Executors must import the workbench. With a local master (``local``, ``local[N]``,
``local-cluster[…]``) they run on this machine, so they run this very interpreter
(``spark.pyspark.python`` = ``sys.executable`` unless ``PYSPARK_PYTHON`` says otherwise):
a ``rspwb`` started by its path, outside an activated virtual environment, would otherwise
give the executors whatever ``python3`` is first on PATH. On any other master the
``workbench`` and ``engines`` packages are shipped with the job as one zip (Spark's
py-files); their third-party dependencies must be in the executors' Python (a packed
environment, README "Spark"). A job failing because an executor cannot import a module
becomes one :class:`UserError` line saying what to install where.
"""

from __future__ import annotations

import os
import signal
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Iterator, Mapping, NoReturn

from rsp_workbench.errors import UserError
# the master's order of precedence is shared with the Spark streaming engine (a program of its own)
from rsp_workbench.experiment.spark_master import resolve_master

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

DEFAULT_APP_NAME = "rsp-workbench"
MIN_JAVA = 17
LOCAL_SHUFFLE_PARTITIONS = 4

JAVA_HELP = (
    "install Java 17 or newer (Debian/Ubuntu: sudo apt-get install openjdk-17-jre-headless) "
    "or point JAVA_HOME at an existing Java 17+ installation"
)

_LOG4J2 = """\
# Root at WARN equals Spark's shell default, so Spark prints no "Setting default log level"
# banner; get_spark() then lowers the level to ERROR. Known start-up warnings are muted.
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = error
logger.utils.name = org.apache.spark.util.Utils
logger.utils.level = error
# a failing task is reported once, by the job's exception (job_group makes it one line);
# without these, every attempt of every task logs the Python traceback again
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = off
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = off
"""


class SparkUnavailable(UserError):
    """Spark cannot start on this machine (no Java, too old a Java)."""


@dataclass(frozen=True)
class JavaInfo:
    """The Java that Spark will use."""

    executable: str
    version: str
    major: int


def _java_executable() -> str | None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("java")


def parse_java_version(output: str) -> tuple[str, int] | None:
    """``(version, major)`` from ``java -version`` output (``"17.0.15"`` → 17, ``"1.8.0_292"`` → 8)."""
    match = re.search(r'version "([^"]+)"', output)
    if not match:
        return None
    version = match.group(1)
    parts = re.findall(r"\d+", version)
    if not parts:
        return None
    major = int(parts[0])
    if major == 1 and len(parts) > 1:
        major = int(parts[1])
    return version, major


@lru_cache(maxsize=1)
def check_java() -> JavaInfo:
    """Find Java (JAVA_HOME, then PATH) and require >= 17; else :class:`SparkUnavailable`."""
    java = _java_executable()
    if java is None:
        raise SparkUnavailable(f"Spark needs Java, but no java was found on PATH or in JAVA_HOME; {JAVA_HELP}")
    try:
        result = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SparkUnavailable(f"could not run {java} -version ({error}); {JAVA_HELP}") from None
    parsed = parse_java_version(result.stderr + result.stdout)
    if parsed is None:
        raise SparkUnavailable(f"could not read the Java version from {java} -version; {JAVA_HELP}")
    version, major = parsed
    if major < MIN_JAVA:
        raise SparkUnavailable(f"Spark needs Java {MIN_JAVA} or newer, but {java} is Java {version}; {JAVA_HELP}")
    return JavaInfo(java, version, major)


#: Attempts of one task on a local master. Spark's own default there is one: a Python worker
#: that dies (killed, out of memory) fails the whole job. A cluster retries by
#: ``spark.task.maxFailures`` (4 unless set). Two, not four: a task that fails for a reason of
#: its own (a malformed line) reads its range once more before the error is reported.
LOCAL_TASK_ATTEMPTS = 2


def with_task_retries(master: str) -> str:
    """``master`` with a retry of a failed task: ``local`` and ``local[N]`` (``*`` too) become
    ``local[N,2]``; a local master that names its attempts (``local[N,F]``) and every other
    master are kept as they are."""
    match = re.fullmatch(r"local(?:\[\s*(\*|\d+)\s*\])?", master.strip())
    return master if match is None else f"local[{match.group(1) or 1},{LOCAL_TASK_ATTEMPTS}]"


def _is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-")


def _log4j2_file() -> str:
    """A quiet log4j2 config (errors only) written once per user to the temp directory."""
    path = Path(tempfile.gettempdir()) / f"rspwb-log4j2-{os.getuid() if hasattr(os, 'getuid') else 0}.properties"
    try:
        if not path.is_file() or path.read_text(encoding="utf-8") != _LOG4J2:
            partial = path.with_name(path.name + f".{os.getpid()}.partial")
            partial.write_text(_LOG4J2, encoding="utf-8")
            os.replace(partial, path)
    except OSError:
        return ""
    return str(path)


def executor_python_config(master: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Which Python the executors run: the driver's own for a local master (they run on
    this machine and must see the same installed workbench), unless ``PYSPARK_PYTHON`` is
    set; on a cluster Spark's own choice (``PYSPARK_PYTHON``, ``spark.pyspark.python``)."""
    environ = os.environ if environ is None else environ
    if _is_local(master) and not environ.get("PYSPARK_PYTHON"):
        return {"spark.pyspark.python": sys.executable}
    return {}


def executor_python(conf: Mapping[str, str], environ: Mapping[str, str] | None = None) -> str:
    """The executors' Python as Spark will choose it (for messages)."""
    environ = os.environ if environ is None else environ
    return conf.get("spark.pyspark.python") or environ.get("PYSPARK_PYTHON") or "python3"


#: The project's own packages, shipped to the executors of a non-local master.
CODE_PACKAGES = ("rsp_workbench",)


def code_archive(directory: str | os.PathLike[str]) -> Path:
    """Zip the ``rsp_workbench`` package (sources and package data) for Spark's py-files.

    Taken from where this process imports them, so the executors run the driver's code.
    """
    import importlib

    target = Path(directory) / "rspwb-code.zip"
    partial = target.with_name(target.name + ".partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in CODE_PACKAGES:
            package = Path(importlib.import_module(name).__file__ or "").resolve().parent
            for path in sorted(package.rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo"):
                    archive.write(path, str(Path(name) / path.relative_to(package)))
    os.replace(partial, target)
    return target


_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([^']+)'")


def executor_failure(error: BaseException, master: str, python: str) -> UserError | None:
    """One line for a job that failed because the executors cannot import a module; None otherwise."""
    match = _MISSING_MODULE.search(str(error))
    if match is None:
        return None
    module = match.group(1)
    top = module.split(".")[0]
    if _is_local(master) and python != sys.executable:
        where = (f"the executors run {python} (PYSPARK_PYTHON), which cannot import {module!r}: "
                 f"unset PYSPARK_PYTHON to use the driver's interpreter ({sys.executable}), or install the "
                 f"workbench there ({python} -m pip install -e <the workbench folder>)")
    elif _is_local(master):
        where = f"the executors' Python ({python}) cannot import {module!r}: {python} -m pip install {top}"
    elif top in CODE_PACKAGES:
        where = (f"the executors on {master} cannot import {module!r} although it is shipped with the job: "
                 f"check that their Python ({python}) can read Spark's py-files")
    else:
        where = (f"the executors' Python ({python}) on {master} cannot import {module!r}: install the workbench's "
                 f"dependencies there, e.g. ship a packed environment (README.md, \"Spark\")")
    return UserError(f"Spark job failed: {where}", field="spark")


def session_config(master: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The configuration the factory applies (``extra`` wins)."""
    conf = {
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # the executors' Python never puts its working directory (the user's, in local mode) on the
        # import path: a module next to an experiment must not run in a Spark task either
        "spark.executorEnv.PYTHONSAFEPATH": "1",
    }
    if _is_local(master):
        conf.update(
            {
                "spark.ui.enabled": "false",
                "spark.sql.shuffle.partitions": str(LOCAL_SHUFFLE_PARTITIONS),
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.driver.host": "127.0.0.1",
            }
        )
    conf.update(executor_python_config(master))
    log_config = _log4j2_file()
    if log_config:
        conf["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{log_config}"
    conf.update(extra or {})
    return conf


INCUBATOR_NOTICE = b"WARNING: Using incubator modules:"


def copy_jvm_stderr(source: BinaryIO, target_fd: int = 2) -> None:
    """Copy the JVM's stderr to ours line by line, all but the JVM's start-up notice that it loads
    ``jdk.incubator.vector``. Spark's launcher always adds ``--add-modules=jdk.incubator.vector``
    and the JVM prints that notice on ``System.err`` at every start; no JVM option turns it off,
    so this one line is dropped here and everything else the JVM says (errors) still shows."""
    for line in iter(source.readline, b""):
        if not line.startswith(INCUBATOR_NOTICE):
            os.write(target_fd, line)
    source.close()


def _launch_jvm(master: str, app_name: str, conf: Mapping[str, str]) -> None:
    """Start Spark's JVM with its stderr through :func:`copy_jvm_stderr` (the session the builder
    makes next reuses this gateway). Nothing when a gateway exists already (a JVM started by
    ``spark-submit`` or an earlier session)."""
    from subprocess import PIPE

    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return
    spark_conf = SparkConf(loadDefaults=False).setMaster(master).setAppName(app_name).setAll(list(conf.items()))
    gateway = launch_gateway(spark_conf, popen_kwargs={"stderr": PIPE})  # type: ignore[no-untyped-call]  # PySpark ships no annotations here
    process = getattr(gateway, "proc", None)
    if process is not None and process.stderr is not None:
        threading.Thread(target=copy_jvm_stderr, args=(process.stderr,), name="jvm-stderr", daemon=True).start()
    SparkContext._ensure_initialized(gateway=gateway)


_lock = threading.Lock()
_session: "SparkSession | None" = None


def get_spark(
    master: str | None = None,
    app_name: str = DEFAULT_APP_NAME,
    conf: Mapping[str, str] | None = None,
) -> "SparkSession":
    """The process's SparkSession, created on first use (the first call's master wins)."""
    global _session
    with _lock:
        if _session is not None:
            return _session
        check_java()
        resolved = with_task_retries(resolve_master(master))
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.master(resolved).appName(app_name)
        config = session_config(resolved, conf)
        for key, value in config.items():
            builder = builder.config(key, value)
        in_main = threading.current_thread() is threading.main_thread()
        previous = signal.getsignal(signal.SIGINT) if in_main else None
        try:
            _launch_jvm(resolved, app_name, config)
            session = builder.getOrCreate()
        except Exception as error:  # Py4J/JVM start-up failures
            raise SparkUnavailable(f"Spark did not start with master {resolved}: {error}") from None
        finally:
            if in_main and previous is not None:
                # PySpark installs a SIGINT handler that calls the JVM from inside the signal handler
                # (Py4J "reentrant call" stack traces); the workbench's own handlers cancel job groups
                signal.signal(signal.SIGINT, previous)
        session.sparkContext.setLogLevel("ERROR")
        # PySpark names the executors' Python from PYSPARK_PYTHON alone when it starts the
        # JVM itself; spark.pyspark.python (ours for local masters, or spark-defaults.conf)
        # takes precedence over it, as in spark-submit
        session.sparkContext.pythonExec = executor_python(dict(session.sparkContext.getConf().getAll()))
        if not _is_local(resolved):
            _ship_code(session)
        _session = session
        return session


def _ship_code(session: "SparkSession") -> None:
    """Add the project's packages to every job of a cluster session (Spark py-files)."""
    directory = tempfile.mkdtemp(prefix="rspwb-spark-code-")
    try:
        session.sparkContext.addPyFile(str(code_archive(directory)))
    except OSError as error:
        raise SparkUnavailable(f"cannot package the workbench for the Spark executors: {error}") from None


def active_spark() -> "SparkSession | None":
    """The session if one was created, without starting one."""
    return _session


def stop_spark() -> None:
    """Stop the process's session (the next :func:`get_spark` starts a new one)."""
    global _session
    with _lock:
        if _session is not None:
            _session.stop()
            _session = None


_TASK_ERROR = "rspwb-user-error:"
_TASK_ERROR_TEXT = re.compile(re.escape(_TASK_ERROR) + r"(\{[^\n]*\})")


class TaskUserError(RuntimeError):
    """A `UserError` raised in a Spark task, as text that survives the trip to the driver
    (Spark passes on the task's traceback, not the exception object)."""


def raise_in_task(error: UserError) -> NoReturn:
    """Raise ``error`` from inside a Spark task so that `job_group` raises it again in the driver."""
    import json

    fields = {"message": error.message, "file": error.file, "line": error.line, "column": error.column,
              "field": error.field}
    raise TaskUserError(_TASK_ERROR + json.dumps(fields)) from None


def task_user_error(error: BaseException) -> UserError | None:
    """The `UserError` a task raised with `raise_in_task`, from the job's failure; None for other failures."""
    import json

    match = _TASK_ERROR_TEXT.search(str(error))
    if match is None:
        return None
    try:
        return UserError(**json.loads(match.group(1)))
    except (ValueError, TypeError):
        return None


def jvm_gone(error: BaseException) -> bool:
    """Whether ``error`` says the JVM behind Py4J is gone (it stopped mid-job: "Connection refused")."""
    from py4j.protocol import Py4JNetworkError

    return isinstance(error, (Py4JNetworkError, ConnectionRefusedError, ConnectionResetError))


@contextmanager
def job_group(spark: "SparkSession", group_id: str, description: str) -> Iterator[str]:
    """Run the block's Spark jobs in a cancellable job group (interrupting tasks on cancel); a
    `UserError` a task raised (`raise_in_task`) is raised again here, file and line kept."""
    context = spark.sparkContext
    context.setJobGroup(group_id, description, interruptOnCancel=True)
    try:
        yield group_id
    except UserError:
        raise
    except Exception as error:  # noqa: BLE001 - re-raised unless a task's user error or a missing module
        if jvm_gone(error):
            raise UserError(f"Spark's JVM stopped during the job ({description}); its log above says why — "
                            "'java.lang.OutOfMemoryError: Java heap space' means its heap (spark.driver.memory, "
                            "1g unless set; on a local master the executors share it) was too small",
                            field="spark") from None
        failure = task_user_error(error) or executor_failure(error, str(context.master),
                                                            executor_python(dict(context.getConf().getAll())))
        if failure is not None:
            raise failure from None
        raise
    finally:
        try:
            for key in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
                context.setLocalProperty(key, None)  # type: ignore[arg-type]  # null removes it
        except Exception as error:  # noqa: BLE001 - a JVM that is gone has nothing to reset
            if not jvm_gone(error):
                raise


def cancel_job_group(group_id: str) -> None:
    """Cancel the running jobs of ``group_id`` (from any thread); no-op without a session."""
    session = _session
    if session is not None:
        session.sparkContext.cancelJobGroup(group_id)
