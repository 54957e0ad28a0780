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

from tests.e2e.bad_inputs_support import EX, PYTHON, ROOT, ROOMS_STREAM, external_experiment, leftovers, subprocess_env

# Planted next to the experiment and in the working directory: a module of every name a Python start,
# the standard library (``multiprocessing``, ``json``, …) or the workbench's dependencies could import,
# each writing a marker file named after itself if it is ever imported — not a guessed few names, so
# that no process that has its working directory on the import path escapes the test.
DEPENDENCIES = ("orjson", "psutil", "numpy", "yaml", "pyarrow", "rdflib", "pyspark", "py4j", "PySide6", "pyqtgraph",
                "pandas", "sitecustomize", "usercustomize", "rsp_workbench")
PLANTED = tuple(sorted(set(sys.stdlib_module_names) | set(DEPENDENCIES)))


def plant(folder: Path, markers: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in PLANTED:
        # only `os` (always imported at start, so never taken from here): a planted `pathlib` must not hide it
        marker = str(markers / name)
        code = (f"import os\nos.close(os.open({marker!r} + '-' + __name__, os.O_CREAT | os.O_WRONLY, 0o644))\n"
                f"raise ImportError('planted {name} ran')\n")
        if name in ("rsp_workbench", "multiprocessing", "json", "PySide6"):  # also as packages
            (folder / name).mkdir(exist_ok=True)
            (folder / name / "__init__.py").write_text(code, encoding="utf-8")
        else:
            (folder / f"{name}.py").write_text(code, encoding="utf-8")


def rooms_experiment(folder: Path, engines: str = "{id: csparql, type: secret, preset: csparql}",
                     mode: str | None = "absolute-time") -> Path:
    """The rooms query over its 25 s stream, fed as fast as the engine answers (``absolute-time``; None
    leaves the stand at its real-time default, 25 s of wall time per run)."""
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
""" + (f"stand: {{mode: {mode}}}\n" if mode else ""), encoding="utf-8")
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
                                                      "  - {id: naive, type: naive, preset: csparql}")
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
        from rsp_workbench.engine import isolated_python_command

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
        assert command_run[1:3] == ["-I", "-u"] and "python" in Path(command_run[0]).name
    no_process_left(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["script", "installed"])
def test_probe_never_runs_modules_next_to_it(tmp_path: Path, launcher: str) -> None:
    """``rspwb probe`` from a planted folder: its engine runs import nothing from there."""
    markers = tmp_path / "markers"
    markers.mkdir()
    folder = tmp_path / "downloaded"
    plant(folder, markers)
    command = [str(ROOT / "rspwb")] if launcher == "script" else [str(Path(sys.executable).parent / "rspwb")]
    if not Path(command[0]).is_file():
        pytest.skip("no installed rspwb console script next to this interpreter")
    result = run_cli([*command, "probe", "cqels", "--only", "borders", "--json"], folder)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout)["engine"] == "cqels"
    assert sorted(path.name for path in markers.iterdir()) == []
    no_process_left(tmp_path)


# `execute_request` as the desktop window calls it for a local run (a spawned child process runs it)
_GUI_RUN = """import sys, threading
from pathlib import Path
root, experiment, out = sys.argv[1:4]
root in sys.path or sys.path.insert(0, root)
from rsp_workbench.experiment.loader import load_experiment
from rsp_workbench.gui.runs.model import RunRequest, execute_request
summary = execute_request(RunRequest(load_experiment(experiment), Path(out)), threading.Event(), lambda event: None)
print("isolated", sys.flags.isolated)
"""


@pytest.mark.slow
def test_the_windows_run_process_never_runs_modules_next_to_it(tmp_path: Path) -> None:
    """A local run from the desktop window happens in a spawned child process: from a window that runs
    isolated (every entry makes it so) the child is isolated too and imports nothing from the folder;
    from one that is not, it would (what the test catches: the child takes ``multiprocessing`` from there)."""
    markers = tmp_path / "markers"
    markers.mkdir()
    folder = tmp_path / "downloaded"
    plant(folder, markers)
    experiment = rooms_experiment(folder)
    result = run_cli([sys.executable, "-I", "-c", _GUI_RUN, str(ROOT), str(experiment), str(tmp_path / "b")], folder)
    assert result.returncode == 0 and "isolated 1" in result.stdout, result.stderr[-2000:]
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["status"] == "ok"
    assert sorted(path.name for path in markers.iterdir()) == []
    # a window run as a plain script (as an installed console script runs before it starts itself again
    # isolated): the window itself is safe, its spawned child is not
    script = tmp_path / "window.py"
    script.write_text(_GUI_RUN, encoding="utf-8")
    run_cli([sys.executable, str(script), str(ROOT), str(experiment), str(tmp_path / "c")], folder)
    assert "multiprocessing-multiprocessing" in {path.name for path in markers.iterdir()}
    no_process_left(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["script", "installed"])
def test_the_desktop_application_runs_isolated(tmp_path: Path, launcher: str) -> None:
    """``./rsp-workbench`` and the installed ``rsp-workbench`` run Python isolated (the installed script
    starts itself again so), so the window and the run processes it spawns import nothing from the folder."""
    markers = tmp_path / "markers"
    markers.mkdir()
    folder = tmp_path / "downloaded"
    plant(folder, markers)
    command = str(ROOT / "rsp-workbench") if launcher == "script" else str(Path(sys.executable).parent / "rsp-workbench")
    if not Path(command).is_file():
        pytest.skip("no installed rsp-workbench console script next to this interpreter")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(QT_QPA_PLATFORM="offscreen", RSPWB_NO_SPARK_WARMUP="1")
    window = subprocess.Popen([command], cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        process = psutil.Process(window.pid)
        deadline = time.monotonic() + 60
        while True:
            assert window.poll() is None, window.stderr.read().decode()[-2000:] if window.stderr else ""
            assert time.monotonic() < deadline, process.cmdline()
            if "-I" in process.cmdline() and len(process.threads()) > 1:  # isolated, and Qt is up
                break
            time.sleep(0.1)
        time.sleep(1.0)
    finally:
        window.kill()
        window.wait(timeout=10)
    assert sorted(path.name for path in markers.iterdir()) == []


def test_the_launchers_start_python_isolated() -> None:
    """``./rspwb`` and ``./rsp-workbench`` start Python with ``-I`` and name the package folder explicitly."""
    for name in ("rspwb", "rsp-workbench"):
        text = (ROOT / name).read_text(encoding="utf-8")
        assert 'exec "$python" -I -c ' in text and '"$here" "$@"' in text, name
        assert " -m " not in text.split("exec", 1)[1], name


def test_the_worker_command_ignores_the_working_directory_and_pythonpath(tmp_path: Path) -> None:
    """The worker command itself, started in a planted folder also on PYTHONPATH: it answers (a close
    before register is an error message) and imports nothing from there."""
    from rsp_workbench.engine import isolated_python_command

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


LEAVING = ("child", "daemon", "child-holds-stdout", "daemon-env-cleared")


@pytest.mark.slow
@pytest.mark.parametrize("mode", LEAVING)
def test_what_an_engine_leaves_behind_is_killed_and_named(tmp_path: Path, mode: str) -> None:
    """Also a daemon that left the engine's session and cleared its environment (no run mark to find it by)."""
    marker = str(4000 + os.getpid() % 1000 * 4 + LEAVING.index(mode))
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


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["hang", "child+hang", "daemon+hang", "daemon-env-cleared+hang"])
def test_engines_and_all_they_started_die_with_a_killed_rspwb(tmp_path: Path, mode: str) -> None:
    """SIGKILL to ``rspwb`` while an engine hangs: the engine, its child and a double-forked daemon (in its
    own session, its environment cleared) all end too — the engine's keeper, a child subreaper, holds them."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the keeper (PR_SET_CHILD_SUBREAPER) is Linux's")
    marker = str(5000 + os.getpid() % 1000 * 4 + ["hang", "child+hang", "daemon+hang",
                                                   "daemon-env-cleared+hang"].index(mode))
    experiment = external_experiment(tmp_path, _stream(tmp_path), mode, size=int(marker), timeout=None)
    child = subprocess.Popen([PYTHON, "-m", "rsp_workbench.cli.main", "run", str(experiment), "--out",
                              str(tmp_path / "bundle"), "--yes", "--quiet"], cwd=tmp_path, env=subprocess_env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    parent = psutil.Process(child.pid)
    deadline = time.monotonic() + 60
    engines: list[psutil.Process] = []
    while not engines or (mode != "hang" and not _sleepers(marker)):
        assert time.monotonic() < deadline, "the engine never started"
        time.sleep(0.05)
        for process in parent.children(recursive=True):
            try:
                if "faulty_engine.py" in " ".join(process.cmdline()):
                    engines.append(process)
            except psutil.Error:
                pass
    started = [*engines, *_sleepers(marker)]
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    _, alive = psutil.wait_procs(started, timeout=10)
    assert not alive
    assert _sleepers(marker) == []
    no_process_left(tmp_path)


# --- a result bundle is untrusted --------------------------------------------------------------


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real finished bundle of one run (built-in engine)."""
    from tests.e2e.bad_inputs_support import rspwb

    folder = tmp_path_factory.mktemp("sec-bundle")
    out = folder / "bundle"
    outcome = rspwb("run", rooms_experiment(folder), "--out", out, "--quiet")
    assert outcome.code == 0, outcome.err
    return out


