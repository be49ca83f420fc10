"""The duty lock port: work that one process of the whole service runs at a time.

Several `transcriber serve` processes may share one archive (docs/operations.md,
"Roles"). Most of the work is safe side by side (the step actors claim records
under leases), but a few parts would do their work twice: two pollers take each
other's Telegram updates, two outbox actors send a reply twice, two describers
describe the same record. Each such part is a `Duty`, run only by the process
that holds its lock.

Adapters (`transcriber.db.duties`): an `flock` on a file of the data folder (one
host, SQLite) and a PostgreSQL session-level advisory lock (several hosts).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol


class Duty(StrEnum):
    """The singleton duties, named as the metric's label and the logs show them."""

    TELEGRAM_POLLING = "telegram-polling"  # getUpdates and the living status messages
    OUTBOX = "outbox"  # the Telegram outbox and the webhook deliveries
    SWEEPS = "sweeps"  # work over the whole archive (the search index's refill)
    DESCRIBER = "describer"  # the describe queue (it has no claims of its own)
    WATCH = "watch"  # the watched folders (one process takes their files)


class DutyLock(Protocol):
    """One duty's lock as this process sees it. Never blocks: a process that does not
    hold the lock asks again later (`try_take`), so a holder that dies is replaced
    within one ask's interval of its lock being released."""

    @property
    def duty(self) -> Duty: ...

    async def try_take(self) -> bool:
        """Take the lock if nobody holds it; True when this process holds it now.
        A failure to reach the lock's keeper answers False (asked again later)."""

    async def lost(self) -> None:
        """Return once the held lock is lost (its connection dropped); a lock that
        cannot be lost while this process lives never returns."""

    async def give_back(self) -> None:
        """Release the lock if held (the next `try_take` of any process may take it)."""


class DutyLocks(Protocol):
    """Where a process's duty locks come from, and their shared connection's end."""

    def lock(self, duty: Duty) -> DutyLock: ...

    async def close(self) -> None:
        """Release every lock and close what they share."""
