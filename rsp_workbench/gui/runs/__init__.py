"""The Runs tab: a queue of experiment runs with per-stage progress, live RSS/CPU, log and Cancel.

``model`` is the queue's state without Qt (stages, ETA, live KPIs, the worker that runs an
experiment); ``view`` is the tab over it.
"""
