"""P13 (paid steps check what is done) and P16 (attempts)."""

from __future__ import annotations

import asyncio
import dataclasses

from tests.helpers.factories import make_record
from tests.helpers.pipeline import (
    MakeActor,
    StoreRecognition,
    claim,
    claim_ok,
    state_of,
    until,
)
from transcriber.core.errors import NoWork, TransientFailure
from transcriber.db.commands.users import User
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.stages import HaltReason
from transcriber.pipeline.actor import StepActor
from transcriber.pipeline.engine import Engine
from transcriber.pipeline.step import Advanced, Job, Outcome
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.notifier import RecordingNotifier
from transcriber.testing.steps import Behaviour, FakeStep

# -- P13 --------------------------------------------------------------------------------


@dataclasses.dataclass
class PaidSubmit:
    """A submit step shaped like the real one: the marker row first, then the paid
    call, and a retry that finds the marker does not pay again."""

    name: str = "submit"
    paid_calls: int = 0
    fail_after_paying: bool = True

    def time_limit_seconds(self, job: Job) -> float | None:
        return None

    async def run(self, job: Job) -> Outcome:
        row = await job.readers.fetch_one(
            "SELECT external_id FROM recognitions WHERE record_id = :r", {"r": job.record_id})
        if row is None:
            self.paid_calls += 1
            await job.writer.ask(StoreRecognition(record_id=job.record_id, external_id="op-9"))
            if self.fail_after_paying:
                self.fail_after_paying = False
                raise TransientFailure("connection reset after the provider answered")
        return Advanced()


async def test_p13_work_already_done_is_not_paid_for_again(
    make_actor: MakeActor, writer: Writer, user: User, clock: FakeClock,
    steps: dict[str, FakeStep], readers: ReaderPool,
) -> None:
    """The paid step's result is in place and its marker is stored; the step runs
    again: the outside call is not repeated.

    Engine half of the scenario: a marker a step writes during its run survives
    the step's failure and is visible to the retry, which gets the same record.
    The real submit step's test (HEAD before upload, recognitions row before the
    paid call) belongs to the steps issue."""
    record_id = await make_record(writer, user)
    paid = PaidSubmit()
    actor = make_actor(steps={**steps, "submit": paid})
    await actor.run_once()
    assert (await actor.run_once()).outcome == "failure"
    clock.advance(60)
    report = await actor.run_once()
    assert (report.record_id, report.step, report.outcome) == (record_id, "submit", "success")
    assert paid.paid_calls == 1


# -- P16 --------------------------------------------------------------------------------


async def test_p16_a_step_that_fails_on_every_attempt_ends_halted(
    actor: StepActor, writer: Writer, settings: Settings, user: User, clock: FakeClock,
    steps: dict[str, FakeStep], readers: ReaderPool, notifier: RecordingNotifier,
) -> None:
    """A step fails on every attempt; the record goes through the attempts limit:
    it gets the halt flag, the next claim does not hand it out, and the sender
    gets a failure message."""
    record_id = await make_record(writer, user, source="telegram", tg_chat_id=77,
                                  tg_message_id=1)
    steps["normalize"].default = Behaviour(fail="transient")
    limit = settings.pipeline.attempts_limit
    for attempt in range(1, limit + 1):
        report = await actor.run_once()
        assert (report.outcome, report.record_id) == ("failure", record_id)
        row = await state_of(readers, record_id)
        assert row["attempts"] == attempt
        clock.advance(settings.pipeline.backoff_cap_seconds * 1.1 + 1)
    assert (await actor.run_once()).outcome == "halted"
    assert len(steps["normalize"].calls) == limit  # the claim over the limit does not run
    row = await state_of(readers, record_id)
    assert (row["halt_reason"], row["state"]) == ("attempts_exhausted", "uploaded")
    assert isinstance(await claim(writer, settings), NoWork)
    [notice] = notifier.sent
    assert notice.reason is HaltReason.ATTEMPTS_EXHAUSTED


