"""P1 (an empty run is not a failure) and P14 (worker count from settings)."""

from __future__ import annotations

import asyncio
import dataclasses

from aiohttp import web
from structlog.testing import capture_logs

from tests.helpers.factories import make_record, make_user
from tests.helpers.pipeline import (
    MakeActor,
    loud,
    named,
    runs,
    state_of,
    until,
    worker_runs_total,
)
from tests.helpers.settings import SettingsFactory
from transcriber.core.errors import NoWork
from transcriber.db.commands.users import User
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.followups.after import NullNotifier
from transcriber.pipeline.actor import StepActor
from transcriber.pipeline.engine import Engine
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.service.app import build_app
from transcriber.service.pipeline import ENGINE
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.steps import Behaviour, FakeStep, fake_steps
from transcriber.web import keys


async def test_p01_no_eligible_record_logs_nothing_and_counts_nothing(
    actor: StepActor, clock: FakeClock
) -> None:
    """No record is eligible at any stage: a run writes nothing at the owner's
    level and the worker counter does not grow."""
    before = worker_runs_total()
    with capture_logs() as logs:
        report = await actor.run_once()
        stopping = asyncio.Event()
        loop = asyncio.create_task(actor.run_forever(stopping))
        await until(lambda: clock.sleepers == 1)  # the empty-run sleep is on the clock
        clock.advance(1.0)
        await until(lambda: actor.empty_runs >= 3 and clock.sleepers == 1)
        stopping.set()
        await loop
    assert report.outcome == "empty"
    assert loud(logs) == []
    assert worker_runs_total() == before


async def test_p01_no_work_marker_that_came_with_an_explanation_is_still_empty(
    make_actor: MakeActor,
) -> None:
    """An intermediate layer added its own explanation to the "no work" marker:
    the run still counts as empty (no counter, no owner-level log)."""

    async def explained_by_cause() -> NoWork:
        try:
            raise NoWork
        except NoWork as exc:
            raise RuntimeError("queue layer: nothing to hand out") from exc

    async def grouped() -> NoWork:
        raise ExceptionGroup("claims", [ValueError("noise"), NoWork()])

    async def as_value() -> NoWork:
        return NoWork()

    before = worker_runs_total()
    with capture_logs() as logs:
        for source in (explained_by_cause, grouped, as_value):
            report = await make_actor(claim=source).run_once()
            assert report.outcome == "empty"
    assert loud(logs) == []
    assert worker_runs_total() == before


async def test_p01_step_failed_is_logged_and_counted_with_failure_and_stage(
    actor: StepActor, writer: Writer, user: User, steps: dict[str, FakeStep]
) -> None:
    """A step returned a failure: the owner sees a log entry, the counter grows
    with the failure mark and the stage label."""
    record_id = await make_record(writer, user)
    steps["normalize"].then(Behaviour(fail="transient"))
    before = runs("uploaded", "failure")
    with capture_logs() as logs:
        report = await actor.run_once()
    assert report.outcome == "failure"
    assert runs("uploaded", "failure") == before + 1
    [entry] = named(logs, "step_failed")
    assert entry["log_level"] == "warning"
    assert entry["record_id"] == record_id
    assert entry["stage"] == "uploaded"
    assert entry["error"] == "TransientFailure"
    assert "fake normalize failed" not in str(entry)  # class only, no content


async def test_p01_step_did_its_work_is_counted_success_without_failure_log(
    actor: StepActor, writer: Writer, user: User
) -> None:
    """A step processed the record without failure: the counter grows with the
    success mark and there is no failure entry in the log."""
    await make_record(writer, user)
    before = runs("uploaded", "success")
    with capture_logs() as logs:
        report = await actor.run_once()
    assert report.outcome == "success"
    assert runs("uploaded", "success") == before + 1
    assert named(logs, "step_failed") == []


