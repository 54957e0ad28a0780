"""The oracle: expected answers for any operational semantics, verdicts, per-window quality.

`run` computes expected answers (fast path in `annotated`, rdflib reference in
`reference`); `verdict` and `quality` compare an engine's output with them; `judge` is
the one entry point that judges a recorded run (used by ``rspwb run``, ``rspwb check``,
the GUI and ``rspwb probe``). Nothing here imports Spark: the pipeline layer passes its
Spark job in where it wants one.
"""
