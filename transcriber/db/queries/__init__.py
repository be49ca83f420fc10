"""All SQL of the service, as named queries with named parameters.

One module per area; nothing outside this package writes SQL text (the
migration files aside). Rows are read by column name (`sqlite3.Row`).

Imports: its own modules only (SQL text and its names).
"""

from transcriber.db.queries import (
    archive,
    ask,
    control,
    describe,
    edits,
    files,
    links,
    loadtest,
    maintenance,
    migrations,
    moving,
    pipeline,
    progress,
    recognition,
    records,
    results,
    search,
    spaces,
    telegram,
    tokens,
    uploads,
    users,
    vocabulary,
    voices,
    watch,
    webhooks,
)

__all__ = [
    "archive",
    "ask",
    "control",
    "describe",
    "edits",
    "files",
    "links",
    "loadtest",
    "maintenance",
    "migrations",
    "moving",
    "pipeline",
    "progress",
    "recognition",
    "records",
    "results",
    "search",
    "spaces",
    "telegram",
    "tokens",
    "uploads",
    "users",
    "vocabulary",
    "voices",
    "watch",
    "webhooks",
]
