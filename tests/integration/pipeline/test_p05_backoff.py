"""P5: the pause before a retry grows; waiting for an operation is not backoff."""

from __future__ import annotations

from tests.helpers.factories import make_record
from tests.helpers.pipeline import claim, state_of
from transcriber.core.clock import parse_time
from transcriber.core.errors import NoWork
from transcriber.db.commands.users import User
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.pipeline.actor import StepActor
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.steps import Behaviour, FakeStep


async def _pause(readers: ReaderPool, record_id: str, clock: FakeClock) -> float:
    row = await state_of(readers, record_id)
    return (parse_time(row["delay_time"]) - clock.now()).total_seconds()


async def test_p05_failed_record_waits_out_its_pause(
    actor: StepActor, writer: Writer, settings: Settings, steps: dict[str, FakeStep],
    clock: FakeClock, readers: ReaderPool, user: User,
) -> None:
    """A record failed a step; a claim that comes before its pause ends does not
    get it (one that comes after does)."""
    record_id = await make_record(writer, user)
    steps["normalize"].then(Behaviour(fail="transient"))
    assert (await actor.run_once()).outcome == "failure"
    pause = await _pause(readers, record_id, clock)
    assert 4 <= pause <= 6  # base 5 s ± 10 %, stored to the second
    clock.advance(pause - 1)
    assert isinstance(await claim(writer, settings), NoWork)
    clock.advance(1)
    report = await actor.run_once()
    assert (report.outcome, report.record_id) == ("success", record_id)


async def test_p05_second_pause_is_longer_than_the_first(
    actor: StepActor, writer: Writer, steps: dict[str, FakeStep], clock: FakeClock,
    readers: ReaderPool, user: User,
) -> None:
    """A record failed twice in a row: the pause after the second failure is
    longer than the one after the first."""
    record_id = await make_record(writer, user)
    steps["normalize"].then(Behaviour(fail="transient"), Behaviour(fail="unclassified"))
    await actor.run_once()
    first = await _pause(readers, record_id, clock)
    clock.advance(first)
    await actor.run_once()
    second = await _pause(readers, record_id, clock)
    assert second > first
    assert (await state_of(readers, record_id))["attempts"] == 2


async def test_p05_waiting_for_an_operation_neither_speeds_up_nor_spends_attempts(
    actor: StepActor, writer: Writer, steps: dict[str, FakeStep], clock: FakeClock,
    readers: ReaderPool, user: User,
) -> None:
    """The foreign recognition is still running; the poll step runs several times
    in a row: the delay to the next check is the same each time and the record's
    attempts do not grow."""
    record_id = await make_record(writer, user)
    await actor.run_once()
    await actor.run_once()
    steps["poll"].default = Behaviour(defer_seconds=5)
    pauses = []
    for _ in range(6):
        report = await actor.run_once()
        assert report.outcome == "deferred"
        row = await state_of(readers, record_id)
        assert row["attempts"] == 0
        pauses.append(await _pause(readers, record_id, clock))
        clock.advance(5)
    assert pauses == [5.0] * 6
    assert [c.attempts for c in steps["poll"].calls] == [1] * 6


async def test_p05_a_failure_that_asks_for_a_longer_wait_gets_it(
    actor: StepActor, writer: Writer, steps: dict[str, FakeStep], clock: FakeClock,
    readers: ReaderPool, user: User,
) -> None:
    record_id = await make_record(writer, user)
    steps["normalize"].then(Behaviour(fail="transient", retry_after=120))
    await actor.run_once()
    assert await _pause(readers, record_id, clock) == 120
