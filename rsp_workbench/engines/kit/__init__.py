"""Wrapping kits for engines written in other languages (the Python kit is `rsp_workbench.stand.kit`).

``node/rspwb-kit.js``: the Node.js kit (no dependencies); the RSP-JS plug-in
(``rsp_workbench/engines/rspjs/adapter.js``) runs on it. docs/engine-protocol.md, "Wrap your engine".
"""
