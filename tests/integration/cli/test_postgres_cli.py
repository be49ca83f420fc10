"""The one-shot commands on PostgreSQL (`storage.database_url`): `migrate` applies the
PostgreSQL set, `token` and `status` work on the shared database, and the SQLite file
commands (`backup`, `restore`) refuse instead of reading
a data folder that no longer holds the state; `verify` checks the PostgreSQL archive."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import orjson

from tests.helpers.database import TestDatabase
from transcriber.db.connection import database_path
from transcriber.db.migrate import default_migrations_dir, discover
from transcriber.db.postgres.migrate import POSTGRES_FOLDER
from transcriber.db.postgres.search import terms_literal


def _cli(data_dir: Path, url: str, *argv: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir),
                   "TRANSCRIBER_STORAGE_DATABASE_URL": url, "LANG": "C.UTF-8",
                   "LC_ALL": "", "LC_MESSAGES": ""}
    return subprocess.run([sys.executable, "-m", "transcriber.cli", *argv], env=environment,
                          capture_output=True, text=True, timeout=120, check=False)


def test_migrate_token_and_status_run_on_postgresql(data_dir: Path, postgres_url: str) -> None:
    migrated = _cli(data_dir, postgres_url, "migrate")
    assert migrated.returncode == 0, migrated.stderr
    # The PostgreSQL set: its baseline (16) and every migration after it.
    pg_set = discover(default_migrations_dir() / POSTGRES_FOLDER)
    assert pg_set[0].version == 16
    assert f"applied {len(pg_set)} migration(s)" in migrated.stdout
    again = _cli(data_dir, postgres_url, "migrate")
    assert "applied 0 migration(s)" in again.stdout
    database = TestDatabase(data_dir, postgres_url)
    assert database.rows("SELECT version FROM schema_migrations ORDER BY version") == [
        (m.version,) for m in pg_set]

    made = _cli(data_dir, postgres_url, "token", "create", "alice", "--scope", "read")
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert database.rows("SELECT token_hash, scope FROM api_tokens") == [
        (hashlib.sha256(token.encode()).hexdigest(), "read")]
    status = _cli(data_dir, postgres_url, "status")
    assert status.returncode == 0, status.stderr
    # Nothing of it went to a SQLite file in the data folder.
    assert not database_path(data_dir).exists()


def test_the_sqlite_file_commands_refuse_on_postgresql(
    data_dir: Path, postgres_url: str, tmp_path: Path
) -> None:
    for argv in (["backup", str(tmp_path / "copy")], ["restore", str(tmp_path / "src")]):
        refused = _cli(data_dir, postgres_url, *argv)
        assert refused.returncode != 0, argv
        assert "pg_dump" in refused.stderr, refused.stderr
    assert not (tmp_path / "copy").exists()


def test_verify_checks_the_archive_on_postgresql(data_dir: Path, postgres_url: str) -> None:
    """Counts, the files the rows name and the search rows, on PostgreSQL: a record with
    its file passes; its file gone, or its search row wrong, is found and named."""
    assert _cli(data_dir, postgres_url, "migrate").returncode == 0
    database = TestDatabase(data_dir, postgres_url)
    now = "2026-01-01T00:00:00Z"
    database.execute("INSERT INTO users (id, provider_login, created_at, updated_at) "
                     "VALUES ('u1', 'alice', :now, :now)", {"now": now})
    folder = data_dir / "records" / "r1"
    folder.mkdir(parents=True)
    (folder / "f1.wav").write_bytes(b"x" * 10)
    database.execute("INSERT INTO files (id, owner_id, record_id, file_name, size_bytes, "
                     "format, created_at) VALUES ('f1', 'u1', 'r1', 'f1.wav', 10, 'wav', :now)",
                     {"now": now})
    database.execute(
        "INSERT INTO audio_records (id, owner_id, title, duration_ms, size_bytes, source, "
        "state, state_entered_at, original_file_id, created_at, updated_at) VALUES "
        "('r1', 'u1', 'Budget call', 1000, 10, 'http', 'uploaded', :now, 'f1', :now, :now)",
        {"now": now})
    # As the writer does before COMMIT: the new record's search row refreshed.
    literal = terms_literal("u1", title="Budget call", brief="", original_filename="",
                            transcript="", speaker_names="{}", topic_names="[]")
    database.execute("UPDATE record_search SET terms = :terms::tsvector, stale = 0 "
                     "WHERE record_id = 'r1'", {"terms": literal})
    checked = _cli(data_dir, postgres_url, "verify", "--json")
    assert checked.returncode == 0, checked.stderr
    report = orjson.loads(checked.stdout)
    assert report["ok"] is True
    assert (report["counts"]["records"], report["counts"]["files"]) == (1, 1)

    (folder / "f1.wav").unlink()
    database.execute("UPDATE record_search SET terms = ''::tsvector WHERE record_id = 'r1'")
    broken = _cli(data_dir, postgres_url, "verify", "--json")
    assert broken.returncode != 0
    problems = orjson.loads(broken.stdout)["problems"]
    assert problems["missing_files"] == ["records/r1/f1.wav"]
    assert problems["search"] == ["record r1: search row differs"]
