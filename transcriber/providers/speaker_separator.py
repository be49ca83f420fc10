"""The speaker-separation adapter: the ONNX embedder and the engine, off the loop.

The embedder is loaded on first use and kept (a failure is not kept, so a
model installed later is found); decoding and clustering run in a thread: in
the service, the recognizer's pool of model runs (`model_runs`), with as many
embedder threads as a recognition takes; alone (tests, benches), a thread of
its own and one embedder thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

from transcriber.ports import Utterance
from transcriber.providers.memory import releasing
from transcriber.providers.model_runs import ModelRuns
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

    def __init__(self, runs: ModelRuns | None = None) -> None:
        self._runs = runs
        self._embedder: SpeakerEmbedder | None = None
        self._lock = threading.Lock()

    async def separate(self, audio: Path, segments: Sequence[Segment], *,
                       num_speakers: int | None,
                       speech: Sequence[Span] | None = None) -> list[Utterance]:
        args = (audio, segments, num_speakers, speech)
        try:
            if self._runs is None:
                return await asyncio.to_thread(self._separate, *args)
            return await self._runs.run(self._separate, *args)
        except SpeakerModelUnavailable as exc:
            raise SpeakersUnavailable(str(exc)) from None

    def _load(self) -> SpeakerEmbedder:
        with self._lock:
            if self._embedder is None:
                threads = 1 if self._runs is None else self._runs.threads
                self._embedder = SpeakerEmbedder(threads=threads)
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
