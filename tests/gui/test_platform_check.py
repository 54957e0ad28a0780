"""Before Qt starts: which system libraries the xcb platform plugin lacks, and the one-line fix."""

from __future__ import annotations

import pytest

from rsp_workbench.gui import platform_check
from rsp_workbench.gui.platform_check import display_problem, not_found_in_ldd, packages_for

LDD = """\
\tlinux-vdso.so.1 (0x00007ffd)
\tlibxkbcommon-x11.so.0 => /lib/x86_64-linux-gnu/libxkbcommon-x11.so.0 (0x00007f6c)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-icccm.so.4 => not found
\tlibweird.so.9 => not found
"""


def test_ldd_output_gives_each_missing_library_once() -> None:
    assert not_found_in_ldd(LDD) == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libweird.so.9"]


def test_libraries_map_to_debian_packages() -> None:
    assert packages_for(["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libweird.so.9", "libgthread-2.0.so.0",
                         "libglib-2.0.so.0"]) == ["libxcb-icccm4", "libxcb-keysyms1", "libglib2.0-0"]


def test_missing_libraries_are_one_line_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform_check.sys, "platform", "linux")
    monkeypatch.setattr(platform_check, "missing_libraries", lambda plugin=None: not_found_in_ldd(LDD)[:2])
    problem = display_problem({"DISPLAY": ":0"})
    assert problem is not None and "\n" not in problem
    assert "libxcb-icccm.so.4" in problem and "sudo apt-get install libxcb-icccm4 libxcb-keysyms1" in problem


def test_no_display_and_explicit_platforms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform_check.sys, "platform", "linux")
    monkeypatch.setattr(platform_check, "missing_libraries", lambda plugin=None: [])
    assert "DISPLAY is not set" in (display_problem({}) or "")
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}) is None
    assert display_problem({"DISPLAY": ":0"}) is None


def test_app_prints_the_problem_instead_of_starting_qt(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from rsp_workbench.gui import app

    monkeypatch.setattr(platform_check, "display_problem", lambda: "no display: DISPLAY is not set")
    assert app.main(["rsp-workbench"]) == 1
    assert capsys.readouterr().err == "rsp-workbench: no display: DISPLAY is not set\n"


FAKE_APT = """#!/bin/sh
[ "$1" = update ] && exit 0
echo "Selecting previously unselected package libxcb-icccm4:amd64."
echo "Preparing to unpack .../libxcb-icccm4_0.4.1-1.1_amd64.deb ..."
echo "Unpacking libxcb-icccm4:amd64 (0.4.1-1.1) ..."
echo "Setting up libxcb-icccm4:amd64 (0.4.1-1.1) ..."
case "$*" in *broken*) echo "E: Unable to locate package broken" >&2; exit 100 ;; esac
"""


@pytest.mark.parametrize("packages, fails", [("libxcb-icccm4", False), ("libxcb-icccm4 broken", True)])
def test_install_keeps_dpkg_progress_off_the_terminal_and_errors_on_it(tmp_path, packages: str, fails: bool) -> None:  # type: ignore[no-untyped-def]
    """``./install.sh`` apt-installs Qt's libraries quietly: dpkg's per-package lines are not printed,
    apt's errors are (with the end of the output that led to them)."""
    import os
    import subprocess

    from tests.paths import ROOT

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("apt-get", FAKE_APT), ("id", "#!/bin/sh\necho 0\n")):
        (bin_dir / name).write_text(text, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    script = (f'eval "$(sed -n \'/^apt_install() {{/,/^}}/p\' {ROOT / "install.sh"})"\n'
              f"apt_updated=0\napt_install {packages}\n")
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30,
                            env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert result.stdout == ""
    assert (result.returncode != 0) is fails
    if fails:
        assert "E: Unable to locate package broken" in result.stderr and "apt-get install" in result.stderr
    else:
        assert result.stderr == ""
