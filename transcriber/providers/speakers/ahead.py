"""Speaker turns found ahead: beside a record's recognition, on the CPU it leaves.

Telling speakers apart needs nothing from the recognition but the words it
labels at the end; run after it, in the pool, it added 8-9 % to the
recognition's time on a 2-core CPU without VNNI, where the embedder's int8
LSTM is slow (docs/speakers.md). Started when the recognition starts, in one thread at the
lowest CPU priority the system grants (Linux `SCHED_IDLE`, else nice 19), the
turns are usually ready before the last part's answer is in: on a core the
recognitions leave spare at no cost to them; squeezed into the idle moments of
a recognition that takes every core, for a few per cent of its time (no more
than finding them after it costs, measured side by side). A record recognized
as one part hands its job the recognizer's VAD regions and decoded samples as
soon as they are found, so neither the VAD nor the decoding is run twice; a
record of several parts (each part's VAD sees only that part), or a
recognition that ends without handing them, leaves the job to decode the file
and run the engine's own streamed VAD (the same options as the recognizer's).

A job that is not finished when its turns are asked for is stopped at its
next block or batch, and the work goes on in the pool of model runs at
full priority from what the job found (its regions, features and every input
already embedded: `Ahead.partial`), so a busy machine that starves the idle
thread delays nothing. Jobs live in this process only: after a restart the
turns are simply found in the pool, as they are for a record never prepared.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import structlog

from transcriber.core.errors import TranscriberError
from transcriber.domain.voices import Floats
from transcriber.ports import Span
from transcriber.providers.memory import releasing
from transcriber.providers.speakers.embedder import BATCH_WINDOWS, SpeakerModelUnavailable
from transcriber.providers.speakers.features import Features
from transcriber.providers.speakers.refine import Embeds, SpanCache
from transcriber.providers.speakers.stream import (
    array_blocks,
    pcm_blocks,
    speech_and_features,
)
from transcriber.providers.speakers.turns import FoundTurns, found_from_features
from transcriber.providers.speakers.vad import speech_regions

log = structlog.get_logger(__name__)

# Jobs kept at once (running, waiting or finished and not yet taken); the oldest is
# dropped past it (a record halted before its speakers are labelled never takes its job).
MAX_JOBS: Final = 4
# Windows embedded between two looks at the stop flag: 16 two-input windows are
# at most 32 inputs, ~0.2 s of one slow core. A multiple of the embedder's batch
# groups (`SpeakerEmbedder.embed_batch`), so a job is never stopped inside one.
STOP_CHECK_WINDOWS: Final = BATCH_WINDOWS
# A job whose speech regions follow waits for them this long at most (a safety net:
# the submit step hands `None` on as soon as its recognition is over), then runs its
# own VAD; it looks at its stop flag this often meanwhile.
SPEECH_WAIT_SECONDS: Final = 120.0
SPEECH_POLL_SECONDS: Final = 0.1


@dataclass(frozen=True, slots=True, kw_only=True)
class AheadKey:
    """One recording's file as it is now (a file written again is another) and the
    speaker count asked for."""

    path: str
    size: int
    modified_ns: int
    num_speakers: int | None

    @classmethod
    def of(cls, audio: Path, num_speakers: int | None) -> AheadKey | None:
        try:
            stat = audio.stat()
        except OSError:
            return None
        return cls(path=str(audio), size=stat.st_size, modified_ns=stat.st_mtime_ns,
                   num_speakers=num_speakers)


@dataclass(frozen=True, slots=True, kw_only=True)
class Partial:
    """What a job had found when it was stopped: enough to go on from."""

    regions: list[Span]
    features: Features
    cache: SpanCache
    # Whether `regions` are the engine's own VAD's (none were handed on), not the
    # recognizer's: the separator goes on only from the regions the record's are.
    own_vad: bool = False


class JobStopped(TranscriberError):
    """The job's stop flag was seen (kept in its future, never raised to a caller)."""


