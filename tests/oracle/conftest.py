"""Fixtures of the oracle tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.oracle.cli_support import QUERY, ROOMS


@pytest.fixture
def rooms(tmp_path: Path) -> Path:
    stream = tmp_path / "stream"
    stream.mkdir()
    for n in range(26):
        lines = ["@prefix ex: <http://ex.org/> ."] + [f"ex:{who} ex:detectedAt ex:{room} ." for who, room in ROOMS.get(n, [])]
        (stream / f"data_{n:02d}.ttl").write_text("\n".join(lines) + "\n")
    (tmp_path / "q.rq").write_text(QUERY)
    return tmp_path
