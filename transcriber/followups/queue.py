"""The one durable-queue worker every follow-up's consumer runs in.

A consumer (`followups.reply`, `followups.describe`, `followups.webhooks`, the
next ones) subclasses `QueueWorker` and writes `round`: one look for its due
rows, each worked or given its next try (`followups.retry`). The worker owns
the rest, the same for all: the loop until `stopping`, a round that raises
logged (`<event_prefix>_round_failed`, ERROR) without ending the task, the
rest between rounds (`poll_seconds` on the service's clock, cut short by
`wake()` — cleared before the round, so a wake during it brings another round
at once, never a lost one), and at the stop `finish` (work in flight may end
within the supervisor's grace) and `cut` (what is still running is cancelled:
its row stays pending, at least once). The service runs `run` as a named,
supervised task under the follow-up's duty (`service.followups`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar

import structlog

from transcriber.core.clock import Clock, rest

if TYPE_CHECKING:
    from transcriber.followups.parts import Moment

log = structlog.get_logger(__name__)


class QueueWorker:
    """Base of a follow-up's consumer: the loop, the wake, the rest."""

    event_prefix: ClassVar[str] = "followup"
    """The first word of the worker's own log events (`outbox`, `describer`, `webhook`)."""

    def __init__(self, *, clock: Clock, poll_seconds: float) -> None:
        self._clock = clock
        self._poll_seconds = poll_seconds
        self._wake = asyncio.Event()
        self.active = True
        """False in a process that does not hold the worker's duty (`service.followups`):
        the holder works the queue, and work done here could double it."""

    def wake(self) -> None:
        """Look for due rows now (not at the next poll)."""
        self._wake.set()

    async def after(self, moment: Moment) -> None:
        """Told once `moment` (and this follow-up's row) is stored: by default, a wake."""
        self.wake()

    async def round(self, stopping: asyncio.Event | None = None) -> int:
        """One look for due rows; how many were worked or started."""
        raise NotImplementedError

    async def finish(self) -> None:
        """At the stop, after the last round: wait for work in flight (the supervisor's
        grace bounds the wait)."""

    async def cut(self) -> None:
        """Whatever is still running when the task ends: cancelled, its row pending."""

    async def run(self, stopping: asyncio.Event) -> None:
        """Work the queue until `stopping` is set."""
        try:
            while not stopping.is_set():
                self._wake.clear()  # before the round: a wake during it brings another
                try:
                    await self.round(stopping)
                except Exception as exc:  # a dead writer or a bug: keep the worker alive
                    log.error(f"{self.event_prefix}_round_failed", error=type(exc).__name__)
                await rest(self._clock, self._poll_seconds, self._wake, stopping)
            await self.finish()
        finally:
            await self.cut()
