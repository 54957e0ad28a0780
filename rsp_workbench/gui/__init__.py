"""The desktop application (PySide6 + pyqtgraph): one package per tab, thin views over Qt-free models.

- The shell: ``app`` starts it (``rsp-workbench [FILE|DIR]``; ``platform_check`` first says
  which system library Qt lacks), ``main_window`` holds the tabs, menus and status bar, ``qt``
  imports PySide6 before pyqtgraph, ``tasks`` runs long work off the GUI thread with progress
  and cancel, ``highlight`` colours query text, ``text`` and ``fit`` are the few texts and
  sizing helpers several tabs share.
- One room per tab, each a Qt-free ``model`` beside its views: ``library``, ``designer``,
  ``runs``, ``results`` (with ``results.timeline``), ``teaching``, ``probe`` (the Probe engine
  dialog). A room's model imports neither Qt nor a view (``tests/test_architecture.py``).
"""