@pytest.fixture
def hostile(bundle: Path, tmp_path: Path) -> Path:
    """A copy of the bundle next to a run folder outside it (``outside/run``) that reads as correct."""
    target = tmp_path / "bundle"
    shutil.copytree(bundle, target)
    run_id = json.loads((target / "manifest.json").read_text())["runs"][0]["run_id"]
    (tmp_path / "outside").mkdir()
    shutil.copytree(target / "runs" / run_id, tmp_path / "outside" / "run")
    shutil.rmtree(target / "runs" / run_id)
    return target


def _set_run(bundle: Path, file: str, **fields: object) -> None:
    document = json.loads((bundle / file).read_text())
    document["runs"][0].update(fields)
    (bundle / file).write_text(json.dumps(document))


@pytest.mark.slow
@pytest.mark.parametrize("run_id", ["../../outside/run", "ABSOLUTE", "..", "", 7, "a\\b"])
def test_a_run_id_that_leaves_the_bundle_is_refused(hostile: Path, run_id: object) -> None:
    from tests.e2e.bad_inputs_support import assert_one_line, rspwb

    if run_id == "ABSOLUTE":
        run_id = str(hostile.parent / "outside" / "run")
    _set_run(hostile, "manifest.json", run_id=run_id)
    (hostile / "summary.json").unlink()  # the rows are rebuilt from the run folders the manifest names
    line = assert_one_line(rspwb("report", hostile, "--json"), 2, f"{hostile / 'manifest.json'}", "runs[0].run_id",
                           "refused")
    assert "correct" not in line


