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
import stat
import unicodedata
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import BinaryIO, Literal

from transcriber.errors import IncompleteInput, StorageFull, TooLarge, UnsafePath
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


@dataclass(frozen=True, slots=True, kw_only=True)
class Servable:
    """A stored file that may be sent: its size, and either a local path (sent as a
    file) or the validators of an object (streamed through the service)."""

    size: int
    path: Path | None = None
    etag: str = ""
    modified: datetime | None = None


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
    """The record-file store of `storage.files = local` (`ports.RecordStore`).

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


# -- paths taken from outside -----------------------------------------------------------
#
# A backup's `files` rows, a stored row after a restore, a local Bot API's
# answer: each names a file that must lie inside one folder. Every component
# is one plain name, and the walk down from the folder opens each with
# O_NOFOLLOW, so a `..`, an absolute path or a symlink anywhere on the way is
# refused rather than followed (a resolved-path check would race a symlink
# swapped in after it). The folder itself is the operator's and may be reached
# through symlinks.

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO planted under a file's name must not wait for a writer.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def plain_name(name: str) -> bool:
    """Pure: `name` is one path component naming something inside its folder."""
    return bool(name) and name not in (".", "..") and "/" not in name and "\0" not in name


def open_inside(root: Path, names: Sequence[str]) -> int:
    """A descriptor of the regular file `root/names[0]/…/names[-1]`.

    Raises `UnsafePath` for a name that is not plain, a symlink or a
    non-folder on the way, or an end that is not a regular file (a symlink, a
    folder, a FIFO, a device); `FileNotFoundError` when something is missing.
    """
    if not names or not all(plain_name(name) for name in names):
        raise UnsafePath("a path component is not a plain name")
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in names[:-1]:
            try:
                inner = os.open(name, _DIR_FLAGS, dir_fd=folder)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise UnsafePath("a folder on the way is a symlink or not a folder"
                                     ) from None
                raise
            os.close(folder)
            folder = inner
        try:
            fd = os.open(names[-1], _FILE_FLAGS, dir_fd=folder)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                raise UnsafePath("the file is a symlink or not a regular file") from None
            raise
    finally:
        os.close(folder)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePath("the file is not a regular file")
    return fd


def stat_inside(root: Path, names: Sequence[str]) -> os.stat_result:
    """The stat of the regular file `open_inside` reaches (same refusals)."""
    fd = open_inside(root, names)
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def relative_names(path: str, roots: Sequence[Path]) -> tuple[str, ...]:
    """Pure: the components of the absolute `path` below the first of `roots` it lies
    under, taken as written (a `..` stays and `open_inside` refuses it);
    `UnsafePath` if it is under none."""
    given = Path(path)
    if not given.is_absolute():
        raise UnsafePath("the path is not absolute")
    for root in roots:
        if given.is_relative_to(root):
            names = given.relative_to(root).parts
            if names:
                return names
    raise UnsafePath("the path is outside the folder")


def open_file_inside(root: Path, names: Sequence[str]) -> BinaryIO:
    """The regular file `open_inside` reaches, opened for reading (same refusals)."""
    return os.fdopen(open_inside(root, names), "rb")
