"""The watched folder in the running service: the `watch` duty's holder runs the
watcher (a named, supervised task), the real ffmpeg probes the file, the record is
stored and the file moved to `done/`; a process without `watch.dirs` never asks
for the duty; the service stopped after storing a file's record but before moving
it makes no second record when it starts again."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from pytest_aiohttp import AiohttpClient

from tests.helpers.database import TestDatabase
from tests.helpers.settings import SettingsFactory
from transcriber.ports import Duty
from transcriber.service import watch
from transcriber.service.app import build_app
from transcriber.service.roles import Role
from transcriber.service.watch import TASK_NAME
from transcriber.settings import Settings
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


async def _run_once(settings: Settings, clock: FakeClock, until: Callable[[], Awaitable[None]],
                    ) -> None:
    """The service started, `until` awaited, the service stopped (a restart's half)."""
    app = build_app(settings, role=Role.WEB, clock=clock, steps=fake_steps(),
                    duty_locks=FakeDutyKeeper().locks())
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    try:
        await until()
    finally:
        await runner.cleanup()


async def test_a_restart_between_storing_and_moving_makes_no_second_record(
        make_settings: SettingsFactory, clock: FakeClock, tmp_path: Path,
        database: TestDatabase, monkeypatch: pytest.MonkeyPatch) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    settings = make_settings(watch={"dirs": (str(inbox),), "owner": "bob",
                                    "stable_seconds": 3.0})
    memo = inbox / "memo.mp3"
    await asyncio.to_thread(shutil.copyfile, AUDIO, memo)
    moves: list[str] = []

    def stuck(path: Path, subfolder: str, *, reason: str | None = None) -> Path:
        moves.append(subfolder)
        raise PermissionError("the service stops before the file is moved")

    monkeypatch.setattr(watch, "move_into", stuck)

    async def stored() -> None:
        async def wait() -> None:
            while not moves:
                clock.advance(1.0)
                await asyncio.sleep(0.02)
        await asyncio.wait_for(wait(), timeout=30)

    await _run_once(settings, clock, stored)
    assert database.count("audio_records") == 1
    assert await asyncio.to_thread(memo.exists)
    monkeypatch.undo()

    async def moved() -> None:
        await _until(inbox / "done" / "memo.mp3", clock)

    await _run_once(settings, clock, moved)
    assert database.count("audio_records") == 1
    assert not await asyncio.to_thread(memo.exists)
