"""Where the tests find the project and their data, wherever a test module sits in tests/."""

from __future__ import annotations

from pathlib import Path

#: The project folder (the repository root).
ROOT = Path(__file__).resolve().parents[1]
#: The tests' own data files.
DATA = ROOT / "tests" / "data"
#: The shipped sample experiments.
SAMPLES = ROOT / "sample_experiments"
