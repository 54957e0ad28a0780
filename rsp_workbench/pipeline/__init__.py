"""Pipeline layer: the only code that imports pyspark (session factory, generator and oracle jobs).

`run_experiment` schedules, generates, runs and writes (its checks up front: `run_checks`; its
streams: `run_streams`; one run: `run_one`; what they pass on: `run_task`; the judging itself is
`rsp_workbench.oracle.judge`, the path choice `rsp_workbench.oracle.paths`); `oracle_job` is
the Spark oracle (BGP joins as DataFrame jobs), passed to the oracle as its `spark_expected`;
`generate` the stream generators' jobs; `spark` the one session factory.
"""
