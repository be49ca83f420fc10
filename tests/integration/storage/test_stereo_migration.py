"""Migration 0009 on an archive made before it: every file is mono, every part
carries every channel; afterwards the columns take only what they mean."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from transcriber.db import queries as q
from transcriber.db.connection import database_path, open_sync
from transcriber.db.migrate import default_migrations_dir, migrate


def test_upgrade_keeps_old_files_mono_and_old_parts_on_every_channel(tmp_path: Path) -> None:
    old = tmp_path / "old_migrations"
    old.mkdir()
    for path in default_migrations_dir().iterdir():
        if path.name.endswith(".sql") and int(path.name.split("_")[0]) <= 8:
            (old / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    data_dir = tmp_path / "data"
    assert migrate(data_dir, migrations_dir=old)[-1] == 8
    conn = open_sync(database_path(data_dir), busy_timeout_ms=1000)
    conn.execute(q.users.INSERT, {"id": "u1", "login": "u1", "name": "", "email": "",
                                  "now": "t"})
    conn.execute(q.records.INSERT_RECORD, {
        "id": "r1", "owner_id": "u1", "title": "", "original_filename": "call.ogg",
        "duration_ms": 1, "size_bytes": 1, "source": "http", "tg_chat_id": None,
        "tg_message_id": None, "state": "uploaded", "original_file_id": None, "now": "t"})
    conn.execute("INSERT INTO files (id, owner_id, record_id, file_name, size_bytes, format,"
                 " created_at) VALUES ('f1', 'u1', 'r1', 'f1.ogg', 1, 'ogg', 't')")
    conn.execute("INSERT INTO recognitions (id, record_id, provider, created_at, updated_at)"
                 " VALUES ('g1', 'r1', 'local', 't', 't')")
    conn.close()

    assert 9 in migrate(data_dir)
    conn = open_sync(database_path(data_dir), busy_timeout_ms=1000)
    assert conn.execute("SELECT channels FROM files WHERE id = 'f1'").fetchone()[0] == 1
    assert conn.execute("SELECT channel FROM recognitions WHERE id = 'g1'").fetchone()[0] is None
    conn.execute(q.files.SET_CHANNELS, {"id": "f1", "channels": 2})
    assert conn.execute("SELECT channels FROM files WHERE id = 'f1'").fetchone()[0] == 2
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(q.files.SET_CHANNELS, {"id": "f1", "channels": 3})
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE recognitions SET channel = 2 WHERE id = 'g1'")
    conn.close()
