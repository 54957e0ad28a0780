"""Shared test fixtures.

``spark``: one local SparkSession for the whole test session, created through the
workbench's own factory (so the factory is what the tests exercise). A JVM start costs
10-20 s here; tests that use it are marked ``@pytest.mark.spark``.
"""

from __future__ import annotations

import os
import shutil
from typing import Iterator

# GUI tests run without a display (docs/design/STYLE.md); set before anything imports Qt.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Every SparkSession of the test run is the one local[1] session (docs/design/STYLE.md), also one that code under
# test starts on its own (an oracle or generator choosing Spark) before the `spark` fixture does.
os.environ.setdefault("RSPWB_SPARK_MASTER", "local[1]")

import pytest

TEST_SPARK_CONF = {
    "spark.sql.shuffle.partitions": "1",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.default.parallelism": "1",
}


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """The shared local[1] SparkSession (via ``rsp_workbench.pipeline.spark.get_spark``)."""
    from rsp_workbench.pipeline.spark import get_spark, stop_spark

    session = get_spark("local[1]", app_name="rsp-workbench-tests", conf=TEST_SPARK_CONF)
    yield session
    stop_spark()


def pytest_configure(config: pytest.Config) -> None:
    """Spark's planner verdicts (``rspwb validate`` of spark-streaming queries) are kept for this run
    only, in one folder every worker shares (set before xdist starts them): a sample validated at
    both sizes asks Spark once, and no verdict kept by an earlier run or by the user's own is used."""
    if not os.environ.get("PYTEST_XDIST_WORKER") and "RSPWB_SPARK_CHECK_CACHE" not in os.environ:
        import tempfile

        folder = tempfile.mkdtemp(prefix="rspwb-tests-spark-check-")
        os.environ["RSPWB_SPARK_CHECK_CACHE"] = folder
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that needs the JVM is slow whatever its own time: the first one starts Spark (10-20 s).
    ``./run-tests -m "not slow"`` is the quick loop (README)."""
    for item in items:
        if item.get_closest_marker("spark"):
            item.add_marker(pytest.mark.slow)
