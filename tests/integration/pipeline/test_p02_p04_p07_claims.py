"""P2 (atomic claim), P4 (abandoned work returns), P7 (selection ignores the owner)."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from datetime import timedelta

import pytest

from tests.helpers.factories import make_record, make_user
from tests.helpers.pipeline import (
    MakeActor,
    claim,
    claim_ok,
    sample,
    state_of,
)
from transcriber.core.clock import TIME_FORMAT, format_time, parse_time
from transcriber.core.errors import NoWork
from transcriber.db import queries as q
from transcriber.db.commands.pipeline import Advance, Claim, Claimed, Halt, Resume
from transcriber.db.commands.users import User
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.stages import HaltReason, Stage
from transcriber.pipeline.actor import StepActor
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.steps import Behaviour, FakeStep

STORED_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


# -- P2 ---------------------------------------------------------------------------------


async def test_p02_three_claimers_at_once(writer: Writer, settings: Settings, user: User) -> None:
    """Exactly one record is eligible and three claims run at once: exactly one
    gets it, the other two get "no work"."""
    record_id = await make_record(writer, user)
    answers = await asyncio.gather(*(claim(writer, settings) for _ in range(3)))
    winners = [a for a in answers if isinstance(a, Claimed)]
    assert len(winners) == 1
    assert winners[0].record_id == record_id
    assert sum(isinstance(a, NoWork) for a in answers) == 2


async def test_p02_a_claimed_record_is_not_handed_out_twice(
    writer: Writer, settings: Settings, user: User, clock: FakeClock
) -> None:
    """A record is claimed and its lease has not expired: the next claim does
    not get it."""
    await make_record(writer, user)
    await claim_ok(writer, settings)
    clock.advance(settings.pipeline.lease_seconds - 1)
    assert isinstance(await claim(writer, settings), NoWork)


async def test_p02_claim_returns_the_id_and_its_own_token_and_the_step_reads_columns(
    writer: Writer, settings: Settings, user: User, readers: ReaderPool
) -> None:
    """A claim returns the record id and the token of this claim; the step reads
    the record's columns with a separate read."""
    record_id = await make_record(writer, user)
    claimed = await claim_ok(writer, settings)
    assert claimed.record_id == record_id
    assert re.fullmatch(r"[0-9a-z]{26}", claimed.token)
    assert "RETURNING id, acquisition_id" in q.pipeline.CLAIM
    # Only queue bookkeeping travels with the claim, never the record's content.
    assert {f.name for f in dataclasses.fields(Claimed)} == {
        "record_id", "token", "stage", "attempts", "state_entered_at", "lease_taken_over",
        "lease_expires_at"}
    row = await readers.fetch_one(q.records.SELECT_RECORD, {"id": claimed.record_id})
    assert row is not None
    assert row["acquisition_id"] == claimed.token
    assert row["title"] == ""


async def test_p02_token_of_a_reissued_claim_differs_from_the_first(
    writer: Writer, settings: Settings, user: User
) -> None:
    """The record is claimed and the first token is known; a person resumes it and
    another worker claims it: the new token differs from the first."""
    await make_record(writer, user)
    first = await claim_ok(writer, settings)
    await writer.ask(Halt(record_id=first.record_id, token=first.token,
                          reason=HaltReason.STEP_FAILED, error_text="x"))
    await writer.ask(Resume(record_id=first.record_id))
    second = await claim_ok(writer, settings)
    assert second.record_id == first.record_id
    assert second.token != first.token


async def test_p02_claim_order_is_created_at_then_id(
    writer: Writer, settings: Settings, user: User, clock: FakeClock
) -> None:
    """Ties on `created_at` (one second) are broken by the id, so the order is
    reproducible."""
    same_second = [await make_record(writer, user) for _ in range(5)]
    clock.advance(1)
    later = await make_record(writer, user)
    order = [(await claim_ok(writer, settings)).record_id for _ in range(6)]
    assert order == [*sorted(same_second), later]


async def test_p02_claim_query_uses_the_index(readers: ReaderPool, engine: str) -> None:
    if engine == "postgresql":
        pytest.skip("PostgreSQL's plans are checked at 200 000 records "
                    "(tests/integration/storage/test_postgres_plans.py)")
    params = {"token": "t", "now": "2026-01-01T00:00:00Z",
              **{q.pipeline.lease_param(s): "x" for s in q.pipeline.CLAIMABLE_STAGES}}
    plan = await readers.fetch_all("EXPLAIN QUERY PLAN " + q.pipeline.CLAIM, params)
    details = " | ".join(row["detail"] for row in plan)
    assert "idx_audio_records_acquire" in details
    assert not re.search(r"SCAN audio_records(?! USING)", details), details


# -- P4 ---------------------------------------------------------------------------------


async def test_p04_expired_lease_is_handed_out_again(
    writer: Writer, settings: Settings, user: User, clock: FakeClock
) -> None:
    """A record is claimed and its claim is older than the lease: the next claim
    gets it (and the metric counts a lease expiry)."""
    record_id = await make_record(writer, user)
    first = await claim_ok(writer, settings)
    assert first.lease_taken_over is False
    clock.advance(settings.pipeline.lease_seconds)
    second = await claim_ok(writer, settings)
    assert second.record_id == record_id
    assert second.lease_taken_over is True
    assert second.attempts == 2  # the abandoned attempt was spent


