"""The desktop application (PySide6 + pyqtgraph): thin views over Qt-free models.

- ``app`` starts it (``rsp-workbench [FILE|DIR]``; ``platform_check`` first says which
  system library Qt lacks), ``main_window`` holds the tabs, menus and status bar, ``qt``
  imports PySide6 before pyqtgraph, ``tasks`` runs long work off the GUI thread with
  progress and cancel.
- Library: ``library``. Designer: the ``designer`` package (one widget per section of the
  experiment file) over ``designer_model`` (+ ``designer_text`` round-trip YAML edits,
  ``designer_paths`` Save-as path rewriting, ``designer_windows`` window clauses).
- Runs: ``runs`` (view) over ``runs_model`` (queue, stages, ETA, live KPIs).
- Results: the ``results`` package (summary, quality, resources, matrix, Heaven, eviction,
  overlay) over ``rsp_workbench.results.view_data``; the window timeline ``timeline`` over
  ``timeline_data`` / ``timeline_bundle``.
- Teaching: ``teaching`` over ``teaching_model``; ``highlight`` colours query text.
"""
