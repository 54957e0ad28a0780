"""The sample notebook runs top to bottom (``[notebook]`` extra: nbclient, a Jupyter kernel, pandas,
matplotlib), as a reader would run it; skipped cleanly where the extra is not installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.paths import SAMPLES

NOTEBOOK = SAMPLES / "notebooks" / "yabench-experiment-1.ipynb"


def test_the_notebook_is_valid_json_with_code() -> None:
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert notebook["nbformat"] == 4 and any("rsp.run(" in c for c in code) and any("rsp.report(" in c for c in code)
    assert all(not cell.get("outputs") for cell in notebook["cells"] if cell["cell_type"] == "code")  # kept clean


@pytest.mark.slow
def test_the_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("nbclient", "nbformat", "ipykernel", "pandas", "matplotlib"):
        pytest.importorskip(module)
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend: figures as PNG outputs
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("YABENCH_ONE", raising=False)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=240, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    text = "\n".join(output.get("text", "") for cell in notebook.cells for output in cell.get("outputs", ()))
    assert "ok {'correct': 2, 'incorrect': 2}" in text
    assert "first divergence at t = 5000 ms" in text and "no published results to compare with" in text
    images = [o for cell in notebook.cells for o in cell.get("outputs", ()) if "image/png" in o.get("data", {})]
    assert len(images) == 2
