"""The watched folder in the running service: the `watch` duty's holder runs the
watcher (a named, supervised task), the real ffmpeg probes the file, the record is
stored and the file moved to `done/`; a process without `watch.dirs` never asks
for the duty."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from pytest_aiohttp import AiohttpClient

from tests.helpers.database import TestDatabase
from tests.helpers.settings import SettingsFactory
from transcriber.ports import Duty
from transcriber.service.app import build_app
from transcriber.service.roles import Role
from transcriber.service.watch import TASK_NAME
from transcriber.testing.clock import FakeClock
from transcriber.testing.duties import FakeDutyKeeper
from transcriber.testing.steps import fake_steps


@pytest.fixture
def engine() -> str:
    """The service here runs on its data folder's SQLite (the watcher's own tests run on
    both engines)."""
    return "sqlite"


AUDIO = Path(__file__).parents[2] / "fixtures" / "audio" / "librivox_0880.mp3"


async def _until(condition: Path, clock: FakeClock) -> None:
    """Advance the fake clock a look at a time until the file exists."""
    async def wait() -> None:
        while not await asyncio.to_thread(condition.exists):
            clock.advance(1.0)
            await asyncio.sleep(0.02)
    await asyncio.wait_for(wait(), timeout=30)


async def test_the_watch_duty_turns_a_dropped_file_into_a_record(
        aiohttp_client: AiohttpClient, make_settings: SettingsFactory, clock: FakeClock,
        tmp_path: Path, database: TestDatabase) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    keeper = FakeDutyKeeper()
    settings = make_settings(watch={"dirs": (str(inbox),), "owner": "bob",
                                    "stable_seconds": 3.0})
    app = build_app(settings, role=Role.WEB, clock=clock, steps=fake_steps(),
                    duty_locks=keeper.locks())
    await aiohttp_client(app)
    assert Duty.WATCH in keeper.asks
    assert any(task.get_name() == TASK_NAME for task in asyncio.all_tasks())
    await asyncio.to_thread(shutil.copyfile, AUDIO, inbox / "memo.mp3")
    await _until(inbox / "done" / "memo.mp3", clock)
    assert database.rows("SELECT original_filename, via, state FROM audio_records") == [
        ("memo.mp3", "folder", "uploaded")]


async def test_no_folder_no_duty(aiohttp_client: AiohttpClient,
                                 make_settings: SettingsFactory, clock: FakeClock) -> None:
    keeper = FakeDutyKeeper()
    app = build_app(make_settings(), role=Role.WEB, clock=clock, steps=fake_steps(),
                    duty_locks=keeper.locks())
    await aiohttp_client(app)
    assert Duty.WATCH not in keeper.asks
