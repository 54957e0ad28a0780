"""`rspwb run` in bounded memory (issue #11): the files it writes piece by piece are the ones it
wrote whole before, byte for byte."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from workbench.oracle.quality import WindowQuality, boxplots_lines, boxplots_text
from workbench.results.bundle import write_json_atomic


def _whole(value: object) -> object:
    """The cleaning `write_json_atomic` did before it streamed (a full copy)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _whole(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_whole(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


def test_streamed_json_is_the_whole_text(tmp_path: Path) -> None:
    payload = {
        "verdict": "correct", "precision": float("nan"), "t0": (0, 5), 3: "int key", True: [1.5, float("inf")],
        "windows": [{"start": i, "end": i + 5, "delay": None, "precision": 1.0} for i in range(3)],
        "nested": {"path": Path("/x/y"), "empty": [], "none": {}, "text": "é\u2028\""},
        "plain": [[1, 2], ("a", "b")],
    }
    target = tmp_path / "oracle.json"
    write_json_atomic(target, payload)
    assert target.read_text(encoding="utf-8") == json.dumps(_whole(payload), indent=2) + "\n"
    assert not (tmp_path / "oracle.json.partial").exists()
    assert payload["precision"] != payload["precision"]  # the caller's payload is not changed
    unchanged = {"windows": [{"start": 1}]}
    write_json_atomic(target, unchanged)
    assert target.read_text(encoding="utf-8") == json.dumps(unchanged, indent=2) + "\n"


def test_boxplots_from_oracle_lines_are_those_from_the_windows() -> None:
    runs = [
        [WindowQuality(0, 5, 1.0, 0.5, 2, 4, 10, 3), WindowQuality(5, 10, 0.25, 1.0, 4, 1, 9, None, 4, 11)],
        [WindowQuality(0, 5, 0.0, 1.0, 0, 0, 10, -2)],
        [],
    ]
    lines = [[w.oracle_line() + "\n" for w in run] for run in runs]
    assert "".join(boxplots_lines("cqels", lines)) == boxplots_text("cqels", runs)
    assert boxplots_text("csparql", []) == "csparql\n"