def test_a_summary_that_points_outside_is_refused(hostile: Path) -> None:
    from tests.e2e.bad_inputs_support import assert_one_line, rspwb

    _set_run(hostile, "summary.json", run_id="../../outside/run", folder="runs/../../outside/run")
    assert_one_line(rspwb("report", hostile), 2, f"{hostile / 'summary.json'}", "runs[0].run_id", "refused")
    _set_run(hostile, "summary.json", run_id=json.loads((hostile / "manifest.json").read_text())["runs"][0]["run_id"],
             folder="../outside/run")
    assert_one_line(rspwb("report", hostile), 2, f"{hostile / 'summary.json'}", "runs[0].folder", "refused")


def test_a_run_folder_or_file_linked_outside_is_refused(hostile: Path) -> None:
    from tests.e2e.bad_inputs_support import assert_one_line, rspwb

    run_id = json.loads((hostile / "manifest.json").read_text())["runs"][0]["run_id"]
    (hostile / "runs" / run_id).symlink_to(hostile.parent / "outside" / "run", target_is_directory=True)
    assert_one_line(rspwb("report", hostile), 2, "runs[0].run_id", "leads outside the bundle")
    (hostile / "runs" / run_id).unlink()
    (hostile / "runs" / run_id).mkdir()
    for name in ("run.json", "oracle.json"):
        (hostile / "runs" / run_id / name).symlink_to(hostile.parent / "outside" / "run" / name)
    (hostile / "summary.json").unlink()
    outcome = rspwb("report", hostile, "--json")
    assert outcome.code == 1 and "leads outside the bundle" in outcome.err and "Traceback" not in outcome.err
    assert json.loads(outcome.out)["runs"][0]["verdict"] == "unreadable"


