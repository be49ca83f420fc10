"""Fixtures of the pipeline tests: real SQLite file, fake clock, fake steps."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import SettingsFactory
from tests.factories import make_user
from transcriber.db.commands.users import User
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.files import RecordFiles
from transcriber.pipeline.actor import StepActor
from transcriber.pipeline.notify import Delivery, running_notifier
from transcriber.pipeline.outbox import Outbox
from transcriber.ports import Notifier
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.notifier import RecordingNotifier
from transcriber.testing.steps import FakeStep, fake_steps

ActorFactory = Callable[..., StepActor]


@pytest.fixture
def settings(make_settings: SettingsFactory) -> Settings:
    # The §7 defaults, except a shutdown that cancels at once (wall-clock).
    return make_settings(server={"shutdown_graceful_seconds": 0.0})


@pytest.fixture
def steps() -> dict[str, FakeStep]:
    return fake_steps()


@pytest.fixture
def notifier() -> RecordingNotifier:
    return RecordingNotifier()


@pytest.fixture
async def user(writer: Writer) -> User:
    return await make_user(writer)


@pytest.fixture
def make_actor(
    settings: Settings, clock: FakeClock, writer: Writer, readers: ReaderPool,
    record_files: RecordFiles, steps: dict[str, FakeStep], notifier: RecordingNotifier,
) -> ActorFactory:
    """An actor on the shared fixtures; keyword arguments replace any part."""

    def factory(**overrides: Any) -> StepActor:
        chosen_notifier: Notifier = overrides.pop("notifier", notifier)
        parts: dict[str, Any] = {
            "name": "step-actor-test", "settings": settings, "clock": clock,
            "writer": writer, "readers": readers, "files": record_files, "steps": steps,
            "delivery": Delivery(readers, lambda: chosen_notifier, Outbox(
                writer=writer, readers=readers, clock=clock,
                notifier=running_notifier(lambda: chosen_notifier),
                settings=settings.telegram)),
            "rng": random.Random(7).random,
        }
        parts.update(overrides)
        return StepActor(**parts)

    return factory


@pytest.fixture
def actor(make_actor: ActorFactory) -> StepActor:
    return make_actor()
