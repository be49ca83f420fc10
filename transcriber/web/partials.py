"""The bytes of resumable uploads in flight: one partial file per upload under
`data_dir/uploads/`, named by the upload's id (a ULID the door has parsed, never a
sender's name).

The file may hold more bytes than the upload's row says are stored for good (a
server killed in the middle of a `PATCH`); the next `PATCH` cuts it back to the
row's offset before it writes, so the row is the truth and the file follows it.
`busy` holds the uploads a request of this process is writing or finishing: a
second `PATCH` of the same upload meanwhile is answered 409 before it reads a byte.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import BinaryIO

from aiohttp import web

SUFFIX = ".part"
READ_BYTES = 256 * 1024


class PartialGone(OSError):
    """The partial file is missing or shorter than the stored offset (the data folder
    was changed behind the service): the upload cannot continue."""


class Partials:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.busy: set[str] = set()

    def path(self, upload_id: str) -> Path:
        return self.root / f"{upload_id}{SUFFIX}"

    def create(self, upload_id: str) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.path(upload_id).open("xb").close()

    def open_at(self, upload_id: str, offset: int) -> BinaryIO:
        """The partial file for writing at `offset`, cut back to it (bytes past the
        stored offset were never acknowledged)."""
        try:
            handle = self.path(upload_id).open("r+b")
        except FileNotFoundError as exc:
            raise PartialGone(upload_id) from exc
        try:
            size = os.fstat(handle.fileno()).st_size
            if size < offset:
                raise PartialGone(upload_id)
            if size > offset:
                handle.truncate(offset)
            handle.seek(offset)
        except BaseException:
            handle.close()
            raise
        return handle

    async def chunks(self, upload_id: str) -> AsyncIterator[bytes]:
        """The whole partial file, in pieces (what intake reads when it is complete)."""
        with self.path(upload_id).open("rb") as handle:
            while chunk := handle.read(READ_BYTES):
                yield chunk

    def remove(self, upload_id: str) -> None:
        self.path(upload_id).unlink(missing_ok=True)

    def ids(self) -> list[str]:
        """The uploads that have a partial file (the sweeper's check for orphans)."""
        if not self.root.is_dir():
            return []
        return [path.name.removesuffix(SUFFIX) for path in self.root.iterdir()
                if path.name.endswith(SUFFIX)]


async def sync(handle: BinaryIO) -> None:
    """The bytes written so far on the disk before their offset is stored."""
    handle.flush()
    await asyncio.get_running_loop().run_in_executor(None, os.fsync, handle.fileno())


PARTIALS = web.AppKey("partials", Partials)
