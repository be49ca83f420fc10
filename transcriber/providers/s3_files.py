"""Record files in a bucket (`storage.files = s3`): the `RecordFiles` port over S3.

Objects are named `<s3.prefix>records/<record id>/<file name>`, the file name
being `<file id><ext>` as in the data folder (ids only). Placement keeps the
local store's contract: a stream goes up in fixed-size parts of a multipart
upload that is completed only after its last byte was read without error
(aborted otherwise), so an object is visible whole or not at all; the
caller's `files` row follows; an object no row names is an orphan the
start-up sweep removes.

The tools of the steps (ffmpeg, the recognizer, the speaker engine) read local
files: a host fetches what it needs into `<data_dir>/work/<record id>/` (a
working copy, fetched once, kept while the record is in the pipeline and
removed when it is done, halted or deleted, and at start-up), and a step's
output is written there and uploaded. An upload is written to a working copy
as it streams to the bucket, for intake's probe; it goes once the record is
registered. Keys and URLs never reach a log or an error message.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import AsyncGenerator, AsyncIterable, Set
from datetime import datetime
from pathlib import Path
from typing import BinaryIO, Literal

import structlog

from transcriber.core.errors import (
    IncompleteInput,
    StorageFull,
    TooLarge,
    TranscriberError,
    UnsafePath,
)
from transcriber.core.hashing import read_chunks
from transcriber.core.ids import new_unguessable_id
from transcriber.core.paths import plain_name
from transcriber.ports.files import PlacedFile, Servable
from transcriber.providers.local_files import (
    RECORDS_DIR,
    TEMP_SUFFIX,
    FreeBytes,
    disk_free_bytes,
    has_room,
    is_no_room,
)
from transcriber.providers.object_store import COPY_MAX_BYTES, ObjectMissing, S3ObjectStore

log = structlog.get_logger(__name__)

WORK_DIR = "work"
# Fixed-size parts: an upload holds one part in memory whatever its length (an
# 8 GiB recording is 512 parts; S3 allows 10 000).
PART_SIZE = 16 * 1024 * 1024
READ_CHUNK_BYTES = 1024 * 1024


def object_key(prefix: str, record_id: str, file_name: str) -> str:
    """Pure: where a record file lives in the bucket."""
    return f"{prefix}{RECORDS_DIR}/{record_id}/{file_name}"


def records_prefix(prefix: str) -> str:
    return f"{prefix}{RECORDS_DIR}/"


def file_of_key(prefix: str, key: str) -> tuple[str, str] | None:
    """Pure: the (record id, file name) an object key names, or None for a key that is
    not a record file's (a SpeechKit part, something else under the prefix)."""
    rest = key.removeprefix(records_prefix(prefix))
    if rest == key:
        return None
    record_id, _, name = rest.partition("/")
    if not plain_name(record_id) or not plain_name(name):
        return None
    return record_id, name


def _checked(names: tuple[str, ...]) -> None:
    if not all(plain_name(name) for name in names):
        raise UnsafePath("a path component is not a plain name")


