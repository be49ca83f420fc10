"""The speaker-separation adapter: the ONNX embedder and the engine, off the loop.

The embedder is loaded on first use and kept (a failure is not kept, so a
model installed later is found); decoding and clustering run in a thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

from transcriber.ports import Utterance
from transcriber.providers.memory import releasing
from transcriber.providers.speaker_port import SpeakersUnavailable
from transcriber.providers.speaker_stream import pcm_blocks, speech_and_features
from transcriber.providers.speaker_words import Segment, Span, split_by_speaker
from transcriber.providers.speakers import (
    SpeakerEmbedder,
    SpeakerModelUnavailable,
    diarize_features,
    speech_regions,
)


class LocalSpeakerSeparator:
    """Implements `SpeakerSeparator` with the packaged d-vector model."""

    def __init__(self) -> None:
        self._embedder: SpeakerEmbedder | None = None
        self._lock = threading.Lock()

    async def separate(self, audio: Path, segments: Sequence[Segment], *,
                       num_speakers: int | None,
                       speech: Sequence[Span] | None = None) -> list[Utterance]:
        try:
            return await asyncio.to_thread(self._separate, audio, segments, num_speakers,
                                           speech)
        except SpeakerModelUnavailable as exc:
            raise SpeakersUnavailable(str(exc)) from None

    def _load(self) -> SpeakerEmbedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = SpeakerEmbedder()
            return self._embedder

    @releasing  # features and clustering are freed when it returns (memory.py)
    def _separate(self, audio: Path, segments: Sequence[Segment], num_speakers: int | None,
                  speech: Sequence[Span] | None) -> list[Utterance]:
        embedder = self._load()
        # Block by block: the whole recording's samples are never held (see speaker_stream);
        # the VAD runs only when the recognizer's regions are not at hand.
        found, features = speech_and_features(pcm_blocks(audio),
                                              speech_regions if speech is None else None)
        regions = found if speech is None else list(speech)
        turns = diarize_features(features, regions, embedder, num_speakers=num_speakers)
        return [Utterance(start_ms=u.start_ms, end_ms=u.end_ms, channel=0, text=u.text,
                          speaker=u.speaker)
                for u in split_by_speaker(segments, turns)]
