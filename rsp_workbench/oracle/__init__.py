"""The oracle: expected answers for any operational semantics, verdicts, per-window quality.

`commands` is ``rspwb oracle`` and ``rspwb check`` on Python values (`oracle_answers`,
`check_answer`); `paths` chooses where expected answers are computed (the ``--method``
rule); `run` computes them in Python (fast path in `annotated`, rdflib reference in
`reference`), `answers` for many t0 at once from annotated rows (the columnar path in
`columnar`; a BGP's joined rows as term codes in `coding`); `verdict` and `quality` compare an
engine's output with them; `judge` is the one entry point that judges a recorded run (used by
``rspwb run``, ``rspwb check``, the GUI and ``rspwb probe``). Nothing here imports Spark: the
pipeline layer passes its Spark job in (`paths.SparkExpected`) where it wants one.
"""
