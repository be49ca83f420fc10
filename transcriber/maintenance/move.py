"""`transcriber move-to`: an SQLite archive (rows, and with `--files s3` its files)
copied into PostgreSQL and the bucket, then checked.

The archive must be at rest: the move holds the data folder's instance lock
exclusively for its whole run (refused while `serve` or another command uses
the folder), so no row or file changes under it. Order: PostgreSQL migrated;
every table's rows (`db.move`); the search index of the copied records; the
files; then the check, which reads both sides again: rows per table on each
engine, each file's object of the same size and SHA-256, each record's search
row fresh and holding the terms its columns give. Everything is keyed, so a
move interrupted anywhere is run again and ends where an uninterrupted one
would. The SQLite archive is left as it was: nothing is deleted; the service
moves over when its settings name the database (and `storage.files = s3`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import asyncpg
import structlog

from transcriber.core.clock import Clock, SystemClock
from transcriber.core.errors import TransientFailure
from transcriber.db import move as rows
from transcriber.db.connection import database_path
from transcriber.db.engine import database_url
from transcriber.db.postgres.connection import PgConnection, connect
from transcriber.db.postgres.migrate import migrate_postgres
from transcriber.db.reads.maintenance import FileEntry
from transcriber.maintenance import move_files
from transcriber.maintenance.bucket import open_bucket_files
from transcriber.providers.local_files import take_instance_lock
from transcriber.settings import Settings

log = structlog.get_logger(__name__)

MoveError = rows.MoveError
FilesAt = Literal["local", "s3"]
LIST_MAX = 50  # problems of one kind shown; the count is always whole


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveReport:
    files_at: FilesAt
    tables: dict[str, dict[str, int]]
    """Rows of each table: {"sqlite": n, "postgresql": m}."""
    files: dict[str, int]
    search: dict[str, int]
    problems: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(self.problems.values())

    def as_dict(self) -> dict[str, object]:
        return {"ok": self.ok, "files_at": self.files_at, "tables": self.tables,
                "files": self.files, "search": self.search, "problems": self.problems}


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveHooks:
    """Progress of a run: each batch of rows stored, each file done."""

    on_batch: rows.OnBatch | None = None
    on_file: move_files.OnFile | None = None
    files_total: Callable[[int], None] | None = None


def plan_files(settings: Settings, *, to_bucket: bool) -> tuple[FilesAt, bool]:
    """Pure: where the files are after the move, and whether this move copies them.
    Refuses `--files s3` without a bucket in the settings."""
    if to_bucket and not settings.s3.bucket:
        raise MoveError("--files s3 needs the bucket's settings (s3.bucket and its keys)")
    if settings.storage.files == "s3":
        return "s3", False  # the bucket holds them already
    return ("s3", True) if to_bucket else ("local", False)


@contextlib.contextmanager
def _archive_at_rest(data_dir: Path) -> Iterator[None]:
    if not database_path(data_dir).is_file():
        raise MoveError(f"{data_dir} holds no database")
    fd, alone = take_instance_lock(data_dir)
    try:
        if not alone:
            raise MoveError("another process uses the data folder; stop the service first")
        yield
    finally:
        os.close(fd)


async def move_to(settings: Settings, url: str, *, to_bucket: bool,
                  hooks: MoveHooks | None = None, clock: Clock | None = None) -> MoveReport:
    """Copy the archive of `settings` (SQLite in `storage.data_dir`) into the PostgreSQL
    database `url` (and the bucket with `to_bucket`), then check the copy."""
    if database_url(settings.storage) is not None:
        raise MoveError("storage.database_url is set: the archive is on PostgreSQL already")
    files_at, copy_files = plan_files(settings, to_bucket=to_bucket)
    hooks = hooks or MoveHooks()
    data_dir = settings.storage.data_dir
    with _archive_at_rest(data_dir):
        try:
            await migrate_postgres(url, clock=clock or SystemClock())
            with contextlib.closing(rows.open_source(database_path(data_dir))) as source:
                pg = PgConnection(await connect(url))
                try:
                    return await _move(settings, source, pg, files_at=files_at,
                                       copy_files=copy_files, hooks=hooks)
                finally:
                    await pg.raw.close()
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TransientFailure
                ) as exc:
            # What is stored stays; a run again goes on from there.
            log.warning("move_interrupted", error=type(exc).__name__)
            raise MoveError(f"{type(exc).__name__}; run it again to go on") from exc


async def _move(settings: Settings, source: sqlite3.Connection, pg: PgConnection, *,
                files_at: FilesAt, copy_files: bool, hooks: MoveHooks) -> MoveReport:
    log.info("move_started", tables=len(rows.TABLES), files_at=files_at, copy_files=copy_files)
    for table in rows.TABLES:
        copied = await rows.copy_table(pg, source, table, on_batch=hooks.on_batch)
        log.info("move_table_copied", table=table, rows=copied)
    refreshed = await rows.refresh_search(pg)
    log.info("move_search_refreshed", records=refreshed)
    entries = rows.source_files(source)
    files = await _files(settings, entries, files_at=files_at, copy_files=copy_files,
                         hooks=hooks)
    tables = {table: {"sqlite": rows.source_count(source, table),
                      "postgresql": await rows.target_count(pg, table)} for table in rows.TABLES}
    compared, differences = await rows.search_differences(pg)
    stale = await rows.stale_search_rows(pg)
    problems = files.problems | {
        "row_counts": [f"{table}: {n['sqlite']} rows in SQLite, {n['postgresql']} in "
                       "PostgreSQL" for table, n in tables.items()
                       if n["sqlite"] != n["postgresql"]],
        "search": [f"record {d.record_id}: search row {d.problem}" for d in differences],
        "stale_search": [f"{stale} search rows not refreshed"] if stale else [],
    }
    report = MoveReport(
        files_at=files_at, tables=tables,
        files={"files": len(entries), "bytes": sum(e.size_bytes for e in entries),
               "copied": files.copied, "in_place": files.in_place,
               "bytes_copied": files.bytes_copied},
        search={"records": compared, "refreshed": refreshed},
        problems={kind: items for kind, items in problems.items() if items})
    log.info("move_checked", ok=report.ok,
             problems={kind: len(items) for kind, items in report.problems.items()})
    return report


async def _files(settings: Settings, entries: list[FileEntry], *, files_at: FilesAt,
                 copy_files: bool, hooks: MoveHooks) -> move_files.FileCopy:
    data_dir = settings.storage.data_dir
    if files_at == "local":
        return move_files.check_local(entries, data_dir)
    async with open_bucket_files(settings) as bucket:
        if not copy_files:
            return move_files.check_objects(entries, await bucket.stored())
        if hooks.files_total is not None:
            hooks.files_total(len(entries))
        copy = await move_files.copy_to_bucket(entries, data_dir, bucket, on_file=hooks.on_file)
        log.info("move_files_copied", copied=copy.copied, in_place=copy.in_place)
        checked = await move_files.check_bucket_copy(entries, data_dir, bucket)
    checked.copied, checked.in_place = copy.copied, copy.in_place
    checked.bytes_copied = copy.bytes_copied
    # The check reads every file again, so what the copy could not read it finds too:
    # its problems are the report's, the copy's counts beside them.
    return checked
