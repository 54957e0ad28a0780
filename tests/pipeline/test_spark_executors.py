"""Spark beyond one process: the executors find the workbench.

Local masters run the driver's interpreter; other masters get the project's packages as
Spark py-files; an executor that cannot import a module makes the job fail with one line.
The configuration is tested directly (a local-cluster start costs ~30 s); one job on the
shared local session checks the one-line failure end to end.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rsp_workbench.errors import UserError
from rsp_workbench.pipeline.spark import (
    code_archive,
    executor_failure,
    executor_python,
    executor_python_config,
    job_group,
    session_config,
)


@pytest.mark.parametrize("master", ["local", "local[*]", "local[2]", "local-cluster[2,1,1024]"])
def test_local_masters_run_the_drivers_interpreter(master: str) -> None:
    assert executor_python_config(master, {}) == {"spark.pyspark.python": sys.executable}
    assert executor_python_config(master, {"PYSPARK_PYTHON": "/opt/py/bin/python"}) == {}  # the user's choice wins


def test_cluster_masters_keep_sparks_choice_of_python() -> None:
    for master in ("spark://host:7077", "yarn", "k8s://https://host:6443"):
        assert executor_python_config(master, {}) == {}
    conf = session_config("spark://host:7077")
    assert "spark.pyspark.python" not in conf or conf["spark.pyspark.python"] != sys.executable
    assert executor_python({}, {"PYSPARK_PYTHON": "./environment/bin/python"}) == "./environment/bin/python"
    assert executor_python({"spark.pyspark.python": "/x/python"}, {}) == "/x/python"
    assert executor_python({}, {}) == "python3"


def test_session_config_of_a_local_master_names_this_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    assert session_config("local-cluster[2,1,1024]")["spark.pyspark.python"] == sys.executable
    assert session_config("local[2]", {"spark.pyspark.python": "/y/python"})["spark.pyspark.python"] == "/y/python"


@pytest.mark.slow
def test_code_archive_ships_workbench_and_engines(tmp_path: Path) -> None:
    archive = code_archive(tmp_path)
    with zipfile.ZipFile(archive) as content:
        names = set(content.namelist())
    assert {"rsp_workbench/__init__.py", "rsp_workbench/pipeline/run_experiment.py", "rsp_workbench/engines/__init__.py",
            "rsp_workbench/engines/secret.py", "rsp_workbench/engines/null.py"} <= names
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in names)
    assert not list(tmp_path.glob("*.partial"))
    # the code really comes from the zip: a Python without site-packages or PYTHONPATH imports it
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import rsp_workbench.engines.null, rsp_workbench.stand.protocol; "
             "print(rsp_workbench.engines.null.__file__)")
    done = subprocess.run([sys.executable, "-S", "-E", "-c", probe, str(archive)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(str(archive))


TRACEBACK = """py4j.protocol.Py4JJavaError: An error occurred while calling o42.collectToPython.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 0.0 failed 4 times
  File "/usr/lib/python3/dist-packages/pyspark/serializers.py", line 471, in loads
    return cloudpickle.loads(obj, encoding=encoding)
ModuleNotFoundError: No module named 'rsp_workbench'
"""


def test_a_missing_module_becomes_one_line_saying_what_to_install_where() -> None:
    error = Exception(TRACEBACK)
    local = executor_failure(error, "local-cluster[2,1,1024]", "/usr/bin/python3")
    assert local is not None and "\n" not in str(local)
    assert "PYSPARK_PYTHON" in str(local) and sys.executable in str(local) and "'rsp_workbench'" in str(local)
    own = executor_failure(Exception(TRACEBACK.replace("'rsp_workbench'", "'rdflib'")), "local[2]", sys.executable)
    assert own is not None and f"{sys.executable} -m pip install rdflib" in str(own)
    cluster = executor_failure(Exception(TRACEBACK.replace("'rsp_workbench'", "'rdflib'")), "yarn", "./environment/bin/python")
    assert cluster is not None and "packed environment" in str(cluster) and "'rdflib'" in str(cluster)
    shipped = executor_failure(error, "spark://host:7077", "python3")
    assert shipped is not None and "py-files" in str(shipped)
    assert all(isinstance(e, UserError) and e.field == "spark" for e in (local, own, cluster, shipped))
    assert executor_failure(Exception("ValueError: boom"), "local[1]", "python3") is None


def _import_on_the_executor(x: int) -> int:
    importlib.import_module("rspwb_module_nobody_installed")
    return x


@pytest.mark.spark
def test_a_job_whose_executors_miss_a_module_fails_with_one_line(spark) -> None:
    from pyspark import cloudpickle

    # the function travels by value: the executors' Python never has the working directory (this
    # checkout, where `tests` lives) on its import path (PYTHONSAFEPATH, rsp_workbench.pipeline.spark)
    module = sys.modules[_import_on_the_executor.__module__]
    cloudpickle.register_pickle_by_value(module)
    try:
        with pytest.raises(UserError) as caught:
            with job_group(spark, "rspwb-test-missing-module", "missing module"):
                spark.sparkContext.parallelize([1], 1).map(_import_on_the_executor).collect()
    finally:
        cloudpickle.unregister_pickle_by_value(module)
    message = str(caught.value)
    assert "\n" not in message and "rspwb_module_nobody_installed" in message and "pip install" in message
    assert spark.sparkContext.getConf().get("spark.pyspark.python") == sys.executable
    assert spark.sparkContext.pythonExec == sys.executable  # what PySpark tells the executors to run
    assert spark.sparkContext.parallelize([1, 2], 1).map(lambda x: x + 1).collect() == [2, 3]  # the session lives on


class _DeadContext:
    """A SparkContext whose JVM stopped mid-job: every call after the job's start is refused."""

    master = "local[*]"

    def setJobGroup(self, *args: object, **kwargs: object) -> None:
        pass

    def setLocalProperty(self, key: str, value: object) -> None:
        raise ConnectionRefusedError(111, "Connection refused")


def test_a_jvm_that_stops_mid_job_is_one_line_naming_its_heap() -> None:
    """Py4J's "Connection refused" (the JVM died, e.g. of OutOfMemoryError) becomes one line saying so."""
    from types import SimpleNamespace

    from py4j.protocol import Py4JNetworkError

    from rsp_workbench.pipeline.spark import jvm_gone

    assert jvm_gone(Py4JNetworkError("An error occurred while trying to connect to the Java server"))
    assert jvm_gone(ConnectionRefusedError(111, "Connection refused")) and not jvm_gone(ValueError("x"))
    spark = SimpleNamespace(sparkContext=_DeadContext())
    with pytest.raises(UserError) as raised:
        with job_group(spark, "g", "expected answers"):  # type: ignore[arg-type]
            raise ConnectionRefusedError(111, "Connection refused")
    assert str(raised.value).startswith("spark: Spark's JVM stopped during the job (expected answers)")
    assert "java.lang.OutOfMemoryError: Java heap space" in str(raised.value)
    assert "spark.driver.memory" in str(raised.value)
