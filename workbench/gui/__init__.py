"""The desktop application (PySide6 + pyqtgraph): a thin layer over the core."""
