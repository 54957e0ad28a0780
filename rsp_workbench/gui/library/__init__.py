"""The Library tab: sample experiments and recent files, each with a validated summary.

``model`` finds the samples, keeps the recent files and describes an experiment (Qt-free);
``view`` is the tree and the details pane.
"""