class S3RecordFiles:
    """`store` is started and closed by its owner; `data_dir` holds the working copies."""

    kind: Literal["local", "s3"] = "s3"

    def __init__(self, store: S3ObjectStore, *, prefix: str, data_dir: Path,
                 min_free_bytes: int = 0, free_bytes: FreeBytes = disk_free_bytes,
                 part_size: int = PART_SIZE, copy_part_size: int = COPY_MAX_BYTES) -> None:
        self._store = store
        self._prefix = prefix
        self._data_dir = data_dir
        self._work = data_dir / WORK_DIR
        self._min_free = min_free_bytes
        self._free_bytes = free_bytes
        self._part_size = part_size
        self._copy_part_size = copy_part_size

    def key(self, record_id: str, file_name: str) -> str:
        _checked((record_id, file_name))
        return object_key(self._prefix, record_id, file_name)

    def free_bytes(self) -> int:
        return self._free_bytes(self._data_dir)

    def check_room(self, size: int | None) -> None:
        if not has_room(free=self.free_bytes(), size=size, margin=self._min_free):
            raise StorageFull("not enough free space for this file")

    def work_dir(self, record_id: str) -> Path:
        _checked((record_id,))
        return self._work / record_id

    def temp_path(self, record_id: str, ext: str) -> tuple[str, Path]:
        folder = self.work_dir(record_id)
        folder.mkdir(parents=True, exist_ok=True)
        file_id = new_unguessable_id()
        return file_id, folder / f".{file_id}{ext}{TEMP_SUFFIX}"

    async def place_stream(self, record_id: str, chunks: AsyncIterable[bytes], *, ext: str,
                           limit: int, expected_size: int | None = None) -> PlacedFile:
        if expected_size is not None and expected_size > limit:
            raise TooLarge(limit)
        self.check_room(expected_size)
        file_id, temp = self.temp_path(record_id, ext)
        name = f"{file_id}{ext}"
        key = self.key(record_id, name)
        uploaded = False
        try:
            with await asyncio.to_thread(temp.open, "wb") as handle:
                size = await self._store.stream_upload(
                    key, _teed(chunks, handle, limit=limit, expected_size=expected_size),
                    part_size=self._part_size)
            uploaded = True
            local = temp.with_name(name)
            await asyncio.to_thread(temp.rename, local)
        except BaseException as exc:
            temp.unlink(missing_ok=True)
            if uploaded:
                await self._forget(key)
            self._remove_work_if_empty(record_id)
            if is_no_room(exc):
                raise StorageFull() from exc
            raise
        return PlacedFile(record_id=record_id, file_id=file_id, file_name=name, path=local,
                          size_bytes=size)

    async def finalize(self, record_id: str, file_id: str, temp: Path) -> PlacedFile:
        """Upload the step's complete output; it stays as this host's working copy."""
        name = temp.name.removesuffix(TEMP_SUFFIX).removeprefix(".")
        if not name.startswith(file_id):
            raise UnsafePath("the temporary file is not the file id's")
        key = self.key(record_id, name)
        size = await self._store.stream_upload(
            key, read_chunks(temp, READ_CHUNK_BYTES), part_size=self._part_size)
        local = temp.with_name(name)
        try:
            await asyncio.to_thread(temp.rename, local)
        except BaseException:
            await self._forget(key)
            raise
        return PlacedFile(record_id=record_id, file_id=file_id, file_name=name, path=local,
                          size_bytes=size)

    async def retype(self, placed: PlacedFile, ext: str) -> PlacedFile:
        """A server-side copy under the new name, then the old object goes (no byte
        passes through this host)."""
        name = f"{placed.file_id}{ext}"
        if name == placed.file_name:
            return placed
        old, new = self.key(placed.record_id, placed.file_name), self.key(placed.record_id, name)
        await self._store.copy(old, new, size=placed.size_bytes,
                               part_size=self._copy_part_size)
        try:
            await self._store.delete(old)
        except BaseException:
            await self._forget(new)
            raise
        local = placed.path.with_name(name)
        with contextlib.suppress(FileNotFoundError):
            await asyncio.to_thread(placed.path.rename, local)
        return PlacedFile(record_id=placed.record_id, file_id=placed.file_id, file_name=name,
                          path=local, size_bytes=placed.size_bytes)

    async def discard(self, placed: PlacedFile) -> None:
        await self._forget(self.key(placed.record_id, placed.file_name))
        placed.path.unlink(missing_ok=True)
        self._remove_work_if_empty(placed.record_id)

    async def remove_record(self, record_id: str) -> None:
        prefix = f"{records_prefix(self._prefix)}{record_id}/"
        _checked((record_id,))
        try:
            keys = [info.key async for info in self._store.listing(prefix)]
            await self._store.delete_many(keys)
        except TranscriberError as exc:
            # The rows are gone; what stays is an orphan for the start-up sweep.
            log.warning("record_objects_not_deleted", record_id=record_id,
                        error=type(exc).__name__)
        await self.release(record_id)

    async def local_path(self, record_id: str, file_name: str) -> Path:
        local = self.work_dir(record_id) / file_name
        if await asyncio.to_thread(local.is_file):
            return local
        key = self.key(record_id, file_name)
        local.parent.mkdir(parents=True, exist_ok=True)
        temp = local.with_name(f".{file_name}.{new_unguessable_id()}{TEMP_SUFFIX}")
        try:
            await self._store.download(key, temp)
            await asyncio.to_thread(temp.rename, local)
        except ObjectMissing:
            raise FileNotFoundError("the stored file is missing") from None
        except OSError as exc:
            if is_no_room(exc):
                raise StorageFull() from exc
            raise
        finally:
            temp.unlink(missing_ok=True)
        return local

    async def release(self, record_id: str) -> None:
        await asyncio.to_thread(shutil.rmtree, self.work_dir(record_id), ignore_errors=True)

    async def servable(self, record_id: str, file_name: str) -> Servable:
        try:
            info = await self._store.head(self.key(record_id, file_name))
        except ObjectMissing:
            raise FileNotFoundError("the stored file is missing") from None
        return Servable(size=info.size, etag=info.etag, modified=info.modified)

    def read(self, record_id: str, file_name: str, *, start: int, end: int
             ) -> AsyncGenerator[bytes]:
        return self._store.read(self.key(record_id, file_name), start=start, end=end)

    async def fetch(self, record_id: str, file_name: str, target: Path) -> None:
        """The stored file written to the new local file `target` (a backup's copy)."""
        try:
            await self._store.download(self.key(record_id, file_name), target)
        except ObjectMissing:
            await asyncio.to_thread(target.unlink, missing_ok=True)
            raise FileNotFoundError("the stored file is missing") from None

    async def put(self, record_id: str, file_name: str, handle: BinaryIO) -> None:
        """An open file stored under its name as it is (a restore's), in parts."""
        await self._store.stream_upload(self.key(record_id, file_name), _read(handle),
                                        part_size=self._part_size)

    async def stored(self) -> dict[tuple[str, str], int]:
        """Every record file in the bucket and its size (verify, backup)."""
        found: dict[tuple[str, str], int] = {}
        async for info in self._store.listing(records_prefix(self._prefix)):
            names = file_of_key(self._prefix, info.key)
            if names is not None:
                found[names] = info.size
        return found

    async def sweep(self, keep: Set[tuple[str, str]], *, before: datetime) -> int:
        """Remove objects no `files` row names, stored before `before` (a process killed
        between placing a file and committing its row); the count removed."""
        orphans: list[str] = []
        async for info in self._store.listing(records_prefix(self._prefix)):
            names = file_of_key(self._prefix, info.key)
            if names is not None and names not in keep and info.modified < before:
                orphans.append(info.key)
        await self._store.delete_many(orphans)
        return len(orphans)

    def clear_work(self) -> None:
        """Every working copy (at start, when no other process uses the data folder)."""
        shutil.rmtree(self._work, ignore_errors=True)

    async def _forget(self, key: str) -> None:
        """Delete an object whose row never landed; a failure leaves an orphan for the
        start-up sweep, which is logged without its key."""
        try:
            await self._store.delete(key)
        except TranscriberError as exc:
            log.warning("record_object_not_deleted", error=type(exc).__name__)

    def _remove_work_if_empty(self, record_id: str) -> None:
        with contextlib.suppress(OSError):
            self.work_dir(record_id).rmdir()


async def _read(handle: BinaryIO) -> AsyncGenerator[bytes]:
    while chunk := await asyncio.to_thread(handle.read, READ_CHUNK_BYTES):
        yield chunk


async def _teed(chunks: AsyncIterable[bytes], handle: BinaryIO, *, limit: int,
                expected_size: int | None) -> AsyncGenerator[bytes]:
    """The stream, each chunk also written to `handle`; refused past `limit`, or when it
    ends short of or past `expected_size` (raised before the upload can complete)."""
    written = 0
    async for chunk in chunks:
        written += len(chunk)
        if written > limit:
            raise TooLarge(limit)
        await asyncio.to_thread(handle.write, chunk)
        yield chunk
    if expected_size is not None and written != expected_size:
        raise IncompleteInput(f"got {written} of {expected_size} declared bytes")
    await asyncio.to_thread(handle.flush)
