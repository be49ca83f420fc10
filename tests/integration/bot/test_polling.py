"""The door keeps polling through Telegram's failures (backoff on the fake clock, 429's
retry_after honoured), retries a broken download, and stops the service loudly on a
token Telegram refuses or a programming error."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from aiogram.exceptions import TelegramUnauthorizedError
from structlog.testing import capture_logs

from tests.helpers.bot import ALICE_ID, OGG, DoorHarness, StartService
from tests.helpers.pipeline import named, sample, until
from tests.helpers.texts import T, en
from transcriber.bot import rules
from transcriber.db.readers import ReaderPool
from transcriber.settings import Secret
from transcriber.testing.clock import FakeClock
from transcriber.testing.fake_telegram import FakeTelegram
from transcriber.web import keys

Harness = Callable[..., DoorHarness]


async def _record_count(readers: ReaderPool) -> int:
    row = await readers.fetch_one("SELECT count(*) AS n FROM audio_records", {})
    assert row is not None
    return int(row["n"])


async def _advance_when_waiting(clock: FakeClock, seconds: float) -> None:
    await until(lambda: clock.sleepers == 1)
    clock.advance(seconds)


async def test_poll_failures_are_retried_with_backoff_and_retry_after(
    door_harness: Harness, fake_tg: FakeTelegram, clock: FakeClock, readers: ReaderPool,
) -> None:
    fake_tg.fail_next("getUpdates", 502, "Bad Gateway")
    fake_tg.fail_next("getUpdates", 429, "Too Many Requests: retry after 7", retry_after=7)
    fake_tg.drop_next("getUpdates")
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    before = sample("transcriber_telegram_poll_failures_total", {"call": "get_updates"})
    with capture_logs() as logs:
        run = door_harness().start()
        for seconds in (1, 7, 4):  # base · 2^0, Telegram's retry_after, base · 2^2
            await _advance_when_waiting(clock, seconds)
        async with asyncio.timeout(10):
            await fake_tg.wait_sent(1)
        await run.stop()
    assert [e["retry_in"] for e in named(logs, "telegram_poll_failed")] == [1.0, 7.0, 4.0]
    assert [e["error"] for e in named(logs, "telegram_poll_failed")] == [
        "TelegramServerError", "TelegramRetryAfter", "TelegramNetworkError"]
    assert sample("transcriber_telegram_poll_failures_total",
                  {"call": "get_updates"}) == before + 3
    assert named(logs, "telegram_poll_recovered")[0]["failures"] == 3
    assert await _record_count(readers) == 1


async def test_a_broken_download_is_retried_and_the_record_stored_once(
    door_harness: Harness, fake_tg: FakeTelegram, clock: FakeClock, readers: ReaderPool,
    data_dir: Path,
) -> None:
    fake_tg.fail_next("getFile", 500)
    # aiohttp repeats a GET once by itself when a reused connection dies: two drops
    # make one failed download.
    fake_tg.drop_next("file", times=2)
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    run = door_harness().start()
    await _advance_when_waiting(clock, 1)
    await _advance_when_waiting(clock, 2)
    async with asyncio.timeout(10):
        [answer] = await fake_tg.wait_sent(1)
    assert answer.text == en(T.ACCEPTED)
    assert await _record_count(readers) == 1
    assert len([p for p in (data_dir / "records").rglob("*") if p.is_file()]) == 1
    await run.stop()


async def test_an_update_that_keeps_failing_is_given_up_and_the_sender_asked_again(
    door_harness: Harness, fake_tg: FakeTelegram, clock: FakeClock, readers: ReaderPool,
    data_dir: Path,
) -> None:
    fake_tg.fail_next("file", 503, "Service Unavailable", times=3)
    update_id, _ = fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    before = sample("transcriber_telegram_updates_total", {"outcome": "abandoned"})
    run = door_harness(update_attempts=3).start()
    await _advance_when_waiting(clock, 1)
    await _advance_when_waiting(clock, 2)
    async with asyncio.timeout(10):
        [answer] = await fake_tg.wait_sent(1)
    assert answer.text == en(T.TRY_AGAIN)
    assert await _record_count(readers) == 0
    assert [p for p in (data_dir / "records").rglob("*") if p.is_file()] == []
    assert sample("transcriber_telegram_updates_total", {"outcome": "abandoned"}) == before + 1
    await run.stop()
    assert fake_tg.confirmed_offset == update_id + 1  # the queue is not blocked by it


async def test_a_token_telegram_refuses_stops_the_service_loudly(
    start_service: StartService, fake_tg: FakeTelegram,
) -> None:
    with capture_logs() as logs:
        client = await start_service(token=Secret("123456:not-the-right-token"))
        async with asyncio.timeout(10):
            error = await asyncio.shield(client.app[keys.FATAL])
    assert isinstance(error, TelegramUnauthorizedError)
    [died] = named(logs, "telegram_door_died")
    assert died["log_level"] == "critical"
    assert died["error"] == "TelegramUnauthorizedError"


async def test_a_programming_error_in_the_door_stops_the_service_loudly(
    start_service: StartService, fake_tg: FakeTelegram, monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: object, **kwargs: object) -> rules.MessageDecision:
        raise TypeError("a bug")

    monkeypatch.setattr(rules, "inspect_message", broken)
    with capture_logs() as logs:
        client = await start_service()
        update_id, _ = fake_tg.push_text(sender_id=ALICE_ID, text="hi")
        async with asyncio.timeout(10):
            error = await asyncio.shield(client.app[keys.FATAL])
    assert isinstance(error, TypeError)
    assert named(logs, "telegram_door_died")[0]["log_level"] == "critical"
    assert fake_tg.confirmed_offset < update_id + 1  # comes again after the fix
