"""The "Probe engine" dialog: ``rspwb probe`` in the GUI, off the GUI thread, with progress and Cancel.

``model`` names the engines one can probe and turns an inference into texts and table rows
(Qt-free); ``view`` is the dialog.
"""
