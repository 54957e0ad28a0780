"""Stream elements, N-Triples terms, stream readers and writers (pure Python, constant memory)."""
