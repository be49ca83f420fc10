"""The spoken language: asked for on upload, checked, stored, used, detected."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
from aiohttp import FormData
from pytest_aiohttp import AiohttpClient

from tests.helpers.database import TestDatabase
from tests.helpers.settings import SettingsFactory
from tests.helpers.web import Client, StartApi, stored_files, upload
from transcriber.pipeline.steps import build_step_table
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.recognizers import (
    WHISPER_LANGUAGES,
    speechkit_language_codes,
    whisper_language,
)
from transcriber.providers.whisper_answer import read_local_payload
from transcriber.service.app import build_app
from transcriber.testing.recognizer import FakeRecognizer
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys


async def _card(client: Client, record_id: object) -> dict[str, Any]:
    body: dict[str, Any] = await (await client.get(f"/app/audiorecords/{record_id}")).json()
    return body


async def test_language_by_query_parameter_or_form_field(client: Client) -> None:
    response = await client.post("/app/audiorecords?language=ru", data=b"audio bytes", headers={
        "X-Filename": "a.wav", "Content-Type": "application/octet-stream"})
    assert response.status == 201
    card = await _card(client, (await response.json())["id"])
    assert card["language"] == {"requested": "ru", "detected": None}

    response = await client.post("/app/audiorecords", data=_form("de"))
    assert response.status == 201, await response.text()
    assert (await _card(client, (await response.json())["id"]))["language"]["requested"] == "de"

    plain = await upload(client)
    assert (await _card(client, plain["id"]))["language"]["requested"] == "auto"


async def test_an_unknown_language_is_400_with_the_list_and_stores_nothing(
    client: Client, data_dir: Path, database: TestDatabase
) -> None:
    for request in (
        client.post("/app/audiorecords?language=klingon", data=b"audio", headers={
            "X-Filename": "a.wav", "Content-Type": "application/octet-stream"}),
        client.post("/app/audiorecords", data=_form("tlh")),
    ):
        response = await request
        assert response.status == 400
        body = await response.json()
        assert body["error"]["code"] == "bad_request"
        assert "auto, af, am" in body["error"]["message"]
    assert stored_files(data_dir) == []
    assert database.count("audio_records") == 0


def _form(language: str) -> FormData:
    form = FormData()
    form.add_field("language", language)
    form.add_field("file", b"audio bytes", filename="b.wav")
    return form


async def test_the_default_is_the_setting(start_api: StartApi) -> None:
    client = await start_api(recognizer={"language": "en"})
    record = await upload(client)
    assert (await _card(client, record["id"]))["language"]["requested"] == "en"


def test_the_providers_languages() -> None:
    from faster_whisper.tokenizer import _LANGUAGE_CODES  # noqa: PLC0415

    assert tuple(_LANGUAGE_CODES) == WHISPER_LANGUAGES
    assert whisper_language("auto", "ru") is None
    assert whisper_language(None, "ru") == "ru"
    assert whisper_language(None, "") is None
    assert whisper_language("en", "ru") == "en"
    assert speechkit_language_codes("en", "ru-RU") == ["en-US"]
    assert speechkit_language_codes("auto", "ru-RU") == ["ru-RU"]
    assert speechkit_language_codes(None, "kk-KZ") == ["kk-KZ"]
    # The language a local answer says it heard (none where it does not say).
    assert read_local_payload(b'{"segments": [], "language": "en"}').language == "en"
    assert read_local_payload(b'{"segments": []}').language is None
    assert read_local_payload(b'{"segments": [], "language": 1}').language is None


class _Speaking(FakeRecognizer):
    def payload_for(self, part_number: int) -> bytes:
        data = orjson.loads(super().payload_for(part_number))
        return orjson.dumps({**data, "language": "de"})


async def test_the_recognizer_gets_the_language_and_the_card_shows_the_detected_one(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory
) -> None:
    settings = make_settings(pipeline={"workers": 1, "idle_sleep_seconds": 0.05})
    recognizer = _Speaking()
    transcoder = FakeTranscoder(duration_ms=1500)
    steps = build_step_table(transcoder=transcoder, cutter=FfmpegTranscoder(settings.ffmpeg),
                             recognizer=recognizer, store=None)
    app = build_app(settings, steps=steps, recognizer=recognizer)
    app[keys.TRANSCODER] = transcoder
    client = await aiohttp_client(app)
    response = await client.post("/app/audiorecords?language=de", data=b"audio", headers={
        "X-Filename": "a.wav", "Content-Type": "application/octet-stream"})
    record_id = (await response.json())["id"]
    card: dict[str, Any] = {}
    for _ in range(400):
        card = await _card(client, record_id)
        if card["stage"] == "done":
            break
        await asyncio.sleep(0.05)
    assert card["stage"] == "done"
    assert [part.language for part in recognizer.submitted] == ["de"]
    assert card["language"] == {"requested": "de", "detected": "de"}
    assert card["model"] == "fake"  # the model that made the transcript (issue 45)
    assert card["quality"]["model"] == "fake"
