"""The test stand: engine runs in their own OS process, fed by a streamer, measured by a probe.

`workbench.stand.host.run_engine` is the entry point; `workbench.stand.run_folder` writes
what a run leaves behind (trace, responses, samples, stderr, run.json);
`workbench.stand.worker` is the child process for built-in engines;
`workbench.stand.protocol` defines the JSON-lines messages (documented in
``docs/engine-protocol.md``).
"""
