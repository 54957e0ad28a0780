"""Where the tests find the project and their data, wherever a test module sits in tests/."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: The project folder (the repository root).
ROOT = Path(__file__).resolve().parents[1]
#: The tests' own data files.
DATA = ROOT / "tests" / "data"
#: The shipped sample experiments.
SAMPLES = ROOT / "sample_experiments"


def conformance_dir() -> Path | None:
    """``../shared/conformance/csrbench`` relative to the repository root, else ``/work/shared``'s."""
    for shared in (ROOT.parent / "shared", Path("/work/shared")):
        folder = shared / "conformance" / "csrbench"
        if (folder / "README.md").is_file():
            return folder
    return None


def required(folder: Path | None) -> Path:
    """The conformance folder; missing, the test is skipped — on CI (``CI`` set) it fails."""
    if folder is None:
        message = "the CSRBench conformance data (../shared/conformance/csrbench) is missing"
        if os.environ.get("CI"):
            pytest.fail(message + " — on CI it must be there")
        pytest.skip(message)
    return folder
