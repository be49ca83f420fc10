"""The record files of `storage.files = s3`: the bucket's client, the start-up sweep.

Run by `storage_ctx` once the readers are open. The sweep removes objects no
`files` row names (a process killed between placing a file and committing its
row) that are older than `ORPHAN_GRACE_SECONDS`: the bucket is shared by every
host, and another host's upload may be between its placement and its row
right now. Working copies (`<data_dir>/work`) are this host's own and are all
removed when no other process uses the data folder.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import structlog

from transcriber.db import reads
from transcriber.db.readers import ReaderPool
from transcriber.errors import TransientFailure
from transcriber.providers.object_store import S3ObjectStore
from transcriber.providers.record_objects import S3RecordFiles
from transcriber.settings import Settings

log = structlog.get_logger(__name__)

ORPHAN_GRACE_SECONDS = 3600.0


@contextlib.asynccontextmanager
async def bucket_files(settings: Settings, readers: ReaderPool, *, alone: bool,
                       started: float) -> AsyncIterator[S3RecordFiles]:
    store = S3ObjectStore(settings.s3)
    await store.start()
    try:
        files = S3RecordFiles(store, prefix=settings.s3.prefix,
                              data_dir=settings.storage.data_dir,
                              min_free_bytes=settings.storage.min_free_bytes)
        if alone:
            await asyncio.to_thread(files.clear_work)
        await sweep_bucket(files, readers,
                           before=datetime.fromtimestamp(started - ORPHAN_GRACE_SECONDS, UTC))
        log.info("bucket_files_started")
        yield files
    finally:
        await store.close()


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
