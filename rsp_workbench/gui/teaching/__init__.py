"""The Teaching tab: a small stream, a query and a time slider; policy presets side by side.

``model`` answers, without Qt, what each policy does at each instant (the oracle's own core
functions); ``view`` draws the columns and the slider.
"""
