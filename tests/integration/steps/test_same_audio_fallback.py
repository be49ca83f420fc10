"""Same audio, same transcript, also where Whisper falls back: a short clip of espeak-ng's
monotone Russian (the voice Whisper base loops on, `tests/helpers/invented_audio.py`),
whose windows fail Whisper's own checks and are decoded again, recognized twice by one
recognizer in one process: the two answers' segments and words are the same.

faster-whisper's fallback sampled at temperatures 0.2-0.6, and ctranslate2's random
generator is one per worker thread, seeded once: the second recognition drew on and gave
other words (`ctranslate2.set_random_seed` before each did not help). The fallback is now
a fixed sequence of deterministic decodings (`whisper_fallback`;
docs/speakers.md, "Same audio, same transcript")."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.helpers import invented_audio
from tests.helpers.whisper import MakeWhisper
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.providers.whisper_alignment import WordAlignedWhisper
from transcriber.settings import RecognizerSettings

pytestmark = pytest.mark.slow

SPEECH_SECONDS = 20.0  # three windows at most; the first falls back (a loop)


class _Counting:
    """ctranslate2's Whisper, its `generate` calls counted (everything else passed on)."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self.generated = 0

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        self.generated += 1
        return self._model.generate(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


@pytest.fixture
def recognizer(make_whisper: MakeWhisper) -> Iterator[WhisperRecognizer]:
    made = make_whisper(RecognizerSettings(batched=False, concurrency=1))
    yield made
    asyncio.run(made.close())


def test_a_clip_that_falls_back_gives_the_same_words_twice_in_one_process(
        recognizer: WhisperRecognizer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    invented_audio.require_espeak()
    recording = invented_audio.CONDITIONS["espeak_russian"][1](
        SPEECH_SECONDS, tmp_path / "monotone.flac")
    model = recognizer.load()
    counting = _Counting(model.model)
    monkeypatch.setattr(model, "model", counting)
    tries: list[int] = []  # `generate` calls per window: more than one is a fallback
    original = WordAlignedWhisper.generate_with_fallback

    def generate_with_fallback(self: Any, *args: Any, **kwargs: Any) -> Any:
        before = counting.generated
        try:
            return original(self, *args, **kwargs)
        finally:
            tries.append(counting.generated - before)

    monkeypatch.setattr(WordAlignedWhisper, "generate_with_fallback", generate_with_fallback)
    answers = []
    for _ in range(2):
        payload = recognizer._recognize(recording.path, threading.Event(), "ru", True)
        answers.append(orjson.loads(payload))
    assert max(tries) > 1, tries  # the clip did fall back
    first, second = answers
    assert first["segments"], first
    assert any(segment.get("words") for segment in first["segments"])
    assert first["segments"] == second["segments"]
    assert first == second
