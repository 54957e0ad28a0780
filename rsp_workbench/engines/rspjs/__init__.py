"""RSP-JS (npm ``rsp-js``, pinned in package-lock.json) as the experiment engine ``type: rspjs``.

The engine is a Node.js program: ``adapter.js`` (on the Node wrapping kit) translates the
stand's JSON-lines protocol to RSP-JS calls and back. ``./install.sh`` installs Node.js and
runs ``npm ci`` here; until then an experiment with ``type: rspjs`` stops with one line
saying so. The semantics RSP-JS runs under (preset ``rspjs``) are in README.md.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from rsp_workbench.errors import UserError

HERE = Path(__file__).resolve().parent
ADAPTER = HERE / "adapter.js"


def install_hint() -> str:
    """How to install the plug-in, with the folder as the user would type it."""
    try:
        folder = os.path.relpath(HERE)
    except ValueError:  # another drive (Windows)
        folder = str(HERE)
    return f"run ./install.sh or: npm ci --prefix {folder}"


def command(config: Any = None) -> list[str]:
    """``node adapter.js``; UserError (one line) when Node.js or the npm packages are missing."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        raise UserError(f"engine type rspjs needs Node.js, which is not installed; {install_hint()}", field="type")
    if not (HERE / "node_modules" / "rsp-js" / "package.json").is_file():
        raise UserError(f"engine type rspjs is not installed (no {HERE.name}/node_modules/rsp-js); {install_hint()}",
                        field="type")
    return [node, str(ADAPTER)]
