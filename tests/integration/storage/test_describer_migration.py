"""Migration 0015 on an archive made before it: what people set is theirs (origin
`human`), the rest is nobody's yet; the topics join the search index, refilled in
batches; no description is asked for by the migration (`transcriber describe --all`)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from tests.helpers.search import fill_search_index
from transcriber.db import queries as q
from transcriber.db.connection import database_path, open_sync
from transcriber.db.migrate import default_migrations_dir, migrate
from transcriber.db.search import owner_match
from transcriber.domain.search import parse
from transcriber.maintenance.verify import verify


def _old_archive(tmp_path: Path) -> Path:
    """Three records under migrations 0001-0012: one renamed and given topics, one with a
    brief only, one untouched."""
    old = tmp_path / "old_migrations"
    old.mkdir()
    for path in default_migrations_dir().iterdir():
        if path.name.endswith(".sql") and int(path.name.split("_")[0]) <= 12:
            (old / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    data_dir = tmp_path / "data"
    migrate(data_dir, migrations_dir=old)
    with contextlib.closing(open_sync(database_path(data_dir), busy_timeout_ms=1000)) as conn:
        conn.execute(q.users.INSERT, {"id": "u1", "login": "u1", "name": "", "email": "",
                                      "now": "t"})
        for n in range(3):
            conn.execute(q.records.INSERT_RECORD, {
                "id": f"r{n}", "owner_id": "u1", "title": "", "original_filename": "a.ogg",
                "duration_ms": 1, "size_bytes": 1, "source": "http", "tg_chat_id": None,
                "tg_message_id": None, "state": "done", "original_file_id": None,
                "now": f"2026-01-01T00:00:0{n}Z"})
            conn.execute(q.results.UPSERT_TEXT, {
                "id": f"t{n}", "record_id": f"r{n}", "kind": "transcript",
                "contents": "мы обсуждали квартальный отчёт", "now": "t"}).fetchall()
        # The person's edits of the time (the columns 0015 adds did not exist yet).
        conn.execute("UPDATE audio_records SET title = 'Планёрка' WHERE id = 'r0'")
        conn.execute("UPDATE audio_records SET brief = 'Про отчёт.' WHERE id = 'r1'")
        for topic_id, name in (("t-a", "Стратегия"), ("t-b", "Бюджет")):
            conn.execute(q.edits.UPSERT_TOPIC, {"id": topic_id, "owner_id": "u1",
                                                "name": name, "now": "t"}).fetchall()
            conn.execute(q.edits.INSERT_RECORD_TOPIC, {"record_id": "r0", "topic_id": topic_id})
    return data_dir


def _search(conn: sqlite3.Connection, text: str) -> list[str]:
    match = owner_match("u1", parse(text))
    assert match is not None
    rows = conn.execute(q.archive.SEARCH_FIRST, {"match": match, "owner_id": "u1",
                                                  "limit": 10}).fetchall()
    return sorted(row["id"] for row in rows)


def test_what_people_set_before_is_theirs_and_the_topics_are_indexed(tmp_path: Path) -> None:
    data_dir = _old_archive(tmp_path)
    assert 15 in migrate(data_dir)  # with the others after 0012 (tokens, webhooks, voices)
    path = database_path(data_dir)
    with contextlib.closing(open_sync(path, busy_timeout_ms=1000)) as conn:
        rows = {row["id"]: row for row in conn.execute(
            "SELECT id, title_origin, brief_origin, topics_origin, topic_names, described_by "
            "FROM audio_records")}
        assert (rows["r0"]["title_origin"], rows["r0"]["topics_origin"]) == ("human", "human")
        assert rows["r0"]["topic_names"] == '["Бюджет","Стратегия"]'
        assert rows["r0"]["brief_origin"] is None
        assert rows["r1"]["brief_origin"] == "human"
        assert [rows["r2"][c] for c in ("title_origin", "brief_origin", "topics_origin")] == [
            None, None, None]
        assert {row["described_by"] for row in rows.values()} == {""}
        # No description is asked for by the migration: `transcriber describe --all` does.
        assert conn.execute("SELECT count(*) FROM describe_jobs").fetchone()[0] == 0
        assert _search(conn, "стратегия") == []  # waiting for its turn
    report = verify(path, data_dir)
    assert report.ok, report.problems
    assert report.counts["records_to_index"] == 3

    assert fill_search_index(data_dir) == 3
    with contextlib.closing(open_sync(path, busy_timeout_ms=1000)) as conn:
        assert _search(conn, "стратегии") == ["r0"]  # a topic, in another form
        assert _search(conn, "отчёты") == ["r0", "r1", "r2"]
        assert _search(conn, "планёрка") == ["r0"]
        # A topic dropped later leaves the index with it: the command that changes the
        # topics writes the names once (`edits.replace_topics` runs these two).
        conn.execute(q.edits.DELETE_OTHER_RECORD_TOPICS, {"record_id": "r0",
                                                          "topic_ids": '["t-b"]'})
        conn.execute(q.edits.SET_TOPIC_NAMES, {"record_id": "r0"})
        assert _search(conn, "стратегия") == []
        assert _search(conn, "бюджет") == ["r0"]
    report = verify(path, data_dir)
    assert report.ok, report.problems
    assert report.counts["records_to_index"] == 0
