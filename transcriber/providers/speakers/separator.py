"""The speaker-separation adapter: the ONNX embedder and the engine, off the loop.

The embedder is loaded on first use and kept (a failure is not kept, so a
model installed later is found). In the service `prepare` starts finding a
recording's turns beside its recognition, at the lowest CPU priority
(`ahead`), and `separate` takes them when they are ready. Otherwise
(not prepared, not ready, or after a restart) the work is done, or finished
from whatever the job had found, in the recognizer's pool of model runs
(`model_runs`), with one embedder thread (`EMBEDDER_THREADS`). Alone
(tests, benches) the pool is a thread of its own. In the
service a long recording's turns are found after its recognition, in a child process
(`isolated`), the recognizer's model let go meanwhile, so that their memory is never
the service's.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import structlog

from transcriber.core.observability import SPEAKER_TURNS_REFOUND
from transcriber.domain.voices import VoiceWindows
from transcriber.ports import (
    Segment,
    Separation,
    Span,
    SpeakersUnavailable,
    SpeechSink,
    Turn,
    Utterance,
)
from transcriber.providers.memory import releasing
from transcriber.providers.model_runs import ModelRuns
from transcriber.providers.speakers.ahead import Ahead, TurnsAhead
from transcriber.providers.speakers.embedder import SpeakerEmbedder, SpeakerModelUnavailable
from transcriber.providers.speakers.isolated import IsolatedJob
from transcriber.providers.speakers.stream import pcm_blocks, speech_and_features
from transcriber.providers.speakers.turns import FoundTurns, found_from_features
from transcriber.providers.speakers.vad import speech_regions
from transcriber.providers.speakers.voices import found_voices, stereo_voices
from transcriber.providers.speakers.words import split_by_speaker

log = structlog.get_logger(__name__)

# A recording longer than this (by its last utterance) is separated in a child process
# (`isolated`) when no job found its turns ahead: 3 hours take ~430 MB there. A record of
# several parts (10 min each by default) always is.
ISOLATE_AFTER_MS: Final = 15 * 60 * 1000
# One embedder thread everywhere: a batch's outputs depend on the thread count
# (`SpeakerEmbedder.embed_batch`), and a second thread was slower on the LSTM: 13.3 ms
# an input against 11.0 ms on one, on 2 loaded cores (`tests/bench/test_embedder_alone.py`).
EMBEDDER_THREADS: Final = 1


class LocalSpeakerSeparator:
    """Implements `SpeakerSeparator` with the packaged d-vector model."""

    def __init__(self, runs: ModelRuns | None = None, *, ahead: TurnsAhead | None = None,
                 isolate_after_ms: int | None = None) -> None:
        self._runs = runs
        self._embedder: SpeakerEmbedder | None = None
        self._lock = threading.Lock()
        self._ahead = ahead
        self._isolate_after_ms = isolate_after_ms

    @classmethod
    def in_pool(cls, runs: ModelRuns) -> LocalSpeakerSeparator:
        """The service's separation: in `runs`' pool, its turns found ahead, beside the
        recognition, by a thread of the lowest priority with one embedder thread; a
        long recording's (several parts, or past `ISOLATE_AFTER_MS`) after it, in a child
        process."""
        return cls(runs, ahead=TurnsAhead(lambda: SpeakerEmbedder(threads=1)),
                   isolate_after_ms=ISOLATE_AFTER_MS)

    def prepare(self, audio: Path, *, num_speakers: int | None,
                speech_follows: bool = False) -> SpeechSink | None:
        if self._ahead is None:
            return None
        if not speech_follows and self._isolate_after_ms is not None:
            # A record of several parts is long: found beside its recognition, its turns
            # would hold the service's memory for hours of audio while the recognition
            # holds its own; they are found after it, in a child process (`separate`).
            return None
        job = self._ahead.start(audio, num_speakers=num_speakers, speech_follows=speech_follows)
        return None if job is None or not job.speech_follows else job.hand_speech

    async def separate(self, audio: Path, segments: Sequence[Segment], *,
                       num_speakers: int | None,
                       speech: Sequence[Span] | None = None) -> Separation:
        job = None if self._ahead is None else self._ahead.take(audio,
                                                                 num_speakers=num_speakers)
        found = None if job is None else job.turns()
        if job is not None and found is not None and fits(found.regions, own_vad=job.own_vad,
                                                           speech=speech):
            # FoundTurns beside the recognition: only the words are left, no model run.
            log.info("speaker_turns_taken", found="ahead")
            return await asyncio.to_thread(separation, segments, found)
        args = (audio, segments, num_speakers, speech, job)
        try:
            if self._runs is None:
                return await asyncio.to_thread(self._separate, *args)
            return await self._runs.run(self._separate, *args)
        except SpeakerModelUnavailable as exc:
            raise SpeakersUnavailable(str(exc)) from None

    async def channel_voices(self, audio: Path,
                             utterances: Sequence[Utterance]) -> VoiceWindows:
        def embed() -> VoiceWindows:
            return stereo_voices(audio, utterances, self._load())

        try:
            if self._runs is None:
                return await asyncio.to_thread(embed)
            return await self._runs.run(embed)
        except SpeakerModelUnavailable as exc:
            raise SpeakersUnavailable(str(exc)) from None

    async def close(self) -> None:
        if self._ahead is not None:
            self._ahead.close()

    def _load(self) -> SpeakerEmbedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = SpeakerEmbedder(threads=EMBEDDER_THREADS)
            return self._embedder

    @releasing  # features and clustering are freed when it returns (memory.py)
    def _separate(self, audio: Path, segments: Sequence[Segment], num_speakers: int | None,
                  speech: Sequence[Span] | None, job: Ahead | None = None) -> Separation:
        last_ms = max((s.end_ms for s in segments), default=0)
        if job is None and self._isolate_after_ms is not None and last_ms > self._isolate_after_ms:
            return separation(segments, self._isolated_turns(audio, num_speakers, speech))
        embedder = self._load()
        found = None
        if job is not None:
            job.stop.set()  # its thread stops at its next block or batch
            found = finished(job, speech)  # it may have finished in the meantime
            partial = job.partial
            if found is not None:
                log.info("speaker_turns_taken", found="ahead")
            elif partial is not None:
                # Go on from where it was: its features and embedded inputs (each input's
                # embedding is the same bytes however it was run), over the record's
                # regions when the job's were its own VAD's.
                over: list[Span] | None = partial.regions
                if not fits(partial.regions, own_vad=partial.own_vad, speech=speech):
                    refound("other_regions")
                    over = None if speech is None else list(speech)
                if over is not None:
                    log.info("speaker_turns_taken", found="taken_over",
                             inputs_done=len(partial.cache))
                    found = found_from_features(partial.features, over, embedder,
                                                num_speakers=num_speakers, cache=partial.cache)
        if found is None:
            # Block by block: the whole recording's samples are never held (see
            # `stream`); the VAD runs only when the recognizer's regions are not at hand.
            regions, features = speech_and_features(pcm_blocks(audio),
                                                    speech_regions if speech is None else None)
            if speech is not None:
                regions = list(speech)
            found = found_from_features(features, regions, embedder, num_speakers=num_speakers)
        return separation(segments, found)

    def _isolated_turns(self, audio: Path, num_speakers: int | None,
                        speech: Sequence[Span] | None) -> FoundTurns:
        """A long recording's turns (and the windows embedded) from a child process, once
        the pool's models are let go (`ModelRuns.release_models`: the recognizer loads its
        model again when next used), so that the service and the child together stay in
        the memory the recognition alone takes."""
        released = self._runs.release_models() if self._runs is not None else False
        log.info("speaker_turns_isolated", models_released=released)
        return IsolatedJob(audio, num_speakers=num_speakers, speech=speech,
                           threads=EMBEDDER_THREADS).wait()


def fits(regions: Sequence[Span], *, own_vad: bool, speech: Sequence[Span] | None) -> bool:
    """Pure: whether turns found over `regions` are the record's. They are when found
    over the regions its saved answer keeps (`speech`, the recognizer's VAD), or over
    the engine's own VAD when the answer keeps none: the regions the separation in the
    pool, after a restart or on another day, would cluster. A job that waited in vain
    for the recognizer's regions (queued behind other recordings: the machine's load)
    ran its own VAD, whose regions differ, so its turns would make the same file give
    other speakers."""
    return own_vad if speech is None else list(regions) == list(speech)


def finished(job: Ahead, speech: Sequence[Span] | None) -> FoundTurns | None:
    """The job's turns when it finished them over the record's regions (`fits`); `None`
    when it has not, or when they were found over other regions (logged)."""
    found = job.turns()
    if found is None:
        return None
    if fits(found.regions, own_vad=job.own_vad, speech=speech):
        return found
    refound("other_regions")
    return None


def refound(reason: str) -> None:
    """A job's turns (or what it had found) are not the record's: counted and logged,
    and found again over the record's regions."""
    SPEAKER_TURNS_REFOUND.labels(reason).inc()
    log.info("speaker_turns_not_taken", reason=reason)


def separation(segments: Sequence[Segment], found: FoundTurns) -> Separation:
    """The segments labelled by the turns found, with the windows embedded (bounded)."""
    return Separation(utterances=labelled(segments, found.turns), voices=found_voices(found))


def labelled(segments: Sequence[Segment], turns: Sequence[Turn]) -> list[Utterance]:
    """The segments as mono utterances, split and labelled by the turns (`words`)."""
    return [Utterance(start_ms=u.start_ms, end_ms=u.end_ms, channel=0, text=u.text,
                      speaker=u.speaker, words=u.words)
            for u in split_by_speaker(segments, turns)]
