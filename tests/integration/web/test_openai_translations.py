"""OpenAI's `/v1/audio/translations` with the real `openai` package as the client: the
English text comes back in OpenAI's shapes and nothing is stored; a recognizer without
a translate task (SpeechKit's place) refuses in OpenAI's error shape. The last test is
Whisper's own translate task on Festival's Russian."""

from __future__ import annotations

from collections.abc import AsyncIterator

import openai
import pytest

from tests.helpers.audio import FIXTURES
from tests.helpers.database import TestDatabase
from tests.helpers.settings import SettingsFactory
from tests.helpers.textmetrics import wer
from tests.helpers.tokens import LiveService, live_service, make_token
from tests.helpers.whisper import MakeWhisper
from transcriber.core.errors import PermanentFailure
from transcriber.testing.recognizer import FakeRecognizer, FakeVoiceRecognizer

RUSSIAN = FIXTURES / "festival_ru.m4a"
# The SDK marks `audio.translations.create` deprecated (OpenAI's newer models do not
# translate); the endpoint is still what Whisper clients call.
pytestmark = pytest.mark.filterwarnings("ignore:deprecated:DeprecationWarning")


@pytest.fixture
def voice() -> FakeVoiceRecognizer:
    return FakeVoiceRecognizer()


@pytest.fixture
async def service(make_settings: SettingsFactory,
                  voice: FakeVoiceRecognizer) -> AsyncIterator[LiveService]:
    async with live_service(make_settings, recognizer=voice) as running:
        yield running


def _client(service: LiveService, token: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{service.base}/v1", api_key=token, max_retries=0)


def _records(database: TestDatabase) -> int:
    return len(database.rows("SELECT id FROM audio_records"))


async def test_the_english_text_comes_back_and_nothing_is_stored(
        service: LiveService, voice: FakeVoiceRecognizer, database: TestDatabase) -> None:
    async with _client(service, await make_token(service.app)) as client:
        with RUSSIAN.open("rb") as audio:
            answer = await client.audio.translations.create(model="whisper-1", file=audio)
    assert answer.text == voice.translation
    (sent, language), = voice.translated
    assert sent == RUSSIAN.read_bytes()
    assert language is None
    assert _records(database) == 0


async def test_verbose_json_and_text_with_the_spoken_language_named(
        service: LiveService, voice: FakeVoiceRecognizer) -> None:
    async with _client(service, await make_token(service.app)) as client:
        with RUSSIAN.open("rb") as audio:
            verbose = await client.audio.translations.create(
                model="whisper-1", file=audio, response_format="verbose_json",
                extra_body={"language": "ru"})
        with RUSSIAN.open("rb") as audio:
            srt = await client.audio.translations.create(
                model="whisper-1", file=audio, response_format="srt")
    assert verbose.language == "english"
    assert [(s.start, s.end, s.text) for s in verbose.segments or []] == [
        (0.0, 4.5, voice.translation)]
    assert [language for _, language in voice.translated] == ["ru", None]
    assert "00:00:00,000 --> 00:00:04,500" in str(srt)


async def test_refusals_in_openais_error_shape(
        service: LiveService, voice: FakeVoiceRecognizer) -> None:
    async with _client(service, await make_token(service.app, scope="read")) as reader:
        with pytest.raises(openai.PermissionDeniedError), RUSSIAN.open("rb") as audio:
            await reader.audio.translations.create(model="whisper-1", file=audio)
    async with _client(service, await make_token(service.app)) as writer:
        with pytest.raises(openai.BadRequestError) as language, RUSSIAN.open("rb") as audio:
            await writer.audio.translations.create(model="whisper-1", file=audio,
                                                   extra_body={"language": "xx"})
        assert language.value.param == "language"
        voice.faults.append(PermanentFailure("not audio"))
        with pytest.raises(openai.APIStatusError) as not_audio:
            await writer.audio.translations.create(model="whisper-1",
                                                   file=("notes.txt", b"just some words"))
        assert not_audio.value.status_code == 415
        with pytest.raises(openai.BadRequestError) as empty:
            await writer.audio.translations.create(model="whisper-1", file=("a.mp3", b""))
        assert empty.value.param == "file"


async def test_a_recognizer_without_a_translate_task_refuses_clearly(
        make_settings: SettingsFactory) -> None:
    # The fake without `Translates` stands where SpeechKit does.
    async with live_service(make_settings, recognizer=FakeRecognizer()) as service:
        client = _client(service, await make_token(service.app))
        with pytest.raises(openai.BadRequestError) as refused, RUSSIAN.open("rb") as audio:
            await client.audio.translations.create(model="whisper-1", file=audio)
        await client.close()
    assert refused.value.code == "translation_unsupported"
    assert refused.value.type == "invalid_request_error"
    assert "translate" in refused.value.message


@pytest.mark.slow
async def test_whisper_translates_russian_speech_to_english(make_whisper: MakeWhisper) -> None:
    whisper = make_whisper()
    try:
        answer = await whisper.translate(RUSSIAN, language=None)
    finally:
        await whisper.close()
    text = " ".join(u.text for u in answer.utterances)
    assert answer.language == "ru"
    # The fixture says "Привет. Сегодня мы проверяем распознавание русской речи."
    assert wer("hello today we are checking the recognition of russian speech", text) <= 0.4, text
