"""Record files: `<data_dir>/records/<record id>/<file id><ext>`.

Placement is atomic: content goes to a temporary name in the same folder, is
fsynced, and is renamed only after the whole stream was read without error.
The caller inserts the `files` row afterwards and calls `discard` if that
fails. The sender's file name never becomes a path, nor its extension:
only ids and an extension decided from the content (`retype`) do. File ids
are not derivable from record ids (`new_unguessable_id`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import shutil
from collections.abc import AsyncGenerator, AsyncIterable, Callable
from pathlib import Path
from typing import BinaryIO, Literal

from transcriber.core.errors import IncompleteInput, StorageFull, TooLarge
from transcriber.core.hashing import HASH_CHUNK_BYTES
from transcriber.core.ids import new_unguessable_id
from transcriber.core.paths import open_file_inside, stat_inside
from transcriber.ports.files import PlacedFile, Servable

RECORDS_DIR = "records"
TEMP_SUFFIX = ".part"
INSTANCE_LOCK = "instance.lock"


def take_instance_lock(data_dir: Path) -> tuple[int, bool]:
    """A shared lock held while this process uses the data folder; first tried
    exclusively: `True` when no other process holds the folder (then a
    start-up sweep cannot remove another process's half-written file)."""
    fd = os.open(data_dir / INSTANCE_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        alone = False
    else:
        alone = True
    return fd, alone


def share_instance_lock(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_SH)




# The errors of a disk (or a quota) with no room left.
_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT})

FreeBytes = Callable[[Path], int]
Opener = Callable[[Path], BinaryIO]


def disk_free_bytes(path: Path) -> int:
    return shutil.disk_usage(path).free


def _open_new(path: Path) -> BinaryIO:
    return path.open("wb")


def has_room(*, free: int, size: int | None, margin: int) -> bool:
    """Pure: a write of `size` bytes (unknown: 0) may start with `free` bytes free."""
    return free >= (size or 0) + margin


