"""The duty locks (`ports.DutyLock`) of several hosts: PostgreSQL's advisory locks.

`pg_try_advisory_lock(key)` (`db.duties.duty_key`), a session-level advisory lock
held on one dedicated connection per process (never the pool's). PostgreSQL
releases it when that session ends: a process killed, its host gone (the server's
TCP keepalives, set short here, notice within about half a minute), or the
connection cut. The holder hears of a drop at once (asyncpg's termination listener)
and otherwise probes its connection every `check_seconds`; a holder whose
connection dropped has lost every duty on it, and asks again (on a new connection)
like any other process.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import asyncpg
import structlog

from transcriber.core.clock import Clock, rest
from transcriber.db import queries as q
from transcriber.db.duties import duty_key
from transcriber.db.postgres import queries as pq
from transcriber.db.postgres.connection import PgConnection
from transcriber.ports import Duty

log = structlog.get_logger(__name__)

TIMEOUT_SECONDS = 10.0
# The server drops a session whose client stopped answering after about
# idle + interval x count seconds (ignored on a Unix socket, where death is seen at once).
SERVER_SETTINGS = {
    "application_name": "transcriber-duties",
    "tcp_keepalives_idle": "10",
    "tcp_keepalives_interval": "5",
    "tcp_keepalives_count": "3",
}
_UNREACHABLE = (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError)


class PostgresDutyLocks:
    """Every duty lock of this process, on one connection of its own. One statement runs
    on it at a time (`_gate`); it is opened at the first ask and again after a drop."""

    def __init__(self, url: str, *, clock: Clock, check_seconds: float) -> None:
        self._url = url
        self._clock = clock
        self._check_seconds = check_seconds
        self._gate = asyncio.Lock()
        self._conn: PgConnection | None = None
        self._dropped = asyncio.Event()
        self._held: set[Duty] = set()

    def lock(self, duty: Duty) -> PostgresDutyLock:
        return PostgresDutyLock(self, duty)

    async def _connection(self) -> PgConnection:
        if self._conn is not None and not self._conn.raw.is_closed():
            return self._conn
        self._held.clear()  # a new session holds nothing
        raw = await asyncpg.connect(self._url, timeout=TIMEOUT_SECONDS,
                                    server_settings=SERVER_SETTINGS)
        dropped = asyncio.Event()
        raw.add_termination_listener(lambda _conn: dropped.set())
        self._conn, self._dropped = PgConnection(raw), dropped
        return self._conn

    async def _ask(self, conn: PgConnection, sql: str, params: dict[str, Any],
                   column: str) -> bool:
        async with asyncio.timeout(TIMEOUT_SECONDS):
            row = await (await conn.execute(sql, params)).fetchone()
        return bool(row is not None and row[column])

    def _drop(self, error: BaseException) -> None:
        """Give up the connection after a failed statement: every duty on it is lost."""
        log.warning("duty_connection_dropped", error=type(error).__name__)
        if self._conn is not None:
            self._conn.raw.terminate()
        self._dropped.set()
        self._held.clear()

    async def try_take(self, duty: Duty) -> bool:
        async with self._gate:
            if duty in self._held and not self._dropped.is_set():
                return True
            try:
                conn = await self._connection()
                taken = await self._ask(conn, pq.TRY_DUTY_LOCK, {"key": duty_key(duty)},
                                        "taken")
            except _UNREACHABLE as exc:
                self._drop(exc)
                return False
            if taken:
                self._held.add(duty)
            return taken

    async def lost(self, duty: Duty) -> None:
        dropped = self._dropped
        while duty in self._held and not dropped.is_set():
            await rest(self._clock, self._check_seconds, dropped)
            if dropped.is_set():
                break
            async with self._gate:
                if dropped.is_set() or self._conn is None:
                    break
                try:
                    await self._ask(self._conn, q.control.READY_PROBE, {}, "ok")
                except _UNREACHABLE as exc:
                    self._drop(exc)
        self._held.discard(duty)

    async def give_back(self, duty: Duty) -> None:
        async with self._gate:
            if duty not in self._held:
                return
            self._held.discard(duty)
            if self._conn is None or self._dropped.is_set():
                return
            try:
                await self._ask(self._conn, pq.GIVE_BACK_DUTY_LOCK, {"key": duty_key(duty)},
                                "given_back")
            except _UNREACHABLE as exc:
                self._drop(exc)

    async def close(self) -> None:
        async with self._gate:
            self._held.clear()
            conn, self._conn = self._conn, None
            if conn is not None and not conn.raw.is_closed():
                # Ending the session releases every advisory lock it holds.
                with contextlib.suppress(*_UNREACHABLE):
                    await conn.raw.close(timeout=TIMEOUT_SECONDS)
                if not conn.raw.is_closed():
                    conn.raw.terminate()


class PostgresDutyLock:
    def __init__(self, locks: PostgresDutyLocks, duty: Duty) -> None:
        self._locks = locks
        self._duty = duty

    @property
    def duty(self) -> Duty:
        return self._duty

    async def try_take(self) -> bool:
        return await self._locks.try_take(self._duty)

    async def lost(self) -> None:
        await self._locks.lost(self._duty)

    async def give_back(self) -> None:
        await self._locks.give_back(self._duty)