async def test_p04_lease_is_compared_with_times_written_like_the_storage_writes_its_own(
    writer: Writer, settings: Settings, user: User, clock: FakeClock, readers: ReaderPool
) -> None:
    """The claim time is stored in the same form as the record's modification time;
    a claim before the lease ends does not get the record."""
    record_id = await make_record(writer, user)
    claimed = await claim_ok(writer, settings)
    row = await state_of(readers, record_id)
    for column in ("acquire_expires_at", "updated_at", "state_entered_at"):
        assert STORED_TIME.fullmatch(row[column]), column
    assert len(row["acquire_expires_at"]) == len(row["updated_at"])
    assert row["acquire_expires_at"] == format_time(
        clock.now() + timedelta(seconds=settings.pipeline.lease_seconds))
    assert parse_time(claimed.lease_expires_at).strftime(TIME_FORMAT) == claimed.lease_expires_at
    clock.advance(settings.pipeline.lease_seconds - 1)
    assert isinstance(await claim(writer, settings), NoWork)
    clock.advance(1)
    assert isinstance(await claim(writer, settings), Claimed)


async def test_p04_lease_comes_with_the_stage(
    writer: Writer, settings: Settings, user: User, clock: FakeClock, readers: ReaderPool
) -> None:
    """Records of two stages with different leases are eligible; one worker claims
    both; each carries its own stage's lease."""
    chosen = dataclasses.replace(settings, pipeline=dataclasses.replace(
        settings.pipeline, lease_seconds=60, stage_lease_seconds={"normalized": "600"}))
    at_normalized = await make_record(writer, user)
    first = await claim_ok(writer, chosen)
    await writer.ask(Advance(record_id=first.record_id, token=first.token, step="normalize"))
    at_uploaded = await make_record(writer, user)
    now = clock.now()
    a = await claim_ok(writer, chosen)
    b = await claim_ok(writer, chosen)
    assert (a.record_id, b.record_id) == (at_normalized, at_uploaded)
    assert (await state_of(readers, at_normalized))["acquire_expires_at"] == \
        format_time(now + timedelta(seconds=600))
    assert (await state_of(readers, at_uploaded))["acquire_expires_at"] == \
        format_time(now + timedelta(seconds=60))


async def test_p04_a_claim_taking_over_an_expired_lease_is_counted(
    actor: StepActor, writer: Writer, settings: Settings, user: User, clock: FakeClock,
) -> None:
    """`transcriber_lease_expiries_total` counts claims whose previous holder's
    lease had expired, and only those."""
    await make_record(writer, user)
    before = sample("transcriber_lease_expiries_total")
    assert (await actor.run_once()).outcome == "success"  # a released record: not counted
    assert sample("transcriber_lease_expiries_total") == before
    await claim_ok(writer, settings)  # a holder that dies
    clock.advance(settings.pipeline.lease_seconds)
    assert (await actor.run_once()).outcome == "success"
    assert sample("transcriber_lease_expiries_total") == before + 1


# -- P7 ---------------------------------------------------------------------------------


async def test_p07_records_of_two_owners_go_to_one_worker_in_creation_order(
    make_actor: MakeActor, writer: Writer, steps: dict[str, FakeStep], clock: FakeClock
) -> None:
    """Records of two different owners at one stage: the worker gets both, in the
    order they were created."""
    alice = await make_user(writer, "alice")
    bob = await make_user(writer, "bob")
    first = await make_record(writer, bob)
    clock.advance(1)
    second = await make_record(writer, alice)
    # The older record keeps priority at its next stage too; let it wait there.
    steps["submit"].default = Behaviour(defer_seconds=10)
    actor = make_actor()
    reports = [await actor.run_once() for _ in range(4)]
    assert [(r.record_id, r.step) for r in reports] == [
        (first, "normalize"), (first, "submit"), (second, "normalize"), (second, "submit")]


async def test_p07_bot_record_is_processed_like_the_others(
    actor: StepActor, writer: Writer, steps: dict[str, FakeStep], readers: ReaderPool
) -> None:
    """A record accepted by the bot is processed like any other.

    Departure from the seed (docs/storage.md): bot records have an owner (the sender's
    mapped login), so "a record without an owner" becomes "a Telegram record"."""
    owner = await make_user(writer, "carol")
    record_id = await make_record(writer, owner, source="telegram", tg_chat_id=10,
                                  tg_message_id=20)
    report = await actor.run_once()
    assert report.outcome == "success"
    assert steps["normalize"].calls[0].record_id == record_id
    assert (await state_of(readers, record_id))["state"] == "normalized"


async def test_p07_the_step_does_not_overwrite_the_owner(
    actor: StepActor, writer: Writer, user: User, readers: ReaderPool
) -> None:
    """A record with an owner passes a step: when the step saves its result the
    owner stays the same."""
    record_id = await make_record(writer, user)
    for _ in range(4):
        assert (await actor.run_once()).outcome == "success"
    row = await state_of(readers, record_id)
    assert row["state"] == "done"
    assert row["owner_id"] == user.id


async def test_p02_claims_of_one_batch_each_get_their_own_lease_table(
    writer: Writer, user: User, clock: FakeClock
) -> None:
    """The lease parameters are formatted once per transaction and second, per
    lease table: claims sent together with different tables (and a fractional
    lease, never memoized) each get the expiry of their own table."""
    for _ in range(3):
        await make_record(writer, user)
    clock.advance(0.75)
    tables = [{Stage(stage): seconds for stage in q.pipeline.CLAIMABLE_STAGES}
              for seconds in (30.0, 90.0, 10.5)]
    answers = await asyncio.gather(*(writer.ask(Claim(leases=table)) for table in tables))
    now = clock.now()
    expected = [format_time(now + timedelta(seconds=s)) for s in (30.0, 90.0, 10.5)]
    got = [a.lease_expires_at for a in answers if isinstance(a, Claimed)]
    assert got == expected
