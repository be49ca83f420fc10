"""The recognizer port: what the submit and poll steps need from a provider.

Adapters: `transcriber.providers.whisper` (local) and `transcriber.providers.speechkit`;
the part cutter is `transcriber.providers.ffmpeg`'s transcoder.

A provider takes one audio part and starts a recognition (`submit`), later
answers whether it is finished (`fetch`: the raw answer, or None while it
runs), and turns a raw answer into an `Answer` (`parse`, pure): everything the
pipeline reads from it. A provider that runs on this host returns the answer
within `submit`; the steps then save it exactly as they save a fetched one, so
`poll` finds it without asking anyone.

What the pipeline decides about a provider it decides from its `Capabilities`
(the languages it takes, the overlap its parts need, where it runs, how its
speakers are told apart), never from its name: the name is only stored, in
`recognitions.provider`, to find the parser of a saved answer again.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from transcriber.core.errors import TransientFailure
from transcriber.domain.transcripts import Span, Utterance


class SpeechSink(Protocol):
    """Where a part's speech is, handed on as soon as the recognizer's VAD has found it
    (ms on the part's timeline), or `None`: none will come from this recognition. With
    them, the part's 16 kHz mono samples as the recognizer decoded them (a float32
    array; `None`: the receiver decodes the part itself), so the audio is decoded once."""

    def __call__(self, regions: Sequence[Span] | None, samples: object | None = None,
                 /) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class AudioPart:
    """One part of a record's normalized audio, as a provider receives it."""

    path: Path | None
    uri: str | None
    duration_ms: int
    # The record's spoken language (`auto` or a code); None: the provider's setting.
    language: str | None = None
    # Word times wanted (speakers are assigned per word); providers without them ignore it.
    words: bool = False
    # Told the speech regions the recognizer's VAD finds, before it decodes them (the
    # speaker turns found beside the recognition cluster them); providers without a
    # VAD of their own ignore it.
    on_speech: SpeechSink | None = None
    # Names and terms the speakers may say (the owner's vocabulary): a recognizer that
    # takes a prompt is given them, another corrects near misses to them; none ignore.
    terms: tuple[str, ...] = ()
    # The model a person asked for by name (a re-transcription); None: the recognizer's
    # own choice. A recognizer with one model ignores it.
    model: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Submitted:
    external_id: str
    # The raw answer, when the provider finished within the call.
    payload: bytes | None = None


class Runs(enum.Enum):
    """Where a recognizer does its work."""

    # On this host, within `submit`: one part at a time, records wait their turn.
    HERE = "here"
    # A service elsewhere: parts are submitted together and polled.
    REMOTE = "remote"


class SpeakerLabels(enum.Enum):
    """How a mono record's speakers are told apart with this recognizer."""

    # Not at all: the record has no speakers.
    NONE = "none"
    # By the speaker engine here, from the answer's word times (asked for with
    # `AudioPart.words`), when the parts are cut in pauses.
    WORDS = "words"
    # By the recognizer itself (asked for with `AudioPart.words`); its labels are kept.
    OWN = "own"


@dataclass(frozen=True, slots=True, kw_only=True)
class Capabilities:
    """What the pipeline needs to know of a recognizer, known without loading it (a
    door that runs no recognizer reads them from the settings)."""

    # Stored in `recognitions.provider`; finds a saved answer's parser again.
    provider: str
    model: str
    # The spoken languages it takes, as the archive stores them (`auto` aside).
    languages: tuple[str, ...]
    # Longer audio is cut into parts of at most this (None: one part).
    max_part_ms: int | None
    # How much neighbouring parts overlap (0: they are cut in pauses and joined).
    part_overlap_ms: int
    runs: Runs
    # The audio must be uploaded to object storage and given as `AudioPart.uri`.
    needs_object_store: bool
    speakers: SpeakerLabels
    # Seconds of work per second of audio to expect before this host has measured
    # any (a conservative warm-up figure: the ETA of the very first record).
    expected_real_time_factor: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """Everything the pipeline reads from one part's saved answer, on the part's own
    timeline (the pipeline places it on the record's)."""

    utterances: tuple[Utterance, ...]
    # The speech the recognizer's VAD found; None when the answer does not say.
    speech: tuple[Span, ...] | None = None
    # Speech whose text the recognizer rejected; None when the answer does not say.
    unclear: tuple[Span, ...] | None = None
    # Looped lines the recognizer dropped.
    repeats_removed: int = 0
    # The language it says it heard (a short code); None when it does not say.
    language: str | None = None
    # The model that made it (a folder's name, or the bundled one's); None: not said.
    model: str | None = None


