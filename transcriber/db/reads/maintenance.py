"""Backup, restore and verify: whole-archive reads of a snapshot or a copy.

Synchronous, on a plain `sqlite3.Connection` (with `sqlite3.Row` rows) the
caller opened on a database nobody writes; see `queries.maintenance`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from transcriber.db import queries as q


@dataclass(frozen=True, slots=True, kw_only=True)
class FileEntry:
    """A `files` row: where a stored file lies and how big its row says it is."""

    record_id: str
    file_name: str
    size_bytes: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> FileEntry:
        return cls(record_id=row["record_id"], file_name=row["file_name"],
                   size_bytes=row["size_bytes"])


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchiveTotals:
    records: int
    files: int
    file_bytes: int
    transcripts: int
    users: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> ArchiveTotals:
        # int(): PostgreSQL's sum of bigints is a numeric (a Decimal in Python).
        return cls(records=row["records"], files=row["files"],
                   file_bytes=int(row["file_bytes"]), transcripts=row["transcripts"],
                   users=row["users"])

    def as_dict(self) -> dict[str, int]:
        return {"records": self.records, "files": self.files, "file_bytes": self.file_bytes,
                "transcripts": self.transcripts, "users": self.users}


@dataclass(frozen=True, slots=True, kw_only=True)
class ForeignKeyProblem:
    """A row whose reference finds nothing (`PRAGMA foreign_key_check`)."""

    table: str
    rowid: int | None
    parent: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> ForeignKeyProblem:
        return cls(table=row["table"], rowid=row["rowid"], parent=row["parent"])


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchProblems:
    """Record ids whose search index is not what the records say."""

    without_key: list[str]
    """Records without a search key."""
    key_without_record: list[str]
    """Search keys of records that do not exist."""
    differing: list[str | None]
    """Records whose indexed terms differ (None: terms under no key at all)."""
    pending: int
    """Records still waiting for their first indexing under the word forms (migration
    0012; the service indexes them in batches): not a problem, not compared."""


def integrity(conn: sqlite3.Connection) -> list[str]:
    """SQLite's own `integrity_check`: `["ok"]` when all is well."""
    return [str(row[0]) for row in conn.execute(q.maintenance.PRAGMA_INTEGRITY_CHECK)]


def foreign_key_problems(conn: sqlite3.Connection) -> list[ForeignKeyProblem]:
    return [ForeignKeyProblem.from_row(row)
            for row in conn.execute(q.maintenance.PRAGMA_FOREIGN_KEY_CHECK)]


def counts(conn: sqlite3.Connection) -> ArchiveTotals:
    return ArchiveTotals.from_row(conn.execute(q.maintenance.COUNTS).fetchone())


def files(conn: sqlite3.Connection) -> list[FileEntry]:
    """Every file the database names, in folder order."""
    return [FileEntry.from_row(row) for row in conn.execute(q.maintenance.SNAPSHOT_FILES)]


def search_problems(conn: sqlite3.Connection) -> SearchProblems:
    """Rebuilds the index the records give into a temporary table and compares it
    term by term with the real one (temporary tables only: nothing is written)."""
    without_key = [str(row["record_id"])
                   for row in conn.execute(q.maintenance.RECORDS_WITHOUT_SEARCH_KEY)]
    key_without_record = [str(row["record_id"])
                          for row in conn.execute(q.maintenance.SEARCH_KEYS_WITHOUT_RECORD)]
    conn.execute(q.maintenance.CREATE_EXPECTED_INDEX)
    conn.execute(q.maintenance.FILL_EXPECTED_INDEX)
    for statement in q.maintenance.CREATE_VOCABULARIES:
        conn.execute(statement)
    differing = [None if row["record_id"] is None else str(row["record_id"])
                 for row in conn.execute(q.maintenance.SEARCH_DIFFERENCES)]
    pending = int(conn.execute(q.search.PENDING_COUNT).fetchone()["pending"])
    return SearchProblems(without_key=without_key, key_without_record=key_without_record,
                          differing=differing, pending=pending)

