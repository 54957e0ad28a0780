"""Result bundles: the folder format, the one bundle model, and what is shown of it.

- :mod:`rsp_workbench.results.bundle` — the bundle format (docs/result-bundle.md): atomic
  writing, ``manifest.json``/``summary.json``, one summary row per run, the report table, and
  :class:`~rsp_workbench.results.bundle.Bundle`: one bundle (own or published) with its rows and,
  read when asked, each run's windows, responses, stream and KPI samples as Arrow tables.
- :mod:`rsp_workbench.results.reader` — ``open_bundle``: the one way to open a bundle (own, or a
  published YABench folder), refusing what is not one, is still being written or is of another
  format version; ``partial=True`` reads what it can of a damaged or running bundle (the GUI).
- :mod:`rsp_workbench.results.tables` — a run's files as Arrow tables (what ``Bundle`` returns).
- :mod:`rsp_workbench.results.bundle_folder` — the folder ``rspwb run --out`` writes into:
  refused unless new, empty or a bundle of ours (or forced), locked for one writer, and
  cleared of the previous bundle's own entries only (the user's other files are kept).
- :mod:`rsp_workbench.results.yabench_files` — YABench's result files (``ORACLE_*``,
  ``BOXPLOTS_*``, ``P_*``), as the workbench writes them and as YABench published them.
- :mod:`rsp_workbench.results.published` — a published YABench test folder (or a folder of
  several engines' test folders) read as rows of a read-only bundle.
- :mod:`rsp_workbench.results.view_data` — what the Results browser and the HTML report show of
  a bundle: per-window quality, boxplots, resources, correctness matrix, Heaven dashboard,
  eviction recall.
- :mod:`rsp_workbench.results.html_report` — ``rspwb report DIR --html FILE``: one self-contained
  HTML file, its charts inline SVG (:mod:`rsp_workbench.results.svg_charts`).
- :mod:`rsp_workbench.results.run_timeline` — one run of a bundle as the window timeline shows
  it: stream, window spec, expected evaluations, emissions, diverging windows, reconstructed
  borders, and one window's expected vs actual bindings; over
  :mod:`rsp_workbench.results.stream_lanes` (a stream's elements per lane, binned per view).

Pure Python (no Qt, no Spark): shared by ``rspwb run``/``rspwb report``, the API, the pipeline
and the GUI. Nothing is imported here so that ``rsp_workbench.results.bundle`` stays cheap.
"""
