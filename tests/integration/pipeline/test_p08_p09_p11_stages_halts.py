"""P8 (stages name what is achieved), P9 (halt is a flag), P11 (time in stage is
bounded)."""

from __future__ import annotations

import pytest

from tests.helpers.factories import make_record
from tests.helpers.pipeline import (
    MakeActor,
    StoreRecognition,
    claim,
    claim_ok,
    state_of,
)
from transcriber.core.errors import ClaimLost, NoWork
from transcriber.db.commands.pipeline import Fail, Halt, Resume
from transcriber.db.commands.users import User
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.stages import HaltReason
from transcriber.pipeline.actor import StepActor
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.steps import Behaviour, FakeStep

DAY = 24 * 3600

# -- P8 ---------------------------------------------------------------------------------


async def test_p08_the_stage_names_what_was_achieved(
    actor: StepActor, writer: Writer, user: User, readers: ReaderPool,
) -> None:
    """The record went through normalization: its stage names normalization as
    done, not as the work to come."""
    record_id = await make_record(writer, user)
    assert (await actor.run_once()).step == "normalize"
    assert (await state_of(readers, record_id))["state"] == "normalized"


async def test_p08_the_next_step_is_chosen_by_the_stage(
    actor: StepActor, writer: Writer, user: User, steps: dict[str, FakeStep],
) -> None:
    """The record is at the normalized stage; a worker takes it: submission to
    recognition runs, not normalization again."""
    record_id = await make_record(writer, user)
    await actor.run_once()
    report = await actor.run_once()
    assert (report.record_id, report.step) == (record_id, "submit")
    assert len(steps["normalize"].calls) == 1
    assert steps["submit"].calls[0].stage == "normalized"


async def test_p08_a_record_at_the_final_stage_is_neither_claimed_nor_halted(
    actor: StepActor, writer: Writer, settings: Settings, user: User, clock: FakeClock,
    readers: ReaderPool,
) -> None:
    """The record has been at the final stage longer than any limit; a claim
    comes: it does not get the record, and no halt flag appears."""
    record_id = await make_record(writer, user)
    for _ in range(4):
        await actor.run_once()
    clock.advance(settings.pipeline.foreign_work_limit_minutes * 60 * 3)
    assert (await actor.run_once()).outcome == "empty"
    row = await state_of(readers, record_id)
    assert (row["state"], row["halted_at"], row["attempts"]) == ("done", None, 0)


# -- P9 ---------------------------------------------------------------------------------


async def test_p09_a_halted_record_continues_where_it_stopped(
    actor: StepActor, writer: Writer, user: User, steps: dict[str, FakeStep],
    readers: ReaderPool,
) -> None:
    """A step halted the record at the normalized stage; the halt is lifted: the
    next step is submission, not normalization again."""
    record_id = await make_record(writer, user)
    await actor.run_once()
    steps["submit"].then(Behaviour(fail="permanent"))
    assert (await actor.run_once()).outcome == "halted"
    row = await state_of(readers, record_id)
    assert (row["state"], row["halt_reason"]) == ("normalized", "step_failed")
    assert row["error_text"] == "PermanentFailure: fake submit refused the input"
    await writer.ask(Resume(record_id=record_id))
    report = await actor.run_once()
    assert (report.step, report.outcome) == ("submit", "success")
    assert len(steps["normalize"].calls) == 1


async def test_p09_a_halted_record_is_not_claimed(
    writer: Writer, settings: Settings, user: User, clock: FakeClock,
) -> None:
    """The record carries the halt flag; a claim comes for its stage: it does not
    get the record."""
    record_id = await make_record(writer, user)
    held = await claim_ok(writer, settings)
    await writer.ask(Halt(record_id=record_id, token=held.token,
                          reason=HaltReason.STEP_FAILED, error_text="x"))
    for step in (0, settings.pipeline.lease_seconds, DAY * 7):
        clock.advance(step)
        assert isinstance(await claim(writer, settings), NoWork)


