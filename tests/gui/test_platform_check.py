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
