"""Start and stop of the door inside the service: the notifier is in place before the
step actors, a test's notifier is kept, and a stop lets the message in hand finish."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_aiohttp import AiohttpClient

from tests.helpers.bot import ALICE_ID, OGG, DoorHarness
from tests.helpers.pipeline import until
from tests.helpers.texts import T, en
from transcriber.cli.transcribe import transcribe
from transcriber.db.readers import ReaderPool
from transcriber.service.app import build_app
from transcriber.service.telegram import DOOR
from transcriber.settings import Settings
from transcriber.testing.fake_telegram import FakeTelegram
from transcriber.testing.notifier import RecordingNotifier
from transcriber.testing.recognizer import FakeRecognizer
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "audio"


async def test_a_notifier_a_test_injected_is_kept_and_used(
    fake_tg: FakeTelegram, aiohttp_client: AiohttpClient,
    tg_settings: Callable[..., Settings], transcoder: FakeTranscoder,
) -> None:
    recording = RecordingNotifier()
    settings = tg_settings(pipeline={"workers": 1, "idle_sleep_seconds": 0.02,
                                     "poll_first_delay_seconds": 0.0})
    app = build_app(settings, notifier=recording, recognizer=FakeRecognizer())
    app[keys.TRANSCODER] = transcoder
    client = await aiohttp_client(app)
    assert client.app[keys.NOTIFIER] is recording
    assert DOOR in client.app  # the door polls all the same
    _, message = fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    await until(lambda: recording.sent)
    [sent] = recording.sent
    assert (sent.kind, sent.address.tg_message_id) == ("transcript", message["message_id"])
    assert [m.text for m in fake_tg.sent] == [en(T.ACCEPTED)]


async def test_a_stop_lets_the_message_in_hand_finish_and_confirms_it(
    door_harness: Callable[..., DoorHarness], fake_tg: FakeTelegram, readers: ReaderPool,
) -> None:
    downloading = asyncio.Event()
    release = asyncio.Event()

    async def slow_download(method: str, params: dict[str, Any]) -> None:
        if method == "file":
            downloading.set()
            await release.wait()

    fake_tg.before_call = slow_download
    update_id, _ = fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    run = door_harness().start()
    async with asyncio.timeout(10):
        await downloading.wait()
    stopping = asyncio.create_task(run.stop())
    await asyncio.sleep(0.05)
    assert not stopping.done()  # waits for the message in hand
    release.set()
    async with asyncio.timeout(10):
        await stopping
    row = await readers.fetch_one("SELECT count(*) AS n FROM audio_records", {})
    assert row is not None
    assert row["n"] == 1
    assert fake_tg.confirmed_offset == update_id + 1
    assert [m.text for m in fake_tg.sent] == [en(T.ACCEPTED)]


async def test_transcribe_command_never_polls_telegram(
    fake_tg: FakeTelegram, tg_settings: Callable[..., Settings],
) -> None:
    """A one-shot `transcriber transcribe` with the server's config must not take the
    server's messages (Telegram gives each update to one poller)."""
    settings = tg_settings(pipeline={"idle_sleep_seconds": 0.02,
                                     "poll_first_delay_seconds": 0.0})
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    out = io.StringIO()
    code = await transcribe(settings, [FIXTURES / "espeak_en.ogg"], out=out, err=io.StringIO(),
                            recognizer=FakeRecognizer())
    assert code == 0
    assert "hello from the fake recognizer" in out.getvalue()
    assert [name for name, _ in fake_tg.calls] == []
    assert fake_tg.answered == []
