"""The record files of `storage.files = s3`: the bucket's client, the start-up sweep.

Run by `storage_ctx` once the readers are open. The sweep removes objects no
`files` row names (a process killed between placing a file and committing its
row) that are older than `ORPHAN_GRACE_SECONDS`: the bucket is shared by every
host, and another host's upload may be between its placement and its row
right now. Working copies (`<data_dir>/work`) are this host's own and are all
removed when no other process uses the data folder. `with_bucket` gives the
synchronous commands (verify, backup, restore) the bucket's files.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import structlog

from transcriber.core.errors import TransientFailure
from transcriber.db import reads
from transcriber.db.readers import ReaderPool
from transcriber.providers.object_store import S3ObjectStore
from transcriber.providers.s3_files import S3RecordFiles
from transcriber.settings import Settings

log = structlog.get_logger(__name__)

ORPHAN_GRACE_SECONDS = 3600.0


T = TypeVar("T")


@contextlib.asynccontextmanager
async def open_bucket_files(settings: Settings) -> AsyncIterator[S3RecordFiles]:
    """The record files of the configured bucket, its client open while in use."""
    store = S3ObjectStore(settings.s3)
    await store.start()
    try:
        yield S3RecordFiles(store, prefix=settings.s3.prefix,
                            data_dir=settings.storage.data_dir,
                            min_free_bytes=settings.storage.min_free_bytes)
    finally:
        await store.close()


@contextlib.asynccontextmanager
async def bucket_files(settings: Settings, readers: ReaderPool, *, alone: bool,
                       started: float) -> AsyncIterator[S3RecordFiles]:
    async with open_bucket_files(settings) as files:
        if alone:
            await asyncio.to_thread(files.clear_work)
        await sweep_bucket(files, readers,
                           before=datetime.fromtimestamp(started - ORPHAN_GRACE_SECONDS, UTC))
        log.info("bucket_files_started")
        yield files


async def sweep_bucket(files: S3RecordFiles, readers: ReaderPool, *, before: datetime) -> None:
    keep = await reads.counts.stored_file_names(readers)
    try:
        removed = await files.sweep(keep, before=before)
    except TransientFailure as exc:
        # The bucket cannot be reached now: uploads will say so; the next start sweeps.
        log.warning("orphan_objects_not_swept", error=type(exc).__name__)
        return
    if removed:  # counts only: keys never reach the log
        log.warning("orphan_objects_removed", count=removed)


class BucketBridge:
    """The bucket's record files for code that runs in a thread (backup, restore and
    verify are synchronous): each call runs on the event loop holding the client."""

    def __init__(self, files: S3RecordFiles, loop: asyncio.AbstractEventLoop) -> None:
        self._files = files
        self._loop = loop

    def _run(self, call: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(call, self._loop).result()

    def fetch(self, record_id: str, file_name: str, target: Path) -> None:
        self._run(self._files.fetch(record_id, file_name, target))

    def put(self, record_id: str, file_name: str, handle: BinaryIO) -> None:
        self._run(self._files.put(record_id, file_name, handle))

    def stored(self) -> Mapping[tuple[str, str], int]:
        return self._run(self._files.stored())

    def remove(self, record_id: str) -> None:
        self._run(self._files.remove_record(record_id))


def with_bucket(settings: Settings, work: Callable[[BucketBridge | None], T]) -> T:
    """`work(bridge)` with a bridge to the bucket when `storage.files = s3` (run in a
    thread beside the client's event loop), else `work(None)` as it is."""
    if settings.storage.files != "s3":
        return work(None)

    async def main() -> T:
        async with open_bucket_files(settings) as files:
            bridge = BucketBridge(files, asyncio.get_running_loop())
            return await asyncio.to_thread(work, bridge)

    return asyncio.run(main())
