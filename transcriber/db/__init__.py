"""Storage: the writer actor and its typed commands (`commands`), the reader pool and
its typed reads (`reads`), the named queries (`queries`), migrations, and the
PostgreSQL engine (`postgres`).

Imports: `core`, `domain`, `settings` and `ports` only; nothing of the pipeline,
the providers or the doors.
"""
