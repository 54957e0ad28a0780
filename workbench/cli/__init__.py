"""The `rspwb` command line."""
