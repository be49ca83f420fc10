"""The speaker-separation adapter: the ONNX embedder and the engine, off the loop.

The embedder is loaded on first use and kept (a failure is not kept, so a
model installed later is found). In the service `prepare` starts finding a
recording's turns beside its recognition, at the lowest CPU priority
(`ahead`), and `separate` takes them when they are ready. Otherwise
(not prepared, not ready, or after a restart) the work is done, or finished
from whatever the job had found, in the recognizer's pool of model runs
(`model_runs`), with as many embedder threads as a recognition takes. Alone
(tests, benches) the pool is a thread of its own with one embedder thread. In the
service a long recording's turns are found in a child process instead (`isolated`),
ahead or in the pool, so that their memory is never the service's.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Final

import structlog

from transcriber.ports import Segment, Span, SpeakersUnavailable, SpeechSink, Turn, Utterance
from transcriber.providers.memory import releasing
from transcriber.providers.model_runs import ModelRuns
from transcriber.providers.speakers.ahead import Ahead, TurnsAhead
from transcriber.providers.speakers.embedder import SpeakerEmbedder, SpeakerModelUnavailable
from transcriber.providers.speakers.isolated import IsolatedJob
from transcriber.providers.speakers.stream import pcm_blocks, speech_and_features
from transcriber.providers.speakers.turns import turns_from_features
from transcriber.providers.speakers.vad import speech_regions
from transcriber.providers.speakers.words import split_by_speaker

log = structlog.get_logger(__name__)

# How often a caller waiting for a job found ahead raises its child's priority (the job
# may start its child only after another job's).
HURRY_POLL_SECONDS: Final = 0.5


# A recording longer than this (by its last utterance) is separated in a child process
# (`isolated`) when no job found its turns ahead: 3 hours take ~450 MB there.
ISOLATE_AFTER_MS: Final = 15 * 60 * 1000


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
        long recording's (several parts, or past `ISOLATE_AFTER_MS`) in a child process."""
        return cls(runs, ahead=TurnsAhead(lambda: SpeakerEmbedder(threads=1)),
                   isolate_after_ms=ISOLATE_AFTER_MS)

    def prepare(self, audio: Path, *, num_speakers: int | None,
                speech_follows: bool = False) -> SpeechSink | None:
        if self._ahead is None:
            return None
        # A record of several parts is long: its turns are found in a child process
        # (where the service isolates long recordings).
        isolated = not speech_follows and self._isolate_after_ms is not None
        job = self._ahead.start(audio, num_speakers=num_speakers, speech_follows=speech_follows,
                                isolated=isolated)
        return None if job is None or not job.speech_follows else job.hand_speech

    async def separate(self, audio: Path, segments: Sequence[Segment], *,
                       num_speakers: int | None,
                       speech: Sequence[Span] | None = None) -> list[Utterance]:
        job = None if self._ahead is None else self._ahead.take(audio,
                                                                 num_speakers=num_speakers)
        turns = None if job is None else job.turns()
        if turns is not None:
            # Found beside the recognition: only the words are left, no model run.
            log.info("speaker_turns_taken", found="ahead")
            return await asyncio.to_thread(labelled, segments, turns)
        args = (audio, segments, num_speakers, speech, job)
        try:
            if self._runs is None:
                return await asyncio.to_thread(self._separate, *args)
            return await self._runs.run(self._separate, *args)
        except SpeakerModelUnavailable as exc:
            raise SpeakersUnavailable(str(exc)) from None

    async def close(self) -> None:
        if self._ahead is not None:
            self._ahead.close()

    def _load(self) -> SpeakerEmbedder:
        with self._lock:
            if self._embedder is None:
                threads = 1 if self._runs is None else self._runs.threads
                self._embedder = SpeakerEmbedder(threads=threads)
            return self._embedder

    @releasing  # features and clustering are freed when it returns (memory.py)
    def _separate(self, audio: Path, segments: Sequence[Segment], num_speakers: int | None,
                  speech: Sequence[Span] | None, job: Ahead | None = None) -> list[Utterance]:
        if job is not None and job.isolated:
            return labelled(segments, self._isolated_turns(audio, num_speakers, speech, job))
        last_ms = max((s.end_ms for s in segments), default=0)
        if self._isolate_after_ms is not None and last_ms > self._isolate_after_ms:
            return labelled(segments, self._isolated_turns(audio, num_speakers, speech, None))
        embedder = self._load()
        turns = None
        if job is not None:
            job.stop.set()  # its thread stops at its next block or batch
            turns = job.turns()  # it may have finished in the meantime
            partial = job.partial
            if turns is not None:
                log.info("speaker_turns_taken", found="ahead")
            elif partial is not None:
                # Go on from where it was: its regions, features and embedded inputs.
                log.info("speaker_turns_taken", found="taken_over",
                         inputs_done=len(partial.cache))
                turns = turns_from_features(partial.features, partial.regions, embedder,
                                            num_speakers=num_speakers, cache=partial.cache)
        if turns is None:
            # Block by block: the whole recording's samples are never held (see
            # `stream`); the VAD runs only when the recognizer's regions are not at hand.
            found, features = speech_and_features(pcm_blocks(audio),
                                                  speech_regions if speech is None else None)
            regions = found if speech is None else list(speech)
            turns = turns_from_features(features, regions, embedder, num_speakers=num_speakers)
        return labelled(segments, turns)


    @staticmethod
    def _isolated_turns(audio: Path, num_speakers: int | None, speech: Sequence[Span] | None,
                        job: Ahead | None) -> list[Turn]:
        """A long recording's turns from a child process: the job's, raised to the normal
        priority and waited for, or (none started, or it failed) a child of our own."""
        if job is not None:
            while not job.future.done():
                if job.child is not None:
                    job.child.hurry()
                with contextlib.suppress(FutureTimeout):
                    job.future.result(timeout=HURRY_POLL_SECONDS)
            turns = job.turns()
            if turns is not None:
                log.info("speaker_turns_taken", found="ahead", isolated=True)
                return turns
            error = None if job.future.cancelled() else job.future.exception()
            if isinstance(error, SpeakerModelUnavailable):
                raise error
            log.info("speaker_turns_isolated", ahead_failed=type(error).__name__)
        else:
            log.info("speaker_turns_isolated", ahead_failed=None)
        return IsolatedJob(audio, num_speakers=num_speakers, speech=speech).wait()


def labelled(segments: Sequence[Segment], turns: Sequence[Turn]) -> list[Utterance]:
    """The segments as mono utterances, split and labelled by the turns (`words`)."""
    return [Utterance(start_ms=u.start_ms, end_ms=u.end_ms, channel=0, text=u.text,
                      speaker=u.speaker)
            for u in split_by_speaker(segments, turns)]
