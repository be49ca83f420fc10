"""Home Assistant's way of asking, with real speech and the real local recognizer: an
English voice command (pocketsphinx-testdata's LibriVox, 3.0 s) and a Russian one
(Festival's festival_ru.m4a fixture, 4.5 s), each sent through the protocol's own
client, come back as their words."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from wyoming.asr import Transcript

from tests.helpers import hard_audio
from tests.helpers.audio import FIXTURES
from tests.helpers.textmetrics import cer, wer
from tests.helpers.whisper import MakeWhisper
from tests.helpers.wyoming import serving, voice_command
from transcriber.providers.whisper import WhisperRecognizer

# What festival_ru.m4a says (tests/fixtures/audio/README.md).
RUSSIAN = "Привет. Сегодня мы проверяем распознавание русской речи."


@pytest.fixture(scope="module")
def whisper(make_whisper: MakeWhisper) -> Iterator[WhisperRecognizer]:
    recognizer = make_whisper()
    yield recognizer
    asyncio.run(recognizer.close())


@pytest.mark.slow
async def test_english_and_russian_voice_commands_come_back_as_their_words(
        whisper: WhisperRecognizer) -> None:
    hard_audio.require("en")
    english = hard_audio.decode(
        hard_audio.LIBRIVOX / "sense_and_sensibility_01_austen_64kb-0880.wav")
    russian = hard_audio.decode(FIXTURES / "festival_ru.m4a")
    async with serving(whisper) as port:
        # Named languages, as Home Assistant sends its pipeline's; then detected.
        heard_en, _ = await voice_command(port, english, language="en")
        heard_ru, _ = await voice_command(port, russian, language="ru")
        detected_ru, _ = await voice_command(port, russian, language=None)
    for event in (heard_en, heard_ru, detected_ru):
        assert event is not None
        assert Transcript.is_type(event.type)
    assert heard_en is not None
    assert heard_ru is not None
    assert detected_ru is not None
    en = Transcript.from_event(heard_en)
    assert wer(hard_audio.ENGLISH["0880"], en.text) <= 0.15, en.text
    assert en.language == "en"
    ru = Transcript.from_event(heard_ru)
    assert cer(RUSSIAN, ru.text) <= 0.15, ru.text
    assert ru.language == "ru"
    assert Transcript.from_event(detected_ru).language == "ru"
