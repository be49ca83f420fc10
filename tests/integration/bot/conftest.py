"""Fixtures of the Telegram door tests: the fake Bot API on loopback, a real SQLite
file, and the door either alone (on a fake clock) or inside the whole app."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from pytest_aiohttp import AiohttpClient

from tests.helpers.bot import ALLOWED, Client, DoorHarness, StartService
from tests.helpers.settings import SettingsFactory
from transcriber.bot.door import DoorParts
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.pipeline.intake import AudioLimits
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.service.app import build_app
from transcriber.settings import Secret, Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.fake_telegram import FakeTelegram
from transcriber.testing.recognizer import FakeRecognizer
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys


@pytest.fixture
async def fake_tg() -> AsyncIterator[FakeTelegram]:
    fake = FakeTelegram()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
def tg_settings(make_settings: SettingsFactory, fake_tg: FakeTelegram) -> Callable[..., Settings]:
    """Settings with the bot pointed at the fake; keyword args replace telegram fields."""

    def factory(**telegram: Any) -> Settings:
        sections = {name: telegram.pop(name) for name in ("pipeline", "server", "recognizer")
                    if name in telegram}
        values = {"token": Secret(fake_tg.token), "api_base": fake_tg.base_url,
                  "allowed": ALLOWED, "poll_timeout_seconds": 2, **telegram}
        return make_settings(telegram=values, **sections)

    return factory


@pytest.fixture
def transcoder() -> FakeTranscoder:
    return FakeTranscoder(duration_ms=3000)


@pytest.fixture
async def door_harness(
    tg_settings: Callable[..., Settings], writer: Writer, readers: ReaderPool,
    record_files: LocalRecordFiles, transcoder: FakeTranscoder, clock: FakeClock,
) -> AsyncIterator[Callable[..., DoorHarness]]:
    """`door_harness(**telegram)`: the door alone on the storage fixtures and a fake clock."""
    made: list[DoorHarness] = []

    def factory(**telegram: Any) -> DoorHarness:
        settings = tg_settings(**telegram)
        harness = DoorHarness(settings=settings, parts=DoorParts(
            writer=writer, readers=readers, files=record_files, transcoder=transcoder,
            clock=clock, limits=AudioLimits.of(settings.server)))
        made.append(harness)
        return harness

    yield factory
    for harness in made:
        for run in harness.runs:
            if not run.task.done():
                await run.kill()
            await run._close()


@pytest.fixture
def start_service(
    fake_tg: FakeTelegram, aiohttp_client: AiohttpClient, tg_settings: Callable[..., Settings],
    transcoder: FakeTranscoder,
) -> StartService:
    """The whole service (storage, providers with the fake recognizer, one step actor,
    the bot) on the system clock with short delays; keyword args replace telegram fields.

    Asks for the fake first, so the service stops before the fake does."""

    async def start(**telegram: Any) -> Client:
        pipeline = {"workers": 1, "idle_sleep_seconds": 0.02, "poll_first_delay_seconds": 0.0,
                    "poll_delay_seconds": 0.02, **telegram.pop("pipeline", {})}
        settings = tg_settings(pipeline=pipeline,
                               server={"shutdown_graceful_seconds": 1.0},
                               retry_base_seconds=0.01, **telegram)
        app = build_app(settings, recognizer=FakeRecognizer())
        app[keys.TRANSCODER] = transcoder
        return await aiohttp_client(app)

    return start
