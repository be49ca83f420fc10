"""The supervisor: named actors, a dead actor stops the service loudly."""

from __future__ import annotations

from structlog.testing import capture_logs

from tests.helpers.pipeline import named, until
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.followups.after import NullNotifier
from transcriber.pipeline.engine import Engine
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.steps import fake_steps


async def test_actors_are_named_tasks_and_a_dead_one_is_reported(
    settings: Settings, clock: FakeClock, writer: Writer, readers: ReaderPool,
    record_files: LocalRecordFiles,
) -> None:
    engine = Engine(settings=settings, clock=clock, writer=writer, readers=readers,
                    files=record_files, steps=fake_steps(), notifier=NullNotifier)
    deaths: list[BaseException] = []

    async def broken(stopping: object) -> None:
        raise MemoryError("the actor itself broke")

    engine.actors[0].run_forever = broken  # type: ignore[method-assign]
    with capture_logs() as logs:
        engine.start(on_death=deaths.append)
        await until(lambda: deaths)
        await engine.stop()
    assert [t.get_name() for t in engine.tasks] == ["step-actor-1", "step-actor-2",
                                                     "step-actor-3"]
    assert isinstance(deaths[0], MemoryError)
    [entry] = named(logs, "step_actor_died")
    assert (entry["actor"], entry["log_level"]) == ("step-actor-1", "critical")
