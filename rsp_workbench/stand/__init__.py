"""The test stand: engine runs in their own OS process, fed by a streamer, measured by a probe.

`rsp_workbench.stand.host.run_engine` is the entry point (its options:
`rsp_workbench.stand.options`); `rsp_workbench.stand.run_folder` writes
what a run leaves behind (trace, responses, samples, stderr, run.json);
`rsp_workbench.stand.worker` is the child process for built-in engines;
`rsp_workbench.stand.protocol` defines the JSON-lines messages (documented in
``docs/engine-protocol.md``).
"""