def test_the_results_view_never_reads_outside_the_bundle(hostile: Path) -> None:
    from rsp_workbench.results.reader import open_bundle

    _set_run(hostile, "manifest.json", run_id="../../outside/run")
    (hostile / "summary.json").unlink()
    loaded = open_bundle(hostile, partial=True)
    assert loaded.rows == () and any("runs[0].run_id" in str(problem) for problem in loaded.problems)


def test_a_bundle_of_another_format_version_is_refused(bundle: Path, tmp_path: Path) -> None:
    from tests.e2e.bad_inputs_support import assert_one_line, rspwb

    target = tmp_path / "bundle"
    shutil.copytree(bundle, target)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["format"] = "rspwb-result-bundle/2"
    (target / "manifest.json").write_text(json.dumps(manifest))
    assert_one_line(rspwb("report", target), 2, "manifest.json: format", '"rspwb-result-bundle/2"',
                    "rspwb-result-bundle/1")


# --- nothing of the user's is deleted or overwritten ---------------------------------------------


def _tree(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): path.read_text() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.slow
def test_a_project_folder_with_a_manifest_is_not_a_bundle(tmp_path: Path) -> None:
    """A folder that happens to hold a ``manifest.json`` (and sources) is refused; ``--force`` writes the
    bundle into it and keeps every file of the user's, ``manifest.json`` aside (it is the bundle's name)."""
    from tests.e2e.bad_inputs_support import assert_one_line, rspwb

    project = tmp_path / "project"
    project.mkdir()
    (project / "manifest.json").write_text('{"name": "my web app", "version": 3}')
    (project / "src").mkdir()
    (project / "src" / "main.py").write_text("print('mine')")
    (project / "runs").mkdir()
    before = _tree(project)
    experiment = rooms_experiment(tmp_path)
    assert_one_line(rspwb("run", experiment, "--out", project, "--quiet"), 2, str(project), "--out", "--force")
    assert _tree(project) == before
    outcome = rspwb("run", experiment, "--out", project, "--quiet", "--force")
    assert outcome.code == 0, outcome.err
    assert (project / "src" / "main.py").read_text() == "print('mine')"
    assert json.loads((project / "manifest.json").read_text())["format"] == "rspwb-result-bundle/1"


@pytest.mark.slow
def test_a_rerun_keeps_the_users_files_in_the_bundle(tmp_path: Path) -> None:
    from tests.e2e.bad_inputs_support import rspwb

    out = tmp_path / "bundle"
    experiment = rooms_experiment(tmp_path)
    assert rspwb("run", experiment, "--out", out, "--quiet").code == 0
    (out / "notes.md").write_text("what I saw")
    (out / "figures").mkdir()
    (out / "figures" / "plot.svg").write_text("<svg/>")
    started = json.loads((out / "manifest.json").read_text())["started"]
    assert rspwb("run", experiment, "--out", out, "--quiet").code == 0
    assert (out / "notes.md").read_text() == "what I saw" and (out / "figures" / "plot.svg").read_text() == "<svg/>"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["started"] != started and manifest["status"] == "ok"
    assert not (out / ".rspwb-lock").exists() and leftovers(out) == []


