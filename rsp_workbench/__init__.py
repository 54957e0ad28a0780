"""RSP Workbench: design, run and judge RDF Stream Processing experiments."""

__version__ = "0.1.0"
APP_NAME = "RSP Workbench"
