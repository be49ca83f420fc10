"""OpenAI's door, the formats and fields other clients send: `diarized_json` (speakers,
through the real `openai` package), LocalAI's `txt`, an empty `language=""` and a
browser's WebM recording. Both engines (the web conftest's `engine`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import openai
import pytest

from tests.helpers.audio import FIXTURES, browser_webm
from tests.helpers.database import TestDatabase
from tests.helpers.settings import SettingsFactory
from tests.helpers.tokens import SPEECH, LiveService, bearer, live_service, make_token

AUDIO = FIXTURES / "librivox_0880.mp3"
TEXT = "He was not an ill disposed young man, said the archivist."


@pytest.fixture
async def service(make_settings: SettingsFactory) -> AsyncIterator[LiveService]:
    async with live_service(make_settings) as running:
        yield running


async def test_diarized_json_through_the_openai_package(service: LiveService) -> None:
    """The SDK reads the answer as its `TranscriptionDiarized`. Speakers are not told
    apart here (the live service's fake recognizer labels none): one voice, S1; names
    and several labels are the pure part's (tests/unit/web/test_openai_shapes.py)."""
    async with openai.AsyncOpenAI(base_url=f"{service.base}/v1",
                                  api_key=await make_token(service.app)) as client:
        with AUDIO.open("rb") as audio:
            answer = await client.audio.transcriptions.create(
                model="gpt-4o-transcribe-diarize", file=audio,
                response_format="diarized_json", chunking_strategy="auto")
    assert (answer.task, answer.text) == ("transcribe", TEXT)
    assert answer.duration > 0
    assert [(s.type, s.id, s.start, s.end, s.text, s.speaker) for s in answer.segments] == [
        ("transcript.text.segment", "seg_0", 0.0, 1.2, SPEECH[0].text, "S1"),
        ("transcript.text.segment", "seg_1", 1.2, 2.6, SPEECH[1].text, "S1")]


async def _post(service: LiveService, fields: dict[str, str], name: str,
                content: bytes) -> tuple[int, str, str]:
    form = aiohttp.FormData()
    for key, value in fields.items():
        form.add_field(key, value)
    form.add_field("file", content, filename=name)
    headers = bearer(await make_token(service.app))
    async with aiohttp.ClientSession() as session, session.post(
            f"{service.base}/v1/audio/transcriptions", data=form, headers=headers) as response:
        return response.status, response.content_type, await response.text()


async def test_txt_empty_language_and_a_browsers_webm(
    service: LiveService, database: TestDatabase, tmp_path: Path,
) -> None:
    """As LocalAI (`txt`) and browser clients (`language=""`, `audio/webm`) send them."""
    webm = browser_webm(tmp_path, AUDIO).read_bytes()
    assert webm[:4] == b"\x1a\x45\xdf\xa3"  # EBML: the file really is Matroska/WebM
    answer = await _post(service, {"model": "whisper-1", "language": "",
                                   "response_format": "txt"}, "recording.webm", webm)
    assert answer == (200, "text/plain", TEXT + "\n")
    assert database.rows("SELECT language, state FROM audio_records") == [("auto", "done")]
    async with openai.AsyncOpenAI(base_url=f"{service.base}/v1",
                                  api_key=await make_token(service.app)) as client:
        empty = await client.audio.transcriptions.create(
            model="whisper-1", file=("recording.webm", webm, "audio/webm"), language="")
    assert empty.text == TEXT
