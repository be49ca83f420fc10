"""An SQLite archive's rows copied into PostgreSQL (`transcriber move-to`), and checked.

The source is read in one read transaction of a read-only connection (a snapshot:
the copy is of one moment), table by table in `queries.moving.TABLES` order,
parents before children. Rows go in batches, each batch one transaction of
`INSERT … ON CONFLICT DO NOTHING`: a row whose key is already there is skipped,
so a copy interrupted anywhere is run again whole and ends where an uninterrupted
one would, without a duplicate. Inserting a record fires PostgreSQL's trigger that
gives it a stale `record_search` row; `refresh_search` then computes the terms of
the stale rows a batch at a time, with the writer's own normalization
(`postgres.search.terms_literal`), and `search_differences` compares every
record's stored terms with those its copied columns give.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

from transcriber.core.errors import TranscriberError
from transcriber.db import queries as q
from transcriber.db.connection import open_snapshot
from transcriber.db.postgres import queries as pq
from transcriber.db.postgres.connection import PgConnection
from transcriber.db.postgres.search import terms_literal
from transcriber.db.reads.maintenance import ArchiveTotals, FileEntry, files

TABLES = q.moving.TABLES  # what is copied, in this order
BATCH_ROWS = 500  # rows of one INSERT batch (a transcript may be a few hundred KiB)
SEARCH_BATCH = 200  # records whose terms are computed in one transaction
# Called after each batch stored: (table, rows of the batch).
OnBatch = Callable[[str, int], None]


class MoveError(TranscriberError):
    """The archive cannot be copied as it is (the message says why; no text of a row)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchDifference:
    record_id: str
    problem: str  # missing | stale | differs

    @classmethod
    def from_row(cls, row: Any) -> SearchDifference:
        return cls(record_id=row["record_id"], problem=row["problem"])


# -- the source: an SQLite snapshot ------------------------------------------------------


def open_source(db_path: Path) -> sqlite3.Connection:
    """A read-only connection inside one read transaction (closed by the caller)."""
    if not db_path.is_file():
        raise MoveError(f"no database at {db_path}")
    conn = open_snapshot(db_path)
    try:
        conn.execute(q.moving.BEGIN_READ)
        unknown = unknown_tables(conn)
    except BaseException:
        conn.close()
        raise
    if unknown:
        conn.close()
        raise MoveError(f"tables this version does not know how to copy: {', '.join(unknown)}")
    return conn


def unknown_tables(conn: sqlite3.Connection) -> list[str]:
    """Plain tables of the source that are neither copied nor deliberately left out
    (a newer archive than this version): the copy would lose their rows."""
    known = set(TABLES) | set(q.moving.LEFT_OUT)
    return sorted(str(row["name"]) for row in conn.execute(q.moving.PRAGMA_TABLE_LIST)
                  if row["type"] == "table" and not str(row["name"]).startswith("sqlite_")
                  and row["name"] not in known)


def source_count(conn: sqlite3.Connection, table: str) -> int:
    return int(conn.execute(q.moving.table_count(table)).fetchone()["n"])


def source_files(conn: sqlite3.Connection) -> list[FileEntry]:
    return files(conn)


def _batches(conn: sqlite3.Connection, table: str, size: int
             ) -> Iterator[tuple[tuple[str, ...], list[tuple[Any, ...]]]]:
    cursor = conn.execute(q.moving.table_rows(table))
    columns = tuple(str(d[0]) for d in cursor.description)
    while rows := cursor.fetchmany(size):
        yield columns, [tuple(row) for row in rows]


# -- the target: PostgreSQL -------------------------------------------------------------


async def _target_columns(pg: PgConnection, table: str) -> set[str]:
    rows = await (await pg.execute(pq.MOVE_TABLE_COLUMNS, {"table": table})).fetchall()
    return {str(row["name"]) for row in rows}


