"""Lifecycle of the storage parts, as aiohttp cleanup contexts.

Order at start: migrations → writer → readers → the sweep of what a killed
process left in the record folders → the record-file store (the data folder,
or a bucket and its own sweep: `maintenance.bucket`) (→ the pipeline and the doors, added by
their own contexts). aiohttp runs cleanups in reverse, so the
writer, started first, closes last and drains its mailbox before it does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import time
from collections.abc import AsyncIterator
from pathlib import Path

import structlog
from aiohttp import web

from transcriber.db import reads
from transcriber.db.engine import engine_name, migrate_storage, new_readers, new_writer
from transcriber.db.readers import ReaderPool
from transcriber.maintenance.bucket import bucket_files
from transcriber.providers.local_files import (
    RECORDS_DIR,
    TEMP_SUFFIX,
    LocalRecordFiles,
    share_instance_lock,
    take_instance_lock,
)
from transcriber.service.fatal import fail_service
from transcriber.web import keys

log = structlog.get_logger(__name__)

def sweep_record_folders(
    data_dir: Path, keep: set[tuple[str, str]], *, before: float
) -> tuple[int, int]:
    """Remove what interrupted writes left in `records/*/`, modified before
    `before`: temporary files, and files no `files` row names (a process killed
    between placing a file and committing its row; it was never acknowledged).
    Returns (temporary files, orphan files) removed."""
    root = data_dir / RECORDS_DIR
    if not root.is_dir():
        return 0, 0
    temps = orphans = 0
    for folder in root.iterdir():
        if not folder.is_dir() or folder.is_symlink():
            continue
        for path in folder.iterdir():
            try:
                info = path.lstat()
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(info.st_mode) or info.st_mtime >= before:
                continue
            if path.name.endswith(TEMP_SUFFIX):
                temps += 1
            elif (folder.name, path.name) not in keep:
                orphans += 1
            else:
                continue
            path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when nothing is left in it
    return temps, orphans


async def sweep_at_start(data_dir: Path, readers: ReaderPool, *, before: float) -> None:
    keep = await reads.counts.stored_file_names(readers)
    temps, orphans = await asyncio.to_thread(sweep_record_folders, data_dir, keep,
                                             before=before)
    # Counts only: file names never reach the log.
    if temps:
        log.warning("stale_temp_removed", count=temps)
    if orphans:
        log.warning("orphan_files_removed", count=orphans)


async def storage_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[keys.SETTINGS]
    data_dir = settings.storage.data_dir
    started = time.time()
    data_dir.mkdir(parents=True, exist_ok=True)
    await migrate_storage(settings.storage, clock=app[keys.CLOCK])
    writer = new_writer(settings.storage, clock=app[keys.CLOCK],
                        on_death=lambda exc: fail_service(app, exc))
    readers = new_readers(settings.storage)
    lock_fd, alone = await asyncio.to_thread(take_instance_lock, data_dir)
    stack = contextlib.AsyncExitStack()
    try:
        await writer.start()
    except BaseException:
        os.close(lock_fd)
        raise
    try:
        await readers.open()
        if alone:
            await sweep_at_start(data_dir, readers, before=started)
        else:
            log.warning("start_sweep_skipped", reason="another process uses the data folder")
        await asyncio.to_thread(share_instance_lock, lock_fd)
        app[keys.WRITER] = writer
        app[keys.READERS] = readers
        if keys.FILES not in app:  # a test's file layer (a disk that fills) is kept
            if settings.storage.files == "s3":
                app[keys.FILES] = await stack.enter_async_context(
                    bucket_files(settings, readers, alone=alone, started=started))
            else:
                app[keys.FILES] = LocalRecordFiles(data_dir,
                                              min_free_bytes=settings.storage.min_free_bytes)
        log.info("storage_started", read_connections=readers.size,
                 engine=engine_name(settings.storage), files=app[keys.FILES].kind)
        yield
    finally:
        await stack.aclose()
        await readers.close()
        await writer.stop()
        os.close(lock_fd)  # releases the instance lock
        log.info("storage_stopped")
