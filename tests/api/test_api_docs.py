"""Every example of docs/api.md, run in order in one namespace, as a reader would paste them.

The folder they run in holds a copy of ``sample_experiments/`` and a published YABench folder
``Experiment_1`` (built by hand: two engines' test folders). Blocks calling ``.to_pandas()`` run
when pandas is installed (it is optional); every other block always runs.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest

from tests.api.support import build_published
from tests.paths import ROOT, SAMPLES

DOC = ROOT / "docs" / "api.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_doc_has_its_examples() -> None:
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 5 and sum("to_pandas" in b for b in blocks) == 1


@pytest.mark.slow
def test_every_example_in_the_api_doc_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(SAMPLES, tmp_path / "sample_experiments")
    build_published(tmp_path / "Experiment_1")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__doc_example__"}
    ran = 0
    has_pandas = importlib.util.find_spec("pandas") is not None
    for block in python_blocks(DOC.read_text(encoding="utf-8")):
        if "to_pandas" in block and not has_pandas:
            continue
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - the documentation's own examples
        ran += 1
    out = capsys.readouterr().out
    assert ran >= 5
    assert "yabench-experiment-1 ['cqels', 'csparql']" in out
    assert "ok {" in out and "incorrect" in out
    # oracle, check and probe on the teaching sample (CSRBench Fig. 1): hand-checked windows and verdict
    assert "0 10000 1\n10000 20000 1\n" in out
    assert "incorrect [{'binding': {'room': '<http://ex.org/r2>'}}]" in out
    assert "True cqels" in out
    assert "not a result bundle" in out and "sample_experiments" in out
    assert (tmp_path / "exp1-smoke.html").stat().st_size > 10_000
