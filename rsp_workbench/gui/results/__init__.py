"""The Results tab: a result bundle's summary, quality, resources, correctness matrix, Heaven
dashboard, eviction curves, overlay and window timeline (``timeline``).

The Qt-free model is :mod:`rsp_workbench.results` (``view_data`` reads what these views show,
``run_timeline`` one run as the timeline shows it); ``browser`` holds the tabs, ``common``
the charts' shared parts.
"""
