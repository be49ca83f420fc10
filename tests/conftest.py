"""Shared fixtures: settings on a temporary data folder, a fake clock, started storage."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from transcriber.db.connection import database_path
from transcriber.db.migrate import migrate
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.files import RecordFiles
from transcriber.settings import Settings, load_settings
from transcriber.testing.clock import FakeClock

SettingsFactory = Callable[..., Settings]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def make_settings(data_dir: Path) -> SettingsFactory:
    """Settings with the data folder in tmp; keyword args replace whole sections' fields.

    Example: make_settings(pipeline={"workers": 0}).
    """

    def factory(**sections: dict[str, Any]) -> Settings:
        base = load_settings(environ={"TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir)})
        replaced = {
            name: dataclasses.replace(getattr(base, name), **values)
            for name, values in sections.items()
        }
        return dataclasses.replace(base, **replaced)

    return factory


@pytest.fixture
def settings(make_settings: SettingsFactory) -> Settings:
    return make_settings()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def migrated(data_dir: Path, clock: FakeClock) -> Path:
    migrate(data_dir, clock=clock)
    return database_path(data_dir)


@pytest.fixture
async def writer(migrated: Path, clock: FakeClock) -> AsyncIterator[Writer]:
    actor = Writer(migrated, clock=clock)
    await actor.start()
    yield actor
    await actor.stop()


@pytest.fixture
async def readers(migrated: Path) -> AsyncIterator[ReaderPool]:
    pool = ReaderPool(migrated, size=2)
    await pool.open()
    yield pool
    await pool.close()


@pytest.fixture
def record_files(data_dir: Path) -> RecordFiles:
    return RecordFiles(data_dir)
