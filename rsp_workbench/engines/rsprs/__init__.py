"""rsp-rs (crates.io ``rsp-rs``, pinned ``=0.3.5`` in Cargo.toml/Cargo.lock) as the experiment engine ``type: rsprs``.

The engine is a Rust library: ``src/main.rs`` is a small program over it that translates the
stand's JSON-lines protocol to rsp-rs calls and back. ``./install.sh --engines rsprs`` builds it
with ``cargo build --release --locked`` into ``target/`` here; until then an experiment with
``type: rsprs`` stops with one line saying so. The semantics rsp-rs runs under (preset
``rsprs``) are in README.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rsp_workbench.errors import UserError

HERE = Path(__file__).resolve().parent
PROGRAM = "rspwb-rsprs"


def binary() -> Path:
    """Where ``cargo build --release`` puts the adapter program."""
    return HERE / "target" / "release" / PROGRAM


def install_hint() -> str:
    """How to build the plug-in, with the folder as the user would type it."""
    try:
        folder = os.path.relpath(HERE)
    except ValueError:  # another drive (Windows)
        folder = str(HERE)
    return f"run ./install.sh --engines rsprs or: cargo build --release --locked --manifest-path {folder}/Cargo.toml"


def command(config: Any = None) -> list[str]:
    """The built adapter; UserError (one line) when it has not been built."""
    program = binary()
    if not (program.is_file() and os.access(program, os.X_OK)):
        raise UserError(f"engine type rsprs is not installed (no {HERE.name}/target/release/{PROGRAM}); {install_hint()}",
                        field="type")
    return [str(program)]