def is_no_room(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in _NO_ROOM


class LocalRecordFiles:
    """The record-file store of `storage.files = local` (`ports.RecordFiles`).

    `free_bytes` and `opener` are the file layer (tests inject a disk that fills)."""

    kind: Literal["local", "s3"] = "local"

    def __init__(self, data_dir: Path, *, min_free_bytes: int = 0,
                 free_bytes: FreeBytes = disk_free_bytes, opener: Opener = _open_new) -> None:
        self._data_dir = data_dir
        self._root = data_dir / RECORDS_DIR
        self._min_free = min_free_bytes
        self._free_bytes = free_bytes
        self._open = opener

    def free_bytes(self) -> int:
        return self._free_bytes(self._data_dir)

    def check_room(self, size: int | None) -> None:
        """Raise `StorageFull` unless `size` bytes plus `storage.min_free_bytes` are free."""
        if not has_room(free=self.free_bytes(), size=size, margin=self._min_free):
            raise StorageFull("not enough free space for this file")

    def record_dir(self, record_id: str) -> Path:
        return self._root / record_id

    def path_of(self, record_id: str, file_name: str) -> Path:
        return self.record_dir(record_id) / file_name

    def regular_file(self, record_id: str, file_name: str) -> os.stat_result:
        """The stat of a stored file that is a regular file inside its record's folder,
        reached without a symlink (`stat_inside`): what may be served."""
        return stat_inside(self._data_dir, (RECORDS_DIR, record_id, file_name))

    def temp_path(self, record_id: str, ext: str) -> tuple[str, Path]:
        """A fresh file id and a temporary path for it in the record folder."""
        folder = self.record_dir(record_id)
        folder.mkdir(parents=True, exist_ok=True)
        file_id = new_unguessable_id()
        return file_id, folder / f".{file_id}{ext}{TEMP_SUFFIX}"

    async def finalize(self, record_id: str, file_id: str, temp: Path) -> PlacedFile:
        """fsync the temporary file and rename it to its final name."""
        ext = temp.name.removesuffix(TEMP_SUFFIX).removeprefix(f".{file_id}")
        final = self.path_of(record_id, f"{file_id}{ext}")
        try:
            await asyncio.to_thread(_fsync_and_rename, temp, final)
        except OSError as exc:
            if is_no_room(exc):  # a step's copy (normalize) retries later (P17)
                raise StorageFull() from exc
            raise
        return PlacedFile(record_id=record_id, file_id=file_id, file_name=final.name,
                          path=final, size_bytes=final.stat().st_size)

    async def place_stream(
        self,
        record_id: str,
        chunks: AsyncIterable[bytes],
        *,
        ext: str,
        limit: int,
        expected_size: int | None = None,
    ) -> PlacedFile:
        """Stream into place; nothing stays behind if the stream fails or is too big."""
        if expected_size is not None and expected_size > limit:
            raise TooLarge(limit)
        # Before the first byte is read: a download that cannot fit never starts.
        self.check_room(expected_size)
        file_id, temp = self.temp_path(record_id, ext)
        written = 0
        try:
            with self._open(temp) as handle:
                async for chunk in chunks:
                    written += len(chunk)
                    if written > limit:
                        raise TooLarge(limit)
                    handle.write(chunk)
            if expected_size is not None and written != expected_size:
                raise IncompleteInput(f"got {written} of {expected_size} declared bytes")
            return await self.finalize(record_id, file_id, temp)
        except OSError as exc:
            temp.unlink(missing_ok=True)
            self.remove_dir_if_empty(record_id)
            if is_no_room(exc):
                raise StorageFull() from exc
            raise
        except BaseException:
            temp.unlink(missing_ok=True)
            self.remove_dir_if_empty(record_id)
            raise

    async def retype(self, placed: PlacedFile, ext: str) -> PlacedFile:
        """Rename a placed file to the extension its content was found to have."""
        final = placed.path.with_name(f"{placed.file_id}{ext}")
        if final == placed.path:
            return placed
        await asyncio.to_thread(_rename_durably, placed.path, final)
        return PlacedFile(record_id=placed.record_id, file_id=placed.file_id,
                          file_name=final.name, path=final, size_bytes=placed.size_bytes)

    async def discard(self, placed: PlacedFile) -> None:
        placed.path.unlink(missing_ok=True)
        self.remove_dir_if_empty(placed.record_id)

    async def local_path(self, record_id: str, file_name: str) -> Path:
        """The stored file itself (whether it exists is for its reader to find)."""
        return self.path_of(record_id, file_name)

    async def release(self, record_id: str) -> None:
        """Nothing to drop: steps read the stored files in place."""

    async def servable(self, record_id: str, file_name: str) -> Servable:
        found = await asyncio.to_thread(self.regular_file, record_id, file_name)
        return Servable(size=found.st_size, path=self.path_of(record_id, file_name))

    async def read(self, record_id: str, file_name: str, *, start: int, end: int
                   ) -> AsyncGenerator[bytes]:
        handle = await asyncio.to_thread(open_file_inside, self._data_dir,
                                         (RECORDS_DIR, record_id, file_name))
        try:
            await asyncio.to_thread(handle.seek, start)
            left = end - start
            while left > 0:
                chunk = await asyncio.to_thread(handle.read, min(left, HASH_CHUNK_BYTES))
                if not chunk:
                    return
                left -= len(chunk)
                yield chunk
        finally:
            handle.close()

    async def remove_record(self, record_id: str) -> None:
        """The record's folder with everything in it (a deleted record's)."""
        await asyncio.to_thread(shutil.rmtree, self.record_dir(record_id), ignore_errors=True)

    def remove_dir_if_empty(self, record_id: str) -> None:
        with contextlib.suppress(OSError):
            self.record_dir(record_id).rmdir()


def _fsync_and_rename(temp: Path, final: Path) -> None:
    fd = os.open(temp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    _rename_durably(temp, final)


def _rename_durably(source: Path, final: Path) -> None:
    source.rename(final)
    dir_fd = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


