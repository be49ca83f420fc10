"""The PostgreSQL database a test gets is as fresh as a copy of the migrated template,
though it is the last test's, wiped (`tests/helpers/postgres_reuse.py`): no row, no
schema change, no statistics of the last test reach the next one, and no client of
the last test can reach it."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from tests.helpers.database import TestDatabase
from tests.helpers.postgres import PostgresServer
from tests.helpers.postgres_reuse import TABLE_PAGES

USER = ("INSERT INTO users (id, provider_login, created_at, updated_at) "
        "VALUES (:id, :id, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')")


@pytest.fixture
def server(postgres_server: PostgresServer) -> PostgresServer:
    """The run's server with a spare database to hand out: one taken and given back
    clean (the run's first may not have made one yet)."""
    postgres_server.give_back_migrated(postgres_server.take_migrated())
    assert postgres_server.reuse is not None
    assert postgres_server.reuse.spare is not None
    return postgres_server


def _db(tmp_path: Path, url: str) -> TestDatabase:
    return TestDatabase(tmp_path, url)


def _name(url: str) -> str:
    return url.rsplit("/", 1)[1]


def _fresh(database: TestDatabase, template: TestDatabase) -> None:
    tables = [row[0] for row in template.rows(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
    for table in tables:
        assert database.count(table) == template.count(table), table
    assert database.rows("SELECT * FROM schema_migrations ORDER BY version") == \
        template.rows("SELECT * FROM schema_migrations ORDER BY version")


def test_the_next_test_gets_no_row_and_a_new_name(server: PostgresServer,
                                                  tmp_path: Path) -> None:
    first = server.take_migrated()
    database = _db(tmp_path, first)
    database.execute(USER, {"id": "alice"})
    database.execute("INSERT INTO spaces (id, name, created_at) "
                     "VALUES ('s1', 'home', '2026-01-01T00:00:00Z')")
    database.execute("INSERT INTO space_members (space_id, user_id, role, created_at) "
                     "VALUES ('s1', 'alice', 'admin', '2026-01-01T00:00:00Z')")
    server.give_back_migrated(first)
    assert server.reuse is not None
    recycled = server.reuse.recycled
    second = server.take_migrated()
    try:
        assert server.reuse.recycled == recycled + 1  # the same database, not a copy
        assert _name(second) != _name(first)
        assert server.template is not None
        _fresh(_db(tmp_path, second), _db(tmp_path, server.url(server.template)))
        with pytest.raises(asyncpg.InvalidCatalogNameError):
            database.count("users")  # the last test's URL reaches nothing
    finally:
        server.give_back_migrated(second)


async def test_a_client_the_last_test_left_open_is_cut_off(server: PostgresServer) -> None:
    url = server.take_migrated()
    leaked = await asyncpg.connect(url)
    await leaked.execute("BEGIN; LOCK TABLE users")  # would block the wipe forever
    server.give_back_migrated(url)
    assert server.reuse is not None
    assert server.reuse.spare is not None  # wiped and kept
    with pytest.raises((asyncpg.ConnectionDoesNotExistError, asyncpg.AdminShutdownError)):
        await leaked.fetchval("SELECT 1")
    await leaked.close()


@pytest.mark.parametrize("change", [
    "CREATE TABLE toy_notices (id TEXT PRIMARY KEY)",
    "ALTER TABLE users ADD COLUMN nickname TEXT",
    "ALTER TABLE texts DISABLE TRIGGER USER",
    "CREATE INDEX users_by_name ON users (name)",
    "ANALYZE users",
    "DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)",
])
def test_a_database_a_test_changed_is_dropped_for_a_copy(
        server: PostgresServer, tmp_path: Path, change: str) -> None:
    url = server.take_migrated()
    _db(tmp_path, url).execute(change)
    assert server.reuse is not None
    copied = server.reuse.copied
    server.give_back_migrated(url)
    assert server.reuse.spare is None
    fresh = server.take_migrated()
    try:
        assert server.reuse.copied == copied + 1
        assert server.template is not None
        template = _db(tmp_path, server.url(server.template))
        _fresh(_db(tmp_path, fresh), template)
        with pytest.raises(asyncpg.InvalidCatalogNameError):
            _db(tmp_path, url).count("users")  # dropped
    finally:
        server.give_back_migrated(fresh)


def test_a_table_grown_past_what_the_planner_ignores_is_dropped(
        server: PostgresServer, tmp_path: Path) -> None:
    url = server.take_migrated()
    # Rows wide enough to fill TABLE_PAGES pages of `users`.
    _db(tmp_path, url).execute(
        "INSERT INTO users (id, provider_login, name, created_at, updated_at) "
        "SELECT 'u' || n, 'u' || n, repeat('x', 1000), '2026-01-01T00:00:00Z', "
        "'2026-01-01T00:00:00Z' "
        f"FROM generate_series(1, {TABLE_PAGES * 8}) AS n")
    server.give_back_migrated(url)
    assert server.reuse is not None
    assert server.reuse.spare is None
