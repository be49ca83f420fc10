"""The step actor tells who waits in this process when a record settles: done, or halted."""

from __future__ import annotations

import asyncio

from tests.helpers.factories import make_record
from tests.helpers.pipeline import MakeActor
from transcriber.db.commands.users import User
from transcriber.db.writer import Writer
from transcriber.pipeline.settled import SettledRecords
from transcriber.testing.steps import Behaviour, FakeStep


async def test_the_news_comes_with_done_and_only_then(
    make_actor: MakeActor, writer: Writer, user: User,
) -> None:
    settled = SettledRecords()
    actor = make_actor(settled=settled)
    record_id = await make_record(writer, user)
    with settled.watch(record_id) as news:
        for _ in range(3):  # normalize, submit, poll: still on its way
            await actor.run_once()
            assert not news.is_set()
        await actor.run_once()  # finish: done
        assert news.is_set()
    assert settled.watched == 0


async def test_the_news_comes_with_a_halt(
    make_actor: MakeActor, writer: Writer, user: User, steps: dict[str, FakeStep],
) -> None:
    settled = SettledRecords()
    actor = make_actor(settled=settled)
    steps["normalize"].then(Behaviour(fail="permanent"))
    record_id, other = await make_record(writer, user), await make_record(writer, user)
    with settled.watch(record_id) as news, settled.watch(other) as unrelated:
        report = await actor.run_once()
        assert report.outcome == "halted"
        assert news.is_set() is (report.record_id == record_id)
        assert unrelated.is_set() is (report.record_id == other)


async def test_every_waiter_of_a_record_wakes_and_is_forgotten() -> None:
    settled = SettledRecords()
    with settled.watch("r") as first, settled.watch("r") as second:
        waiting = asyncio.gather(first.wait(), second.wait())
        settled.settled("r")
        await asyncio.wait_for(waiting, 1)
    settled.settled("r")  # nobody waits: nothing happens
    assert settled.watched == 0
