"""The duty locks of several hosts: PostgreSQL advisory locks on a real server. One
process holds a duty; its connection killed (`pg_terminate_backend`), it hears of the
loss at once and another process takes the duty over at its next ask."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import asyncpg
from pytest_aiohttp import AiohttpClient

from tests.helpers.pipeline import until
from tests.helpers.settings import SettingsFactory
from transcriber.db.duties import duty_key
from transcriber.db.postgres.duties import PostgresDutyLocks
from transcriber.ports import Duty
from transcriber.service.app import build_app
from transcriber.service.duties import DutyHolder, DutyWork
from transcriber.service.roles import Role
from transcriber.settings import Secret
from transcriber.testing.clock import FakeClock

POLL = 10.0


async def _holder_pid(url: str, duty: Duty) -> int | None:
    """The server process holding the duty's advisory lock (a bigint key is shown split
    into its high and low 32 bits)."""
    key = duty_key(duty) & (2**64 - 1)
    admin = await asyncpg.connect(url)
    try:
        pid = await admin.fetchval(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND classid = $1 AND objid = $2 AND objsubid = 1", key >> 32, key & 0xFFFFFFFF)
    finally:
        await admin.close()
    return None if pid is None else int(pid)


async def _free(url: str, duty: Duty) -> bool:
    return await _holder_pid(url, duty) is None


async def _terminate(url: str, pid: int) -> None:
    admin = await asyncpg.connect(url)
    try:
        assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await admin.close()


async def test_one_holder_and_a_takeover_once_its_connection_is_killed(
        postgres_url: str, clock: FakeClock) -> None:
    first = PostgresDutyLocks(postgres_url, clock=clock, check_seconds=POLL)
    second = PostgresDutyLocks(postgres_url, clock=clock, check_seconds=POLL)
    mine, theirs = first.lock(Duty.OUTBOX), second.lock(Duty.OUTBOX)
    try:
        assert await mine.try_take()
        assert await mine.try_take()  # held already
        assert not await theirs.try_take()
        assert await second.lock(Duty.SWEEPS).try_take()  # another duty, another key
        pid = await _holder_pid(postgres_url, Duty.OUTBOX)
        assert pid is not None

        watching = asyncio.create_task(mine.lost())
        await asyncio.sleep(0.05)
        assert not watching.done()
        await _terminate(postgres_url, pid)
        await asyncio.wait_for(watching, 5)  # heard at once: the fake clock never moved

        # The server releases the lock as the killed session ends.
        await until(theirs.try_take, within=10)
        assert await _holder_pid(postgres_url, Duty.OUTBOX) != pid
        assert not await mine.try_take()  # on a new connection, refused
        await theirs.give_back()
        assert await mine.try_take()
    finally:
        await first.close()
        await second.close()
    assert await _holder_pid(postgres_url, Duty.OUTBOX) is None  # closing released it


async def test_the_holders_work_stops_when_its_connection_dies_and_a_poller_takes_over(
        postgres_url: str, clock: FakeClock) -> None:
    working: dict[str, bool] = {"first": False, "second": False}

    def work_of(name: str) -> DutyWork:
        @contextlib.asynccontextmanager
        async def run() -> AsyncIterator[None]:
            working[name] = True
            try:
                yield
            finally:
                working[name] = False
        return run

    locks = [PostgresDutyLocks(postgres_url, clock=clock, check_seconds=POLL) for _ in "ab"]
    holders = [DutyHolder(made.lock(Duty.TELEGRAM_POLLING), work_of(name), clock=clock,
                          poll_seconds=POLL)
               for made, name in zip(locks, ("first", "second"), strict=True)]
    stopping = asyncio.Event()
    tasks = []
    try:
        for holder in holders:
            tasks.append(asyncio.create_task(holder.run(stopping)))
            await asyncio.wait_for(holder.asked.wait(), 10)
        assert working == {"first": True, "second": False}
        clock.advance(POLL / 2)
        pid = await _holder_pid(postgres_url, Duty.TELEGRAM_POLLING)
        assert pid is not None
        await _terminate(postgres_url, pid)
        await until(lambda: not working["first"])  # at once
        await until(lambda: _free(postgres_url, Duty.TELEGRAM_POLLING))  # the session ended
        clock.advance(POLL / 2)  # the poller's ask: the lock is free
        await until(lambda: working["second"], within=10)
        clock.advance(POLL / 2)  # the first asks again: refused
        await asyncio.sleep(0.2)
        assert working == {"first": False, "second": True}
    finally:
        stopping.set()
        await asyncio.wait_for(asyncio.gather(*tasks), 10)
        for made in locks:
            await made.close()


async def test_two_workers_on_one_database_share_the_describer_and_hand_it_over(
        postgres_url: str, aiohttp_client: AiohttpClient, make_settings: SettingsFactory,
        clock: FakeClock) -> None:
    # Workers: the describer duty; the service's doors are tested on SQLite.
    settings = make_settings(storage={"database_url": Secret(postgres_url)},
                             pipeline={"workers": 0}, server={"duty_poll_seconds": POLL})
    first = await aiohttp_client(build_app(settings, role=Role.WORKER, clock=clock))
    holder = await _holder_pid(postgres_url, Duty.DESCRIBER)
    assert holder is not None
    second = await aiohttp_client(build_app(settings, role=Role.WORKER, clock=clock))
    assert await _holder_pid(postgres_url, Duty.DESCRIBER) == holder
    await first.close()  # a graceful stop gives the duty back
    assert await _free(postgres_url, Duty.DESCRIBER)
    clock.advance(POLL)
    await until(lambda: _holder_pid(postgres_url, Duty.DESCRIBER))
    assert await _holder_pid(postgres_url, Duty.DESCRIBER) != holder
    await second.close()
