"""Online backup of a data folder (restore: `maintenance.restore`).

A backup is a folder: `transcriber.sqlite3` (a snapshot taken through
SQLite's online backup API while the service keeps writing), the record files
that snapshot names (hard links when the destination is on the same file
system — placed files never change, so a link is a copy — copies otherwise),
and `manifest.json`. It is assembled under a temporary name beside the
destination and renamed when complete, so a folder named DEST is always a
whole backup. Files placed after the snapshot are not copied (their rows are
not in it); a file the snapshot names but that is missing is listed in the
manifest and makes the backup fail, never silently skipped. Caches (the
Whisper model) are not archive data and are never copied. With `storage.files
= s3` the files are fetched from the bucket (`fetch`) into the same layout, so
a backup is the same folder whichever store it came from.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import orjson

from transcriber.core.clock import Clock, SystemClock, stamp
from transcriber.core.errors import TranscriberError, UnsafePath
from transcriber.core.hashing import sha256_of
from transcriber.core.paths import open_inside, plain_name
from transcriber.db.connection import (
    DB_FILE_NAME,
    database_path,
    open_snapshot,
    reader_uri,
    use_rollback_journal,
)
from transcriber.db.reads import maintenance
from transcriber.providers.local_files import RECORDS_DIR

MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = 1
COPY_CHUNK_BYTES = 4 * 1024 * 1024

BackupProgress = Callable[[int], None]
# Writes a record file from elsewhere (a bucket) to a new local file; FileNotFoundError
# when it is missing.
Fetch = Callable[[str, str, Path], None]


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
    def names(self) -> tuple[str, ...]:
        return (RECORDS_DIR, self.record_id, self.file_name)

    @property
    def relative(self) -> str:
        """For messages: as the row names it (a hostile row's `/` and `..` included)."""
        return "/".join(self.names)



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
            use_rollback_journal(dst)
        finally:
            dst.close()
    finally:
        src.close()
    _fsync(target)


def read_snapshot(db: Path) -> tuple[list[SnapshotFile], dict[str, int]]:
    conn = open_snapshot(db)
    try:
        files = [SnapshotFile(record_id=entry.record_id, file_name=entry.file_name,
                              size_bytes=entry.size_bytes)
                 for entry in maintenance.files(conn)]
        counts = maintenance.counts(conn).as_dict()
    finally:
        conn.close()
    return files, counts


def place_inside(source_root: Path, names: tuple[str, ...], target_root: Path) -> bool:
    """Place the regular file `source_root/names…` at `target_root/names…`: a hard link
    (True), or a copy when they are on different file systems or links are not
    allowed (False). The source is reached by `open_inside` (no `..`, no
    symlink, regular files only: `UnsafePath`); a link is kept only if it is
    the very file that was opened. The target folder is this process's own."""
    fd = open_inside(source_root, names)
    try:
        opened = os.fstat(fd)
        target = target_root.joinpath(*names)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source_root.joinpath(*names), target, follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                raise
        else:
            linked = os.stat(target, follow_symlinks=False)
            if (linked.st_dev, linked.st_ino) == (opened.st_dev, opened.st_ino):
                return True
            target.unlink()
            raise UnsafePath("the file was replaced while it was linked")
        _copy_fd(fd, target)
        return False
    finally:
        os.close(fd)


def fetch_inside(fetch: Fetch, item: SnapshotFile, target_root: Path) -> None:
    """Fetch one record file to `target_root/records/…`; its names must be plain (a
    row is data: `UnsafePath` otherwise)."""
    if not all(plain_name(name) for name in item.names):
        raise UnsafePath("a path component is not a plain name")
    target = target_root.joinpath(*item.names)
    target.parent.mkdir(parents=True, exist_ok=True)
    fetch(item.record_id, item.file_name, target)


def _copy_fd(fd: int, target: Path) -> None:
    """Copy an open file into a new regular file (never through a name that exists)."""
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                  0o644)
    try:
        while chunk := os.read(fd, COPY_CHUNK_BYTES):
            os.write(out, chunk)
        os.fsync(out)
    finally:
        os.close(out)


def _check_destination(dest: Path) -> None:
    if dest.exists():
        raise BackupError(f"{dest} already exists; a backup goes to a new folder")
    if not dest.parent.is_dir():
        raise BackupError(f"{dest.parent} is not a folder")


def backup(data_dir: Path, dest: Path, *, busy_timeout_ms: int = 5000,
           clock: Clock | None = None,
           progress: Callable[[int], BackupProgress] | None = None,
           fetch: Fetch | None = None) -> Manifest:
    """Back `data_dir` up into the new folder `dest`; the manifest says what
    was copied. `progress(total)` gives a callback told each file done; `fetch`
    takes the files from a bucket instead of the data folder."""
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
                if fetch is not None:
                    fetch_inside(fetch, item, temp)
                    copied += 1
                elif place_inside(data_dir, item.names, temp):
                    linked += 1
                else:
                    copied += 1
            except FileNotFoundError:
                missing.append(str(item.relative))
            except UnsafePath as exc:
                raise BackupError(f"{item.relative}: {exc}") from None
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
        fsync_dir(dest.parent)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return manifest


class MissingFiles(BackupError):
    """Files the snapshot names are not in the data folder: no backup is kept."""

    def __init__(self, manifest: Manifest) -> None:
        super().__init__(f"{len(manifest.missing)} files named by the database are missing")
        self.manifest = manifest


def _write_durably(path: Path, body: bytes) -> None:
    path.write_bytes(body)
    _fsync(path)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    _fsync(path)
