"""The Spark path on a multi-process master: ``local-cluster[2,1,4096]`` (two worker JVMs, one core
and 4 GiB each, their Python workers started by the executors as on a cluster) answers exactly as
the shared in-process ``local[1]`` session does.

The stream is named by a path relative to the command's working folder: executors of a cluster
run in folders of their own, so the reader hands them absolute paths (they once failed with
``No such file or directory``). The files written must be the same byte for byte: the joined rows
once reached the driver in the order the shuffles gave them, and the mappings were numbered in
another order on each master. Costs a JVM and two worker JVMs per case (about 40 s on a quiet machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rsp_workbench.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
QUERY = ROOT / "sample_experiments" / "yabench" / "queries" / "q1.rq"
MASTER = "local-cluster[2,1,4096]"


def oracle_argv(stream: str, out: str, system: str = "yabench-content-change") -> list[str]:
    """YABench Exp. 1's query, every t0, on the Spark path, answers into ``out``."""
    return ["oracle", "--stream", stream, "--query", str(QUERY), "--var", "WSIZE=5s", "--var", "WSLIDE=5s",
            "--var", "TEMP=50", "--system", system, "--t0", "all", "--method", "spark", "--json", "--out", out]


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.timeout(900)  # three JVMs: minutes on a loaded machine
# content change: the vectorised answers; CQELS: presence runs per t0 (another writer of the answers)
@pytest.mark.parametrize(("system", "candidates"), [("yabench-content-change", 5000), ("cqels", 50)])
def test_local_cluster_answers_as_the_local_session(tmp_path: Path, spark: Any, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str], system: str,
                                                     candidates: int) -> None:
    monkeypatch.chdir(tmp_path)  # both commands name the stream and the answers' folders as a user does
    assert main(["generate", "--generator", "sg1", "--param", "stations=4", "--param", "duration=12000",
                 "--param", "interval=1000", "--out", "sg1.txt", "--quiet"]) == 0
    capsys.readouterr()
    assert main(oracle_argv("sg1.txt", "local", system)) == 0
    local = json.loads(capsys.readouterr().out)
    assert local["engine"] == "spark" and local["t0_candidates"] == candidates

    environment = {**os.environ, "RSPWB_SPARK_MASTER": MASTER}
    done = subprocess.run([sys.executable, "-m", "rsp_workbench.cli.main",
                           *oracle_argv("sg1.txt", "cluster", system)],
                          cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    cluster = json.loads(done.stdout)
    assert cluster["engine"] == "spark"
    assert {key: value for key, value in cluster.items() if key != "out"} == {
        key: value for key, value in local.items() if key != "out"}
    written = sorted(path.name for path in (tmp_path / "local").iterdir())
    assert written == sorted(path.name for path in (tmp_path / "cluster").iterdir())
    for name in written:  # the expected answers of every t0, byte for byte
        assert (tmp_path / "cluster" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
