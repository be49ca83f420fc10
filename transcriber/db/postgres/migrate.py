"""Migrations on PostgreSQL: `migrations/postgresql/`, one version sequence with
SQLite's set (`migrations/`).

The PostgreSQL set starts at the version that first ran on PostgreSQL (16, the
whole schema in one file); every later version adds one file to each set under
the same number, so `schema_migrations` tells the same story on both engines.
Processes on several hosts may start at once: an advisory lock makes them take
turns, and each file with its bookkeeping row is one transaction.
"""

from __future__ import annotations

import asyncpg
import structlog

from transcriber.core.clock import Clock, SystemClock, stamp
from transcriber.core.errors import MigrationError
from transcriber.db import queries as q
from transcriber.db.migrate import MIGRATIONS_FOLDER, default_migrations_dir, discover
from transcriber.db.postgres import queries as pq
from transcriber.db.postgres.connection import PgConnection, connect

log = structlog.get_logger(__name__)

POSTGRES_FOLDER = "postgresql"


async def migrate_postgres(url: str, *, clock: Clock | None = None) -> list[int]:
    """Apply pending PostgreSQL migrations; the versions applied by this call."""
    clock = clock or SystemClock()
    migrations = discover(default_migrations_dir() / POSTGRES_FOLDER)
    raw = await connect(url)
    conn = PgConnection(raw)
    applied_now: list[int] = []
    try:
        await conn.execute(pq.LOCK_MIGRATIONS, {"key": pq.MIGRATION_LOCK_KEY})
        try:
            await raw.execute(pq.CREATE_MIGRATIONS_TABLE)
            rows = await (await conn.execute(q.migrations.SELECT_APPLIED)).fetchall()
            applied = {row["version"]: row["checksum"] for row in rows}
            for migration in migrations:
                if migration.version in applied:
                    if applied[migration.version] != migration.checksum:
                        raise MigrationError(
                            f"applied migration {migration.version} was edited; "
                            "add a new migration instead")
                    continue
                try:
                    async with raw.transaction():
                        await conn.run_script(migration.sql)
                        await conn.execute(q.migrations.INSERT_APPLIED, {
                            "version": migration.version, "name": migration.name,
                            "checksum": migration.checksum, "applied_at": stamp(clock)})
                except asyncpg.PostgresError as exc:
                    raise MigrationError(
                        f"migration {migration.version} failed: {type(exc).__name__}") from exc
                applied_now.append(migration.version)
                log.info("migration_applied", version=migration.version, name=migration.name,
                         engine="postgresql")
        finally:
            await conn.execute(pq.UNLOCK_MIGRATIONS, {"key": pq.MIGRATION_LOCK_KEY})
    finally:
        await raw.close()
    return applied_now


__all__ = ["MIGRATIONS_FOLDER", "POSTGRES_FOLDER", "migrate_postgres"]
