"""The bad-input catalogue, security: an experiment file, its folder and a result bundle are untrusted.

Every case runs real ``rspwb`` processes (the launcher script, the installed console
script, ``python -m``) and real engine processes, and checks the process tree after
each run: no code from the experiment's folder or the working directory runs (a planted
module writes a marker file if it is ever imported), nothing of the user's is deleted,
and no engine process outlives the run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.bad_inputs_support import EX, PYTHON, ROOT, ROOMS_STREAM, external_experiment, leftovers, subprocess_env

# Modules a Python start or the workbench imports: planted next to the experiment and in the working
# directory, each writes a marker file named after itself if it is ever imported.
PLANTED = ("orjson", "psutil", "numpy", "yaml", "sitecustomize", "usercustomize", "rsp_workbench")


def plant(folder: Path, markers: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in PLANTED:
        code = f"import pathlib\npathlib.Path({str(markers)!r}, {name!r} + '-' + __name__).write_text('ran')\n"
        if name == "rsp_workbench":
            (folder / name).mkdir(exist_ok=True)
            (folder / name / "__init__.py").write_text(code, encoding="utf-8")
        else:
            (folder / f"{name}.py").write_text(code, encoding="utf-8")


def rooms_experiment(folder: Path, engines: str = "{id: csparql, type: secret, preset: csparql}") -> Path:
    (folder / "rooms.stream").write_text(ROOMS_STREAM, encoding="utf-8")
    path = folder / "exp.yaml"
    path.write_text(f"""\
name: rooms
stream: {{file: rooms.stream, format: yabench}}
queries:
  - id: rooms
    text: |
      REGISTER QUERY rooms AS SELECT ?room FROM STREAM <http://www.example.org/stream1> [RANGE 10s STEP 10s]
      WHERE {{ <{EX}m1> <{EX}detectedAt> ?room . <{EX}m2> <{EX}detectedAt> ?room }}
engines:
  - {engines}
