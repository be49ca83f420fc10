"""Fixtures of the integration tests: one step actor factory (fake steps by default)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tests.helpers.pipeline import MakeActor, step_actor
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.pipeline.actor import StepActor
from transcriber.pipeline.step import Step
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.notifier import RecordingNotifier
from transcriber.testing.steps import FakeStep, fake_steps


@pytest.fixture
def steps() -> dict[str, FakeStep]:
    return fake_steps()


@pytest.fixture
def notifier() -> RecordingNotifier:
    return RecordingNotifier()


@pytest.fixture
def make_actor(
    settings: Settings, clock: FakeClock, writer: Writer, readers: ReaderPool,
    record_files: LocalRecordFiles, steps: dict[str, FakeStep], notifier: RecordingNotifier,
) -> MakeActor:
    """`make_actor(steps, settings, **parts)`: an actor on the shared fixtures."""

    fixture_steps, fixture_settings = steps, settings

    def make(steps: Mapping[str, Step] | None = None, settings: Settings | None = None,
             **parts: Any) -> StepActor:
        return step_actor(
            settings=fixture_settings if settings is None else settings, clock=clock,
            writer=writer, readers=readers, files=record_files,
            steps=fixture_steps if steps is None else steps,
            notifier=parts.pop("notifier", notifier), **parts)

    return make
