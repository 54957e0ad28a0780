"""The Results browser's Timeline tab: stream lanes, expected windows, engine emissions, bindings.

``model`` is the work off the GUI thread (reading a stream or a bundle run, one window's
bindings) and the texts, without Qt; ``view`` the controls around the plot; ``plot`` the
plot; ``bindings`` the clicked window's side panel.
"""
