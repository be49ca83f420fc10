"""Fixtures of the pipeline tests: both engines (a real SQLite file, a real
PostgreSQL), fake clock, fake steps. Every test here runs on each engine."""

from __future__ import annotations

import pytest

from tests.helpers.factories import make_user
from tests.helpers.pipeline import MakeActor
from tests.helpers.settings import SettingsFactory
from transcriber.db.commands.users import User
from transcriber.db.writer import Writer
from transcriber.pipeline.actor import StepActor
from transcriber.settings import Secret, Settings


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest) -> str:
    """The P-rules hold on both engines: each pipeline test runs on each."""
    return str(request.param)


@pytest.fixture
def settings(make_settings: SettingsFactory, engine: str,
             request: pytest.FixtureRequest) -> Settings:
    # The §7 defaults, except a shutdown that cancels at once (wall-clock); on
    # PostgreSQL, the database of `writer` and `readers` (a CLI under test opens it too).
    storage = ({"database_url": Secret(request.getfixturevalue("pg_migrated"))}
               if engine == "postgresql" else {})
    return make_settings(server={"shutdown_graceful_seconds": 0.0}, storage=storage)


@pytest.fixture
async def user(writer: Writer) -> User:
    return await make_user(writer)


@pytest.fixture
def actor(make_actor: MakeActor) -> StepActor:
    return make_actor()
