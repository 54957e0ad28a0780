"""The SparkSession factory: Java check, master resolution, configuration, job groups."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from rsp_workbench.generators import sg1
from rsp_workbench.pipeline import spark as spark_module
from rsp_workbench.pipeline.generate import generate
from rsp_workbench.pipeline.spark import (
    SparkUnavailable,
    cancel_job_group,
    check_java,
    get_spark,
    job_group,
    parse_java_version,
    resolve_master,
    session_config,
)


def test_parse_java_version() -> None:
    assert parse_java_version('openjdk version "17.0.15" 2025-04-15') == ("17.0.15", 17)
    assert parse_java_version('java version "1.8.0_292"') == ("1.8.0_292", 8)
    assert parse_java_version('openjdk version "21" 2023-09-19') == ("21", 21)
    assert parse_java_version("no version here") is None


@pytest.fixture()
def fresh_java_check():
    check_java.cache_clear()
    yield
    check_java.cache_clear()


def test_missing_java_is_actionable(monkeypatch, tmp_path, fresh_java_check) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SparkUnavailable) as info:
        check_java()
    assert "apt-get install openjdk-17-jre-headless" in str(info.value)
    assert "JAVA_HOME" in str(info.value)


def test_old_java_is_rejected(monkeypatch, tmp_path, fresh_java_check) -> None:
    java_home = tmp_path / "jdk8"
    (java_home / "bin").mkdir(parents=True)
    java = java_home / "bin" / "java"
    java.write_text('#!/bin/sh\necho \'java version "1.8.0_292"\' >&2\n', encoding="utf-8")
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("JAVA_HOME", str(java_home))
    with pytest.raises(SparkUnavailable) as info:
        check_java()
    assert "1.8.0_292" in str(info.value) and "17" in str(info.value)


def test_installed_java_passes(fresh_java_check) -> None:
    assert check_java().major >= 17


def test_master_resolution_order(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("RSPWB_SPARK_MASTER", raising=False)
    assert resolve_master() == "local[*]"
    settings = tmp_path / "rsp-workbench" / "settings.yaml"
    settings.parent.mkdir()
    settings.write_text("spark:\n  master: spark://cluster:7077\n", encoding="utf-8")
    assert resolve_master() == "spark://cluster:7077"
    settings.write_text("spark.master: local[3]\n", encoding="utf-8")
    assert resolve_master() == "local[3]"
    monkeypatch.setenv("RSPWB_SPARK_MASTER", "local[2]")
    assert resolve_master() == "local[2]"
    assert resolve_master("local[1]") == "local[1]"


def test_session_config() -> None:
    local = session_config("local[*]")
    assert local["spark.ui.enabled"] == "false"
    assert local["spark.ui.showConsoleProgress"] == "false"
    assert local["spark.sql.session.timeZone"] == "UTC"
    assert local["spark.sql.shuffle.partitions"] == "4"
    cluster = session_config("spark://host:7077")
    assert "spark.ui.enabled" not in cluster
    assert session_config("local[2]", {"spark.sql.shuffle.partitions": "1"})["spark.sql.shuffle.partitions"] == "1"


@pytest.mark.spark
def test_session_is_shared_and_configured(spark) -> None:
    assert get_spark() is spark  # the factory's cached session
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    assert spark.sparkContext.getConf().get("spark.ui.enabled") == "false"
    assert spark.sparkContext.master == "local[1,2]"  # a lost worker's task runs again (with_task_retries)


@pytest.mark.spark
def test_sg1_as_spark_job_is_byte_identical(spark, tmp_path: Path) -> None:
    params = {"stations": 20, "interval": "1s", "duration": "10s", "seed": -42}
    result = generate("sg1", params, tmp_path / "s.stream", "yabench", engine="spark")
    assert result.engine == "spark"
    assert (tmp_path / "s.stream").read_text(encoding="utf-8") == "".join(sg1.reference_text(params))
    assert sorted(os.listdir(tmp_path)) == ["s.stream"]


@pytest.mark.spark
def test_job_group_cancellation(spark) -> None:
    errors: list[BaseException] = []
    started = threading.Event()

    def work() -> None:
        try:
            with job_group(spark, "rspwb-test-cancel", "sleeping task"):
                started.set()
                spark.sparkContext.parallelize([1], 1).map(lambda x: time.sleep(60) or x).collect()
        except BaseException as error:  # noqa: BLE001 - the cancelled job's error is the point
            errors.append(error)

    worker = threading.Thread(target=work)
    began = time.monotonic()
    worker.start()
    started.wait(10)
    time.sleep(1.5)
    cancel_job_group("rspwb-test-cancel")
    worker.join(45)
    assert not worker.is_alive()
    assert errors and "cancel" in str(errors[0]).lower()
    assert time.monotonic() - began < 45
    assert spark_module.active_spark() is spark


def test_the_jvm_start_notice_is_dropped_and_the_rest_of_its_stderr_kept() -> None:
    """Spark's JVM prints "WARNING: Using incubator modules: jdk.incubator.vector" at every start
    (Spark's launcher adds the module); that line goes, every other line reaches our stderr."""
    import io

    from rsp_workbench.pipeline.spark import copy_jvm_stderr

    read_end, write_end = os.pipe()
    jvm = io.BytesIO(b"WARNING: Using incubator modules: jdk.incubator.vector\n"
                     b"Exception in thread \"main\" java.lang.OutOfMemoryError\n"
                     b"WARNING: something else\n")
    copy_jvm_stderr(jvm, write_end)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as copied:
        assert copied.read() == b"Exception in thread \"main\" java.lang.OutOfMemoryError\nWARNING: something else\n"


def test_the_session_factory_starts_the_jvm_with_its_stderr_filtered(monkeypatch) -> None:
    import io
    import subprocess
    import types

    pyspark = pytest.importorskip("pyspark")
    from pyspark import java_gateway

    launched: dict[str, object] = {}
    copied = threading.Event()

    def fake_launch(conf, popen_kwargs=None):  # type: ignore[no-untyped-def]
        launched.update(conf=dict(conf.getAll()), popen_kwargs=popen_kwargs)
        return types.SimpleNamespace(proc=types.SimpleNamespace(stderr=io.BytesIO(b"")), jvm=object())

    def fake_copy(source, target_fd=2):  # type: ignore[no-untyped-def]
        copied.set()

    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setattr(java_gateway, "launch_gateway", fake_launch)
    monkeypatch.setattr(spark_module, "copy_jvm_stderr", fake_copy)
    monkeypatch.setattr(pyspark.SparkContext, "_gateway", None)
    monkeypatch.setattr(pyspark.SparkContext, "_jvm", None)
    spark_module._launch_jvm("local[1]", "rspwb-test", {"spark.ui.enabled": "false"})
    assert launched["popen_kwargs"] == {"stderr": subprocess.PIPE}
    assert launched["conf"] == {"spark.master": "local[1]", "spark.app.name": "rspwb-test", "spark.ui.enabled": "false"}
    assert copied.wait(5) and pyspark.SparkContext._gateway is not None
