"""The migration runner: plain SQL files in `migrations/`, applied in version order.

Each file and its bookkeeping row go in one transaction, under an exclusive
`flock` on `<data_dir>/migrate.lock` (the kernel drops it when a process dies,
so there is never a stale lock to clean). Two files with one version, or an
applied file whose content changed, abort the start.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.resources
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path

import structlog

from transcriber.core.clock import Clock, SystemClock, stamp
from transcriber.core.errors import MigrationError
from transcriber.db import queries as q
from transcriber.db.connection import database_path, open_sync

log = structlog.get_logger(__name__)

_NAME_RE = re.compile(r"^(\d+)_([a-z0-9_]+)\.sql$")
LOCK_FILE_NAME = "migrate.lock"


MIGRATIONS_PACKAGE = "transcriber.migrations"
MIGRATIONS_FOLDER = "migrations"


def default_migrations_dir() -> Traversable:
    """The migration files of this copy of the package: in a checkout the
    top-level `migrations/` folder beside it; installed from the wheel, the
    data package `transcriber.migrations` it ships as (importlib.resources)."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / MIGRATIONS_FOLDER).is_dir():
        return root / MIGRATIONS_FOLDER
    return importlib.resources.files(MIGRATIONS_PACKAGE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def discover(directory: Traversable) -> list[Migration]:
    if not directory.is_dir():
        raise MigrationError(f"migrations folder {directory} does not exist")
    found: dict[int, Migration] = {}
    for path in directory.iterdir():
        match = _NAME_RE.match(path.name)
        if match is None:
            continue
        version = int(match.group(1))
        if version in found:
            raise MigrationError(f"two migration files have version {version}")
        found[version] = Migration(
            version=version, name=match.group(2), sql=path.read_text(encoding="utf-8")
        )
    return [found[v] for v in sorted(found)]


@contextlib.contextmanager
def _exclusive_lock(data_dir: Path) -> Iterator[None]:
    with (data_dir / LOCK_FILE_NAME).open("a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def migrate(
    data_dir: Path,
    *,
    migrations_dir: Traversable | None = None,
    busy_timeout_ms: int = 5000,
    clock: Clock | None = None,
    database: Path | None = None,
) -> list[int]:
    """Apply pending migrations; returns the versions applied by this call.

    `database`: another file than the folder's own (a restore migrates its copy
    under a temporary name before the folder gets it); the lock is the folder's."""
    clock = clock or SystemClock()
    migrations = discover(migrations_dir or default_migrations_dir())
    data_dir.mkdir(parents=True, exist_ok=True)
    applied_now: list[int] = []
    with _exclusive_lock(data_dir):
        conn = open_sync(database or database_path(data_dir), busy_timeout_ms=busy_timeout_ms)
        try:
            conn.execute(q.migrations.CREATE_TABLE)
            applied = {
                row["version"]: row["checksum"]
                for row in conn.execute(q.migrations.SELECT_APPLIED).fetchall()
            }
            for migration in migrations:
                if migration.version in applied:
                    if applied[migration.version] != migration.checksum:
                        raise MigrationError(
                            f"applied migration {migration.version} was edited; "
                            "add a new migration instead"
                        )
                    continue
                _apply(conn, migration, stamp(clock))
                applied_now.append(migration.version)
                log.info("migration_applied", version=migration.version, name=migration.name)
        finally:
            conn.close()
    return applied_now


def _apply(conn: sqlite3.Connection, migration: Migration, now: str) -> None:
    # executescript would COMMIT on its own; run statement by statement instead
    # so the file and its bookkeeping row share one transaction.
    conn.execute(q.control.BEGIN_IMMEDIATE)
    try:
        for statement in _split_statements(migration.sql):
            conn.execute(statement)
        conn.execute(
            q.migrations.INSERT_APPLIED,
            {"version": migration.version, "name": migration.name,
             "checksum": migration.checksum, "applied_at": now},
        )
        conn.execute(q.control.COMMIT)
    except sqlite3.Error as exc:
        conn.execute(q.control.ROLLBACK)
        raise MigrationError(f"migration {migration.version} failed: {exc}") from exc


def _split_statements(sql: str) -> Iterator[str]:
    buffer = ""
    for line in sql.splitlines(keepends=True):
        if not buffer and line.strip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statement = buffer.strip()
            if statement:
                yield statement
            buffer = ""
    if buffer.strip():
        raise MigrationError("migration ends with an incomplete statement")
