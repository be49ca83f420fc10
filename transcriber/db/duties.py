"""The duty locks (`ports.DutyLock`) of one host: which process runs each singleton duty.

`FileDutyLocks` (SQLite, processes of one host): an exclusive `flock` on
`<data_dir>/duties/<duty>.lock`, tried without waiting. The kernel releases the
lock of a process that dies, however it dies, so the next ask of another process
takes it; a held flock cannot be lost while its holder lives. Several hosts use
PostgreSQL's advisory locks instead (`transcriber.db.postgres.duties`), keyed by
`duty_key`.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
from pathlib import Path

import structlog

from transcriber.ports import Duty

log = structlog.get_logger(__name__)

DUTIES_DIR = "duties"
KEY_PREFIX = b"transcriber duty "


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
