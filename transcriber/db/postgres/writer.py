"""The DB writer actor on PostgreSQL: the same mailbox, batches and answers as
SQLite's (`transcriber.db.writer`), over one asyncpg connection.

What differs is the engine's: every command runs inside its own SAVEPOINT
(a failed statement aborts a PostgreSQL transaction until rolled back to a
savepoint, where SQLite undoes the statement alone); a batch that loses a
deadlock or a serialization check to another process's writer is run again
whole (nothing of it was committed and no caller was answered); and before
COMMIT the writer recomputes the search terms of the records this batch
changed (`search.refresh_stale`), in Python, through the same normalization
as SQLite's index, so a committed change is searchable at once.

A refresh that fails (PostgreSQL refuses a literal: a term over its size
limits) must not fail the other commands of the batch: the batch is rolled
back and run again with each command's refresh inside its own savepoint, so
only the command whose terms were refused fails (its caller hears so) and
the rest commit. The fast path, one refresh per batch, costs one query.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import structlog

from transcriber.core.clock import Clock
from transcriber.core.observability import SEARCH_REFRESH_FAILURES
from transcriber.db.postgres import search
from transcriber.db.postgres.connection import PgConnection, connect
from transcriber.db.writer import Command, Envelope, WriteContext, Writer

log = structlog.get_logger(__name__)

# A batch that lost to another writer (deadlock, serialization) runs again this often.
RETRIES = 3
_RETRYABLE = (asyncpg.DeadlockDetectedError, asyncpg.SerializationError)


class _RefreshFailed(Exception):
    """The batch's search refresh failed (its transaction is rolled back)."""


class PgWriter(Writer):
    def __init__(
        self,
        url: str,
        *,
        clock: Clock,
        batch_max: int = 64,
        on_death: Callable[[BaseException], None] | None = None,
    ) -> None:
        # The SQLite path is unused here; the mailbox, metrics and answers are shared.
        super().__init__(Path(), clock=clock, batch_max=batch_max, on_death=on_death)
        self._url = url
        self._pg: PgConnection | None = None

    async def start(self) -> None:
        self._pg = PgConnection(await connect(self._url))
        self._accepting = True
        self._task = asyncio.create_task(self._run(), name="db-writer")
        self._task.add_done_callback(self._task_done)

    async def _run_batch(self, first: Envelope[Any]) -> bool:
        conn = self._pg
        assert conn is not None
        await self._let_callers_in()
        batch, stopping = self._take(first)
        outcomes: list[tuple[bool, Any]] = []
        each = False  # refresh the search terms in each command's savepoint
        try:
            attempt = 0
            while True:
                try:
                    outcomes = await self._transaction(conn, batch, refresh_each=each)
                    break
                except _RefreshFailed as exc:
                    # Only the batch-wide refresh raises this: once, then command by command.
                    SEARCH_REFRESH_FAILURES.inc()
                    log.warning("search_refresh_failed", error=type(exc.__cause__).__name__,
                                size=len(batch))
                    each = True
                except _RETRYABLE:
                    if attempt == RETRIES:
                        raise
                    attempt += 1
                    log.warning("writer_batch_retried", attempt=attempt, size=len(batch))
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            # The transaction itself failed (the server went away, a statement
            # timed out): nothing of this batch is stored, every caller hears so.
            log.error("writer_batch_failed", error=type(exc).__name__, size=len(batch))
            outcomes = [(False, sqlite3.OperationalError(type(exc).__name__))] * len(batch)
            if conn.raw.is_closed():
                # The actor dies with this batch taken: its callers must not wait forever.
                self._answer_stopped(batch)
                raise
        except BaseException:
            self._answer_stopped(batch)
            raise
        self._answer_batch(batch, outcomes)
        return stopping

    async def _transaction(
        self, conn: PgConnection, batch: list[Envelope[Any]], *, refresh_each: bool
    ) -> list[tuple[bool, Any]]:
        ctx = WriteContext(conn=conn, clock=self._clock)
        transaction = conn.raw.transaction()
        await transaction.start()
        try:
            outcomes = [await self._command(envelope.command, ctx, conn, refresh=refresh_each)
                        for envelope in batch]
            if not refresh_each:
                try:
                    await search.refresh_stale(conn)
                except _RETRYABLE:
                    raise
                except (asyncpg.PostgresError, ValueError) as exc:
                    raise _RefreshFailed from exc
        except BaseException:
            await transaction.rollback()
            raise
        await transaction.commit()
        return outcomes

    @staticmethod
    async def _command(
        command: Command[Any], ctx: WriteContext, conn: PgConnection, *, refresh: bool
    ) -> tuple[bool, Any]:
        savepoint = conn.raw.transaction()
        await savepoint.start()
        try:
            result = await command.execute(ctx)
            if refresh:
                await search.refresh_stale(conn)
        except _RETRYABLE:
            raise  # the whole transaction is lost: the batch runs again
        except Exception as exc:
            await savepoint.rollback()
            return False, exc
        await savepoint.commit()
        return True, result

    def _rollback_quietly(self) -> None:
        """Nothing to do: `_transaction` rolls back what it started."""

    async def _close(self) -> None:
        self._accepting = False
        if self._pg is not None:
            raw = self._pg.raw
            self._pg = None
            await raw.close()
        self._thread.shutdown(wait=False)
