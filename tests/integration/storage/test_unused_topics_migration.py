"""Migration 0010 on an archive made before it: topics no record carries are
removed, and from then on the last record that drops a topic takes it along."""

from __future__ import annotations

from pathlib import Path

from transcriber.db import queries as q
from transcriber.db.connection import database_path, open_sync
from transcriber.db.migrate import default_migrations_dir, migrate


def test_upgrade_removes_the_topics_left_behind(tmp_path: Path) -> None:
    old = tmp_path / "old_migrations"
    old.mkdir()
    for path in default_migrations_dir().iterdir():
        if path.name.endswith(".sql") and int(path.name.split("_")[0]) <= 9:
            (old / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    data_dir = tmp_path / "data"
    assert migrate(data_dir, migrations_dir=old)[-1] == 9
    conn = open_sync(database_path(data_dir), busy_timeout_ms=1000)
    conn.execute(q.users.INSERT, {"id": "u1", "login": "u1", "name": "", "email": "",
                                  "now": "t"})
    conn.execute(q.records.INSERT_RECORD, {
        "id": "r1", "owner_id": "u1", "title": "", "original_filename": "call.ogg",
        "duration_ms": 1, "size_bytes": 1, "source": "http", "tg_chat_id": None,
        "tg_message_id": None, "state": "uploaded", "original_file_id": None, "now": "t"})
    for topic in ("kept", "orphan", "shared"):
        conn.execute(q.edits.UPSERT_TOPIC, {"id": topic, "owner_id": "u1", "name": topic,
                                            "now": "t"}).fetchall()
    conn.execute("INSERT INTO record_topics (record_id, topic_id) VALUES ('r1', 'kept')")
    conn.close()

    assert 10 in migrate(data_dir)
    conn = open_sync(database_path(data_dir), busy_timeout_ms=1000)
    names = [row[0] for row in conn.execute("SELECT name FROM topics ORDER BY name")]
    assert names == ["kept"]
    conn.execute(q.edits.DELETE_RECORD_TOPICS, {"record_id": "r1"})
    assert conn.execute("SELECT count(*) FROM topics").fetchone()[0] == 0
    conn.close()
