"""Logs carry ids, reasons and error classes: never what the sender wrote or sent,
file names, transcript text, or the bot token (which is part of every Bot API URL)."""

from __future__ import annotations

import asyncio
import logging

import pytest
from structlog.testing import capture_logs

from tests.helpers.bot import ALICE_ID, OGG, STRANGER_ID, StartService
from tests.helpers.pipeline import until
from transcriber.testing.fake_telegram import FakeTelegram
from transcriber.web import keys

TRANSCRIPT = "hello from the fake recognizer"


async def test_logs_never_carry_message_text_file_names_transcripts_or_the_token(
    start_service: StartService, fake_tg: FakeTelegram, caplog: pytest.LogCaptureFixture,
) -> None:
    secrets = ["SECRET-CAPTION", "SECRET-NAME", "SECRET-TEXT", "SECRET-STRANGER", TRANSCRIPT,
               fake_tg.token, fake_tg.token.split(":")[1], "/file/bot"]
    caplog.set_level(logging.DEBUG)
    with capture_logs() as logs:
        client = await start_service()
        fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG),
                           caption="SECRET-CAPTION")
        fake_tg.push_audio(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG),
                           file_name="SECRET-NAME.mp3")
        fake_tg.push_text(sender_id=ALICE_ID, text="SECRET-TEXT")
        fake_tg.push_text(sender_id=STRANGER_ID, text="SECRET-STRANGER")
        fake_tg.fail_next("getUpdates", 500, "SECRET-TEXT in an error description")
        async with asyncio.timeout(15):
            await fake_tg.wait_sent(6)  # 2 acks, 2 refusals, 2 transcripts

        async def both_done() -> bool:
            rows = await client.app[keys.READERS].fetch_all(
                "SELECT state FROM audio_records", {})
            return [r["state"] for r in rows] == ["done", "done"]

        await until(both_done)
    assert any(m.text == TRANSCRIPT for m in fake_tg.sent)  # the secrets did travel
    assert logs, "nothing was logged: the test would prove nothing"
    for entry in logs:
        flat = repr(entry)
        for secret in secrets:
            assert secret not in flat, (secret, entry.get("event"))
    for record in caplog.records:
        text = record.getMessage() + repr(record.args)
        for secret in secrets:
            assert secret not in text, (secret, record.name)
