"""Every second of speech is decoded: the batched recognizer's clips, its coverage check
and the sequential repair, with the real model on continuous speech.

Continuous speech (no pause over 0.3 s) is where the VAD finds no place to cut: the
batched decoding used to keep a region's first 30 s and drop the rest. The check is
shown catching a planner that drops a span, a clip whose decoding stops early and a
clip that comes back empty; each is decoded again and counted.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import structlog

from tests.helpers import hard_audio
from tests.helpers.pipeline import sample
from tests.helpers.textmetrics import wer
from tests.helpers.whisper import MakeWhisper
from transcriber.providers.clips import Clip, plan_clips
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.settings import RecognizerSettings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def whisper(make_whisper: MakeWhisper) -> Iterator[WhisperRecognizer]:
    recognizer = make_whisper(RecognizerSettings(language="en"))
    yield recognizer
    asyncio.run(recognizer.close())


@pytest.fixture(scope="module")
def minute(tmp_path_factory: pytest.TempPathFactory) -> hard_audio.HardRecording:
    """45 s of continuous read speech: one VAD stretch over a window."""
    hard_audio.require("en")
    return hard_audio.build(hard_audio.CONDITIONS["continuous"], 45.0,
                            tmp_path_factory.mktemp("a") / "minute.flac")


def _recognize(whisper: WhisperRecognizer, path: Path, *, words: bool = False
               ) -> list[dict[str, Any]]:
    payload = whisper._recognize(path, threading.Event(), "en", words)
    segments: list[dict[str, Any]] = orjson.loads(payload)["segments"]
    return segments


def _text(segments: list[dict[str, Any]]) -> str:
    return " ".join(s["text"] for s in segments)


def _uncovered() -> tuple[float, float, float]:
    return (sample("transcriber_recognition_uncovered_seconds_total",
                   {"provider": "local", "after": "decoding"}),
            sample("transcriber_recognition_repairs_total", {"provider": "local"}),
            sample("transcriber_recognition_empty_clips_total", {"provider": "local"}))


def test_a_minute_of_continuous_speech_comes_back_whole(
        whisper: WhisperRecognizer, minute: hard_audio.HardRecording) -> None:
    segments = _recognize(whisper, minute.path)
    assert wer(minute.text, _text(segments)) <= 0.08, _text(segments)
    assert segments[-1]["end_ms"] / 1000 >= minute.speech_end_s - 3.0
    assert len(segments) >= 2  # 45 s in clips of at most 30 s


def test_a_planner_that_drops_a_span_is_caught_and_the_span_recognized(
        whisper: WhisperRecognizer, minute: hard_audio.HardRecording,
        monkeypatch: pytest.MonkeyPatch) -> None:
    def dropping(*args: Any, **kwargs: Any) -> list[Clip]:
        clips = plan_clips(*args, **kwargs)
        return [clips[0], *clips[2:]]  # the second clip's speech is in no clip

    monkeypatch.setattr(whisper, "plan", dropping)
    before = _uncovered()
    with structlog.testing.capture_logs() as logs:
        segments = _recognize(whisper, minute.path)
    after = _uncovered()
    assert wer(minute.text, _text(segments)) <= 0.08, _text(segments)
    assert after[0] - before[0] >= 10.0  # the dropped clip's speech, in seconds
    assert after[1] == before[1] + 1
    [event] = [e for e in logs if e["event"] == "recognition_uncovered"]
    assert event["unclipped_seconds"] >= 10.0
    assert event["log_level"] == "warning"
    assert event["left_seconds"] < 2.0


class _Batched:
    """The real batched pipeline, its answer for one clip spoiled as Whisper can spoil
    it: the text and words after `stop_after` seconds of the clip gone, or all of it."""

    def __init__(self, real: Any, *, clip: int, stop_after: float | None) -> None:
        self._real = real
        self._clip = clip
        self._stop_after = stop_after

    def transcribe(self, audio: Any, **options: Any) -> Any:
        segments, info = self._real.transcribe(audio, **options)
        start = options["clip_timestamps"][self._clip]["start"]
        return [self._spoil(s, start) for s in segments], info

    def _spoil(self, segment: Any, start: float) -> Any:
        if abs(segment.start - start) > 0.01:
            return segment
        words = segment.words or []
        if self._stop_after is not None:
            words = [w for w in words if w.end <= start + self._stop_after]
        else:
            words = []
        return dataclasses.replace(segment, words=words, text="".join(w.word for w in words))


@pytest.mark.parametrize("stop_after", [4.0, None], ids=["stops_early", "empty"])
def test_a_clip_whose_decoding_stops_early_or_is_empty_is_decoded_again(
        whisper: WhisperRecognizer, minute: hard_audio.HardRecording,
        monkeypatch: pytest.MonkeyPatch, stop_after: float | None) -> None:
    real = whisper._transcriber(whisper.load())
    monkeypatch.setattr(whisper, "_transcriber",
                        lambda model: _Batched(real, clip=1, stop_after=stop_after))
    before = _uncovered()
    segments = _recognize(whisper, minute.path)
    after = _uncovered()
    assert wer(minute.text, _text(segments)) <= 0.08, _text(segments)
    assert after[0] - before[0] >= 5.0
    assert after[1] == before[1] + 1
    assert after[2] == before[2] + (1 if stop_after is None else 0)


def test_word_times_asked_for_are_kept_and_cover_the_speech(
        whisper: WhisperRecognizer, minute: hard_audio.HardRecording) -> None:
    segments = _recognize(whisper, minute.path, words=True)
    words = [w for s in segments for w in s["words"]]
    assert words[-1]["end_ms"] / 1000 >= minute.speech_end_s - 3.0
    # Kept when not asked for too, each with Whisper's probability (3 decimals).
    kept = [w for s in _recognize(whisper, minute.path) for w in s["words"]]
    assert kept
    assert all(round(w["probability"], 3) == w["probability"] for w in kept)
