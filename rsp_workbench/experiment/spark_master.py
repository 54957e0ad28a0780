"""Which Spark master the workbench's Spark work runs on: the argument, else the environment variable
``RSPWB_SPARK_MASTER``, else ``spark.master`` in the user settings file
(``$XDG_CONFIG_HOME/rsp-workbench/settings.yaml``, default ``~/.config/...``), else ``local[*]``.

Here, below the pipeline and the engines, because both start Spark: the pipeline's session factory
(`rsp_workbench.pipeline.spark`) and the Spark Structured Streaming engine, a program of its own
(`rsp_workbench.engines.sparkstream`).
"""

from __future__ import annotations

import os
from pathlib import Path

from rsp_workbench.errors import UserError

MASTER_ENV = "RSPWB_SPARK_MASTER"
DEFAULT_MASTER = "local[*]"


def settings_path() -> Path:
    """The user settings file (may not exist)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "rsp-workbench" / "settings.yaml"


def _settings_master(path: Path) -> str | None:
    if not path.is_file():
        return None
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise UserError(f"cannot read settings: {error}", file=str(path)) from None
    if not isinstance(data, dict):
        return None
    value = data.get("spark.master")
    spark = data.get("spark")
    if value is None and isinstance(spark, dict):
        value = spark.get("master")
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise UserError("expected a Spark master URL such as local[*]", file=str(path), field="spark.master")
    return value.strip()


def resolve_master(master: str | None = None) -> str:
    """The master URL: argument, ``RSPWB_SPARK_MASTER``, settings ``spark.master``, ``local[*]``."""
    if master:
        return master
    env = os.environ.get(MASTER_ENV, "").strip()
    if env:
        return env
    return _settings_master(settings_path()) or DEFAULT_MASTER