async def test_p09_lifting_the_halt_resets_every_watchdog(
    make_actor: MakeActor, writer: Writer, settings: Settings, user: User,
    clock: FakeClock, readers: ReaderPool, steps: dict[str, FakeStep],
) -> None:
    """The record is halted with spent attempts and a pause, and it stood halted
    longer than its stage's time limit; the halt is lifted: attempts, pause and
    the time it entered the stage are reset, and the next claim hands it out
    instead of halting it again."""
    record_id = await make_record(writer, user)
    for _ in range(3):
        held = await claim_ok(writer, settings)
        await writer.ask(Fail(record_id=record_id, token=held.token, delay_seconds=0,
                              error_text="TransientFailure: x"))
    held = await claim_ok(writer, settings)
    await writer.ask(Fail(record_id=record_id, token=held.token, delay_seconds=600,
                          error_text="TransientFailure: x"))
    clock.advance(600)
    held = await claim_ok(writer, settings)
    await writer.ask(Halt(record_id=record_id, token=held.token,
                          reason=HaltReason.STEP_FAILED, error_text="x"))
    with pytest.raises(ClaimLost):  # stale: the halt released the claim
        await writer.ask(Fail(record_id=record_id, token=held.token, delay_seconds=900,
                              error_text="late"))
    clock.advance(settings.pipeline.own_work_limit_minutes * 60 * 2)
    before = await state_of(readers, record_id)
    assert before["attempts"] == 5
    resumed = await writer.ask(Resume(record_id=record_id))
    assert resumed.stage == "uploaded"
    row = await state_of(readers, record_id)
    assert (row["attempts"], row["delay_time"], row["halted_at"], row["halt_reason"],
            row["error_text"]) == (0, None, None, None, None)
    assert row["state_entered_at"] == row["updated_at"]
    assert row["state_entered_at"] > before["state_entered_at"]
    report = await make_actor().run_once()
    assert (report.record_id, report.outcome) == (record_id, "success")


# -- P11 --------------------------------------------------------------------------------


async def test_p11_a_hundred_deferrals_do_not_move_the_count(
    actor: StepActor, writer: Writer, settings: Settings, user: User, clock: FakeClock,
    readers: ReaderPool, steps: dict[str, FakeStep],
) -> None:
    """The record is at the submitted stage and the foreign operation still runs;
    the poll defers a hundred times in a row: the time it entered the stage is
    unchanged and the count towards the limit was not reset."""
    record_id = await make_record(writer, user)
    await actor.run_once()
    await actor.run_once()
    entered = (await state_of(readers, record_id))["state_entered_at"]
    steps["poll"].default = Behaviour(defer_seconds=5)
    for _ in range(100):
        assert (await actor.run_once()).outcome == "deferred"
        clock.advance(5)
    assert (await state_of(readers, record_id))["state_entered_at"] == entered
    # 500 s of polling counted: the limit is reached 500 s earlier than a reset would allow.
    clock.advance(settings.pipeline.foreign_work_limit_minutes * 60 - 500 + 1)
    assert (await actor.run_once()).outcome == "halted"
    assert (await state_of(readers, record_id))["halt_reason"] == "stuck"


async def test_p11_limit_reached(
    actor: StepActor, writer: Writer, settings: Settings, user: User, clock: FakeClock,
    readers: ReaderPool, steps: dict[str, FakeStep],
) -> None:
    """The record stayed in its stage longer than its limit; a claim comes for it:
    the record gets the halt flag with the reason "stuck" (and the step is not
    run)."""
    record_id = await make_record(writer, user)
    clock.advance(settings.pipeline.own_work_limit_minutes * 60 + 1)
    report = await actor.run_once()
    assert (report.record_id, report.outcome) == (record_id, "halted")
    row = await state_of(readers, record_id)
    assert (row["halt_reason"], row["state"]) == ("stuck", "uploaded")
    assert row["error_text"].startswith("3601 s in stage uploaded")
    assert steps["normalize"].calls == []


async def test_p11_resuming_a_stuck_poll_does_not_start_a_second_operation(
    actor: StepActor, writer: Writer, settings: Settings, user: User, clock: FakeClock,
    readers: ReaderPool, steps: dict[str, FakeStep],
) -> None:
    """The record was halted by the limit at the submitted stage; the halt is
    lifted: polling continues (the same operation row is kept) and no new
    operation is started — submission does not run again.

    Engine half of the scenario; the real poll step's test (same external id
    polled after resume) belongs to the steps issue."""
    record_id = await make_record(writer, user)
    await actor.run_once()
    await writer.ask(StoreRecognition(record_id=record_id, external_id="op-1"))
    await actor.run_once()
    steps["poll"].default = Behaviour(defer_seconds=5)
    await actor.run_once()
    clock.advance(settings.pipeline.foreign_work_limit_minutes * 60 + 1)
    assert (await actor.run_once()).outcome == "halted"
    await writer.ask(Resume(record_id=record_id))
    steps["poll"].default = Behaviour()
    report = await actor.run_once()
    assert (report.step, report.outcome) == ("poll", "success")
    assert len(steps["submit"].calls) == 1
    rows = await readers.fetch_all("SELECT external_id FROM recognitions WHERE record_id = :r",
                                   {"r": record_id})
    assert [r["external_id"] for r in rows] == ["op-1"]
