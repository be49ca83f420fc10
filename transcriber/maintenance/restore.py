"""Restore a backup into an empty data folder, treating the backup as untrusted.

A backup is a folder someone handed over: its manifest, its database and its
`files` rows may all be crafted. So every path taken from it is walked down
from the backup folder by `paths.open_inside` (one plain name per component,
no `..`, no absolute path, no symlink anywhere on the way: refused, never
followed) and every file is placed as a regular file. The database is copied
under a temporary name and checked against the manifest's SHA-256 as copied,
migrated to this version's schema there, and `verify` runs on the result;
only a restore it finds complete and consistent gets the database's real
name. Any refusal or problem empties the folder again: nothing half-trusted
stays behind. With `storage.files = s3` the files go into the bucket
(`BucketSink`), which must hold no record files yet, and are removed from it
again on any refusal.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO, Protocol

import orjson

from transcriber.core.errors import UnsafePath
from transcriber.core.paths import open_file_inside, open_inside, plain_name
from transcriber.db.connection import database_path, use_rollback_journal
from transcriber.db.migrate import migrate
from transcriber.maintenance.backup import (
    COPY_CHUNK_BYTES,
    MANIFEST_NAME,
    BackupError,
    BackupProgress,
    Manifest,
    fsync_dir,
    place_inside,
    read_snapshot,
)
from transcriber.maintenance.verify import Report, verify
from transcriber.providers.local_files import INSTANCE_LOCK

# A manifest is a few hundred bytes; a bigger one is not a manifest.
MANIFEST_MAX_BYTES = 64 * 1024
TEMP_DB_NAME = ".transcriber.sqlite3.part"


class RestoreUnverified(BackupError):
    """The restored folder failed `verify`; it was emptied again."""

    def __init__(self, report: Report) -> None:
        kinds = ", ".join(f"{len(items)} {kind}" for kind, items in report.problems.items())
        super().__init__(f"the restored data failed verify ({kinds}); nothing was kept")
        self.report = report


class BucketSink(Protocol):
    """Where a restore puts the record files with `storage.files = s3` (sync calls;
    the CLI runs them on its event loop)."""

    def stored(self) -> Mapping[tuple[str, str], int]:
        """Every record file in the bucket and its size."""

    def put(self, record_id: str, file_name: str, handle: BinaryIO) -> None: ...

    def remove(self, record_id: str) -> None:
        """Every file of the record."""


def read_manifest(src: Path) -> Manifest:
    try:
        with open_file_inside(src, (MANIFEST_NAME,)) as handle:
            body = handle.read(MANIFEST_MAX_BYTES + 1)
        if len(body) > MANIFEST_MAX_BYTES:
            raise ValueError("too large")
        manifest = Manifest(**orjson.loads(body))
    except (OSError, UnsafePath, ValueError, TypeError) as exc:
        raise BackupError(f"{src} is not a backup (no readable {MANIFEST_NAME})") from exc
    # Read from JSON: the annotation says str, the file may say anything.
    database: object = manifest.database
    if not isinstance(database, str) or not plain_name(database):
        raise BackupError("the manifest names its database outside the backup")
    return manifest


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


def restore(src: Path, data_dir: Path, *, busy_timeout_ms: int = 5000,
            progress: Callable[[int], BackupProgress] | None = None,
            bucket: BucketSink | None = None) -> Manifest:
    """Restore the backup `src` into `data_dir`, which must be empty and unused.

    Raises `BackupError` (a refusal: the folder is left as it was, or emptied
    again) or `RestoreUnverified` (the result failed verify: emptied again).
    """
    manifest = read_manifest(src)
    if folder_in_use(data_dir):
        raise BackupError(f"{data_dir} is in use by a running transcriber")
    if data_dir.exists() and any(data_dir.iterdir()):
        raise BackupError(f"{data_dir} is not empty; restore goes into an empty folder")
    if bucket is not None and bucket.stored():
        raise BackupError("the bucket already holds record files; restore goes into an "
                          "empty store")
    data_dir.mkdir(parents=True, exist_ok=True)
    temp_db = data_dir / TEMP_DB_NAME
    placed: set[tuple[str, str]] = set()
    try:
        _copy_database(src, manifest, temp_db)
        files, _ = read_snapshot(temp_db)
        step = progress(len(files)) if progress else None
        for item in files:
            try:
                if bucket is None:
                    place_inside(src, item.names, data_dir)
                else:
                    _put(bucket, src, item.names, placed)
            except FileNotFoundError:
                raise BackupError(f"the backup lacks a file its database names: "
                                  f"{item.relative}") from None
            except (UnsafePath, FileExistsError) as exc:
                reason = "named twice" if isinstance(exc, FileExistsError) else str(exc)
                raise BackupError(f"the backup's file {item.relative!r} is refused: "
                                  f"{reason}") from None
            if step:
                step(1)
        migrate(data_dir, database=temp_db, busy_timeout_ms=busy_timeout_ms)
        _single_file(temp_db)
        report = verify(temp_db, data_dir,
                        objects=None if bucket is None else bucket.stored())
        if not report.ok:
            raise RestoreUnverified(report)
        temp_db.rename(database_path(data_dir))
        fsync_dir(data_dir)
    except BaseException:
        _empty(data_dir)
        if bucket is not None:
            for record_id in {record_id for record_id, _ in placed}:
                bucket.remove(record_id)
        raise
    return manifest


def _put(bucket: BucketSink, src: Path, names: tuple[str, ...],
         placed: set[tuple[str, str]]) -> None:
    """One backup file into the bucket, read through `open_file_inside` (the same
    refusals as a local restore); a file named twice is refused as it is there."""
    _, record_id, file_name = names
    if (record_id, file_name) in placed:
        raise FileExistsError(file_name)
    with open_file_inside(src, names) as handle:
        placed.add((record_id, file_name))
        bucket.put(record_id, file_name, handle)


def _copy_database(src: Path, manifest: Manifest, target: Path) -> None:
    """Copy the backup's database and check the SHA-256 of what was copied (not of the
    source read a second time: the copy is what is restored)."""
    try:
        fd = open_inside(src, (manifest.database,))
    except FileNotFoundError:
        raise BackupError("the backup has no database") from None
    except UnsafePath as exc:
        raise BackupError(f"the backup's database is refused: {exc}") from None
    digest = hashlib.sha256()
    try:
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            while chunk := os.read(fd, COPY_CHUNK_BYTES):
                digest.update(chunk)
                os.write(out, chunk)
            os.fsync(out)
        finally:
            os.close(out)
    finally:
        os.close(fd)
    if digest.hexdigest() != manifest.database_sha256:
        raise BackupError("the backup's database does not match its manifest's SHA-256")


def _single_file(db: Path) -> None:
    """Back to a rollback journal after the migration: verify reads it without leaving
    `-wal`/`-shm` files under the temporary name (serve switches to WAL again)."""
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as conn:
        use_rollback_journal(conn)


def _empty(data_dir: Path) -> None:
    """Remove everything a failed restore put in the folder (it was empty before).
    Symlinks are removed, never followed (a crafted backup cannot plant one, but
    the clean-up does not rely on that)."""
    with contextlib.suppress(OSError):
        for child in data_dir.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
