"""P3 (only the claim holder writes), P12 (defer is not a transition),
P15 (the event journal)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.helpers.factories import make_record
from tests.helpers.pipeline import (
    OwnerEdits,
    StoreTranscript,
    claim_ok,
    events_of,
    state_of,
    until,
)
from transcriber.core.errors import ClaimLost
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.commands.files import StoredFile
from transcriber.db.commands.pipeline import Advance, Halt, Resume
from transcriber.db.commands.users import User
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.stages import HaltReason
from transcriber.pipeline.actor import StepActor
from transcriber.pipeline.effects import AddFile
from transcriber.ports.files import PlacedFile
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.notifier import RecordingNotifier
from transcriber.testing.steps import Behaviour, FakeStep

# -- P3 ---------------------------------------------------------------------------------


async def test_p03_owner_edit_survives_the_step_saving_its_result(
    actor: StepActor, writer: Writer, user: User, steps: dict[str, FakeStep],
    clock: FakeClock, readers: ReaderPool,
) -> None:
    """A step holds the claimed record; meanwhile the owner changes a field the
    step does not touch; the step writes its result: the result is written and
    the owner's edit is in place."""
    record_id = await make_record(writer, user)
    steps["normalize"].then(Behaviour(seconds=10))
    run = asyncio.create_task(actor.run_once())
    await until(lambda: clock.sleepers == 2)  # the step and its heartbeat wait on the clock
    await writer.ask(OwnerEdits(record_id=record_id, title="Board meeting", brief="Q3"))
    clock.advance(10)
    report = await run
    assert report.outcome == "success"
    row = await readers.fetch_one("SELECT state, title, brief, owner_id FROM audio_records "
                                  "WHERE id = :id", {"id": record_id})
    assert row is not None
    assert (row["state"], row["title"], row["brief"], row["owner_id"]) == \
        ("normalized", "Board meeting", "Q3", user.id)


async def test_p03_claim_went_to_another_under_a_running_step(
    actor: StepActor, writer: Writer, settings: Settings, steps: dict[str, FakeStep],
    clock: FakeClock, readers: ReaderPool, notifier: RecordingNotifier, user: User,
) -> None:
    """The finish step works on a claimed record; meanwhile the same record went to
    another claim; when the first step reaches its result write, nothing is written
    (no follow-up's row either) and nothing is sent to the sender."""
    record_id = await make_record(writer, user, source="telegram", tg_chat_id=1,
                                  tg_message_id=2)
    for _ in range(3):  # to `transcribed`: the next advance is the one to `done`
        assert (await actor.run_once()).outcome == "success"
    before = await events_of(readers, record_id)
    lease = settings.pipeline.lease_seconds
    # The step finishes exactly when the lease has run out and another takes it.
    steps["finish"].then(Behaviour(seconds=lease + 1))
    run = asyncio.create_task(actor.run_once())
    await until(lambda: clock.sleepers == 2)
    clock.advance(lease + 1)
    # Enqueued before the first holder's task runs again: the other claim wins.
    other = await claim_ok(writer, settings)
    report = await run
    assert report.outcome == "stale"
    row = await state_of(readers, record_id)
    assert row["state"] == "transcribed"
    assert row["acquisition_id"] == other.token
    assert await events_of(readers, record_id) == before
    assert await readers.fetch_all(q.telegram.OUTBOX_OF_RECORD, {"record_id": record_id}) == []
    assert notifier.attempts == []


async def test_p03_a_running_step_whose_heartbeat_finds_the_token_gone_is_cancelled(
    actor: StepActor, writer: Writer, settings: Settings, steps: dict[str, FakeStep],
    clock: FakeClock, readers: ReaderPool, user: User,
) -> None:
    """Variant of the scenario above: the heartbeat notices first and the step is
    cancelled; its result would have been discarded anyway."""
    record_id = await make_record(writer, user)
    steps["normalize"].then(Behaviour(seconds=3600))
    run = asyncio.create_task(actor.run_once())
    await until(lambda: clock.sleepers == 2)
    clock.advance(settings.pipeline.lease_seconds + 1)  # past the lease and a heartbeat
    other = await claim_ok(writer, settings)  # in the mailbox before the renewal
    report = await run
    assert report.outcome == "lease_lost"
    assert steps["normalize"].cancelled == 1
    assert (await state_of(readers, record_id))["acquisition_id"] == other.token


async def test_p03_person_resumed_the_record_under_a_running_step(
    writer: Writer, settings: Settings, clock: FakeClock, readers: ReaderPool, user: User,
) -> None:
    """A step works on a claimed record; meanwhile a person resumed the record
    (releasing the claim) and another worker claimed it; the first step's result
    write lands nowhere."""
    record_id = await make_record(writer, user)
    first = await claim_ok(writer, settings)
    clock.advance(settings.pipeline.lease_seconds)  # the first holder hangs
    second = await claim_ok(writer, settings)
    await writer.ask(Halt(record_id=record_id, token=second.token,
                          reason=HaltReason.STUCK, error_text="stuck"))
    await writer.ask(Resume(record_id=record_id))
    third = await claim_ok(writer, settings)
    assert len({first.token, second.token, third.token}) == 3
    with pytest.raises(ClaimLost):
        await writer.ask(Advance(record_id=record_id, token=first.token, step="normalize"))
    row = await state_of(readers, record_id)
    assert (row["state"], row["acquisition_id"]) == ("uploaded", third.token)
    assert [e["outcome"] for e in await events_of(readers, record_id)] == ["halted", "resumed"]


