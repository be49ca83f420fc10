"""The writer actor's properties, each on a real SQLite file."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from prometheus_client import REGISTRY

from tests.helpers.factories import make_record, make_user
from transcriber.core.errors import NoWork, WriterUnavailable
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.commands.files import StoredFile
from transcriber.db.commands.pipeline import Claim, Claimed
from transcriber.db.commands.records import AcceptRecord
from transcriber.db.commands.users import EnsureUser, User
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Command, WriteContext, Writer
from transcriber.domain.stages import claimable_stages
from transcriber.testing.clock import FakeClock


class Boom(Exception):
    pass


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateThenFail(Command[None]):
    """Writes a user, then fails: its own write must be rolled back."""

    name: ClassVar[str] = "create_then_fail"
    login: str

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.users.INSERT, {"id": self.login, "login": self.login,
                                                "name": "", "email": "", "now": ctx.now()})
        raise Boom(self.login)


@dataclass(frozen=True, slots=True, kw_only=True)
class MissThenFail(Command[None]):
    """Declared savepoint-less: a conditional write that matches nothing, then a failure."""

    name: ClassVar[str] = "miss_then_fail"
    savepoint: ClassVar[bool] = False

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute("UPDATE users SET email = 'x' WHERE id = 'nobody'")
        raise Boom("missed")


@dataclass(frozen=True, slots=True, kw_only=True)
class BareCreateThenFail(CreateThenFail):
    """Breaks its savepoint-less declaration: it writes, then fails."""

    name: ClassVar[str] = "bare_create_then_fail"
    savepoint: ClassVar[bool] = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SlowCommand(Command[str]):
    name: ClassVar[str] = "slow"
    gate: asyncio.Event
    login: str

    async def execute(self, ctx: WriteContext) -> str:
        await self.gate.wait()
        user = await EnsureUser(login=self.login).execute(ctx)
        return user.id


async def _user_count(readers: ReaderPool) -> int:
    row = await readers.fetch_one("SELECT count(*) AS n FROM users")
    assert row is not None
    return int(row["n"])


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadPragmas(Command[dict[str, object]]):
    name: ClassVar[str] = "read_pragmas"

    async def execute(self, ctx: WriteContext) -> dict[str, object]:
        values: dict[str, object] = {}
        for pragma in ("journal_mode", "foreign_keys", "busy_timeout", "synchronous",
                       "temp_store"):
            async with ctx.conn.execute(f"PRAGMA {pragma}") as cursor:
                row = await cursor.fetchone()
            assert row is not None
            values[pragma] = row[0]
        return values


async def test_every_connection_gets_its_settings(migrated: Path, clock: FakeClock) -> None:
    writer = Writer(migrated, clock=clock, busy_timeout_ms=1234)
    await writer.start()
    try:
        # Inside its transaction the writer holds the write lock: nothing to wait
        # for (busy_timeout 0); the configured 1234 ms apply where it waits (BEGIN
        # behind another connection, the scrub's checkpoint: the tests below).
        # temp_store 2: statement journals in memory.
        assert await writer.ask(ReadPragmas()) == {
            "journal_mode": "wal", "foreign_keys": 1, "busy_timeout": 0, "synchronous": 2,
            "temp_store": 2}
    finally:
        await writer.stop()
    pool = ReaderPool(migrated, size=3, busy_timeout_ms=4321)
    await pool.open()
    try:
        for _ in range(3):  # every connection of the pool, not just one
            async with pool.acquire() as conn:
                for pragma, expected in (("journal_mode", "wal"), ("foreign_keys", 1),
                                         ("busy_timeout", 4321)):
                    async with conn.execute(f"PRAGMA {pragma}") as cur:
                        row = await cur.fetchone()
                    assert row is not None
                    assert row[0] == expected
                with pytest.raises(sqlite3.OperationalError, match="readonly"):
                    await conn.execute("DELETE FROM users")
    finally:
        await pool.close()


async def test_queued_commands_share_one_commit_and_get_their_own_answers(
    writer: Writer, readers: ReaderPool
) -> None:
    count_before = REGISTRY.get_sample_value("transcriber_writer_batch_size_count") or 0
    sum_before = REGISTRY.get_sample_value("transcriber_writer_batch_size_sum") or 0
    logins = [f"user{n}" for n in range(50)]
    users = await asyncio.gather(*(writer.ask(EnsureUser(login=login)) for login in logins))
    assert [u.login for u in users] == logins
    assert len({u.id for u in users}) == 50
    count_after = REGISTRY.get_sample_value("transcriber_writer_batch_size_count") or 0
    sum_after = REGISTRY.get_sample_value("transcriber_writer_batch_size_sum") or 0
    assert sum_after - sum_before == 50
    assert count_after - count_before < 50  # grouped: fewer transactions than commands
    assert await _user_count(readers) == 50


async def test_a_failing_command_rolls_back_only_itself(
    writer: Writer, readers: ReaderPool
) -> None:
    results = await asyncio.gather(
        writer.ask(EnsureUser(login="before")),
        writer.ask(CreateThenFail(login="doomed")),
        writer.ask(EnsureUser(login="after")),
        return_exceptions=True,
    )
    assert isinstance(results[0], User)
    assert isinstance(results[1], Boom)
    assert isinstance(results[2], User)
    rows = await readers.fetch_all("SELECT provider_login FROM users ORDER BY provider_login")
    assert [r["provider_login"] for r in rows] == ["after", "before"]


async def test_a_savepoint_less_command_failing_before_any_write_undoes_nothing(
    writer: Writer, readers: ReaderPool
) -> None:
    results = await asyncio.gather(
        writer.ask(EnsureUser(login="before")),
        writer.ask(MissThenFail()),
        writer.ask(EnsureUser(login="after")),
        return_exceptions=True,
    )
    assert isinstance(results[0], User)
    assert isinstance(results[1], Boom)
    assert isinstance(results[2], User)
    assert await _user_count(readers) == 2


async def test_a_savepoint_less_command_failing_after_a_write_fails_its_whole_batch(
    writer: Writer, readers: ReaderPool
) -> None:
    # Without a savepoint its write cannot be undone alone: committing the
    # batch would keep half a command, so nothing of the batch is stored.
    results = await asyncio.gather(
        writer.ask(EnsureUser(login="before")),
        writer.ask(BareCreateThenFail(login="doomed")),
        writer.ask(EnsureUser(login="after")),
        return_exceptions=True,
    )
    assert all(isinstance(result, sqlite3.OperationalError) for result in results), results
    assert await _user_count(readers) == 0
    # The writer goes on with the next batch.
    await writer.ask(EnsureUser(login="later"))
    assert await _user_count(readers) == 1


async def test_an_empty_claim_is_redone_once_the_transaction_changed_rows(
    writer: Writer, readers: ReaderPool
) -> None:
    owner = await make_user(writer)
    record_id, file_id = new_id(), new_id()
    accept = AcceptRecord(
        record_id=record_id, owner_id=owner.id,
        original=StoredFile(id=file_id, file_name=f"{file_id}.wav", size_bytes=1, format="wav",
                            duration_ms=1000),
        original_filename="a.wav", duration_ms=1000)
    leases = dict.fromkeys(claimable_stages(), 60.0)
    batches_before = REGISTRY.get_sample_value("transcriber_writer_batch_size_count") or 0
    # One batch, one second: the second empty claim may reuse the first's
    # answer, the one after the intake may not.
    answers = await asyncio.gather(
        writer.ask(Claim(leases=leases)), writer.ask(Claim(leases=leases)),
        writer.ask(accept),
        writer.ask(Claim(leases=leases)), writer.ask(Claim(leases=leases)))
    batches = (REGISTRY.get_sample_value("transcriber_writer_batch_size_count") or 0)
    assert batches - batches_before == 1
    assert isinstance(answers[0], NoWork)
    assert isinstance(answers[1], NoWork)
    claimed = answers[3]
    assert isinstance(claimed, Claimed)
    assert claimed.record_id == record_id
    assert isinstance(answers[4], NoWork)


async def test_a_cancelled_caller_does_not_cancel_its_command(
    writer: Writer, readers: ReaderPool
) -> None:
    gate = asyncio.Event()
    caller = asyncio.create_task(writer.ask(SlowCommand(gate=gate, login="patient")))
    await asyncio.sleep(0.01)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    gate.set()
    # The next command is answered after the slow one committed.
    await writer.ask(EnsureUser(login="next"))
    assert await _user_count(readers) == 2


async def test_first_request_race_creates_one_user(writer: Writer, readers: ReaderPool) -> None:
    users = await asyncio.gather(
        *(writer.ask(EnsureUser(login="race", display_name=f"n{n}")) for n in range(20)))
    assert len({u.id for u in users}) == 1
    assert await _user_count(readers) == 1


async def test_taken_email_creates_the_user_without_it(writer: Writer) -> None:
    first = await writer.ask(EnsureUser(login="a", email="shared@example.org"))
    second = await writer.ask(EnsureUser(login="b", email="shared@example.org"))
    assert first.email == "shared@example.org"
    assert second.email == ""
    assert second.id != first.id


async def test_a_user_is_never_rewritten_by_a_later_request(writer: Writer) -> None:
    first = await writer.ask(EnsureUser(login="a", display_name="Alice"))
    again = await writer.ask(EnsureUser(login="a", display_name="Mallory"))
    assert again == first


async def test_telegram_message_is_stored_once(writer: Writer, readers: ReaderPool) -> None:
    owner = await make_user(writer)
    first = await make_record(writer, owner, source="telegram", tg_chat_id=5, tg_message_id=9)
    second = await make_record(writer, owner, source="telegram", tg_chat_id=5, tg_message_id=9)
    assert first == second
    row = await readers.fetch_one("SELECT count(*) AS n FROM audio_records")
    assert row is not None
    assert row["n"] == 1


async def test_accepted_record_starts_uploaded_with_its_file(
    writer: Writer, readers: ReaderPool
) -> None:
    owner = await make_user(writer)
    record_id = await make_record(writer, owner, duration_ms=4321)
    row = await readers.fetch_one(q.records.SELECT_RECORD, {"id": record_id})
    assert row is not None
    assert row["state"] == "uploaded"
    assert row["attempts"] == 0
    assert row["duration_ms"] == 4321
    assert row["halted_at"] is None
    assert row["state_entered_at"] == row["created_at"] == "2026-01-01T00:00:00Z"
    file_row = await readers.fetch_one(q.records.SELECT_FILE, {"id": row["original_file_id"]})
    assert file_row is not None
    assert file_row["record_id"] == record_id


async def test_writer_death_fails_waiting_callers_and_is_reported(
    migrated: Path, clock: FakeClock
) -> None:
    deaths: list[BaseException] = []
    writer = Writer(migrated, clock=clock, on_death=deaths.append)
    await writer.start()
    conn = writer._conn
    assert conn is not None
    conn.raw.close()  # the connection breaks underneath the actor
    with pytest.raises(WriterUnavailable):
        await writer.ask(EnsureUser(login="x"))
    assert writer.task is not None
    await asyncio.wait({writer.task})
    assert len(deaths) == 1
    with pytest.raises(WriterUnavailable):
        await writer.ask(EnsureUser(login="y"))
    await writer.stop()


async def test_stop_answers_everything_already_queued(migrated: Path, clock: FakeClock) -> None:
    writer = Writer(migrated, clock=clock)
    await writer.start()
    pending = [asyncio.create_task(writer.ask(EnsureUser(login=f"u{n}"))) for n in range(10)]
    await asyncio.sleep(0)
    await writer.stop()
    users = await asyncio.gather(*pending)
    assert len(users) == 10
    with pytest.raises(WriterUnavailable):
        await writer.ask(EnsureUser(login="late"))


async def test_a_write_lock_held_elsewhere_is_waited_for_off_the_loop(
    migrated: Path, clock: FakeClock
) -> None:
    """BEGIN runs on the loop only when it need not wait; a lock held by another
    connection is waited for on the writer's thread, within busy_timeout."""
    other = sqlite3.connect(migrated, isolation_level=None)
    other.execute(q.control.BEGIN_IMMEDIATE)
    writer = Writer(migrated, clock=clock, busy_timeout_ms=5000)
    await writer.start()
    try:
        pending = asyncio.ensure_future(writer.ask(EnsureUser(login="waits")))
        await asyncio.sleep(0.2)  # the loop runs meanwhile: the wait is not on it
        assert not pending.done()
        other.execute(q.control.COMMIT)
        user = await asyncio.wait_for(pending, 5)
        assert user.login == "waits"
        assert (await writer.ask(ReadPragmas()))["busy_timeout"] == 0  # back to no wait
    finally:
        other.close()
        await writer.stop()


async def test_a_lock_held_past_busy_timeout_fails_the_batch_and_the_writer_goes_on(
    migrated: Path, clock: FakeClock
) -> None:
    other = sqlite3.connect(migrated, isolation_level=None)
    other.execute(q.control.BEGIN_IMMEDIATE)
    writer = Writer(migrated, clock=clock, busy_timeout_ms=50)
    await writer.start()
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            await writer.ask(EnsureUser(login="refused"))
        other.execute(q.control.COMMIT)
        assert (await writer.ask(EnsureUser(login="later"))).login == "later"
        assert (await writer.ask(ReadPragmas()))["busy_timeout"] == 0  # back to no wait
    finally:
        other.close()
        await writer.stop()
