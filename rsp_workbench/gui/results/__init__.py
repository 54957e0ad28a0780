"""The Results browser: a result bundle's summary, quality, resources, correctness matrix,
Heaven dashboard, eviction curves and window timeline (rsp_workbench.results.view_data does the reading)."""

from rsp_workbench.gui.results.browser import ResultsBrowser

__all__ = ["ResultsBrowser"]
