"""A small archive made through the named queries, files on disk included."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import structlog

from transcriber.db import queries as q
from transcriber.db.connection import database_path, open_sync
from transcriber.db.migrate import migrate
from transcriber.providers.local_files import RECORDS_DIR

NOW = "2026-01-01T00:00:00Z"


def make_archive(data_dir: Path, records: int = 5) -> dict[str, bytes]:
    """`records` records with one file and a transcript each; {relative path: bytes}."""
    migrate(data_dir)
    stored: dict[str, bytes] = {}
    with contextlib.closing(open_sync(database_path(data_dir), busy_timeout_ms=1000)) as conn:
        conn.execute(q.control.BEGIN_IMMEDIATE)
        conn.execute(q.users.INSERT, {"id": "u1", "login": "anna", "name": "", "email": "",
                                      "now": NOW})
        for n in range(records):
            rid, fid = f"r{n:04d}", f"f{n:04d}"
            body = bytes([n % 256]) * (1000 + n)
            path = data_dir / RECORDS_DIR / rid / f"{fid}.mp3"
            path.parent.mkdir(parents=True)
            path.write_bytes(body)
            stored[f"{RECORDS_DIR}/{rid}/{fid}.mp3"] = body
            conn.execute(q.files.INSERT, {"id": fid, "owner_id": "u1", "record_id": rid,
                                          "file_name": f"{fid}.mp3", "size_bytes": len(body),
                                          "format": "mp3", "duration_ms": 1, "now": NOW})
            conn.execute(q.records.INSERT_RECORD, {
                "id": rid, "owner_id": "u1", "title": f"call {n}", "original_filename": "a.mp3",
                "duration_ms": 1, "size_bytes": len(body), "source": "http", "tg_chat_id": None,
                "tg_message_id": None, "state": "done", "original_file_id": fid, "now": NOW})
            conn.execute(q.results.UPSERT_TEXT, {
                "id": f"t{n}", "record_id": rid, "kind": "transcript",
                "contents": f"budget meeting number {n}", "now": NOW}).fetchall()
        conn.execute(q.control.COMMIT)
    return stored


def raw(db: Path, sql: str) -> list[sqlite3.Row]:
    """A plain read (no search function: it never writes)."""
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as conn:
        conn.row_factory = sqlite3.Row
        return list(conn.execute(sql))


def tamper(db: Path, *statements: str) -> None:
    """Change the database behind the service's back (no search function, no triggers
    unless the statements leave them)."""
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as conn:
        for statement in statements:
            conn.execute(statement)


@contextlib.contextmanager
def kept_logging() -> Iterator[None]:
    """`cli.main` configures structlog and the root logger (level WARNING for the
    maintenance commands); later tests read info events: put the old set-up back."""
    saved = structlog.get_config()
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        yield
    finally:
        structlog.configure(**saved)
        root.setLevel(level)
        root.handlers[:] = handlers
