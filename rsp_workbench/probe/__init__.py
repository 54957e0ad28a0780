"""`rspwb probe`: infer an engine's hidden operational semantics from designed stimuli.

`battery` designs the probes, `infer` judges the engine's answers against the oracle for
every candidate parameter set (pure), `runner` runs the probes on the test stand.
"""
