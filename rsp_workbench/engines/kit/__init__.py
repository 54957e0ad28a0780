"""Wrapping kits: what an engine program needs to speak the engine protocol (docs/engine-protocol.md,
"Wrap your engine").

``python.py``: the Python kit (standard library only; orjson when installed) — the built-in
engines' worker and the example external engine (``rsp_workbench/engines/examples/tumbling_bgp.py``)
run on it. ``node/rspwb-kit.js``: the Node.js kit (no dependencies); the RSP-JS plug-in
(``rsp_workbench/engines/rspjs/adapter.js``) runs on it.
"""
