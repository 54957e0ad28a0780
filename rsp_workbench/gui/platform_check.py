"""Can Qt open a window here? The system libraries the xcb platform plugin needs, checked up front.

Without one of them Qt aborts with a generic "could not load the Qt platform plugin xcb"
message that names no library. This module asks the dynamic linker (``ldd``) which
libraries the installed PySide6's xcb plugin cannot find and maps each to the Debian/Ubuntu
package that provides it, so ``rsp-workbench`` can print the one-line fix and
``./install.sh`` can install exactly what is missing. It imports no Qt (it runs before Qt).

``python3 -m rsp_workbench.gui.platform_check`` prints the missing packages, one per line.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

#: Shared object → Debian/Ubuntu package (Ubuntu 24.04's ``t64`` renames are tried by install.sh).
SONAME_PACKAGES: dict[str, str] = {
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libXau.so.6": "libxau6",
    "libXdmcp.so.6": "libxdmcp6",
    "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libGL.so.1": "libgl1",
    "libGLX.so.0": "libglx0",
    "libGLdispatch.so.0": "libglvnd0",
    "libEGL.so.1": "libegl1",
    "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libpng16.so.16": "libpng16-16",
    "libz.so.1": "zlib1g",
    "libzstd.so.1": "libzstd1",
}


def xcb_plugin() -> Path | None:
    """The installed PySide6's xcb platform plugin, found without importing Qt."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        plugin = Path(location) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if plugin.exists():
            return plugin
    return None


def missing_libraries(plugin: Path | None = None) -> list[str]:
    """Shared objects the xcb plugin needs that the dynamic linker cannot find (empty: all there,
    or nothing to check — not Linux, no ``ldd``, no plugin)."""
    plugin = plugin or xcb_plugin()
    if plugin is None or not sys.platform.startswith("linux") or shutil.which("ldd") is None:
        return []
    try:
        output = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return not_found_in_ldd(output)


def not_found_in_ldd(output: str) -> list[str]:
    """The ``NAME => not found`` libraries of ``ldd`` output, each once, in order."""
    missing: dict[str, None] = {}
    for line in output.splitlines():
        name, _, where = line.strip().partition(" => ")
        if where.strip() == "not found":
            missing.setdefault(name.strip(), None)
    return list(missing)


def packages_for(libraries: list[str]) -> list[str]:
    """The Debian/Ubuntu packages that provide ``libraries`` (unknown ones are left out)."""
    return list(dict.fromkeys(SONAME_PACKAGES[name] for name in libraries if name in SONAME_PACKAGES))


def display_problem(environ: "os._Environ[str] | dict[str, str]" = os.environ) -> str | None:
    """One line saying why Qt cannot open a window here, or None when it can try.

    Only the default (xcb) platform on Linux is checked; an explicit ``QT_QPA_PLATFORM``
    other than ``xcb`` (offscreen, wayland, …) is the user's choice and passes.
    """
    platform = environ.get("QT_QPA_PLATFORM", "")
    if not sys.platform.startswith("linux") or platform not in ("", "xcb"):
        return None
    if not platform and environ.get("WAYLAND_DISPLAY"):
        return None
    if not environ.get("DISPLAY"):
        return ("no display: DISPLAY is not set; start rsp-workbench in a desktop session "
                "(or over ssh -X), or use the command line: rspwb --help")
    libraries = missing_libraries()
    if not libraries:
        return None
    packages = packages_for(libraries)
    fix = f"sudo apt-get install {' '.join(packages)}" if packages else "install them with your package manager"
    return (f"Qt's xcb platform plugin cannot load: missing {', '.join(libraries)}; "
            f"fix: {fix} (or rerun ./install.sh)")


if __name__ == "__main__":  # pragma: no cover - used by install.sh
    for package in packages_for(missing_libraries()):
        print(package)
    unknown = [name for name in missing_libraries() if name not in SONAME_PACKAGES]
    if unknown:
        print(f"platform_check: no package known for {', '.join(unknown)}", file=sys.stderr)
