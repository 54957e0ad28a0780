"""Experiment files: the YAML model of <engines, static data, stream, queries, KPIs>."""
