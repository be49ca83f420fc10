"""Fixtures of the pipeline tests: real SQLite file, fake clock, fake steps."""

from __future__ import annotations

import pytest

from tests.helpers.factories import make_user
from tests.helpers.pipeline import MakeActor
from tests.helpers.settings import SettingsFactory
from transcriber.db.commands.users import User
from transcriber.db.writer import Writer
from transcriber.pipeline.actor import StepActor
from transcriber.settings import Settings


@pytest.fixture
def settings(make_settings: SettingsFactory) -> Settings:
    # The §7 defaults, except a shutdown that cancels at once (wall-clock).
    return make_settings(server={"shutdown_graceful_seconds": 0.0})


@pytest.fixture
async def user(writer: Writer) -> User:
    return await make_user(writer)


@pytest.fixture
def actor(make_actor: MakeActor) -> StepActor:
    return make_actor()