# -- P12 ---------------------------------------------------------------------------------


async def test_p12_deferral_does_not_move_the_stage(
    actor: StepActor, writer: Writer, steps: dict[str, FakeStep], clock: FakeClock,
    readers: ReaderPool, user: User,
) -> None:
    """The poll step saw the foreign operation still running and defers: the stage
    and the time it was entered are unchanged, the claim is released and a delay
    is set."""
    record_id = await make_record(writer, user)
    for _ in range(2):
        await actor.run_once()
    entered = (await state_of(readers, record_id))["state_entered_at"]
    clock.advance(30)
    steps["poll"].then(Behaviour(defer_seconds=5))
    report = await actor.run_once()
    assert report.outcome == "deferred"
    row = await state_of(readers, record_id)
    assert row["state"] == "submitted"
    assert row["state_entered_at"] == entered
    assert row["acquisition_id"] is None
    assert row["acquire_expires_at"] is None
    assert row["delay_time"] == "2026-01-01T00:00:35Z"
    assert row["attempts"] == 0


# -- P15 ---------------------------------------------------------------------------------


async def test_p15_stage_change_is_in_the_journal_with_step_outcome_and_duration(
    actor: StepActor, writer: Writer, steps: dict[str, FakeStep], clock: FakeClock,
    readers: ReaderPool, user: User,
) -> None:
    """A step moved the record to a new stage: its journal has a row with the step,
    the outcome and the duration (and no content)."""
    record_id = await make_record(writer, user)
    await writer.ask(StoreTranscript(record_id=record_id, text="private words"))
    steps["normalize"].then(Behaviour(seconds=4))
    run = asyncio.create_task(actor.run_once())
    await until(lambda: clock.sleepers == 2)
    clock.advance(4)
    await run
    [event] = await events_of(readers, record_id)
    assert (event["origin"], event["step"], event["outcome"], event["duration_ms"]) == \
        ("pipeline", "normalize", "done", 4000)
    assert "private" not in str(tuple(event))


async def test_p15_deferrals_write_no_journal_rows(
    actor: StepActor, writer: Writer, steps: dict[str, FakeStep], clock: FakeClock,
    readers: ReaderPool, user: User,
) -> None:
    """Polling a foreign operation defers many times: the journal has no rows about
    the deferrals."""
    record_id = await make_record(writer, user)
    await actor.run_once()
    await actor.run_once()
    steps["poll"].default = Behaviour(defer_seconds=5)
    for _ in range(20):
        assert (await actor.run_once()).outcome == "deferred"
        clock.advance(5)
    assert [e["step"] for e in await events_of(readers, record_id)] == ["normalize", "submit"]


async def test_p15_a_person_resuming_is_visible_in_the_journal(
    writer: Writer, settings: Settings, readers: ReaderPool, user: User,
) -> None:
    """The record is halted; a person resumes it: the journal has a row saying a
    person did it."""
    record_id = await make_record(writer, user)
    held = await claim_ok(writer, settings)
    await writer.ask(Halt(record_id=record_id, token=held.token,
                          reason=HaltReason.STEP_FAILED, error_text="PermanentFailure: x"))
    await writer.ask(Resume(record_id=record_id))
    events = await events_of(readers, record_id)
    assert [(e["origin"], e["step"], e["outcome"]) for e in events] == [
        ("pipeline", "normalize", "halted"), ("human", "resume", "resumed")]
    assert events[0]["outcome_text"] == "step_failed"


async def test_p03_a_stale_result_leaves_no_orphan_file(
    actor: StepActor, writer: Writer, settings: Settings, steps: dict[str, FakeStep],
    clock: FakeClock, readers: ReaderPool, user: User, tmp_path: Path,
) -> None:
    """The step placed a file for its result, but the claim went to another before
    the result write: the file's row never lands, so the file is removed too."""
    await make_record(writer, user)
    placed = tmp_path / "normalized.ogg"
    placed.write_bytes(b"OggS")
    file_id = new_id()
    effect = AddFile(file=StoredFile(id=file_id, file_name="x.ogg", size_bytes=4,
                                     format="ogg"),
                     placed=PlacedFile(record_id=new_id(), file_id=file_id,
                                       file_name="x.ogg", path=placed, size_bytes=4))
    lease = settings.pipeline.lease_seconds
    steps["normalize"].then(Behaviour(seconds=lease + 1, effects=(effect,)))
    run = asyncio.create_task(actor.run_once())
    await until(lambda: clock.sleepers == 2)
    clock.advance(lease + 1)
    await claim_ok(writer, settings)
    report = await run
    assert report.outcome == "stale"
    assert not placed.exists()
