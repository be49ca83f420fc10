"""Opening connections. Every connection gets its settings when it is opened.

Most settings (foreign_keys, busy_timeout, secure_delete) belong to the
connection, not the database, so they are applied to each one, never once.
secure_delete: a deleted row's bytes are overwritten with zeros in its page, so a
deletion (a record, a voice purge) leaves nothing of it in the file once the WAL is
checkpointed (`transcriber.db.scrub`).
So do the SQL functions the search triggers call (`transcriber.db.search`): a
connection opened elsewhere (the sqlite3 shell) can read, but a write that
fires a search trigger fails loudly there instead of indexing wrong terms.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import aiosqlite

from transcriber.db import queries as q
from transcriber.db import search

DB_FILE_NAME = "transcriber.sqlite3"

# name, number of arguments (-1: any), function
_SEARCH_FUNCTIONS = (
    (search.STEMS_FUNCTION, 2, search.search_stems),
    (search.FORMS_FUNCTION, -1, search.search_forms),
    (search.LEGACY_FUNCTION, 2, search.search_terms),
)


def _register_search(conn: sqlite3.Connection) -> None:
    for name, arguments, function in _SEARCH_FUNCTIONS:
        conn.create_function(name, arguments, function, deterministic=True)


async def _register_search_async(conn: aiosqlite.Connection) -> None:
    for name, arguments, function in _SEARCH_FUNCTIONS:
        await conn.create_function(name, arguments, function, deterministic=True)


def database_path(data_dir: Path) -> Path:
    return data_dir / DB_FILE_NAME


def _pragmas(*, busy_timeout_ms: int, writer: bool) -> list[str]:
    statements = [
        q.control.PRAGMA_BUSY_TIMEOUT.format(milliseconds=int(busy_timeout_ms)),
        q.control.PRAGMA_FOREIGN_KEYS_ON,
        q.control.PRAGMA_JOURNAL_WAL,
        q.control.PRAGMA_SECURE_DELETE_ON,
    ]
    if writer:
        # FULL: an acknowledged write survives a power cut; group commit pays for it.
        statements.append(q.control.PRAGMA_SYNCHRONOUS_FULL)
        # The statement journals (a savepoint's, or an INSERT's whose triggers may
        # abort it) in memory instead of a temporary file past 64 KiB: an intake
        # command inside its savepoint cost 1.3x as much with them on disk. They
        # are never part of durability (a crash discards them with the transaction).
        statements.append(q.control.PRAGMA_TEMP_STORE_MEMORY)
    return statements


def open_sync(path: Path, *, busy_timeout_ms: int) -> sqlite3.Connection:
    """A blocking write connection (migrations, benchmarks, CLI one-shots)."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    _register_search(conn)
    for statement in _pragmas(busy_timeout_ms=busy_timeout_ms, writer=True):
        conn.execute(statement)
    return conn


async def open_writer(path: Path, *, busy_timeout_ms: int) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    await _register_search_async(conn)
    for statement in _pragmas(busy_timeout_ms=busy_timeout_ms, writer=True):
        await conn.execute(statement)
    return conn


def reader_uri(path: Path) -> str:
    return f"{path.absolute().as_uri()}?mode=ro"


async def open_reader(path: Path, *, busy_timeout_ms: int) -> aiosqlite.Connection:
    uri = reader_uri(path)
    conn = await aiosqlite.connect(uri, uri=True, isolation_level=None)
    conn.row_factory = sqlite3.Row
    # A reader computes the terms of records the search index has yet to take
    # (`queries.search.PENDING_TERMS`): the stemming runs on the reader's thread.
    await _register_search_async(conn)
    for statement in _pragmas(busy_timeout_ms=busy_timeout_ms, writer=False):
        # journal_mode is a property of the file (set by the writer); on a
        # read-only connection the statement reports it and changes nothing.
        await conn.execute(statement)
    return conn


def open_snapshot(path: Path) -> sqlite3.Connection:
    """A read-only connection to a database nobody writes (a backup's copy, a folder
    to verify), for the maintenance reads (`transcriber.db.reads.maintenance`)."""
    conn = sqlite3.connect(reader_uri(path), uri=True)
    conn.row_factory = sqlite3.Row
    _register_search(conn)
    return conn


def use_rollback_journal(conn: sqlite3.Connection) -> None:
    """Back to a rollback journal: one self-contained file, no `-wal` beside a copy."""
    conn.execute(q.maintenance.PRAGMA_JOURNAL_DELETE)
