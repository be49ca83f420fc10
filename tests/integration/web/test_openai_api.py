"""OpenAI's speech-to-text API, with the real `openai` package as the client.

The service runs in the test's process on loopback (real steps and ffmpeg,
the fake recognizer), so each request really uploads, normalizes,
"recognizes" and answers when the record is done.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import openai
import pytest

from tests.helpers.audio import FIXTURES
from tests.helpers.database import TestDatabase
from tests.helpers.settings import SettingsFactory
from tests.helpers.subtitles import check_subtitle_rules
from tests.helpers.tokens import SPEECH, LiveService, bearer, live_service, make_token
from transcriber.core.errors import PermanentFailure
from transcriber.ports import Utterance, Word
from transcriber.testing.recognizer import FakeRecognizer

AUDIO = FIXTURES / "librivox_0880.mp3"
TEXT = "He was not an ill disposed young man, said the archivist."


@pytest.fixture
async def service(make_settings: SettingsFactory) -> AsyncIterator[LiveService]:
    async with live_service(make_settings) as running:
        yield running


def _client(service: LiveService, token: str) -> openai.AsyncOpenAI:
    """The SDK's client with its default retries (two): an answer that must not be
    retried says so (`x-should-retry`). Closed by `async with`."""
    return openai.AsyncOpenAI(base_url=f"{service.base}/v1", api_key=token, max_retries=2)


def _records(database: TestDatabase) -> list[tuple[Any, ...]]:
    return database.rows("SELECT u.provider_login, r.state, r.language FROM audio_records r "
                         "JOIN users u ON u.id = r.owner_id ORDER BY r.id")


async def test_json_answer_and_an_ordinary_record_of_the_tokens_owner(
    service: LiveService, database: TestDatabase,
) -> None:
    token = await make_token(service.app, "alice")
    async with _client(service, token) as client:
        with AUDIO.open("rb") as audio:
            answer = await client.audio.transcriptions.create(model="whisper-1", file=audio)
    assert answer.text == TEXT
    assert _records(database) == [("alice", "done", "auto")]
    async with aiohttp.ClientSession() as session, session.get(
            f"{service.base}/app/audiorecords", headers=bearer(token)) as listed:
        items = (await listed.json())["items"]
    assert [(i["original_filename"], i["stage"]) for i in items] == [(AUDIO.name, "done")]


async def test_verbose_json_with_segments_and_no_words_where_none_were_kept(
    service: LiveService, database: TestDatabase,
) -> None:
    async with _client(service, await make_token(service.app)) as client:
        with AUDIO.open("rb") as audio:
            answer = await client.audio.transcriptions.create(
                model="anything-at-all", file=audio, language="en",
                response_format="verbose_json", timestamp_granularities=["word", "segment"],
                prompt="ignored")
    assert (answer.language, answer.text) == ("english", TEXT)
    assert answer.duration > 0
    assert [(s.id, s.start, s.end, s.text) for s in answer.segments or []] == [
        (0, 0.0, 1.2, SPEECH[0].text), (1, 1.2, 2.6, SPEECH[1].text)]
    segment = (answer.segments or [])[0]
    assert (segment.seek, segment.tokens, segment.no_speech_prob) == (0, [], 0.0)
    assert answer.words == []
    assert _records(database)[0][2] == "en"


@pytest.mark.parametrize(("fmt", "expected"), [
    ("text", TEXT + "\n"),
    ("srt", "1\n00:00:00,000 --> 00:00:01,200\nHe was not an ill disposed\n\n2\n"),
    ("vtt", "WEBVTT\n\n00:00:00.000 --> 00:00:01.200\nHe was not an ill disposed\n\n"),
])
async def test_text_formats(service: LiveService, fmt: str, expected: str) -> None:
    async with _client(service, await make_token(service.app)) as client:
        with AUDIO.open("rb") as audio:
            answer = await client.audio.transcriptions.create(  # type: ignore[call-overload]
                model="whisper-1", file=audio, response_format=fmt)
    assert isinstance(answer, str)
    assert answer.startswith(expected)


LONG = (Utterance(start_ms=0, end_ms=28_000, channel=0, text=(
    "So this is a long utterance that goes on and on. It has many words, and some commas, "
    "and it keeps going for twenty-eight seconds because the recognizer made one segment "
    "of it all. Nobody wants to read that wall of text, do they?")),)


@pytest.mark.parametrize("fmt", ["srt", "vtt"])
async def test_a_long_utterance_answers_in_subtitle_grade_cues(
        make_settings: SettingsFactory, fmt: str) -> None:
    fake = FakeRecognizer(utterances=LONG)
    async with live_service(make_settings, recognizer=fake) as service, \
            _client(service, await make_token(service.app)) as client:
        with AUDIO.open("rb") as audio:
            answer = await client.audio.transcriptions.create(  # type: ignore[call-overload]
                model="whisper-1", file=audio, response_format=fmt)
    assert isinstance(answer, str)
    cues = check_subtitle_rules(answer, fmt)
    assert len(cues) >= 5  # 28 s in cues of at most 7 s
    assert " ".join(" ".join(cue.lines) for cue in cues) == " ".join(LONG[0].text.split())


async def test_models_name_the_recognizer(service: LiveService) -> None:
    async with _client(service, await make_token(service.app, scope="read")) as client:
        models = await client.models.list()
        assert [(m.id, m.object, m.owned_by) for m in models.data] == [
            ("fake", "model", "transcriber-fake")]
        assert (await client.models.retrieve("fake")).id == "fake"
        with pytest.raises(openai.NotFoundError):
            await client.models.retrieve("whisper-1")


async def test_refusals_in_openais_error_shape(
    service: LiveService, database: TestDatabase
) -> None:
    async with _client(service, "tx_" + "A" * 43) as stranger:
        with pytest.raises(openai.AuthenticationError) as bad_key, AUDIO.open("rb") as audio:
            await stranger.audio.transcriptions.create(model="whisper-1", file=audio)
    assert bad_key.value.code == "invalid_api_key"
    assert bad_key.value.type == "invalid_request_error"
    async with _client(service, await make_token(service.app, scope="read")) as reader:
        with pytest.raises(openai.PermissionDeniedError), AUDIO.open("rb") as audio:
            await reader.audio.transcriptions.create(model="whisper-1", file=audio)
    async with _client(service, await make_token(service.app)) as writer:
        with pytest.raises(openai.BadRequestError) as language, AUDIO.open("rb") as audio:
            await writer.audio.transcriptions.create(model="whisper-1", file=audio,
                                                     language="xx")
        assert language.value.param == "language"
        with pytest.raises(openai.BadRequestError) as fmt, AUDIO.open("rb") as audio:
            await writer.audio.transcriptions.create(  # type: ignore[call-overload]
                model="whisper-1", file=audio, response_format="docx")
        assert fmt.value.param == "response_format"
        with pytest.raises(openai.APIStatusError) as not_audio:
            await writer.audio.transcriptions.create(model="whisper-1",
                                                     file=("notes.txt", b"just some words"))
        assert not_audio.value.status_code == 415
    assert _records(database) == []


async def test_without_a_token_v1_is_401_whatever_the_proxy_says(service: LiveService) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{service.base}/v1/models",
                               headers={"Remote-User": "alice"}) as response:
            assert response.status == 401
            assert (await response.json())["error"]["code"] == "invalid_api_key"
        async with session.get(f"{service.base}/v1/nothing") as response:
            body = await response.json()
            assert response.status == 404
            assert set(body["error"]) == {"message", "type", "param", "code"}


async def test_fields_after_the_file_still_count(
    service: LiveService, database: TestDatabase
) -> None:
    """curl -F file=@a.mp3 -F language=ru -F response_format=text puts the fields last."""
    form = aiohttp.FormData()
    form.add_field("file", AUDIO.read_bytes(), filename="a.mp3")
    form.add_field("language", "ru")
    form.add_field("response_format", "text")
    headers = bearer(await make_token(service.app))
    async with aiohttp.ClientSession() as session, session.post(
            f"{service.base}/v1/audio/transcriptions", data=form, headers=headers) as response:
        assert response.status == 200
        assert response.content_type == "text/plain"
        assert await response.text() == TEXT + "\n"
        record_id = response.headers["X-Transcriber-Record"]
    assert _records(database) == [("alice", "done", "ru")]
    late = aiohttp.FormData()
    late.add_field("file", AUDIO.read_bytes(), filename="a.mp3")
    late.add_field("language", "xx")
    async with aiohttp.ClientSession() as session, session.post(
            f"{service.base}/v1/audio/transcriptions", data=late, headers=headers) as refused:
        assert refused.status == 400
        assert (await refused.json())["error"]["param"] == "language"
    assert len(_records(database)) == 1  # the refused one left nothing
    assert record_id


async def test_past_the_wait_504_with_the_record_and_no_retry(
    make_settings: SettingsFactory, database: TestDatabase,
) -> None:
    pending = FakeRecognizer(utterances=SPEECH, finishes_in_submit=False,
                             pending_checks=10**9)
    async with live_service(make_settings, recognizer=pending,
                            server={"openai_wait_seconds": 1.0}) as service:
        token = await make_token(service.app)
        async with _client(service, token) as client:
            with pytest.raises(openai.InternalServerError) as timed_out, \
                    AUDIO.open("rb") as audio:
                await client.audio.transcriptions.create(model="whisper-1", file=audio)
    assert timed_out.value.status_code == 504
    body = timed_out.value.body
    assert isinstance(body, dict)
    assert body["code"] == "timeout"
    # One record: the SDK was told not to send the file again.
    records = _records(database)
    assert len(records) == 1
    assert records[0][1] != "done"
    assert body["record_id"] == database.scalar("SELECT id FROM audio_records")


async def test_a_halted_record_is_500_with_its_id_and_no_retry(
    make_settings: SettingsFactory, database: TestDatabase,
) -> None:
    failing = FakeRecognizer(utterances=SPEECH)
    failing.submit_faults.append(PermanentFailure("the recognizer refused it"))
    async with live_service(make_settings, recognizer=failing) as service:
        token = await make_token(service.app)
        async with _client(service, token) as client:
            with pytest.raises(openai.InternalServerError) as halted, AUDIO.open("rb") as audio:
                await client.audio.transcriptions.create(model="whisper-1", file=audio)
    assert halted.value.status_code == 500
    body = halted.value.body
    assert isinstance(body, dict)
    assert body["code"] == "transcription_failed"
    assert len(_records(database)) == 1


async def test_verbose_json_carries_the_words_and_the_quality_report(
    service: LiveService,
) -> None:
    """The real poll step makes the report of the recognizer's answer (the local
    recognizer's fields, here from the fake one) and verbose_json carries it."""
    service.recognizer.utterances = [dataclasses.replace(SPEECH[0], words=(
        Word(start_ms=0, end_ms=500, text=" He", probability=0.9),
        Word(start_ms=500, end_ms=1200, text=" was", probability=0.2)))]
    # The recording is 3 s long: most of its speech unclear.
    service.recognizer.report = {"speech": [[0, 2900]], "unclear": [[1000, 2900]],
                                 "repeats_removed": 0}
    async with _client(service, await make_token(service.app)) as client:
        with AUDIO.open("rb") as audio:
            answer = await client.audio.transcriptions.create(
                model="whisper-1", file=audio, response_format="verbose_json",
                timestamp_granularities=["word"])
    assert [(w.word, w.start, w.end) for w in answer.words or []] == [
        (" He", 0.0, 0.5), (" was", 0.5, 1.2)]
    quality = answer.model_dump()["quality"]
    assert quality["verdict"] == "poor"
    assert quality["reasons"] == ["unclear_speech", "low_confidence"]
    assert quality["unclear_spans"] == [{"start_ms": 1000, "end_ms": 2900}]
    assert quality["low_confidence_share"] == 0.5


async def test_open_webuis_chunks_sent_side_by_side_are_all_answered(
    service: LiveService, database: TestDatabase,
) -> None:
    """Open WebUI cuts a long recording into MP3 chunks and posts them in parallel: up to
    `server.openai_waits_per_user_max` (4) of one person wait side by side, and each gets
    its own record and transcript (none a 429)."""
    token = await make_token(service.app, "alice")
    chunks = 4

    async def one(client: openai.AsyncOpenAI, index: int) -> str:
        answer = await client.audio.transcriptions.create(
            model="whisper-1", file=(f"chunk_{index}.mp3", AUDIO.read_bytes(), "audio/mpeg"))
        return answer.text

    async with _client(service, token) as client:
        texts = await asyncio.gather(*(one(client, index) for index in range(chunks)))
    assert texts == [TEXT] * chunks
    assert _records(database) == [("alice", "done", "auto")] * chunks
    names = database.rows("SELECT original_filename FROM audio_records ORDER BY id")
    assert sorted(name for (name,) in names) == [f"chunk_{i}.mp3" for i in range(chunks)]
