"""Online backup and restore of a data folder.

A backup is a folder: `transcriber.sqlite3` (a snapshot taken through
SQLite's online backup API while the service keeps writing), the record files
that snapshot names (hard links when the destination is on the same file
system — placed files never change, so a link is a copy — copies otherwise),
and `manifest.json`. It is assembled under a temporary name beside the
destination and renamed when complete, so a folder named DEST is always a
whole backup. Files placed after the snapshot are not copied (their rows are
not in it); a file the snapshot names but that is missing is listed in the
manifest and makes the backup fail, never silently skipped. Caches (the
Whisper model) are not archive data and are never copied.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import orjson

from transcriber.clock import Clock, SystemClock, stamp
from transcriber.db import queries as q
from transcriber.db.connection import DB_FILE_NAME, database_path, reader_uri
from transcriber.errors import TranscriberError
from transcriber.files import RECORDS_DIR, sha256_of
from transcriber.service.storage import INSTANCE_LOCK

MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = 1
_CHUNK = 4 * 1024 * 1024

Progress = Callable[[int], None]


class BackupError(TranscriberError):
    """A backup or restore cannot be made (the message says why)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Manifest:
    format: int = MANIFEST_FORMAT
    created_at: str
    database: str = DB_FILE_NAME
    database_bytes: int
    database_sha256: str
    records: int
    users: int
    transcripts: int
    files: int
    file_bytes: int
    linked: int
    copied: int
    missing: list[str] = field(default_factory=list)

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotFile:
    record_id: str
    file_name: str
    size_bytes: int

    @property
    def relative(self) -> Path:
        return Path(RECORDS_DIR) / self.record_id / self.file_name



def snapshot_database(source: Path, target: Path, *, busy_timeout_ms: int) -> None:
    """Copy a live database through the online backup API, in one step: the
    copy is the database as of one read transaction; the writer goes on
    writing to the WAL meanwhile."""
    src = sqlite3.connect(reader_uri(source), uri=True, timeout=busy_timeout_ms / 1000)
    try:
        dst = sqlite3.connect(target, isolation_level=None)
        try:
            src.backup(dst)
            # One self-contained file: no -wal beside the copy.
            dst.execute(q.maintenance.PRAGMA_JOURNAL_DELETE)
        finally:
            dst.close()
    finally:
        src.close()
    _fsync(target)


def read_snapshot(db: Path) -> tuple[list[SnapshotFile], dict[str, int]]:
    conn = sqlite3.connect(reader_uri(db), uri=True)
    conn.row_factory = sqlite3.Row
    try:
        files = [SnapshotFile(record_id=row["record_id"], file_name=row["file_name"],
                              size_bytes=row["size_bytes"])
                 for row in conn.execute(q.maintenance.SNAPSHOT_FILES)]
        counts = dict(conn.execute(q.maintenance.COUNTS).fetchone())
    finally:
        conn.close()
    return files, counts


def link_or_copy(source: Path, target: Path) -> bool:
    """Hard-link `source` at `target` (True), or copy it when they are on
    different file systems or links are not allowed (False)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
    else:
        return True
    shutil.copyfile(source, target)
    _fsync(target)
    return False


def _check_destination(dest: Path) -> None:
    if dest.exists():
        raise BackupError(f"{dest} already exists; a backup goes to a new folder")
    if not dest.parent.is_dir():
        raise BackupError(f"{dest.parent} is not a folder")


def backup(data_dir: Path, dest: Path, *, busy_timeout_ms: int = 5000,
           clock: Clock | None = None,
           progress: Callable[[int], Progress] | None = None) -> Manifest:
    """Back `data_dir` up into the new folder `dest`; the manifest says what
    was copied. `progress(total)` gives a callback told each file done."""
    source_db = database_path(data_dir)
    if not source_db.is_file():
        raise BackupError(f"{data_dir} holds no database")
    _check_destination(dest)
    temp = dest.with_name(f".{dest.name}.part-{os.getpid()}")
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir()
    try:
        snapshot_database(source_db, temp / DB_FILE_NAME, busy_timeout_ms=busy_timeout_ms)
        files, counts = read_snapshot(temp / DB_FILE_NAME)
        step = progress(len(files)) if progress else None
        linked = copied = 0
        missing: list[str] = []
        for item in files:
            try:
                if link_or_copy(data_dir / item.relative, temp / item.relative):
                    linked += 1
                else:
                    copied += 1
            except FileNotFoundError:
                missing.append(str(item.relative))
            if step:
                step(1)
        manifest = Manifest(
            created_at=stamp(clock or SystemClock()),
            database_bytes=(temp / DB_FILE_NAME).stat().st_size,
            database_sha256=sha256_of(temp / DB_FILE_NAME),
            records=counts["records"], users=counts["users"],
            transcripts=counts["transcripts"], files=counts["files"],
            file_bytes=counts["file_bytes"], linked=linked, copied=copied, missing=missing)
        _write_durably(temp / MANIFEST_NAME, manifest.to_json())
        if missing:
            raise MissingFiles(manifest)
        _check_destination(dest)
        temp.rename(dest)
        _fsync_dir(dest.parent)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return manifest


class MissingFiles(BackupError):
    """Files the snapshot names are not in the data folder: no backup is kept."""

    def __init__(self, manifest: Manifest) -> None:
        super().__init__(f"{len(manifest.missing)} files named by the database are missing")
        self.manifest = manifest


def read_manifest(src: Path) -> Manifest:
    try:
        data = orjson.loads((src / MANIFEST_NAME).read_bytes())
        return Manifest(**data)
    except (OSError, orjson.JSONDecodeError, TypeError) as exc:
        raise BackupError(f"{src} is not a backup (no readable {MANIFEST_NAME})") from exc


def folder_in_use(data_dir: Path) -> bool:
    """True while a process holds the folder's instance lock (serve, transcribe)."""
    lock = data_dir / INSTANCE_LOCK
    if not lock.exists():
        return False
    fd = os.open(lock, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def restore(src: Path, data_dir: Path, *,
            progress: Callable[[int], Progress] | None = None) -> Manifest:
    """Restore the backup `src` into `data_dir`, which must be empty and unused.
    The database is placed last (under a temporary name, then renamed), so a
    folder with a database is a whole restore."""
    manifest = read_manifest(src)
    if folder_in_use(data_dir):
        raise BackupError(f"{data_dir} is in use by a running transcriber")
    if data_dir.exists() and any(data_dir.iterdir()):
        raise BackupError(f"{data_dir} is not empty; restore goes into an empty folder")
    if sha256_of(src / manifest.database) != manifest.database_sha256:
        raise BackupError("the backup's database does not match its manifest's SHA-256")
    files, _ = read_snapshot(src / manifest.database)
    data_dir.mkdir(parents=True, exist_ok=True)
    step = progress(len(files)) if progress else None
    try:
        for item in files:
            try:
                link_or_copy(src / item.relative, data_dir / item.relative)
            except FileNotFoundError:
                raise BackupError(f"the backup lacks a file its database names: "
                                  f"{item.relative}") from None
            if step:
                step(1)
        temp_db = data_dir / f".{DB_FILE_NAME}.part"
        shutil.copyfile(src / manifest.database, temp_db)
        _fsync(temp_db)
        temp_db.rename(database_path(data_dir))
        _fsync_dir(data_dir)
    except BaseException:
        with contextlib.suppress(OSError):
            for child in data_dir.iterdir():
                if child.is_dir():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        raise
    return manifest


def _write_durably(path: Path, body: bytes) -> None:
    path.write_bytes(body)
    _fsync(path)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    _fsync(path)
