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
import hashlib
import os
import shutil
import unicodedata
from collections.abc import AsyncGenerator, AsyncIterable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from transcriber.errors import IncompleteInput, StorageFull, TooLarge
from transcriber.ids import new_unguessable_id

RECORDS_DIR = "records"
TEMP_SUFFIX = ".part"
ORIGINAL_NAME_MAX = 255


@dataclass(frozen=True, slots=True, kw_only=True)
class PlacedFile:
    record_id: str
    file_id: str
    file_name: str
    path: Path
    size_bytes: int

    @property
    def format(self) -> str:
        return Path(self.file_name).suffix.lstrip(".")


def clean_original_name(raw: str | None) -> str:
    """The sender's name as kept in the database: no control chars, ≤ 255 chars."""
    if not raw:
        return ""
    name = raw.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C")
    return name.strip()[:ORIGINAL_NAME_MAX]


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


class RecordFiles:
    """`free_bytes` and `opener` are the file layer (tests inject a disk that fills)."""

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

    def discard(self, placed: PlacedFile) -> None:
        placed.path.unlink(missing_ok=True)
        self.remove_dir_if_empty(placed.record_id)

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


HASH_CHUNK_BYTES = 4 * 1024 * 1024


def sha256_of(path: Path) -> str:
    """The file's SHA-256, read in chunks (model files and database copies are large)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(HASH_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


async def read_chunks(path: Path, chunk_size: int) -> AsyncGenerator[bytes]:
    """A file as a stream of chunks, read off the event loop (for `place_stream`)."""
    handle = await asyncio.to_thread(path.open, "rb")
    try:
        while chunk := await asyncio.to_thread(handle.read, chunk_size):
            yield chunk
    finally:
        handle.close()
