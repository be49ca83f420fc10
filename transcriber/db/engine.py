"""Which engine holds the state, chosen by `storage.database_url`, and its parts.

Empty: SQLite in the data folder (the embedded default: one command, one
folder). A `postgresql://` URL: PostgreSQL, shared by every process of the
service on every host. Either way a process gets one writer actor and one
reader pool with the same interfaces; nothing above storage asks which.

The PostgreSQL parts are imported only on the PostgreSQL branch (asyncpg is not
loaded by a SQLite process), the writer only where one is made (`transcriber status` starts light,
tests/unit/test_light_imports.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from transcriber.core.clock import Clock
from transcriber.db.connection import database_path
from transcriber.db.migrate import migrate
from transcriber.db.readers import ReaderPool
from transcriber.settings import StorageSettings

if TYPE_CHECKING:
    from transcriber.db.writer import Writer


def database_url(storage: StorageSettings) -> str | None:
    """The PostgreSQL URL, or None for SQLite in the data folder."""
    url = storage.database_url
    return url.value if url is not None and url.value else None


def engine_name(storage: StorageSettings) -> str:
    return "postgresql" if database_url(storage) else "sqlite"


async def migrate_storage(storage: StorageSettings, *, clock: Clock) -> list[int]:
    """Apply the engine's pending migrations (`transcriber migrate`, every start)."""
    url = database_url(storage)
    if url is not None:
        from transcriber.db.postgres.migrate import migrate_postgres  # noqa: PLC0415

        return await migrate_postgres(url, clock=clock)
    return await asyncio.to_thread(migrate, storage.data_dir,
                                   busy_timeout_ms=storage.busy_timeout_ms, clock=clock)


def new_writer(storage: StorageSettings, *, clock: Clock,
               on_death: Callable[[BaseException], None] | None = None) -> Writer:
    """The writer actor of this process (not started)."""
    # Imported here: its commands and metrics are no part of a read-only command's start.
    from transcriber.db.writer import Writer  # noqa: PLC0415

    url = database_url(storage)
    if url is not None:
        from transcriber.db.postgres.writer import PgWriter  # noqa: PLC0415

        return PgWriter(url, clock=clock, batch_max=storage.writer_batch_max, on_death=on_death)
    return Writer(database_path(storage.data_dir), clock=clock,
                  busy_timeout_ms=storage.busy_timeout_ms,
                  batch_max=storage.writer_batch_max, on_death=on_death)


def new_readers(storage: StorageSettings, *, size: int | None = None) -> ReaderPool:
    """The reader pool of this process (not opened)."""
    count = storage.read_connections if size is None else size
    url = database_url(storage)
    if url is not None:
        from transcriber.db.postgres.readers import PgReaderPool  # noqa: PLC0415

        return PgReaderPool(url, size=count)
    return ReaderPool(database_path(storage.data_dir), size=count,
                      busy_timeout_ms=storage.busy_timeout_ms)
