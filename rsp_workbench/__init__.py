"""RSP Workbench: design, run and judge RDF Stream Processing experiments.

The Python API (docs/api.md) is :mod:`rsp_workbench.api`, re-exported here when first used —
``rsp_workbench.open_bundle(...)`` — so that ``import rsp_workbench`` itself loads nothing heavy.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
APP_NAME = "RSP Workbench"
#: The names of :mod:`rsp_workbench.api` that the package itself offers.
API = ("Bundle", "UserError", "load_experiment", "open_bundle", "report", "run")


def __getattr__(name: str) -> Any:
    """``rsp_workbench.run`` etc.: the API module is imported on first use (PEP 562)."""
    if name in API:
        from rsp_workbench import api

        return getattr(api, name)
    raise AttributeError(f"module 'rsp_workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *API])
