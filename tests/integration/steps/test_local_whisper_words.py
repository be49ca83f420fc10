"""Word times of the local recognizer, with the real model on a short file.

The speaker engine assigns speakers per word, so with `words` the batched
decoding must give the same words as without, each with a time inside the
speech it was said in; their cost is one `model.align` call per batch of clips
(measured in tests/bench/test_word_times.py and docs/recognition.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from tests.helpers import speech_audio
from tests.helpers.audio import FIXTURES
from tests.helpers.whisper import MakeWhisper
from transcriber.ports import Span
from transcriber.providers.whisper import WhisperRecognizer, batched_clips
from transcriber.providers.whisper_alignment import ALIGNMENT_MEDIAN_WIDTH
from transcriber.settings import RecognizerSettings

PIECES = [speech_audio.Piece(fixture="espeak_en.ogg", silence_s=1.5),
          speech_audio.Piece(fixture="librivox_0880.mp3", silence_s=3.5)] * 3


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[float, float]]]:
    """The file and where its speech pieces lie (seconds)."""
    source = tmp_path_factory.mktemp("words") / "speech.mp3"
    speech_audio.build(PIECES, source)
    spans: list[tuple[float, float]] = []
    at = 0.0
    for piece in PIECES:
        assert piece.fixture is not None
        length = speech_audio._pcm(FIXTURES / piece.fixture).size / speech_audio.RATE
        spans.append((at, at + length))
        at += length + piece.silence_s
    return source, spans


@pytest.fixture(scope="module")
def whisper(make_whisper: MakeWhisper) -> Iterator[WhisperRecognizer]:
    recognizer = make_whisper(RecognizerSettings(language="en", batch_size=2))
    yield recognizer
    asyncio.run(recognizer.close())


def _segments(whisper: WhisperRecognizer, source: Path, words: bool) -> list[dict[str, Any]]:
    payload = whisper._recognize(source, threading.Event(), "en", words)
    segments: list[dict[str, Any]] = orjson.loads(payload)["segments"]
    return segments


@pytest.mark.slow
def test_word_times_keep_the_words_and_lie_in_the_speech(
        whisper: WhisperRecognizer, recording: tuple[Path, list[tuple[float, float]]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from faster_whisper.transcribe import WhisperModel  # noqa: PLC0415 - heavy import

    source, spans = recording
    calls: list[float] = []
    widths: list[int] = []
    original = WhisperModel.find_alignment

    def find_alignment(self: Any, *args: Any, **kwargs: Any) -> Any:
        widths.append(kwargs["median_filter_width"])
        started = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            calls.append(time.perf_counter() - started)

    monkeypatch.setattr(WhisperModel, "find_alignment", find_alignment)
    plain = _segments(whisper, source, words=False)
    # The coverage check aligns every clip's words, asked for or not (whisper_decoding.py).
    checked = len(calls)
    calls.clear()
    timed = _segments(whisper, source, words=True)
    clips = len(batched_clips(source)[1])
    assert clips > 2
    # One alignment per batch of clips, not one per segment or per clip.
    assert len(calls) == checked == -(-clips // 2)
    # Without faster-whisper's median filter of 7 frames (whisper_alignment.py).
    assert set(widths) == {ALIGNMENT_MEDIAN_WIDTH} == {1}
    assert [s["text"] for s in timed] == [s["text"] for s in plain]
    # Kept asked for or not (the quality report reads their probabilities).
    assert [s["words"] for s in plain] == [s["words"] for s in timed]
    assert all(0 <= w["probability"] <= 1 for s in plain for w in s["words"])
    words = [w for s in timed for w in s["words"]]
    assert len(words) >= 6 * 6
    for segment in timed:
        assert "".join(w["text"] for w in segment["words"]).strip() == segment["text"]
        assert segment["start_ms"] <= segment["words"][0]["start_ms"]
        assert segment["words"][-1]["end_ms"] <= segment["end_ms"]
    for before, after in itertools.pairwise(words):
        assert before["start_ms"] <= before["end_ms"] <= after["start_ms"] + 1
    for word in words:
        middle = (word["start_ms"] + word["end_ms"]) / 2000
        assert any(start - 0.2 <= middle <= end + 0.2 for start, end in spans), word


def test_the_speech_its_vad_found_is_handed_on_first_and_kept_in_the_answer(
        whisper: WhisperRecognizer, recording: tuple[Path, list[tuple[float, float]]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The speaker turns found beside the recognition cluster these regions' voices:
    they are handed on once, before the first clip is decoded; speakers found after
    the recognition find them in the answer (kept only when speakers are wanted).
    Neither runs the VAD again."""
    from faster_whisper import BatchedInferencePipeline  # noqa: PLC0415 - heavy import

    source, spans = recording
    seen: list[str] = []
    handed: list[Sequence[Span] | None] = []
    original = BatchedInferencePipeline.transcribe

    def transcribe(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append("decoding")
        return original(self, *args, **kwargs)

    samples: list[object] = []

    def on_speech(regions: Sequence[Span] | None, audio: object = None, /) -> None:
        seen.append("speech")
        handed.append(regions)
        samples.append(audio)

    monkeypatch.setattr(BatchedInferencePipeline, "transcribe", transcribe)
    answer = orjson.loads(whisper._recognize(source, threading.Event(), "en", True, on_speech))
    assert seen == ["speech", "decoding"]
    regions = answer["speech"]
    assert handed == [[Span(start_ms=start, end_ms=end) for start, end in regions]]
    # The samples it decoded come with them (the speaker job decodes nothing).
    assert isinstance(samples[0], np.ndarray)
    assert samples[0].dtype == np.float32
    assert round(samples[0].shape[0] / 16) == answer["duration_ms"]
    assert len(regions) >= len(spans)
    for start, end in spans:
        # Nearly all of every piece lies in the regions: a piece's span holds its
        # file's own silence at the edges and pauses of 0.3 s and more, left out.
        covered = sum(max(0, min(end * 1000, b) - max(start * 1000, a)) for a, b in regions)
        assert covered >= 0.85 * (end - start) * 1000
    for first, second in itertools.pairwise(regions):
        assert first[0] < first[1] <= second[0] < second[1]
    assert regions[-1][1] <= answer["duration_ms"]


def test_sequential_decoding_says_no_regions_will_come(
        whisper: WhisperRecognizer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(whisper, "_settings",
                        dataclasses.replace(whisper._settings, batched=False))
    handed: list[tuple[Sequence[Span] | None, object]] = []

    def on_speech(regions: Sequence[Span] | None, samples: object = None, /) -> None:
        handed.append((regions, samples))

    answer = orjson.loads(whisper._recognize(FIXTURES / "espeak_en.ogg",
                                             threading.Event(), "en", False, on_speech))
    assert handed == [(None, None)]
    assert answer["segments"]
