"""The search index filled under its word forms, as the service does at start."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.helpers.database import TestDatabase
from transcriber.core.clock import SystemClock
from transcriber.db.connection import database_path
from transcriber.db.postgres.search import terms_literal
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.service.search_index import index_all


async def fill_search_index_async(data_dir: Path) -> int:
    """Run the service's indexing (`index_all`) with a writer and readers of its own."""
    path = database_path(data_dir)
    writer = Writer(path, clock=SystemClock(), busy_timeout_ms=5000, batch_max=64)
    readers = ReaderPool(path, size=1)
    await writer.start()
    await readers.open()
    try:
        return await index_all(writer, readers)
    finally:
        await readers.close()
        await writer.stop()


def fill_search_index(data_dir: Path) -> int:
    return asyncio.run(fill_search_index_async(data_dir))


def search_row_problems(database: TestDatabase) -> list[str]:
    """On PostgreSQL, what `verify` checks of SQLite's index: every record has its row of
    the index, fresh (not stale), holding exactly the terms its text gives now
    (`search.terms_literal`); a problem per record that does not."""
    assert database.engine == "postgresql", "SQLite's index is checked by `verify`"
    problems = [f"{record_id}: no search row" for (record_id,) in database.rows(
        "SELECT r.id FROM audio_records AS r"
        " LEFT JOIN record_search AS s ON s.record_id = r.id WHERE s.record_id IS NULL")]
    for row in database.rows(SEARCHED_TEXT):
        record_id, owner_id, title, brief, filename, speakers, topics, transcript, stale = row
        if stale:
            problems.append(f"{record_id}: stale")
            continue
        literal = terms_literal(owner_id, title=title, brief=brief, original_filename=filename,
                                transcript=transcript or "", speaker_names=speakers,
                                topic_names=topics)
        if not database.scalar(TERMS_EQUAL, {"literal": literal, "record_id": record_id}):
            problems.append(f"{record_id}: terms differ from its text")
    return problems


SEARCHED_TEXT = """
SELECT r.id, r.owner_id, r.title, r.brief, r.original_filename, r.speaker_names,
       r.topic_names, t.contents, s.stale
FROM record_search AS s
JOIN audio_records AS r ON r.id = s.record_id
LEFT JOIN texts AS t ON t.record_id = r.id AND t.kind = 'transcript'
"""
TERMS_EQUAL = ("SELECT terms = :literal::tsvector FROM record_search"
               " WHERE record_id = :record_id")
