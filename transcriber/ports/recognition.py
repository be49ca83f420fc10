"""The recognizer port: what the submit and poll steps need from a provider.

Adapters: `transcriber.providers.whisper` (local) and `transcriber.providers.speechkit`;
the part cutter is `transcriber.providers.ffmpeg`'s transcoder.

A provider takes one audio part and starts a recognition (`submit`), later
answers whether it is finished (`fetch`: the raw answer, or None while it
runs), and turns a raw answer into utterances (`parse`, pure). A provider
that finishes within `submit` (the local Whisper) returns the answer at once;
the steps then save it exactly as they save a fetched one, so `poll` finds
it without asking anyone.
"""

from __future__ import annotations

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


@dataclass(frozen=True, slots=True, kw_only=True)
class Submitted:
    external_id: str
    # The raw answer, when the provider finished within the call.
    payload: bytes | None = None


# Turns a provider's saved raw answer into utterances (pure).
AnswerParser = Callable[[bytes], list[Utterance]]


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
        """Stored in `recognitions.provider`; also selects the answer parser."""

    @property
    def model(self) -> str: ...

    @property
    def payload_ext(self) -> str:
        """File extension of the saved raw answer, with its dot."""

    @property
    def max_part_ms(self) -> int | None:
        """Longer audio is cut into overlapping parts (None: no limit)."""

    @property
    def needs_object_store(self) -> bool:
        """The audio must be uploaded and given as `AudioPart.uri`."""

    @property
    def finishes_in_submit(self) -> bool:
        """`submit` returns the answer (local work): one part is recognized per claim."""

    @property
    def expected_real_time_factor(self) -> float:
        """Seconds of work per second of audio to expect before this host has measured
        any (a conservative warm-up figure: the ETA of the very first record)."""

    async def submit(self, part: AudioPart) -> Submitted: ...

    async def fetch(self, external_id: str) -> bytes | None: ...

    def parse(self, payload: bytes) -> list[Utterance]: ...

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


class PartCutter(Protocol):
    async def cut(self, source: Path, target: Path, *, start_ms: int, length_ms: int,
                  channel: int | None = None) -> int:
        """A span of the normalized copy at `target`; with `channel`, that one channel of
        a stereo copy, mono (a WAV: `target` ends in .wav). Returns the duration of what
        was written (ms), as measured, so the caller can check that the part is whole."""

    async def pauses(self, source: Path) -> list[tuple[int, int]]:
        """The silences of the audio, (start, end) in ms, to cut at."""