""", encoding="utf-8")
    return path


def processes_under(folder: Path) -> list[str]:
    """Processes (other than this one) whose working directory or command line lies under ``folder``."""
    found = []
    for process in psutil.process_iter():
        if process.pid == os.getpid():
            continue
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                continue
            if str(folder) in process.cwd() or str(folder) in " ".join(process.cmdline()):
                found.append(f"{process.pid} {process.cmdline()}")
        except psutil.Error:
            continue
    return found


def no_process_left(folder: Path, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while processes_under(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_under(folder) == []


def run_cli(command: list[str], cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


# --- no code from the experiment's folder or the working directory runs ----------------------


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["script", "installed", "isolated-python"])
def test_modules_next_to_an_experiment_never_run(tmp_path: Path, launcher: str) -> None:
    """``orjson.py``, ``psutil.py``, … in the experiment's folder and in the working directory are
    imported neither by the CLI nor by the engine workers; the run itself is unaffected."""
    markers = tmp_path / "markers"
    markers.mkdir()
    experiment_folder = tmp_path / "downloaded"
    plant(experiment_folder, markers)
    experiment = rooms_experiment(experiment_folder, "{id: csparql, type: secret, preset: csparql}\n"
                                                      "  - {id: cqels, type: naive, preset: cqels}")
    elsewhere = tmp_path / "elsewhere"
    plant(elsewhere, markers)
    if launcher == "script":  # ./rspwb from the experiment's own folder
        command, cwd = [str(ROOT / "rspwb")], experiment_folder
    elif launcher == "installed":  # the console script pip installed, from another planted folder
        console = Path(sys.executable).parent / "rspwb"
        if not console.is_file():
            pytest.skip("no installed rspwb console script next to this interpreter")
        command, cwd = [str(console)], elsewhere
    else:
        from rsp_workbench.stand.processes import isolated_python_command

        command, cwd = isolated_python_command("rsp_workbench.cli.main"), experiment_folder
    out = tmp_path / "bundle"
    result = run_cli([*command, "run", str(experiment), "--out", str(out), "--quiet"], cwd)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert sorted(path.name for path in markers.iterdir()) == []
    manifest = json.loads((out / "manifest.json").read_text())
    assert [run["status"] for run in manifest["runs"]] == ["ok", "ok"]
    for run in manifest["runs"]:  # the workers ran in their run folder, isolated
        command_run = json.loads((out / "runs" / run["run_id"] / "run.json").read_text())["command"]
        assert command_run[:3] == [sys.executable, "-I", "-u"]
    no_process_left(tmp_path)


def test_the_launchers_start_python_isolated() -> None:
    """``./rspwb`` and ``./rsp-workbench`` start Python with ``-I`` and name the package folder explicitly."""
    for name in ("rspwb", "rsp-workbench"):
        text = (ROOT / name).read_text(encoding="utf-8")
        assert 'exec "$python" -I -c ' in text and '"$here" "$@"' in text, name
        assert " -m " not in text.split("exec", 1)[1], name


def test_the_worker_command_ignores_the_working_directory_and_pythonpath(tmp_path: Path) -> None:
    """The worker command itself, started in a planted folder also on PYTHONPATH: it answers (a close
    before register is an error message) and imports nothing from there."""
    from rsp_workbench.stand.processes import isolated_python_command

    markers = tmp_path / "markers"
    markers.mkdir()
    plant(tmp_path / "cwd", markers)
    child = subprocess.run(isolated_python_command("rsp_workbench.stand.worker"), cwd=tmp_path / "cwd",
                           input=b'{"type":"close"}\n', capture_output=True, timeout=60,
                           env={**os.environ, "PYTHONPATH": str(tmp_path / "cwd")})
    assert child.stdout.startswith(b'{"type":"error","message":"expected register first'), child.stderr[-2000:]
    assert list(markers.iterdir()) == []
    planted = subprocess.run([sys.executable, "-m", "rsp_workbench.stand.worker"], cwd=tmp_path / "cwd",
                             input=b"", capture_output=True, timeout=60)
    assert planted.returncode is not None and list(markers.iterdir())  # what the test catches: -m imports them


# --- engine processes never outlive the run ----------------------------------------------------


def _stream(tmp_path: Path) -> Path:
    path = tmp_path / "rooms.stream"
    path.write_text(ROOMS_STREAM, encoding="utf-8")
    return path


def _sleepers(marker: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter():
        try:
            if process.status() != psutil.STATUS_ZOMBIE and process.cmdline() == ["sleep", f"36{marker}"]:
                found.append(process)
        except psutil.Error:
            continue
    return found


@pytest.mark.parametrize("mode", ["child", "daemon", "child-holds-stdout"])
def test_what_an_engine_leaves_behind_is_killed_and_named(tmp_path: Path, mode: str) -> None:
    marker = str(4000 + os.getpid() % 1000 * 3 + ("child", "daemon", "child-holds-stdout").index(mode))
    out = tmp_path / "bundle"
    experiment = external_experiment(tmp_path, _stream(tmp_path), mode, size=int(marker))
    started = time.monotonic()
    result = subprocess.run([PYTHON, "-m", "rsp_workbench.cli.main", "run", str(experiment), "--out", str(out), "--yes",
                             "--quiet"], cwd=tmp_path, env=subprocess_env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert time.monotonic() - started < 60  # a child holding stdout does not make the run wait for a timeout
    run_id = json.loads((out / "manifest.json").read_text())["runs"][0]["run_id"]
    record = json.loads((out / "runs" / run_id / "run.json").read_text())
    assert record["status"] == "ok"
    assert [entry["command"] for entry in record["killed"]] == [f"sleep 36{marker}"]
    deadline = time.monotonic() + 5
    while _sleepers(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _sleepers(marker) == []
    no_process_left(tmp_path)


def test_engines_die_with_a_killed_rspwb(tmp_path: Path) -> None:
    """SIGKILL to ``rspwb`` while an engine hangs: the kernel ends the engine too (PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    experiment = external_experiment(tmp_path, _stream(tmp_path), "hang", timeout=None)
    child = subprocess.Popen([PYTHON, "-m", "rsp_workbench.cli.main", "run", str(experiment), "--out",
                              str(tmp_path / "bundle"), "--yes", "--quiet"], cwd=tmp_path, env=subprocess_env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    parent = psutil.Process(child.pid)
    deadline = time.monotonic() + 60
    engines: list[psutil.Process] = []
    while not engines:
        assert time.monotonic() < deadline, "the engine never started"
        time.sleep(0.05)
        for process in parent.children(recursive=True):
            try:
                if "faulty_engine.py" in " ".join(process.cmdline()):
                    engines.append(process)
            except psutil.Error:
                pass
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    _, alive = psutil.wait_procs(engines, timeout=5)
    assert not alive
    no_process_left(tmp_path)