@pytest.mark.slow
def test_a_bundle_reached_through_a_symbolic_link_is_rerun_into(tmp_path: Path) -> None:
    from tests.e2e.bad_inputs_support import rspwb

    out = tmp_path / "bundle"
    experiment = rooms_experiment(tmp_path)
    assert rspwb("run", experiment, "--out", out, "--quiet").code == 0
    link = tmp_path / "latest"
    link.symlink_to(out, target_is_directory=True)
    outcome = rspwb("run", experiment, "--out", link, "--quiet")
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err
    assert link.is_symlink() and json.loads((out / "manifest.json").read_text())["status"] == "ok"


def test_generate_never_replaces_a_file_unasked(tmp_path: Path) -> None:
    from tests.e2e.bad_inputs_support import assert_one_line, rspwb

    thesis = tmp_path / "thesis.tex"
    thesis.write_text("\\chapter{Years of work}")
    args = ("generate", "--generator", "sg1", "--param", "stations=2", "--param", "interval=1s", "--param", "duration=3s",
            "--format", "yabench", "--local", "--quiet", "--out", thesis)
    assert_one_line(rspwb(*args), 2, str(thesis), "--out", "--force")
    assert thesis.read_text() == "\\chapter{Years of work}"
    assert_one_line(rspwb(*args[:-1], tmp_path), 2, str(tmp_path), "is a folder")
    outcome = rspwb(*args, "--force")
    assert outcome.code == 0, outcome.err
    assert thesis.read_text().startswith("<")


@pytest.mark.slow
def test_a_second_concurrent_run_into_the_same_bundle_is_refused(tmp_path: Path) -> None:
    """While one ``rspwb run`` writes a bundle (its engine hangs), a second one into it stops with one line
    and touches nothing; the first one, stopped, still leaves a consistent cancelled bundle."""
    out = tmp_path / "bundle"
    experiment = external_experiment(tmp_path, _stream(tmp_path), "hang", timeout=None)
    first = subprocess.Popen([PYTHON, "-m", "rsp_workbench.cli.main", "run", str(experiment), "--out", str(out), "--yes",
                              "--quiet"], cwd=tmp_path, env=subprocess_env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list((out / "runs").glob("*/stderr.log")) and not list((out / "runs").glob("*.partial/stderr.log")):
        assert time.monotonic() < deadline and first.poll() is None, "the first run never started its engine"
        time.sleep(0.05)
    before = sorted(str(path) for path in out.rglob("*"))
    while True:  # the first run goes on creating its run folder's files a moment after the engine starts
        time.sleep(0.5)
        settled = sorted(str(path) for path in out.rglob("*"))
        if settled == before:
            break
        assert time.monotonic() < deadline, "the first run's files never settled"
        before = settled
    second = subprocess.run([PYTHON, "-m", "rsp_workbench.cli.main", "run", str(experiment), "--out", str(out),
                             "--yes", "--quiet"], cwd=tmp_path, env=subprocess_env(), capture_output=True, text=True,
                            timeout=120)
    lines = [line for line in second.stderr.splitlines() if line.strip()]
    assert second.returncode == 2 and len(lines) == 1 and "Traceback" not in second.stderr, second.stderr
    assert "another rspwb run is writing this bundle" in lines[0] and str(out) in lines[0]
    assert sorted(str(path) for path in out.rglob("*")) == before
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=60)
    assert first.returncode == 130
    assert json.loads((out / "manifest.json").read_text())["status"] == "cancelled"
    assert leftovers(out) == [] and not (out / ".rspwb-lock").exists()
    no_process_left(tmp_path)


# --- every command a run may start is listed before it starts -----------------------------------