async def copy_table(pg: PgConnection, source: sqlite3.Connection, table: str, *,
                     batch_rows: int = BATCH_ROWS, on_batch: OnBatch | None = None) -> int:
    """Every row of `table` into PostgreSQL (rows already there skipped); rows read."""
    target_columns = await _target_columns(pg, table)
    read = 0
    statement: str | None = None
    for columns, rows in _batches(source, table, batch_rows):
        if statement is None:
            missing = sorted(set(columns) - target_columns)
            if missing:
                raise MoveError(f"{table}: PostgreSQL has no column {', '.join(missing)}; "
                                "migrate both to the same version")
            statement = pq.move_insert_rows(table, columns)
        try:
            async with pg.raw.transaction():
                await pg.raw.executemany(statement, rows)
        except (asyncpg.IntegrityConstraintViolationError, asyncpg.DataError) as exc:
            # The constraint's name says which rule; the row's values stay out of it.
            rule = getattr(exc, "constraint_name", None)
            raise MoveError(f"{table}: a row was refused ({type(exc).__name__}"
                            f"{f' on {rule}' if rule else ''})") from exc
        read += len(rows)
        if on_batch is not None:
            on_batch(table, len(rows))
    return read


async def target_count(pg: PgConnection, table: str) -> int:
    cursor = await pg.execute(q.moving.table_count(table))
    return int((await cursor.fetchall())[0]["n"])


def _literal(row: Any) -> str:
    return terms_literal(
        row["owner_id"], title=row["title"], brief=row["brief"],
        original_filename=row["original_filename"], transcript=row["transcript"] or "",
        speaker_names=row["speaker_names"], topic_names=row["topic_names"])


async def refresh_search(pg: PgConnection, *, batch: int = SEARCH_BATCH) -> int:
    """Compute the terms of every stale search row, a batch per transaction (what
    `search.refresh_stale` does before a writer's COMMIT, bounded); the number done."""
    done = 0
    while True:
        async with pg.raw.transaction():
            rows = await (await pg.execute(pq.MOVE_STALE_SEARCH_BATCH,
                                           {"limit": batch})).fetchall()
            for row in rows:
                await pg.execute(pq.WRITE_SEARCH_TERMS,
                                 {"record_id": row["id"], "terms": _literal(row)})
        done += len(rows)
        if len(rows) < batch:
            return done


async def stale_search_rows(pg: PgConnection) -> int:
    cursor = await pg.execute(pq.MOVE_STALE_SEARCH_COUNT)
    return int((await cursor.fetchall())[0]["n"])


async def search_differences(pg: PgConnection, *, page: int = SEARCH_BATCH
                             ) -> tuple[int, list[SearchDifference]]:
    """Every record's search row compared with the terms its columns give: (records
    compared, the records whose row is missing, stale or different)."""
    compared = 0
    found: list[SearchDifference] = []
    after = ""
    while True:
        rows = await (await pg.execute(pq.MOVE_INDEXED_PAGE,
                                       {"after_id": after, "limit": page})).fetchall()
        if not rows:
            return compared, found
        differing = await (await pg.execute(pq.MOVE_SEARCH_DIFFERENCES, {
            "ids": [row["id"] for row in rows],
            "literals": [_literal(row) for row in rows]})).fetchall()
        found += [SearchDifference.from_row(row) for row in differing]
        compared += len(rows)
        after = rows[-1]["id"]


async def archive_counts(pg: PgConnection) -> ArchiveTotals:
    """The archive's totals on PostgreSQL, as verify and the backup manifest count them."""
    rows = await (await pg.execute(q.maintenance.COUNTS)).fetchall()
    return ArchiveTotals.from_row(rows[0])


async def file_entries(pg: PgConnection) -> list[FileEntry]:
    """Every file the PostgreSQL archive names."""
    return [FileEntry.from_row(row)
            for row in await (await pg.execute(q.maintenance.SNAPSHOT_FILES)).fetchall()]
