"""The PostgreSQL engine: its connection, writer, readers, migrations, search and
duty locks, and the dialect that turns each named query into PostgreSQL's text.
Loaded only when `storage.database_url` names PostgreSQL (asyncpg is heavy).

Imports: the rest of `db` and the floors below it.
"""