def test_validate_lists_the_commands_a_size_swaps_in(tmp_path: Path) -> None:
    from tests.e2e.bad_inputs_support import rspwb

    experiment = rooms_experiment(tmp_path)
    experiment.write_text(experiment.read_text() + """\
sizes:
  smoke:
    engines:
      - {id: sneaky, type: external, parameters: {command: [sh, -c, "echo owned > marker"]}}
  full: {}
""")
    outcome = rspwb("validate", experiment, "--json")
    assert outcome.code == 0, outcome.err
    assert json.loads(outcome.out)["requires_confirmation"] == [
        {"engine": "sneaky", "command": ["sh", "-c", "echo owned > marker"], "sizes": ["smoke"]}]
    assert json.loads(rspwb("validate", experiment, "--json", "--size", "full").out)["requires_confirmation"] == []
    smoke = json.loads(rspwb("validate", experiment, "--json", "--size", "smoke").out)["requires_confirmation"]
    assert smoke == [{"engine": "sneaky", "command": ["sh", "-c", "echo owned > marker"]}]
    assert "1 external command(s) need confirmation" in rspwb("validate", experiment).out
    refused = rspwb("run", experiment, "--size", "smoke", "--out", tmp_path / "b", "--quiet")
    assert refused.code == 2 and "--yes" in refused.err and not (tmp_path / "marker").exists()


# --- errors name the file and the place, never its contents ----------------------------------------


@pytest.mark.parametrize("fmt, line", [("turtle", 2), ("ntriples", None), ("xml", 1), ("json-ld", None), ("n3", 2)])
def test_static_data_that_is_not_rdf_fails_validate_without_quoting_it(tmp_path: Path, fmt: str,
                                                                       line: int | None) -> None:
    from tests.e2e.bad_inputs_support import assert_one_line, rspwb

    secrets = tmp_path / "elsewhere" / "secrets.txt"
    secrets.parent.mkdir()
    secrets.write_text("# notes\nroot:x:0:0:SECRET-CONTENT:/root:/bin/bash {\n<a> hunter2 SECRET-CONTENT .\n")
    experiment = rooms_experiment(tmp_path)
    experiment.write_text(experiment.read_text() + f"static:\n  - {{file: {secrets}, format: {fmt}}}\n")
    for command in (("validate", experiment), ("run", experiment, "--out", tmp_path / "b", "--quiet")):
        located = f"{secrets}:{line}: static" if line else f"{secrets}: static"
        text = assert_one_line(rspwb(*command), 2, located, f"cannot read static data as {fmt}")
        assert "SECRET" not in text and "hunter2" not in text and "root:x" not in text
    assert not (tmp_path / "b").exists()


SECRET_LINE = 'root:x:0:0:SECRET1 hunter2-SECRET2 {password=SECRET3} <SECRET4> "SECRET5" . ' + "SECRET6" * 40
RULE = "REGISTER QUERY q AS SELECT ?x FROM STREAM <http://s> [RANGE 10s STEP 10s] WHERE { ?x <http://p> ?y }\n"


