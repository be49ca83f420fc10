"""The singleton duties (`ports.Duty`): run by one process of the service at a time.

`duty_locks_ctx` puts the process's duty locks on the app (`make_duty_locks` chooses
their kind); `duty_ctx(duty, work_of)` makes the cleanup context of one duty. Its
work (`DutyWork`, an async context manager: entering starts the duty's tasks, leaving
stops them) runs while the lock is held, inside the named task `duty-<name>`
(`DutyHolder.run`, supervised: its death stops the service):

- at start the lock is asked for once before the context yields, so a process
  alone on its archive starts every duty in the order of the contexts, as if
  there were no lock;
- a process that does not hold it asks again every `server.duty_poll_seconds`;
- a holder whose lock is lost (its PostgreSQL connection dropped) stops the work
  at once and asks again after one such interval (by then a process that polls
  has taken the duty over);
- at the service's stop the work stops, in the reverse order of the contexts,
  and the lock is given back, so another process takes the duty at its next ask.

What the work needs is built before the context yields (the app's state is frozen
once it started); the work only starts and stops tasks. `transcriber_duty_held`
shows which duties a process holds.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import structlog
from aiohttp import web

from transcriber.core.clock import Clock, rest
from transcriber.core.observability import DUTY_HELD
from transcriber.db.duties import FileDutyLocks
from transcriber.db.engine import database_url
from transcriber.db.postgres.duties import PostgresDutyLocks
from transcriber.ports import Duty, DutyLock, DutyLocks
from transcriber.service.fatal import supervised
from transcriber.settings import Settings
from transcriber.web import keys

log = structlog.get_logger(__name__)

DUTY_LOCKS = web.AppKey("duty_locks", DutyLocks)

DutyWork = Callable[[], AbstractAsyncContextManager[None]]
"""A duty's work: entering starts its tasks, leaving stops them (and may be entered
again after a loss)."""
CleanupContext = Callable[[web.Application], AsyncIterator[None]]


def make_duty_locks(settings: Settings, *, clock: Clock) -> DutyLocks:
    """The one place the kind of lock is chosen, as the storage engine is: PostgreSQL's
    advisory locks when `storage.database_url` is set (processes on several hosts share
    that database), else `flock` on files of the data folder (processes of one host)."""
    url = database_url(settings.storage)
    if url is not None:
        return PostgresDutyLocks(url, clock=clock,
                                 check_seconds=settings.server.duty_poll_seconds)
    return FileDutyLocks(settings.storage.data_dir)


async def duty_locks_ctx(app: web.Application) -> AsyncIterator[None]:
    if DUTY_LOCKS not in app:  # a test's locks are kept
        app[DUTY_LOCKS] = make_duty_locks(app[keys.SETTINGS], clock=app[keys.CLOCK])
    try:
        yield
    finally:
        await app[DUTY_LOCKS].close()


class DutyHolder:
    """One duty's lock, and its work run while the lock is held."""

    def __init__(self, lock: DutyLock, work: DutyWork, *, clock: Clock,
                 poll_seconds: float) -> None:
        self._lock = lock
        self._work = work
        self._clock = clock
        self._poll_seconds = poll_seconds
        self.asked = asyncio.Event()
        """Set once the first ask is answered (and, when it was won, the work started)."""
        self.held = False

    @property
    def duty(self) -> Duty:
        return self._lock.duty

    async def run(self, stopping: asyncio.Event) -> None:
        """Ask, hold and work until `stopping` is set."""
        name = self.duty.value
        DUTY_HELD.labels(name).set(0)
        while not stopping.is_set():
            if not await self._lock.try_take():
                self.asked.set()
                await rest(self._clock, self._poll_seconds, stopping)
                continue
            lost = False
            try:
                self.held = True
                DUTY_HELD.labels(name).set(1)
                log.info("duty_taken", duty=name)
                async with self._work():
                    self.asked.set()
                    lost = await self._hold(stopping)
            finally:
                self.held = False
                DUTY_HELD.labels(name).set(0)
                await self._lock.give_back()
            if lost:
                log.warning("duty_lost", duty=name)
                # A rest before asking again: a process that polls takes it over meanwhile,
                # rather than the one whose connection just failed.
                await rest(self._clock, self._poll_seconds, stopping)
            else:
                log.info("duty_given_back", duty=name)

    async def _hold(self, stopping: asyncio.Event) -> bool:
        """Wait for the lock's loss (True) or the stop (False)."""
        lost = asyncio.create_task(self._lock.lost(), name=f"duty-{self.duty.value}-lost")
        stop = asyncio.create_task(stopping.wait(), name=f"duty-{self.duty.value}-stop")
        try:
            await asyncio.wait({lost, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (lost, stop):
                task.cancel()
            await asyncio.wait({lost, stop})
        return lost.done() and not lost.cancelled() and not stopping.is_set()


def duty_ctx(duty: Duty, work_of: Callable[[web.Application], DutyWork | None]
             ) -> CleanupContext:
    """The cleanup context of `duty`: `work_of(app)`, called at start, builds what the
    work needs and answers the work, or None when this process has none (the bot not
    configured, the describer off): then the lock is never asked for."""

    async def context(app: web.Application) -> AsyncIterator[None]:
        work = work_of(app)
        if work is None:
            yield
            return
        settings = app[keys.SETTINGS]
        holder = DutyHolder(app[DUTY_LOCKS].lock(duty), work, clock=app[keys.CLOCK],
                            poll_seconds=settings.server.duty_poll_seconds)
        # The stop of the work has its own graces; this one only bounds a stuck stop.
        async with supervised(app, holder.run, name=f"duty-{duty.value}", died="duty_died",
                              grace_seconds=settings.server.shutdown_forced_seconds):
            asked = asyncio.create_task(holder.asked.wait(), name=f"duty-{duty.value}-asked")
            try:
                waiting: list[asyncio.Future[Any]] = [asked, app[keys.FATAL]]
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            finally:
                asked.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await asked
            yield

    context.__name__ = f"duty_ctx[{duty.value}]"
    return context
