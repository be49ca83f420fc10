"""Text while recording (issue 42, item 4): a recording uploaded in pieces through the
resumable protocol is recognized window by window while it goes on, and
`GET /app/uploads/{id}/text` answers the text so far; the finished upload is a record
like any other, and the answer names it.

The fake transcoder decodes each byte of the partial file as 1 ms of audio (a zero
byte: silence) and the fake recognizer answers its set text: what is proven is which
stretch is recognized when, and what the route answers, not the words.
"""

from __future__ import annotations

from typing import cast

import pytest
from pytest_aiohttp import AiohttpClient

from tests.helpers.pipeline import sample, until
from tests.helpers.settings import SettingsFactory
from tests.helpers.tus import OCTETS, TUS, metadata
from tests.helpers.web import Client, ServeLikeServer
from transcriber.domain.live_text import BYTES_PER_MS, SEARCH_MS, WINDOW_MS
from transcriber.ports import Recognizer
from transcriber.service.app import build_app
from transcriber.testing.clock import FakeClock
from transcriber.testing.recognizer import FakeRecognizer, FakeVoiceRecognizer
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys

SPEECH = b"a" * 20_000  # 20 s of sound in the fake transcoder's reading
SILENCE = bytes(40_000)  # 40 s of silence


async def _start(aiohttp_client: AiohttpClient, make_settings: SettingsFactory,
                 clock: FakeClock, transcoder: FakeTranscoder,
                 recognizer: Recognizer) -> Client:
    settings = make_settings(pipeline={"workers": 0})
    app = build_app(settings, clock=clock, recognizer=recognizer)
    app[keys.TRANSCODER] = transcoder
    return cast(Client, await aiohttp_client(ServeLikeServer(app, settings.server)))


async def _recording(client: Client) -> str:
    response = await client.post("/app/uploads/", headers={
        **TUS, "Upload-Defer-Length": "1",
        "Upload-Metadata": metadata(filename="Recording.webm", language="ru")})
    assert response.status == 201
    return response.headers["Location"]


async def _append(client: Client, location: str, offset: int, data: bytes,
                  **headers: str) -> dict[str, str]:
    response = await client.patch(location, data=data, headers={
        **OCTETS, "Upload-Offset": str(offset), **headers})
    assert response.status == 204, await response.text()
    return dict(response.headers)


async def _text(client: Client, location: str, **headers: str) -> dict[str, object]:
    response = await client.get(f"{location}/text", headers=headers)
    assert response.status == 200, await response.text()
    assert response.headers["Cache-Control"] == "no-store"
    return cast(dict[str, object], await response.json())


async def test_the_text_grows_while_the_recording_is_sent_and_the_record_is_named(
        aiohttp_client: AiohttpClient, make_settings: SettingsFactory, clock: FakeClock,
        transcoder: FakeTranscoder) -> None:
    recognizer = FakeVoiceRecognizer(text="первые слова")
    client = await _start(aiohttp_client, make_settings, clock, transcoder, recognizer)
    location = await _recording(client)
    # Less than a window sent: nothing to recognize yet.
    await _append(client, location, 0, SPEECH[:WINDOW_MS - 1])
    assert await _text(client, location) == {"available": True, "text": "", "heard_ms": 0}
    await _append(client, location, WINDOW_MS - 1, SPEECH[WINDOW_MS - 1:])
    # The ask wakes the actor; the answer is the text so far (none yet).
    assert (await _text(client, location))["text"] == ""
    await until(lambda: len(recognizer.commands) == 1)
    samples, language = recognizer.commands[0]
    assert language == "ru"
    # One window, cut within its last seconds (an even tone has no pause to prefer).
    assert (WINDOW_MS - SEARCH_MS) * BYTES_PER_MS <= len(samples) <= WINDOW_MS * BYTES_PER_MS
    first = await _text(client, location)
    assert first["text"] == "первые слова"
    assert first["heard_ms"] == len(samples) // BYTES_PER_MS
    assert "record_id" not in first

    # 40 s of silence more: the window mixing the speech's end and silence is
    # recognized, the silent ones after it are skipped unrecognized.
    recognizer.text = "и вторые"
    silent_before = sample("transcriber_live_text_windows_total", {"outcome": "silent"})
    await _append(client, location, len(SPEECH), SILENCE)
    await _text(client, location)
    await until(lambda: sample("transcriber_live_text_windows_total",
                               {"outcome": "silent"}) >= silent_before + 2)
    assert len(recognizer.commands) == 2
    grown = await _text(client, location)
    assert grown["text"] == "первые слова и вторые"
    assert len(SPEECH) + len(SILENCE) - WINDOW_MS < cast(int, grown["heard_ms"])

    # Another person learns nothing of it.
    assert (await client.get(f"{location}/text", headers={"Remote-User": "mallory"})
            ).status == 404

    # The recording stops: the last PATCH names the length and the upload is a record;
    # the text so far stays, with the record's id (its card has the real transcript).
    total = len(SPEECH) + len(SILENCE)
    finished = await _append(client, location, total, b"", **{"Upload-Length": str(total)})
    record_id = finished["X-Record-Id"]
    done = await _text(client, location)
    assert done == {"available": True, "text": "первые слова и вторые",
                    "heard_ms": grown["heard_ms"], "record_id": record_id}
    assert (await client.get(f"/app/audiorecords/{record_id}")).status == 200


@pytest.mark.parametrize("engine", ["sqlite"])
async def test_a_recognizer_that_takes_no_audio_in_memory_offers_no_preview(
        aiohttp_client: AiohttpClient, make_settings: SettingsFactory, clock: FakeClock,
        transcoder: FakeTranscoder) -> None:
    client = await _start(aiohttp_client, make_settings, clock, transcoder, FakeRecognizer())
    location = await _recording(client)
    await _append(client, location, 0, SPEECH)
    assert await _text(client, location) == {"available": False, "text": "", "heard_ms": 0}
    assert (await client.get("/app/uploads/01jabcdefghjkmnpqrstvwxyz0/text")).status == 404
    assert transcoder.decoded == []