# Turns a provider's saved raw answer into an `Answer` (pure).
AnswerParser = Callable[[bytes], Answer]


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerFormat:
    """How a saved answer of one provider is read: its parser, and the capabilities its
    parts were cut and recognized with (a record submitted before the configured
    provider changed is finished with those of the one that started it)."""

    capabilities: Capabilities
    parse: AnswerParser


class OperationFailed(TransientFailure):
    """The provider's operation ended with a retryable error: submit the part again."""


class PollLater(TransientFailure):
    """Our own status-check budget is spent: the poll defers instead of failing."""

    def __init__(self, wait_seconds: float) -> None:
        super().__init__("status check budget spent", retry_after=wait_seconds)
        self.wait_seconds = wait_seconds


class Recognizer(Protocol):
    @property
    def provider(self) -> str:
        """Stored in `recognitions.provider` (`capabilities.provider`)."""

    @property
    def model(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities:
        """What the pipeline decides by (`Runs.HERE`: `submit` returns the answer, one
        part is recognized per claim)."""

    @property
    def payload_ext(self) -> str:
        """File extension of the saved raw answer, with its dot."""

    async def submit(self, part: AudioPart) -> Submitted: ...

    async def fetch(self, external_id: str) -> bytes | None: ...

    def parse(self, payload: bytes) -> Answer: ...

    def time_limit_seconds(self, duration_ms: int | None) -> float | None:
        """How long a submit of audio this long may run (None: the default limit)."""

    async def close(self) -> None: ...


@runtime_checkable
class Warms(Protocol):
    """A recognizer whose model can be loaded before its first recognition, so that a
    one-shot command loads it while the file is accepted and normalized instead of
    after (`transcriber transcribe`). A model that cannot be loaded is not reported
    here: the recognition that needs it fails as it would have."""

    async def warm(self) -> None: ...


@runtime_checkable
class RecognizesSamples(Protocol):
    """A recognizer that takes a short stretch of audio as it is, in memory, with no
    record, file or part behind it (a voice command over Wyoming): `samples` are 16 kHz
    mono signed 16-bit little-endian PCM, `language` a code or None (detect). The answer
    is the recognizer's own, on the samples' timeline; nothing is saved. A recognizer
    without it cannot serve voice commands (the Wyoming door answers an error)."""

    async def recognize_samples(self, samples: bytes, *, language: str | None) -> Answer: ...


@runtime_checkable
class Translates(Protocol):
    """A recognizer that turns speech in any language it takes into English text
    (Whisper's translate task): `path` is an audio file of any format it decodes,
    `language` the spoken one or None (detect). The answer's utterances are English, on
    the file's timeline; nothing is saved (`/v1/audio/translations`)."""

    async def translate(self, path: Path, *, language: str | None) -> Answer: ...


class PartCutter(Protocol):
    async def cut(self, source: Path, target: Path, *, start_ms: int, length_ms: int,
                  channel: int | None = None) -> int:
        """A span of the normalized copy at `target`; with `channel`, that one channel of
        a stereo copy, mono (a WAV: `target` ends in .wav). Returns the duration of what
        was written (ms), as measured, so the caller can check that the part is whole."""

    async def pauses(self, source: Path) -> list[tuple[int, int]]:
        """The silences of the audio, (start, end) in ms, to cut at."""
