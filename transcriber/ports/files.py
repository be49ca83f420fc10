"""The record-file store port: where originals, normalized copies and saved answers live.

Adapters: `transcriber.providers.local_files.LocalRecordFiles` (the data
folder, `storage.files = local`) and `transcriber.providers.s3_files.S3RecordFiles`
(a bucket, `storage.files = s3`). Both keep one contract: a file becomes visible under
its final name only after its whole content was written without error; the
caller inserts the `files` row afterwards and discards the file if that
fails; a file no row names is an orphan the start-up sweep removes. Names are
ids and an extension decided from the content, never the sender's.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol

FilesKind = Literal["local", "s3"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PlacedFile:
    """A file stored under its final name: where it lies locally and what it is called."""

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


class RecordFiles(Protocol):
    kind: FilesKind

    def free_bytes(self) -> int:
        """Free bytes on the disk of the data folder (where working copies go too)."""

    def check_room(self, size: int | None) -> None:
        """Raise `StorageFull` unless `size` bytes plus `storage.min_free_bytes` are free
        on the local disk an upload is written to."""

    async def place_stream(self, record_id: str, chunks: AsyncIterable[bytes], *, ext: str,
                           limit: int, expected_size: int | None = None) -> PlacedFile:
        """Store a stream as a new file of the record; nothing stays behind when it fails
        (`TooLarge`, `IncompleteInput`, `StorageFull`, the stream's own error). The
        result's `path` is a local copy the caller may read (a probe) until `release`."""

    def temp_path(self, record_id: str, ext: str) -> tuple[str, Path]:
        """A fresh file id and a local temporary path a step writes its output to."""

    async def finalize(self, record_id: str, file_id: str, temp: Path) -> PlacedFile:
        """Place the complete temporary file under its final name."""

    async def retype(self, placed: PlacedFile, ext: str) -> PlacedFile:
        """The placed file under the extension its content was found to have."""

    async def discard(self, placed: PlacedFile) -> None:
        """Remove a placed file whose row never landed (and its local copy)."""

    async def remove_record(self, record_id: str) -> None:
        """Every file of a deleted record, and its local copies."""

    async def local_path(self, record_id: str, file_name: str) -> Path:
        """A local path holding the stored file, for a step's tools (ffmpeg, the
        recognizer). Local: the file itself; s3: a working copy fetched once and kept
        until `release`. `FileNotFoundError` when the store has no such file."""

    async def release(self, record_id: str) -> None:
        """Drop the record's local working copies (none for local files)."""

    async def servable(self, record_id: str, file_name: str) -> Servable:
        """What a download sends: `FileNotFoundError` when missing, `UnsafePath` when the
        local file is reached through a symlink or is not a regular file."""

    def read(self, record_id: str, file_name: str, *, start: int, end: int
             ) -> AsyncGenerator[bytes]:
        """The bytes `start` to `end` (exclusive) of a stored file, in chunks."""
