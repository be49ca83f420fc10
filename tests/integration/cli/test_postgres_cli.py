"""The one-shot commands on PostgreSQL (`storage.database_url`): `migrate` applies the
PostgreSQL set, `token` and `status` work on the shared database, and the SQLite file
commands (`backup`, `restore`, `verify` of the data folder) refuse instead of reading
a data folder that no longer holds the state."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.database import TestDatabase
from transcriber.db.connection import database_path


def _cli(data_dir: Path, url: str, *argv: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir),
                   "TRANSCRIBER_STORAGE_DATABASE_URL": url, "LANG": "C.UTF-8",
                   "LC_ALL": "", "LC_MESSAGES": ""}
    return subprocess.run([sys.executable, "-m", "transcriber.cli", *argv], env=environment,
                          capture_output=True, text=True, timeout=120, check=False)


def test_migrate_token_and_status_run_on_postgresql(data_dir: Path, postgres_url: str) -> None:
    migrated = _cli(data_dir, postgres_url, "migrate")
    assert migrated.returncode == 0, migrated.stderr
    assert "applied 1 migration(s)" in migrated.stdout  # the PostgreSQL set's baseline, 16
    again = _cli(data_dir, postgres_url, "migrate")
    assert "applied 0 migration(s)" in again.stdout
    database = TestDatabase(data_dir, postgres_url)
    assert database.rows("SELECT version FROM schema_migrations") == [(16,)]

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
    for argv in (["backup", str(tmp_path / "copy")], ["restore", str(tmp_path / "src")],
                 ["verify"]):
        refused = _cli(data_dir, postgres_url, *argv)
        assert refused.returncode != 0, argv
        assert "pg_dump" in refused.stderr, refused.stderr
    assert not (tmp_path / "copy").exists()
