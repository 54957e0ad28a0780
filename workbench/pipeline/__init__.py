"""Pipeline layer: the only code that imports pyspark (session factory, generator and oracle jobs)."""