async def test_p16_a_step_that_takes_the_process_down_every_time_ends_halted(
    actor: StepActor, writer: Writer, settings: Settings, user: User, clock: FakeClock,
    readers: ReaderPool, steps: dict[str, FakeStep],
) -> None:
    """The step goes down with the process on every attempt (it never reports a
    failure); after the record is claimed the limit number of times, it gets
    the halt flag."""
    record_id = await make_record(writer, user)
    for attempt in range(1, settings.pipeline.attempts_limit + 1):
        held = await claim_ok(writer, settings)  # the process dies right after
        assert held.attempts == attempt
        clock.advance(settings.pipeline.lease_seconds)
    report = await actor.run_once()
    assert (report.record_id, report.outcome) == (record_id, "halted")
    assert (await state_of(readers, record_id))["halt_reason"] == "attempts_exhausted"
    assert steps["normalize"].calls == []


async def test_p16_stopping_the_service_does_not_spend_an_attempt(
    settings: Settings, clock: FakeClock, writer: Writer, readers: ReaderPool,
    record_files: LocalRecordFiles, user: User, notifier: RecordingNotifier,
) -> None:
    """A step works on a record; the service is stopped and the step is
    cancelled: the record's attempts are as before and no halt flag appears
    (and the claim is released)."""
    record_id = await make_record(writer, user)
    steps = {name: FakeStep(name=name, default=Behaviour(seconds=3600)) for name in
             ("normalize", "submit", "poll", "finish")}
    engine = Engine(settings=settings, clock=clock, writer=writer, readers=readers,
                    files=record_files, steps=steps, notifier=lambda: notifier)
    engine.start()
    await until(lambda: len(steps["normalize"].calls) == 1)
    assert (await state_of(readers, record_id))["attempts"] == 1
    await engine.stop()
    assert steps["normalize"].cancelled == 1
    row = await state_of(readers, record_id)
    assert (row["attempts"], row["halted_at"], row["acquisition_id"], row["delay_time"]) == \
        (0, None, None, None)
    assert all(task.done() for task in engine.tasks)
    assert notifier.attempts == []
    report = await claim_ok(writer, settings)  # claimable again at once
    assert report.attempts == 1


async def test_p16_a_graceful_stop_lets_a_short_step_finish(
    clock: FakeClock, writer: Writer, readers: ReaderPool, record_files: LocalRecordFiles,
    user: User, settings: Settings,
) -> None:
    """Within the graceful time a running step completes and posts its outcome."""
    record_id = await make_record(writer, user)
    gate = asyncio.Event()

    class Gated(FakeStep):
        async def run(self, job: Job) -> Outcome:
            await gate.wait()
            return await super().run(job)

    graceful = dataclasses.replace(settings, server=dataclasses.replace(
        settings.server, shutdown_graceful_seconds=30))
    steps = {name: Gated(name=name) for name in ("normalize", "submit", "poll", "finish")}
    engine = Engine(settings=graceful, clock=clock, writer=writer, readers=readers,
                    files=record_files, steps=steps, notifier=RecordingNotifier)
    engine.start()
    await until(lambda: clock.sleepers >= 1)  # the heartbeat timer of the running step
    stopping = asyncio.create_task(engine.stop())
    await asyncio.sleep(0)
    gate.set()
    await stopping
    row = await state_of(readers, record_id)
    assert (row["state"], row["attempts"]) == ("normalized", 0)
    assert steps["submit"].calls == []  # no new claim once stopping


async def test_p16_a_record_that_passes_accumulates_no_attempts(
    actor: StepActor, writer: Writer, user: User, readers: ReaderPool,
) -> None:
    """The record passed several stages in a row without a failure: its attempts
    count did not approach the limit."""
    record_id = await make_record(writer, user)
    for stage in ("normalized", "submitted", "transcribed", "done"):
        await actor.run_once()
        row = await state_of(readers, record_id)
        assert (row["state"], row["attempts"]) == (stage, 0)


async def test_p17_a_step_that_breaks_before_it_starts_fails_like_any_other(
    make_actor: MakeActor, writer: Writer, user: User, readers: ReaderPool,
    steps: dict[str, FakeStep],
) -> None:
    class Broken(FakeStep):
        def time_limit_seconds(self, job: Job) -> float | None:
            raise ZeroDivisionError

    record_id = await make_record(writer, user)
    report = await make_actor(steps={**steps, "normalize": Broken(name="normalize")}).run_once()
    assert report.outcome == "failure"
    row = await state_of(readers, record_id)
    assert (row["error_text"], row["acquisition_id"], row["attempts"]) == \
        ("ZeroDivisionError", None, 1)