class Ahead:
    """One recording's turns being found: the stop flag, what is found so far, the result.

    A job whose speech regions follow (`speech_follows`) clusters the regions handed
    to `hand_speech` by the recognizer's VAD instead of running its own."""

    future: Future[FoundTurns]  # the worker's, set as the job is kept

    def __init__(self, *, speech_follows: bool = False) -> None:
        self.stop = threading.Event()
        self.partial: Partial | None = None
        self.speech_follows = speech_follows
        # Set once the job knows its regions: True when they are its own VAD's.
        self.own_vad = False
        self._handed = threading.Event()
        self._speech: list[Span] | None = None
        self._samples: Floats | None = None
        self._hand_lock = threading.Lock()

    def hand_speech(self, regions: Sequence[Span] | None, samples: object | None = None,
                    /) -> None:
        """The recording's speech regions, or `None`: none are coming (the job runs its
        own VAD); with them the recording's samples as the recognizer decoded them
        (the job then decodes nothing). The first call counts; any thread may make it."""
        with self._hand_lock:
            if not self._handed.is_set():
                self._speech = None if regions is None else list(regions)
                if regions is not None and isinstance(samples, np.ndarray):
                    self._samples = samples
                self._handed.set()

    def handed_samples(self) -> Floats | None:
        """The samples handed with the regions (once: the job lets them go), or `None`."""
        with self._hand_lock:
            samples, self._samples = self._samples, None
        return samples

    def handed_speech(self, *, wait_seconds: float) -> list[Span] | None:
        """The regions handed on, waiting up to `wait_seconds` (then `None`); stops
        (`JobStopped`) once the stop flag is set."""
        waited = 0.0
        while not self._handed.wait(SPEECH_POLL_SECONDS):
            if self.stop.is_set():
                raise JobStopped
            waited += SPEECH_POLL_SECONDS
            if waited >= wait_seconds:
                # A recognition queued behind others for long: not a fault.
                log.info("speaker_speech_not_handed", waited_s=round(waited, 1))
                return None
        return self._speech

    def turns(self) -> FoundTurns | None:
        """The turns (with the windows embedded) when the job finished them; `None` while
        it runs, or when it was stopped or failed."""
        if not self.future.done() or self.future.cancelled():
            return None
        if self.future.exception() is not None:
            return None
        return self.future.result()


def lower_own_priority() -> str:
    """The calling thread's CPU priority set to the lowest the system grants:
    `idle` (Linux `SCHED_IDLE`: runs only on a core nothing else wants), `nice`
    (nice 19), or `none` where neither can be had."""
    thread = threading.get_native_id()
    try:
        os.sched_setscheduler(thread, os.SCHED_IDLE, os.sched_param(0))
        return "idle"
    except (AttributeError, OSError):
        pass
    try:
        os.setpriority(os.PRIO_PROCESS, thread, 19)
        return "nice"
    except (AttributeError, OSError):
        return "none"


def checked(blocks: Iterable[Floats], stop: threading.Event) -> Iterator[Floats]:
    """The blocks, stopping (`JobStopped`) before the next once `stop` is set."""
    for block in blocks:
        if stop.is_set():
            raise JobStopped
        yield block


class StoppableEmbedder:
    """An `Embeds` that looks at a stop flag between batches of windows."""

    def __init__(self, embedder: Embeds, stop: threading.Event) -> None:
        self._embedder = embedder
        self._stop = stop

    def embed(self, features: Features, windows: Sequence[Any], *,
              cache: SpanCache | None = None) -> Floats:
        found = []
        for first in range(0, max(len(windows), 1), STOP_CHECK_WINDOWS):
            if self._stop.is_set():
                raise JobStopped
            found.append(self._embedder.embed(
                features, windows[first:first + STOP_CHECK_WINDOWS], cache=cache))
        return np.concatenate(found)


