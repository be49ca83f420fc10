"""A new follow-up is one consumer plus one entry in the list (`followups.registry`):
a toy one — its own table, its `QueueWorker`, its `FollowUp` entry — registered beside
the declared ones, with no other change to the pipeline. Its row is written in the
transaction of `done` (and only of the occasions it names), its worker is told after
the commit and works the row in its round; a stale `done` writes and tells nothing.
On both engines."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import ClassVar

from tests.helpers.database import TestDatabase
from tests.helpers.factories import make_record
from tests.helpers.pipeline import MakeActor, claim_ok, until
from tests.helpers.steps import drive
from transcriber.core.ids import new_id
from transcriber.db.commands.users import User
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Command, WriteContext, Writer
from transcriber.followups.after import FollowUps
from transcriber.followups.parts import Moment, Parts
from transcriber.followups.queue import QueueWorker
from transcriber.followups.registry import FOLLOWUPS, FollowUp, build_workers
from transcriber.ports import Duty
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.steps import Behaviour, FakeStep

TOY = "toy-notices"


@dataclass(frozen=True, slots=True, kw_only=True)
class _CreateToyTable(Command[None]):
    name: ClassVar[str] = "test_toy_table"

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(
            "CREATE TABLE toy_notices (id TEXT PRIMARY KEY, record_id TEXT NOT NULL, "
            "occasion TEXT NOT NULL, sent_at TEXT)", {})


@dataclass(frozen=True, slots=True, kw_only=True)
class _MarkSent(Command[None]):
    name: ClassVar[str] = "test_toy_sent"
    id: str

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute("UPDATE toy_notices SET sent_at = :now WHERE id = :id",
                               {"id": self.id, "now": ctx.now()})


async def enqueue_toy(ctx: WriteContext, moment: Moment) -> None:
    await ctx.conn.execute(
        "INSERT INTO toy_notices (id, record_id, occasion) VALUES (:id, :record_id, :occasion)",
        {"id": new_id(), "record_id": moment.record_id, "occasion": moment.occasion})


class ToyNotices(QueueWorker):
    """The toy consumer: sends (records) every unsent row in its round."""

    event_prefix = "toy"

    def __init__(self, parts: Parts) -> None:
        super().__init__(clock=parts.clock, poll_seconds=60.0)
        self._writer, self._readers = parts.writer, parts.readers
        self.told: list[Moment] = []
        self.sent: list[str] = []

    async def after(self, moment: Moment) -> None:
        self.told.append(moment)
        await super().after(moment)

    async def round(self, stopping: asyncio.Event | None = None) -> int:
        rows = await self._readers.fetch_all(
            "SELECT id, record_id FROM toy_notices WHERE sent_at IS NULL ORDER BY id", {})
        for row in rows:
            await self._writer.ask(_MarkSent(id=row["id"]))
            self.sent.append(row["record_id"])
        return len(rows)


@dataclass(slots=True)
class _Built:
    worker: ToyNotices | None = None
    all: list[str] = field(default_factory=list)


def _build(built: _Built) -> FollowUp:
    def build(parts: Parts) -> ToyNotices:
        built.worker = ToyNotices(parts)
        return built.worker

    return FollowUp(name=TOY, occasions=frozenset({"done"}), enqueue=enqueue_toy,
                    build=build, duty=Duty.OUTBOX)


async def _toy_run(writer: Writer, readers: ReaderPool, clock: FakeClock,
                   settings: Settings) -> tuple[FollowUps, ToyNotices]:
    await writer.ask(_CreateToyTable())
    built = _Built()
    declared = (*FOLLOWUPS, _build(built))  # the one new entry
    workers = build_workers(Parts(writer=writer, readers=readers, clock=clock,
                                  settings=settings), declared)
    assert built.worker is not None
    return FollowUps(workers, declared=declared), built.worker


async def test_a_registered_toy_follow_up_is_written_with_done_and_worked(
        make_actor: MakeActor, writer: Writer, readers: ReaderPool, clock: FakeClock,
        settings: Settings, user: User, database: TestDatabase) -> None:
    followups, toy = await _toy_run(writer, readers, clock, settings)
    record_id = await make_record(writer, user)
    actor = make_actor(followups=followups)
    await drive(actor, clock, readers, record_id)
    # Written in the transaction of `done`, then its worker told once.
    assert database.rows("SELECT record_id, occasion, sent_at FROM toy_notices") == [
        (record_id, "done", None)]
    assert toy.told == [Moment(record_id=record_id, occasion="done")]
    # The worker's own loop, as the service supervises it: woken, it works the row.
    stopping = asyncio.Event()
    task = asyncio.create_task(toy.run(stopping), name=TOY)
    await until(lambda: toy.sent == [record_id])
    stopping.set()
    await task
    assert database.scalar("SELECT count(*) FROM toy_notices WHERE sent_at IS NULL") == 0


async def test_the_toy_follows_only_its_occasions_and_never_a_stale_write(
        make_actor: MakeActor, writer: Writer, readers: ReaderPool, clock: FakeClock,
        settings: Settings, user: User, steps: dict[str, FakeStep],
        database: TestDatabase) -> None:
    followups, toy = await _toy_run(writer, readers, clock, settings)
    # A halt is not the toy's occasion: no row, not told.
    halted = await make_record(writer, user)
    steps["normalize"].then(Behaviour(fail="permanent"))
    actor = make_actor(followups=followups)
    await drive(actor, clock, readers, halted)
    assert database.scalar("SELECT halted_at FROM audio_records WHERE id = :id",
                           {"id": halted}) is not None
    # A `done` whose claim went to another meanwhile: stale, nothing written or told.
    stale = await make_record(writer, user)
    for _ in range(3):
        assert (await actor.run_once()).outcome == "success"
    lease = settings.pipeline.lease_seconds
    steps["finish"].then(Behaviour(seconds=lease + 1))
    run = asyncio.create_task(actor.run_once())
    await until(lambda: clock.sleepers == 2)
    clock.advance(lease + 1)
    await claim_ok(writer, settings)
    assert (await run).outcome == "stale"
    assert database.scalar("SELECT state FROM audio_records WHERE id = :id",
                           {"id": stale}) == "transcribed"
    assert database.count("toy_notices") == 0
    assert toy.told == []
