"""The duty locks (`ports.DutyLock`): which process runs each singleton duty.

- `FileDutyLocks`, one host (SQLite): an exclusive `flock` on
  `<data_dir>/duties/<duty>.lock`, tried without waiting. The kernel releases the
  lock of a process that dies, however it dies, so the next ask of another process
  takes it; a held flock cannot be lost while its holder lives.
- `PostgresDutyLocks`, several hosts: `pg_try_advisory_lock(key)`, a session-level
  advisory lock held on one dedicated connection per process (never the pool's).
  PostgreSQL releases it when that session ends: a process killed, its host gone
  (the server's TCP keepalives, set short here, notice within about half a minute),
  or the connection cut. The holder hears of a drop at once (asyncpg's termination
  listener) and otherwise probes its connection every `check_seconds`; a holder
  whose connection dropped has lost every duty on it, and asks again (on a new
  connection) like any other process.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
from pathlib import Path

import asyncpg
import structlog

from transcriber.clock import Clock, rest
from transcriber.db.queries import duties as q
from transcriber.ports import Duty

log = structlog.get_logger(__name__)

DUTIES_DIR = "duties"
KEY_PREFIX = b"transcriber duty "
CONNECT_TIMEOUT_SECONDS = 10.0
# The server drops a session whose client stopped answering after about
# idle + interval x count seconds (ignored on a Unix socket, where death is seen at once).
SERVER_SETTINGS = {
    "application_name": "transcriber-duties",
    "tcp_keepalives_idle": "10",
    "tcp_keepalives_interval": "5",
    "tcp_keepalives_count": "3",
}
_UNREACHABLE = (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError)


def duty_key(duty: Duty) -> int:
    """The advisory lock's key of a duty (pure): 64 bits of a hash of its name, signed as
    PostgreSQL's bigint, so other users of advisory locks in the database hardly meet it."""
    digest = hashlib.sha256(KEY_PREFIX + duty.value.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


# -- one host: flock -------------------------------------------------------------------


def _try_flock(path: Path) -> int | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


class FileDutyLock:
    def __init__(self, path: Path, duty: Duty) -> None:
        self._path = path
        self._duty = duty
        self._fd: int | None = None

    @property
    def duty(self) -> Duty:
        return self._duty

    async def try_take(self) -> bool:
        if self._fd is None:
            try:
                self._fd = await asyncio.to_thread(_try_flock, self._path)
            except OSError as exc:
                log.warning("duty_lock_unreachable", duty=self._duty.value,
                            error=type(exc).__name__)
        return self._fd is not None

    async def lost(self) -> None:
        # An flock stays with its open file until it is closed: never lost while we live.
        await asyncio.get_running_loop().create_future()

    async def give_back(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the flock
            self._fd = None


class FileDutyLocks:
    """The duty locks of one data folder (`<data_dir>/duties/`)."""

    def __init__(self, data_dir: Path) -> None:
        self._folder = data_dir / DUTIES_DIR
        self._made: list[FileDutyLock] = []

    def lock(self, duty: Duty) -> FileDutyLock:
        made = FileDutyLock(self._folder / f"{duty.value}.lock", duty)
        self._made.append(made)
        return made

    async def close(self) -> None:
        for made in self._made:
            await made.give_back()


# -- several hosts: PostgreSQL advisory locks ------------------------------------------


class PostgresDutyLocks:
    """Every duty lock of this process, on one connection of its own. One statement runs
    on it at a time (`_gate`); it is opened at the first ask and again after a drop."""

    def __init__(self, url: str, *, clock: Clock, check_seconds: float) -> None:
        self._url = url
        self._clock = clock
        self._check_seconds = check_seconds
        self._gate = asyncio.Lock()
        self._conn: asyncpg.Connection | None = None
        self._dropped = asyncio.Event()
        self._held: set[Duty] = set()

    def lock(self, duty: Duty) -> PostgresDutyLock:
        return PostgresDutyLock(self, duty)

    async def _connection(self) -> asyncpg.Connection:
        if self._conn is not None and not self._conn.is_closed():
            return self._conn
        self._held.clear()  # a new session holds nothing
        conn: asyncpg.Connection = await asyncpg.connect(
            self._url, timeout=CONNECT_TIMEOUT_SECONDS, server_settings=SERVER_SETTINGS)
        dropped = asyncio.Event()
        conn.add_termination_listener(lambda _conn: dropped.set())
        self._conn, self._dropped = conn, dropped
        return conn

    def _drop(self, error: BaseException) -> None:
        """Give up the connection after a failed statement: every duty on it is lost."""
        log.warning("duty_connection_dropped", error=type(error).__name__)
        if self._conn is not None:
            self._conn.terminate()
        self._dropped.set()
        self._held.clear()

    async def try_take(self, duty: Duty) -> bool:
        async with self._gate:
            if duty in self._held and not self._dropped.is_set():
                return True
            try:
                conn = await self._connection()
                taken = bool(await conn.fetchval(q.TRY_TAKE, duty_key(duty),
                                                 timeout=CONNECT_TIMEOUT_SECONDS))
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
                    await self._conn.fetchval(q.PROBE, timeout=self._check_seconds)
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
                await self._conn.fetchval(q.GIVE_BACK, duty_key(duty),
                                          timeout=CONNECT_TIMEOUT_SECONDS)
            except _UNREACHABLE as exc:
                self._drop(exc)

    async def close(self) -> None:
        async with self._gate:
            self._held.clear()
            conn, self._conn = self._conn, None
            if conn is not None and not conn.is_closed():
                # Ending the session releases every advisory lock it holds.
                with contextlib.suppress(*_UNREACHABLE):
                    await conn.close(timeout=CONNECT_TIMEOUT_SECONDS)
                if not conn.is_closed():
                    conn.terminate()


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
