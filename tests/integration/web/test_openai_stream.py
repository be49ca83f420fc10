"""`stream=true` with the real `openai` package's streaming API, and a request shaped as
Open WebUI sends it (its form fields and headers, its retry without the language).
The service runs on loopback with real steps and ffmpeg and the fake recognizer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import openai
import pytest

from tests.helpers.audio import FIXTURES
from tests.helpers.settings import SettingsFactory
from tests.helpers.stereo_audio import stereo_call
from tests.helpers.tokens import SPEECH, LiveService, bearer, live_service, make_token
from transcriber.ports import AudioPart, Submitted, Utterance
from transcriber.testing.recognizer import FakeRecognizer, local_payload

AUDIO = FIXTURES / "librivox_0880.mp3"
TEXT = "He was not an ill disposed young man, said the archivist."


@pytest.fixture
async def service(make_settings: SettingsFactory) -> AsyncIterator[LiveService]:
    async with live_service(make_settings) as running:
        yield running


def _client(service: LiveService, token: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{service.base}/v1", api_key=token, max_retries=0)


async def test_deltas_per_utterance_then_the_whole_text(service: LiveService) -> None:
    async with _client(service, await make_token(service.app)) as client:
        with AUDIO.open("rb") as audio:
            stream = await client.audio.transcriptions.create(
                model="whisper-1", file=audio, stream=True)
            events = [event async for event in stream]
    types = [event.type for event in events]
    assert types == ["transcript.text.delta", "transcript.text.delta",
                     "transcript.text.done"]
    deltas = [e.delta for e in events if e.type == "transcript.text.delta"]
    assert deltas == [f"{SPEECH[0].text} ", f"{SPEECH[1].text} "]
    done = events[-1]
    assert done.type == "transcript.text.done"
    assert done.text == TEXT


class HeldSecondPart(FakeRecognizer):
    """A recognizer whose second part waits until the test lets it go: what a long
    record's client sees meanwhile is the first part's text. Its 2-s parts are cut in
    pauses, as the local recognizer's are (no overlap)."""

    part_overlap_ms = 0

    def __init__(self) -> None:
        super().__init__(utterances=SPEECH[:1], max_part_ms=2000)
        self.release = asyncio.Event()

    async def submit(self, part: AudioPart) -> Submitted:
        if self.submitted:
            await self.release.wait()
        return await super().submit(part)


@pytest.mark.timeout(60)
async def test_a_client_sees_text_while_the_record_is_still_recognized(
        make_settings: SettingsFactory) -> None:
    held = HeldSecondPart()
    async with live_service(make_settings, recognizer=held) as service, _client(
            service, await make_token(service.app)) as client:
        with AUDIO.open("rb") as audio:
            stream = await client.audio.transcriptions.create(
                model="whisper-1", file=audio, stream=True)
            events = aiter(stream)
            first = await anext(events)
            # The second part is still held: the first part's text came without it.
            assert not held.release.is_set()
            assert first.type == "transcript.text.delta"
            assert first.delta == f"{SPEECH[0].text} "
            held.release.set()
            rest = [event async for event in events]
    assert [e.type for e in rest] == ["transcript.text.delta", "transcript.text.done"]
    assert rest[-1].type == "transcript.text.done"
    assert rest[-1].text == f"{SPEECH[0].text} {SPEECH[0].text}"


class TwoChannels(FakeRecognizer):
    """A stereo call's parts are recognized span by span, the left channel's part then
    the right one's (`part_index` 2k + c): each channel answers its own lines, the
    right channel's said between the left channel's two, in 2-s parts cut in pauses."""

    part_overlap_ms = 0

    def __init__(self) -> None:
        super().__init__(max_part_ms=2000)

    def payload_for(self, part_number: int) -> bytes:
        span, channel = divmod(part_number, 2)
        said = ([(0, 300, f"left {span} first"), (800, 1100, f"left {span} second")]
                if channel == 0 else [(400, 700, f"right {span}")])
        return local_payload([Utterance(start_ms=a, end_ms=b, channel=0, text=text)
                              for a, b, text in said])


@pytest.mark.timeout(60)
async def test_a_stereo_calls_deltas_carry_both_channels_in_time_order(
        tmp_path: Path, make_settings: SettingsFactory) -> None:
    call = tmp_path / "call.wav"
    if stereo_call(call, seconds=6.0) is None:
        pytest.skip("apt-get install pocketsphinx-testdata")
    recognizer = TwoChannels()
    async with live_service(make_settings, recognizer=recognizer) as service, _client(
            service, await make_token(service.app)) as client:
        with call.open("rb") as audio:
            stream = await client.audio.transcriptions.create(
                model="whisper-1", file=audio, stream=True)
            events = [event async for event in stream]
    spans = len(recognizer.submitted) // 2
    assert spans >= 2, "the call is cut in parts, each channel's recognized on its own"
    assert len(recognizer.submitted) == 2 * spans
    deltas = [e.delta for e in events if e.type == "transcript.text.delta"]
    # Every line of both channels, once; the right channel's between the left one's
    # (the last span may be shorter than the lines' times, which then hold at its end).
    assert sorted(deltas) == sorted(f"{line} " for k in range(spans) for line in (
        f"left {k} first", f"right {k}", f"left {k} second"))
    assert deltas[:3] == ["left 0 first ", "right 0 ", "left 0 second "]
    done = events[-1]
    assert done.type == "transcript.text.done"
    # The deltas are the final text, in its order, word for word.
    assert done.text == "".join(deltas).strip()


async def test_stream_with_a_subtitle_format_is_refused(service: LiveService) -> None:
    async with _client(service, await make_token(service.app)) as client:
        with pytest.raises(openai.BadRequestError) as refused, AUDIO.open("rb") as audio:
            await client.audio.transcriptions.create(
                model="whisper-1", file=audio, stream=True, response_format="srt")
    assert refused.value.param == "stream"


async def test_open_webuis_request_and_its_retry_without_the_language(
        service: LiveService) -> None:
    """Open WebUI's OpenAI speech-to-text engine posts with `requests`: its headers, the
    file as `file` with its name and type, `model`, `response_format=verbose_json` and
    the interface's language ("en-US"); a 400 makes it try once more without it."""
    token = await make_token(service.app)
    headers = {**bearer(token), "User-Agent": "python-requests/2.32.3",
               "Accept-Encoding": "gzip, deflate", "Accept": "*/*", "Connection": "keep-alive"}

    def form(language: str | None) -> aiohttp.FormData:
        data = aiohttp.FormData()
        data.add_field("model", "whisper-1")
        data.add_field("response_format", "verbose_json")
        if language is not None:
            data.add_field("language", language)
        data.add_field("file", AUDIO.read_bytes(), filename="chunk_0.mp3",
                       content_type="audio/mpeg")
        return data

    url = f"{service.base}/v1/audio/transcriptions"
    async with aiohttp.ClientSession() as session:
        async with session.post(url, data=form("en-US"), headers=headers) as first:
            refused = await first.json()
        async with session.post(url, data=form(None), headers=headers) as second:
            answer = await second.json()
            status = second.status
    assert first.status == 400
    assert refused["error"]["param"] == "language"
    assert refused["error"]["type"] == "invalid_request_error"
    assert status == 200
    assert answer["text"] == TEXT
    assert [s["text"] for s in answer["segments"]] == [u.text for u in SPEECH]
    assert answer["duration"] > 0
