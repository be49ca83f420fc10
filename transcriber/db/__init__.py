"""Storage: the writer actor, the reader pool, named queries and migrations."""
