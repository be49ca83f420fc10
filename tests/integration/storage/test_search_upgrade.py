"""Migration 0012 on an archive that has records: the index rebuilt under the word forms
in batches, beside writes, and `verify` counting what is left.

The archive is built with migrations 0001-0011 (the old terms, exact words), then
0012 runs and leaves every record's search key waiting; the service's indexing
(`transcriber.service.search_index.index_all`, with a real writer and readers)
fills it. A record written meanwhile is indexed by its trigger, and a batch read
before such a write never puts its stale terms back.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path

import pytest

from tests.helpers.search import fill_search_index_async
from transcriber.core.clock import SystemClock
from transcriber.db import queries as q
from transcriber.db import reads
from transcriber.db.commands.search import IndexPending
from transcriber.db.connection import database_path, open_sync
from transcriber.db.migrate import default_migrations_dir, migrate
from transcriber.db.readers import ReaderPool
from transcriber.db.search import owner_match
from transcriber.db.writer import Writer
from transcriber.domain.search import parse
from transcriber.maintenance.verify import verify
from transcriber.service import search_index

RECORDS = 25
TEXT = "Пожалуйста, отправь ты отчёт до конца недели, номер {n}"


def _search(conn: sqlite3.Connection, owner: str, text: str) -> list[str]:
    match = owner_match(owner, parse(text))
    assert match is not None
    rows = conn.execute(q.archive.SEARCH_FIRST,
                        {"match": match, "owner_id": owner, "limit": 100}).fetchall()
    return sorted(row["id"] for row in rows)


def _integrity(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT INTO record_search (record_search) VALUES ('integrity-check')")


@pytest.fixture
def upgraded(tmp_path: Path) -> Path:
    """An archive of RECORDS records made under migration 0011, then migrated to 0012."""
    old = tmp_path / "old_migrations"
    old.mkdir()
    for path in default_migrations_dir().iterdir():
        if path.name.endswith(".sql") and int(path.name.split("_")[0]) <= 11:
            (old / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    data_dir = tmp_path / "data"
    migrate(data_dir, migrations_dir=old)
    with contextlib.closing(open_sync(database_path(data_dir), busy_timeout_ms=1000)) as conn:
        for owner in ("u1", "u2"):
            conn.execute(q.users.INSERT, {"id": owner, "login": owner, "name": "",
                                          "email": "", "now": "t"})
        for n in range(RECORDS):
            rid = f"r{n:02d}"
            conn.execute(q.records.INSERT_RECORD, {
                "id": rid, "owner_id": "u1" if n % 5 else "u2", "title": f"звонок {n}",
                "original_filename": "a.ogg", "duration_ms": 1, "size_bytes": 1,
                "source": "http", "tg_chat_id": None, "tg_message_id": None,
                "state": "done", "original_file_id": None,
                "now": f"2026-01-01T00:00:{n:02d}Z"})
            conn.execute(q.results.UPSERT_TEXT, {
                "id": f"t{n}", "record_id": rid, "kind": "transcript",
                "contents": TEXT.format(n=n), "now": "t"}).fetchall()
        # The old index knew the exact words only.
        assert conn.execute("SELECT count(*) FROM record_search WHERE record_search MATCH ?",
                            (owner_match_old("u1", "недели"),)).fetchone()[0] == 20
    # 0012 and every later one (0015 rebuilds the index again, for the topics).
    assert migrate(data_dir)[0] == 12
    return data_dir


def owner_match_old(owner: str, word: str) -> str:
    from transcriber.db.search import owner_key  # noqa: PLC0415

    return f'"{owner_key(owner)}{word}"'


def test_the_index_is_rebuilt_in_batches_and_verify_counts_what_is_left(
    upgraded: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = database_path(upgraded)
    u1 = [f"r{n:02d}" for n in range(RECORDS) if n % 5]
    with contextlib.closing(open_sync(path, busy_timeout_ms=1000)) as conn:
        assert _search(conn, "u1", "неделя") == []  # every record waits for its turn
        report = verify(path, upgraded)
        assert report.ok, report.problems
        assert report.counts["records_to_index"] == RECORDS
        # A record written meanwhile is indexed by its trigger at once (no stale delete).
        conn.execute("UPDATE audio_records SET title = 'квартальные планы' WHERE id = 'r01'")
        _integrity(conn)
        assert _search(conn, "u1", "квартальный") == ["r01"]
        assert _search(conn, "u1", "неделя") == ["r01"]

    monkeypatch.setattr(search_index, "BATCH_FIRST", 4)
    assert asyncio.run(fill_search_index_async(upgraded)) == RECORDS - 1

    with contextlib.closing(open_sync(path, busy_timeout_ms=1000)) as conn:
        _integrity(conn)
        assert _search(conn, "u1", "неделя") == u1
        assert _search(conn, "u1", "отправить отчеты") == u1
        assert _search(conn, "u1", "звонок") == [r for r in u1 if r != "r01"]
        assert _search(conn, "u2", "неделя") == [f"r{n:02d}" for n in range(0, RECORDS, 5)]
        assert conn.execute("SELECT count(*) FROM record_search_keys WHERE indexed = 0"
                            ).fetchone()[0] == 0
    report = verify(path, upgraded)
    assert report.ok, report.problems
    assert report.counts["records_to_index"] == 0


def test_a_batch_read_before_a_write_never_puts_stale_terms_back(upgraded: Path) -> None:
    async def run() -> None:
        path = database_path(upgraded)
        writer = Writer(path, clock=SystemClock())
        readers = ReaderPool(path, size=1)
        await writer.start()
        await readers.open()
        try:
            rows = await reads.search.pending_rows(readers, limit=RECORDS)
            assert len(rows) == RECORDS
            assert rows[0].search_key > rows[-1].search_key  # newest first
            with contextlib.closing(open_sync(path, busy_timeout_ms=1000)) as conn:
                conn.execute("UPDATE audio_records SET title = 'новый' WHERE id = 'r03'")
            assert await writer.ask(IndexPending(rows=tuple(rows))) == RECORDS - 1
        finally:
            await readers.close()
            await writer.stop()

    asyncio.run(run())
    with contextlib.closing(open_sync(database_path(upgraded), busy_timeout_ms=1000)) as conn:
        _integrity(conn)
        assert "r03" not in _search(conn, "u1", "звонок")  # its old title is gone
        assert _search(conn, "u1", "новые") == ["r03"]
    report = verify(database_path(upgraded), upgraded)
    assert report.ok, report.problems


def test_a_batch_follows_the_time_it_took() -> None:
    assert search_index.next_batch(32, 0.125) == 64
    assert search_index.next_batch(32, 1.0) == 8
    assert search_index.next_batch(32, 100.0) == search_index.BATCH_MIN
    assert search_index.next_batch(32, 0.0) == search_index.BATCH_MAX
    assert search_index.next_batch(1000, 0.001) == search_index.BATCH_MAX
    # The writer's share is the tighter aim when it took most of the time.
    assert search_index.next_batch(100, 0.25, 0.2) == 50
    assert search_index.next_batch(100, 0.25, 0.01) == 100