def _secret_cases(tmp_path: Path) -> dict[str, tuple[object, ...]]:
    """Every reader an experiment or a command line points at a file with: the file holds a secret-looking
    first line (and more) that is not what the reader expects."""
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET_LINE}\n{SECRET_LINE}\n", encoding="utf-8")
    folder = tmp_path / "csrbench"
    folder.mkdir()
    shutil.copy(secret, folder / "data_0.ttl")
    (tmp_path / "q.rq").write_text(RULE, encoding="utf-8")
    good = tmp_path / "good.stream"
    good.write_text('<http://a> <http://p> <http://b> "1" .\n', encoding="utf-8")
    long_value = rooms_experiment(tmp_path, mode=None)
    long_value.write_text(long_value.read_text() + f"stand: {{mode: '{SECRET_LINE}'}}\n", encoding="utf-8")
    long_key = tmp_path / "key.yaml"
    long_key.write_text("name: x\nroot" + "X" * 200 + ": 1\n", encoding="utf-8")
    (tmp_path / "token.rq").write_text(RULE.replace("?y }", f"?y . {SECRET_LINE} }}"), encoding="utf-8")
    (tmp_path / "prefix.rq").write_text(RULE.replace("<http://p>", "root" + "X" * 200 + ":p"), encoding="utf-8")
    oracle = ("oracle", "--query", tmp_path / "q.rq", "--system", "csparql", "--json", "--stream")
    check = ("check", "--stream", good, "--stream-format", "yabench", "--query", tmp_path / "q.rq", "--system",
             "csparql", "--json", "--engine-output", secret, "--engine-output-format")
    return {
        "yabench stream": (*oracle, secret, "--stream-format", "yabench"),
        "nquads stream": (*oracle, secret, "--stream-format", "nquads"),
        "csrbench turtle": (*oracle, folder, "--stream-format", "csrbench-dir"),
        "query": ("query", "explain", secret),
        "query token": ("query", "explain", tmp_path / "token.rq"),
        "query prefix": ("query", "explain", tmp_path / "prefix.rq"),
        "experiment": ("validate", secret),
        "experiment value": ("validate", long_value),
        "experiment key": ("validate", long_key),
        "csrbench-json answer": (*check, "csrbench-json"),
        "yabench-qr answer": (*check, "yabench-qr"),
        "jsonl answer": (*check, "jsonl"),
    }


@pytest.mark.parametrize("case", ["yabench stream", "nquads stream", "csrbench turtle", "query", "query token",
                                  "query prefix", "experiment", "experiment key",
                                  "experiment value", "csrbench-json answer", "yabench-qr answer", "jsonl answer"])
def test_an_error_quotes_at_most_the_offending_token(tmp_path: Path, case: str) -> None:
    """A file with a secret-looking first line given where a stream, a query, an experiment or an engine's
    answer belongs: the one-line error names the file and at most the first token, cut short, never more."""
    from tests.e2e.bad_inputs_support import rspwb

    outcome = rspwb(*_secret_cases(tmp_path)[case])
    assert outcome.code == 2 and len(outcome.lines()) == 1 and "Traceback" not in outcome.err, outcome.err[-2000:]
    _assert_no_secret(outcome.err)


def _assert_no_secret(text: str) -> None:
    for word in ("hunter2", "SECRET2", "SECRET3", "SECRET4", "SECRET5", "SECRET6", "X" * 41):
        assert word not in text, text
    for line in text.splitlines():
        at = line.find("root:")
        assert at < 0 or len(line[at:].split("'", 1)[0].split()[0]) <= 40, line


def test_an_engine_that_prints_a_file_is_not_quoted_beyond_a_token(tmp_path: Path) -> None:
    """An engine (here ``cat`` of a secret file) whose stdout is not the protocol: the run's one line and
    ``run.json`` quote at most the line's first token."""
    from tests.e2e.bad_inputs_support import rspwb

    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET_LINE}\n", encoding="utf-8")
    path = external_experiment(tmp_path, _stream(tmp_path), "ok")
    text = path.read_text()
    start = text.index("      command: ")
    end = text.index("\n", start)
    path.write_text(text[:start] + f'      command: ["/bin/sh", "-c", "cat {secret}; sleep 30"]' + text[end:])
    out = tmp_path / "bundle"
    outcome = rspwb("run", path, "--out", out, "--yes", "--quiet")
    assert outcome.code == 1 and "not a JSON line" in outcome.err, outcome.err[-2000:]
    _assert_no_secret(outcome.err)
    run = json.loads((out / "manifest.json").read_text())["runs"][0]["run_id"]
    _assert_no_secret(json.loads((out / "runs" / run / "run.json").read_text())["error"])


def test_spark_python_workers_never_import_from_their_working_directory() -> None:
    from rsp_workbench.pipeline.spark import session_config

    for master in ("local[*]", "spark://host:7077"):
        assert session_config(master)["spark.executorEnv.PYTHONSAFEPATH"] == "1"
