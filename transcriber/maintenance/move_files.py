"""The record files of `transcriber move-to`: the data folder's copied into the bucket,
and checked wherever they end up.

A file goes up as it is, streamed in parts (`S3RecordFiles.put`): an object is
visible whole or not at all, so an interrupted copy leaves no half object. An
object already in the bucket under the file's key, of its size and its SHA-256,
is kept (a copy run again goes on where it stopped); another one is replaced.
Hashes are read in chunks on both sides, never a whole file in memory. Problems
name the file as `records/<record id>/<file id><ext>` (ids only, as the rows do).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from transcriber.core.errors import UnsafePath
from transcriber.core.hashing import HASH_CHUNK_BYTES
from transcriber.core.paths import open_file_inside, stat_inside
from transcriber.db.reads.maintenance import FileEntry
from transcriber.providers.local_files import RECORDS_DIR
from transcriber.providers.s3_files import S3RecordFiles

# Called after each file copied or found in place: (bytes of the file).
OnFile = Callable[[int], None]


@dataclass(slots=True, kw_only=True)
class FileCopy:
    """What the copy did (counts) and what it could not do (problems by kind)."""

    copied: int = 0
    in_place: int = 0
    bytes_copied: int = 0
    problems: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, entry: FileEntry, detail: str = "") -> None:
        self.problems.setdefault(kind, []).append(_name(entry) + detail)


def _name(entry: FileEntry) -> str:
    return f"{RECORDS_DIR}/{entry.record_id}/{entry.file_name}"


def _local_sha256(data_dir: Path, entry: FileEntry) -> tuple[int, str]:
    """Size and SHA-256 of the data folder's file (`open_inside`'s refusals)."""
    digest = hashlib.sha256()
    size = 0
    with open_file_inside(data_dir, _names(entry)) as handle:
        while chunk := handle.read(HASH_CHUNK_BYTES):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


async def _object_sha256(bucket: S3RecordFiles, entry: FileEntry, size: int) -> str:
    digest = hashlib.sha256()
    async for chunk in bucket.read(entry.record_id, entry.file_name, start=0, end=size):
        digest.update(chunk)
    return digest.hexdigest()


async def _object_size(bucket: S3RecordFiles, entry: FileEntry) -> int | None:
    try:
        return (await bucket.servable(entry.record_id, entry.file_name)).size
    except FileNotFoundError:
        return None


async def _local(data_dir: Path, entry: FileEntry, result: FileCopy) -> tuple[int, str] | None:
    try:
        return await asyncio.to_thread(_local_sha256, data_dir, entry)
    except FileNotFoundError:
        result.add("missing_source_files", entry)
    except (UnsafePath, OSError) as exc:
        result.add("unsafe_source_files", entry, f": {type(exc).__name__}")
    return None


def _names(entry: FileEntry) -> tuple[str, str, str]:
    return RECORDS_DIR, entry.record_id, entry.file_name


async def _in_place(data_dir: Path, entry: FileEntry, bucket: S3RecordFiles,
                    size: int) -> bool:
    """The bucket holds this very file already (a copy run before): same size, same hash."""
    if await _object_size(bucket, entry) != size:
        return False
    local = await asyncio.to_thread(_local_sha256, data_dir, entry)
    return local[1] == await _object_sha256(bucket, entry, size)


async def copy_to_bucket(entries: Sequence[FileEntry], data_dir: Path,
                         bucket: S3RecordFiles, *, on_file: OnFile | None = None) -> FileCopy:
    """Every file the rows name into the bucket, unless it is there already."""
    result = FileCopy()
    for entry in entries:
        try:
            size = (await asyncio.to_thread(stat_inside, data_dir, _names(entry))).st_size
            if await _in_place(data_dir, entry, bucket, size):
                result.in_place += 1
            else:
                with await asyncio.to_thread(open_file_inside, data_dir, _names(entry)) as handle:
                    await bucket.put(entry.record_id, entry.file_name, handle)
                result.copied += 1
                result.bytes_copied += size
        except FileNotFoundError:
            result.add("missing_source_files", entry)
            continue
        except (UnsafePath, OSError) as exc:
            result.add("unsafe_source_files", entry, f": {type(exc).__name__}")
            continue
        if on_file is not None:
            on_file(size)
    return result


async def check_bucket_copy(entries: Sequence[FileEntry], data_dir: Path,
                            bucket: S3RecordFiles) -> FileCopy:
    """Each file of the data folder has its object in the bucket, of the same size and
    SHA-256, and its row says that size."""
    result = FileCopy()
    for entry in entries:
        local = await _local(data_dir, entry, result)
        if local is None:
            continue
        size, sha = local
        if size != entry.size_bytes:
            result.add("wrong_size", entry, f": {size} bytes, the row says {entry.size_bytes}")
        there = await _object_size(bucket, entry)
        if there is None:
            result.add("missing_objects", entry)
        elif there != size:
            result.add("wrong_object_size", entry, f": {there} bytes in the bucket, {size} here")
        elif await _object_sha256(bucket, entry, size) != sha:
            result.add("wrong_object_sha256", entry)
    return result


def check_objects(entries: Sequence[FileEntry], objects: Mapping[tuple[str, str], int]
                  ) -> FileCopy:
    """The files were in the bucket before the move: each row's object is there, of the
    row's size (there is no other copy to compare a hash with)."""
    result = FileCopy()
    for entry in entries:
        size = objects.get((entry.record_id, entry.file_name))
        if size is None:
            result.add("missing_objects", entry)
        elif size != entry.size_bytes:
            result.add("wrong_object_size", entry,
                       f": {size} bytes in the bucket, the row says {entry.size_bytes}")
    return result


def check_local(entries: Sequence[FileEntry], data_dir: Path) -> FileCopy:
    """The files stay in the data folder: each row's file is there, of the row's size."""
    result = FileCopy()
    for entry in entries:
        try:
            size = stat_inside(data_dir, _names(entry)).st_size
        except FileNotFoundError:
            result.add("missing_files", entry)
            continue
        except (UnsafePath, OSError) as exc:
            result.add("unsafe_files", entry, f": {type(exc).__name__}")
            continue
        if size != entry.size_bytes:
            result.add("wrong_size", entry, f": {size} bytes, the row says {entry.size_bytes}")
    return result