class TurnsAhead:
    """Finds recordings' speaker turns one at a time in a thread named
    `speaker-turns-ahead` at the lowest CPU priority; `load` gives that thread its
    embedder (one onnxruntime thread: its work then runs in the thread itself, so
    the priority holds for all of it)."""

    def __init__(self, load: Callable[[], Embeds], *, limit: int = MAX_JOBS,
                 speech_wait_seconds: float = SPEECH_WAIT_SECONDS) -> None:
        self._load = load
        self._limit = limit
        self._speech_wait = speech_wait_seconds
        self._jobs: OrderedDict[AheadKey, Ahead] = OrderedDict()
        self._lock = threading.Lock()
        self._embedder: Embeds | None = None  # loaded in, and used by, the thread only
        self.priority = "unset"
        self._executor = ThreadPoolExecutor(max_workers=1,
                                            thread_name_prefix="speaker-turns-ahead",
                                            initializer=self._lower)

    def _lower(self) -> None:
        self.priority = lower_own_priority()

    def start(self, audio: Path, *, num_speakers: int | None,
              speech_follows: bool = False) -> Ahead | None:
        """Start finding `audio`'s turns unless a job for it is kept; the job kept, or
        `None`. With `speech_follows` a new job waits for `Ahead.hand_speech`'s regions
        (after decoding the audio and taking its features) instead of running the VAD."""
        key = AheadKey.of(audio, num_speakers)
        if key is None:
            return None
        with self._lock:
            if key in self._jobs:
                self._jobs.move_to_end(key)
                return self._jobs[key]
            while len(self._jobs) >= self._limit:
                _, dropped = self._jobs.popitem(last=False)
                dropped.stop.set()
                dropped.future.cancel()
            job = Ahead(speech_follows=speech_follows)
            try:
                job.future = self._executor.submit(self._find, job, audio, num_speakers)
            except RuntimeError:  # closed: the service is stopping
                return None
            self._jobs[key] = job
        job.future.add_done_callback(_log_failure)
        return job

    def take(self, audio: Path, *, num_speakers: int | None) -> Ahead | None:
        """The job for `audio` (no longer kept), or `None` when none was started for it."""
        key = AheadKey.of(audio, num_speakers)
        with self._lock:
            return None if key is None else self._jobs.pop(key, None)

    @releasing  # the features are freed when it returns (memory.py)
    def _find(self, job: Ahead, audio: Path, num_speakers: int | None) -> FoundTurns:
        if job.stop.is_set():
            raise JobStopped
        if self._embedder is None:
            self._embedder = self._load()
        embedder = self._embedder
        handed = job.handed_speech(wait_seconds=self._speech_wait) if job.speech_follows \
            else None
        own_vad = handed is None  # none follow, or none came: the job's own VAD
        if handed is None:
            regions, features = speech_and_features(checked(pcm_blocks(audio), job.stop),
                                                    speech_regions)
        else:
            # The recognizer's samples when it handed them: the same bytes `pcm_blocks`
            # decodes (faster-whisper's frame helpers), decoded once (issue 38 item 7).
            samples = job.handed_samples()
            blocks = pcm_blocks(audio) if samples is None else array_blocks(samples)
            regions = handed
            _, features = speech_and_features(checked(blocks, job.stop), None)
            del samples, blocks
        cache: SpanCache = {}
        job.own_vad = own_vad
        job.partial = Partial(regions=regions, features=features, cache=cache, own_vad=own_vad)
        try:
            turns = found_from_features(features, regions, StoppableEmbedder(embedder, job.stop),
                                        num_speakers=num_speakers, cache=cache)
        except JobStopped:
            raise  # what it found is kept for the separator taking over
        except BaseException:
            job.partial = None  # a failed job kept until taken would hold its features
            raise
        job.partial = None
        return turns

    def close(self) -> None:
        """Stop every job at its next block or batch; a running one is not waited for."""
        with self._lock:
            for job in self._jobs.values():
                job.stop.set()
            self._jobs.clear()
        self._executor.shutdown(wait=False, cancel_futures=True)


def _log_failure(done: Future[FoundTurns]) -> None:
    """A job's failure other than a stop, logged once; the turns are then found in the
    pool, where a missing model is reported as it always was (not here too)."""
    if done.cancelled():
        return
    error = done.exception()
    if error is not None and not isinstance(error, JobStopped | SpeakerModelUnavailable):
        log.warning("speaker_turns_ahead_failed", error=type(error).__name__)
