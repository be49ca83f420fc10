"""The singleton duties: the file lock of one host, the holder that runs a duty's work while
it holds the lock, and a loss that stops the work at once (real flock, fake clock)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from prometheus_client import REGISTRY

from tests.helpers.pipeline import until
from transcriber.db.duties import FileDutyLocks
from transcriber.ports import Duty, DutyLock
from transcriber.service.duties import DutyHolder, DutyWork
from transcriber.testing.clock import FakeClock
from transcriber.testing.duties import FakeDutyKeeper

POLL = 10.0


async def test_a_file_lock_has_one_holder_and_is_free_again_once_given_back(
        data_dir: Path) -> None:
    first, second = FileDutyLocks(data_dir), FileDutyLocks(data_dir)  # two processes
    mine, theirs = first.lock(Duty.OUTBOX), second.lock(Duty.OUTBOX)
    assert await mine.try_take()
    assert await mine.try_take()  # held already
    assert not await theirs.try_take()
    assert await second.lock(Duty.SWEEPS).try_take()  # another duty, another lock
    await mine.give_back()
    assert await theirs.try_take()
    assert not await mine.try_take()
    await second.close()  # gives back everything it holds
    assert await mine.try_take()
    await first.close()
    assert (data_dir / "duties" / "outbox.lock").is_file()


class Work:
    """A duty's work that says whether it runs and how often it started."""

    def __init__(self) -> None:
        self._running = False
        self.starts = 0

    def running(self) -> bool:
        return self._running

    def __call__(self) -> contextlib.AbstractAsyncContextManager[None]:
        return self._run()

    @contextlib.asynccontextmanager
    async def _run(self) -> AsyncIterator[None]:
        self._running = True
        self.starts += 1
        try:
            yield
        finally:
            self._running = False


class Running:
    """A holder's `run` as a task, with its own stop."""

    def __init__(self, lock: DutyLock, work: DutyWork, clock: FakeClock) -> None:
        self.holder = DutyHolder(lock, work, clock=clock, poll_seconds=POLL)
        self.stopping = asyncio.Event()
        self.task = asyncio.create_task(self.holder.run(self.stopping))

    async def stop(self) -> None:
        self.stopping.set()
        await asyncio.wait_for(self.task, 5)


def holds(running: Running) -> bool:
    return running.holder.held


def held_gauge(duty: Duty) -> float | None:
    return REGISTRY.get_sample_value("transcriber_duty_held", {"duty": duty.value})


async def test_the_second_holder_takes_over_the_file_lock_after_the_first_stops(
        data_dir: Path, clock: FakeClock) -> None:
    first_work, second_work = Work(), Work()
    first = Running(FileDutyLocks(data_dir).lock(Duty.SWEEPS), first_work, clock)
    await asyncio.wait_for(first.holder.asked.wait(), 5)
    assert first_work.running()
    assert holds(first)
    assert held_gauge(Duty.SWEEPS) == 1
    second = Running(FileDutyLocks(data_dir).lock(Duty.SWEEPS), second_work, clock)
    await asyncio.wait_for(second.holder.asked.wait(), 5)
    assert not second_work.running()
    assert not holds(second)
    try:
        await first.stop()  # gives the lock back
        assert not first_work.running()
        clock.advance(POLL - 1)
        await asyncio.sleep(0.05)
        assert not second_work.running()  # it asks only every poll
        clock.advance(1)
        await until(second_work.running)
        assert holds(second)
        assert second_work.starts == 1
    finally:
        await second.stop()
    assert not second_work.running()


async def test_a_lost_lock_stops_the_work_at_once_and_a_poller_takes_it_over(
        clock: FakeClock) -> None:
    keeper = FakeDutyKeeper()
    first_work, second_work = Work(), Work()
    first = Running(keeper.locks().lock(Duty.OUTBOX), first_work, clock)
    await asyncio.wait_for(first.holder.asked.wait(), 5)
    second = Running(keeper.locks().lock(Duty.OUTBOX), second_work, clock)
    await asyncio.wait_for(second.holder.asked.wait(), 5)
    try:
        clock.advance(POLL / 2)  # the poller asks again at POLL
        keeper.cut(Duty.OUTBOX)  # the holder's connection dropped
        await until(lambda: not first_work.running())  # at once, no clock moved
        assert not holds(first)
        assert held_gauge(Duty.OUTBOX) == 0
        clock.advance(POLL / 2)
        await until(second_work.running)
        clock.advance(POLL / 2)  # the one that lost asks again, and is refused
        await until(lambda: keeper.asks[Duty.OUTBOX] >= 4)
        assert not first_work.running()
        assert first_work.starts == 1
    finally:
        await first.stop()
        await second.stop()
