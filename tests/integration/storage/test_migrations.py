from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from transcriber.core.errors import MigrationError
from transcriber.db.connection import database_path, open_sync
from transcriber.db.migrate import default_migrations_dir, discover, migrate


def _copy_migrations(tmp_path: Path) -> Path:
    folder = tmp_path / "migrations"
    folder.mkdir()
    for path in default_migrations_dir().iterdir():
        if path.name.endswith(".sql"):
            (folder / path.name).write_text(path.read_text())
    return folder


def test_applies_every_migration_once(data_dir: Path) -> None:
    first = migrate(data_dir)
    assert first == [m.version for m in discover(default_migrations_dir())]
    assert migrate(data_dir) == []


def test_two_files_with_one_version_fail_the_start(tmp_path: Path, data_dir: Path) -> None:
    folder = _copy_migrations(tmp_path)
    (folder / "0001_again.sql").write_text("CREATE TABLE x (a INTEGER);")
    with pytest.raises(MigrationError, match="two migration files have version 1"):
        migrate(data_dir, migrations_dir=folder)


def test_an_edited_applied_migration_fails_the_start(tmp_path: Path, data_dir: Path) -> None:
    folder = _copy_migrations(tmp_path)
    migrate(data_dir, migrations_dir=folder)
    first = sorted(folder.glob("0001_*.sql"))[0]
    first.write_text(first.read_text() + "\n-- edited\n")
    with pytest.raises(MigrationError, match="was edited"):
        migrate(data_dir, migrations_dir=folder)


def test_a_failing_migration_leaves_no_trace(tmp_path: Path, data_dir: Path) -> None:
    folder = _copy_migrations(tmp_path)
    (folder / "9000_broken.sql").write_text(
        "CREATE TABLE half_done (a INTEGER);\nINSERT INTO no_such_table VALUES (1);\n")
    with pytest.raises(MigrationError, match="9000"):
        migrate(data_dir, migrations_dir=folder)
    conn = open_sync(database_path(data_dir), busy_timeout_ms=1000)
    tables = {r["name"] for r in conn.execute("SELECT name FROM sqlite_master")}
    versions = {r["version"] for r in conn.execute("SELECT version FROM schema_migrations")}
    conn.close()
    assert "half_done" not in tables
    assert 9000 not in versions
    assert "audio_records" in tables


def _migrate_in_child(data_dir: str) -> None:
    migrate(Path(data_dir))


def test_concurrent_starts_apply_each_migration_once(data_dir: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_migrate_in_child, args=(str(data_dir),)) for _ in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    conn = open_sync(database_path(data_dir), busy_timeout_ms=1000)
    rows = conn.execute("SELECT version, count(*) AS n FROM schema_migrations GROUP BY version")
    assert all(row["n"] == 1 for row in rows)
    conn.close()
    assert (data_dir / "migrate.lock").exists()


@pytest.fixture
def conn(migrated: Path) -> sqlite3.Connection:
    return open_sync(migrated, busy_timeout_ms=1000)


def _user(conn: sqlite3.Connection, uid: str, login: str, email: str = "") -> None:
    conn.execute(
        "INSERT INTO users (id, provider_login, name, email, created_at, updated_at)"
        " VALUES (?, ?, '', ?, 't', 't')", (uid, login, email))


def _record(conn: sqlite3.Connection, rid: str, owner: str, state: str = "uploaded") -> None:
    conn.execute(
        "INSERT INTO audio_records (id, owner_id, duration_ms, size_bytes, source, state,"
        " state_entered_at, created_at, updated_at) VALUES (?, ?, 1, 1, 'http', ?, 't', 't', 't')",
        (rid, owner, state))


def test_foreign_keys_keep_users_with_records(conn: sqlite3.Connection) -> None:
    _user(conn, "u1", "alice")
    _record(conn, "r1", "u1")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("DELETE FROM users WHERE id = 'u1'")
    with pytest.raises(sqlite3.IntegrityError):
        _record(conn, "r2", "nobody")


def test_email_is_unique_only_when_present(conn: sqlite3.Connection) -> None:
    _user(conn, "u1", "a")
    _user(conn, "u2", "b")
    _user(conn, "u3", "c", "x@example.org")
    with pytest.raises(sqlite3.IntegrityError):
        _user(conn, "u4", "d", "x@example.org")


def test_stage_and_telegram_pair_are_checked(conn: sqlite3.Connection) -> None:
    _user(conn, "u1", "alice")
    with pytest.raises(sqlite3.IntegrityError):
        _record(conn, "r1", "u1", state="failed")
    for rid in ("r2", "r3"):
        _record(conn, rid, "u1")
    conn.execute("UPDATE audio_records SET tg_chat_id = 5, tg_message_id = 7 WHERE id = 'r2'")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE audio_records SET tg_chat_id = 5, tg_message_id = 7 WHERE id = 'r3'")


def test_a_record_has_at_most_five_topics(conn: sqlite3.Connection) -> None:
    _user(conn, "u1", "alice")
    _record(conn, "r1", "u1")
    for n in range(6):
        conn.execute("INSERT INTO topics (id, owner_id, name, created_at, updated_at)"
                     " VALUES (?, 'u1', ?, 't', 't')", (f"t{n}", f"topic {n}"))
    for n in range(5):
        conn.execute("INSERT INTO record_topics (record_id, topic_id) VALUES ('r1', ?)", (f"t{n}",))
    with pytest.raises(sqlite3.IntegrityError, match="at most 5 topics"):
        conn.execute("INSERT INTO record_topics (record_id, topic_id) VALUES ('r1', 't5')")


def test_schema_has_no_current_time_defaults(conn: sqlite3.Connection) -> None:
    tables = [r["name"] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'record_search%'")]
    for table in tables:
        for column in conn.execute(f"PRAGMA table_info({table})"):
            default = str(column["dflt_value"] or "").upper()
            assert "CURRENT_" not in default, (table, column["name"])
            assert "DATETIME" not in default
            assert "STRFTIME" not in default
