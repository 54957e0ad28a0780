"""Pipeline layer: the only code that imports pyspark (session factory, generator and oracle jobs).

`run_experiment` schedules, generates, runs and writes (the judging itself is
`rsp_workbench.oracle.judge`); `oracle_paths` picks where expected answers are computed (the
``--method auto`` rule shared by ``rspwb oracle``, ``check`` and ``run``); `oracle_job` is
the Spark oracle; `generate` the stream generators' jobs; `spark` the one session factory.
"""