async def test_p01_a_step_failure_carrying_a_foreign_no_work_marker_is_a_failure(
    actor: StepActor, writer: Writer, user: User, steps: dict[str, FakeStep],
    readers: ReaderPool,
) -> None:
    """The marker is born only from this run's claim: a step failure whose chain
    holds a "no work" marker is still a failure, never a silent empty run."""

    class Confused(FakeStep):
        async def run(self, job):  # type: ignore[no-untyped-def]
            try:
                raise NoWork
            except NoWork as exc:
                raise RuntimeError("step broke") from exc

    record_id = await make_record(writer, user)
    steps["normalize"] = Confused(name="normalize")
    before = runs("uploaded", "failure")
    report = await actor.run_once()
    assert report.outcome == "failure"
    assert runs("uploaded", "failure") == before + 1
    row = await state_of(readers, record_id)
    assert row["delay_time"] is not None
    assert row["error_text"] == "RuntimeError"


async def _run_to_done(
    settings: Settings, clock: FakeClock, writer: Writer, readers: ReaderPool,
    files: LocalRecordFiles, workers: int, owner: User,
) -> None:
    chosen = dataclasses.replace(settings, pipeline=dataclasses.replace(settings.pipeline,
                                                                        workers=workers))
    record_ids = [await make_record(writer, owner) for _ in range(4)]
    engine = Engine(settings=chosen, clock=clock, writer=writer, readers=readers, files=files,
                    steps=fake_steps(), notifier=NullNotifier)
    assert len(engine.actors) == workers
    engine.start()
    try:
        async def all_done() -> bool:
            states = [(await state_of(readers, r))["state"] for r in record_ids]
            return states == ["done"] * len(record_ids)

        await until(all_done)
    finally:
        await engine.stop()
    for record_id in record_ids:
        row = await state_of(readers, record_id)
        assert row["halted_at"] is None
        assert row["attempts"] == 0


async def test_p14_record_reaches_done_with_one_worker_and_with_several(
    settings: Settings, clock: FakeClock, writer: Writer, readers: ReaderPool,
    record_files: LocalRecordFiles, user: User,
) -> None:
    """With one pipeline worker the records reach the final stage; with more
    than one the outcome is the same."""
    await _run_to_done(settings, clock, writer, readers, record_files, 1, user)
    await _run_to_done(settings, clock, writer, readers, record_files, 3, user)


async def test_p14_no_workers_at_all_records_are_accepted_and_stay_at_the_first_stage(
    make_settings: SettingsFactory, clock: FakeClock,
) -> None:
    """With zero workers the service starts, accepts a record, does not lose it,
    and the record stays at the first stage."""
    settings = make_settings(pipeline={"workers": 0})
    steps = fake_steps()
    app = build_app(settings, clock=clock, steps=steps)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        assert app[ENGINE].actors == []
        writer = app[keys.WRITER]
        record_id = await make_record(writer, await make_user(writer))
        clock.advance(3600)
        await asyncio.sleep(0.05)
        row = await state_of(app[keys.READERS], record_id)
        assert row["state"] == "uploaded"
        assert row["attempts"] == 0
        assert all(step.calls == [] for step in steps.values())
    finally:
        await runner.cleanup()


async def test_p14_failure_is_counted_with_the_stage_label(
    actor: StepActor, writer: Writer, user: User, steps: dict[str, FakeStep],
) -> None:
    """Normalization failed: the observer reads the failure under the label of
    the normalization stage (the stage claimed from, never a worker name)."""
    await make_record(writer, user)
    steps["normalize"].then(Behaviour(fail="unclassified"))
    before = runs("uploaded", "failure")
    other_stages = [runs(stage, "failure") for stage in ("normalized", "submitted")]
    await actor.run_once()
    assert runs("uploaded", "failure") == before + 1
    assert [runs(stage, "failure") for stage in ("normalized", "submitted")] == other_stages
    assert runs("step-actor-test", "failure") == 0
