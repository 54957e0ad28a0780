"""Result bundles: the folder format, its readers and what the Results views show.

- :mod:`rsp_workbench.results.bundle` — the bundle format (docs/result-bundle.md): atomic
  writing, ``manifest.json``/``summary.json``, one summary row per run, the report table.
- :mod:`rsp_workbench.results.bundle_folder` — the folder ``rspwb run --out`` writes into:
  refused unless new, empty or a bundle of ours (or forced), locked for one writer, and
  cleared of the previous bundle's own entries only (the user's other files are kept).
- :mod:`rsp_workbench.results.yabench_files` — YABench's result files (``ORACLE_*``,
  ``BOXPLOTS_*``, ``P_*``), as the workbench writes them and as YABench published them.
- :mod:`rsp_workbench.results.published` — a published YABench test folder (or a folder of
  several engines' test folders) read as a read-only bundle; ``read_results`` opens either.
- :mod:`rsp_workbench.results.view_data` — what the Results browser and ``rspwb report`` show,
  read tolerantly from a bundle: per-window quality, boxplots, resources, correctness
  matrix, Heaven dashboard, eviction recall.
- :mod:`rsp_workbench.results.run_timeline` — one run of a bundle as the window timeline shows
  it: stream, window spec, expected evaluations, emissions, diverging windows, reconstructed
  borders, and one window's expected vs actual bindings; over
  :mod:`rsp_workbench.results.stream_lanes` (a stream's elements per lane, binned per view).

Pure Python (no Qt, no Spark): shared by ``rspwb run``/``rspwb report``, the pipeline and
the GUI. Nothing is imported here so that ``rsp_workbench.results.bundle`` stays cheap.
"""
