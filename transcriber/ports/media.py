"""The media ports: converting and probing audio, and the object store parts go to.

Adapters: `transcriber.providers.ffmpeg` (the transcoder, and the part cutter of
`ports.recognition`) and `transcriber.providers.object_store`; fakes that record
their calls live in `transcriber.testing`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True, kw_only=True)
class AudioProbe:
    """What a probe found in an audio file."""

    extension: str
    """The extension (with its dot) the file is stored under, decided from its content."""
    duration_ms: int
    sample_rate: int
    channels: int
    """Of the first audio stream, as its header declares them."""


# Hears how much of the audio (ms) a long conversion has done so far.
ProgressCallback = Callable[[int], Awaitable[None]]


class Transcoder(Protocol):
    async def normalize(self, source: Path, target: Path, *, max_seconds: int,
                        on_progress: ProgressCallback | None = None, channels: int = 1) -> None:
        """Convert to OGG Opus with `channels` (1, or 2 for a stereo call) at `target`,
        at most `max_seconds` long (raise a StepFailure kind); `on_progress` hears the
        converted length."""

    async def kept_channels(self, source: Path, *, max_seconds: int) -> int:
        """The channels the normalized copy of `source` keeps: 2 when its two channels
        carry two different signals (a call, one speaker on each), else 1."""

    async def probe(self, path: Path) -> AudioProbe:
        """Examine an upload (PermanentFailure if it is not audio, or too slow to examine)."""

    async def probe_duration_ms(self, path: Path) -> int:
        """Duration of the audio in milliseconds (PermanentFailure if not audio)."""


@runtime_checkable
class DecodesSamples(Protocol):
    """A transcoder that decodes a stretch of a file to the recognizer's samples (text
    while recording: the stored part of an upload still going on)."""

    async def samples(self, source: Path, *, start_ms: int, length_ms: int) -> bytes:
        """16 kHz mono signed 16-bit little-endian PCM of `source` from `start_ms`, at
        most `length_ms` of it: less where the audio ends, or where a file still being
        written ends for now (read to its last whole frame)."""


class ObjectStore(Protocol):
    async def exists(self, key: str) -> bool: ...

    async def upload(self, key: str, source: Path) -> None: ...

    async def delete(self, key: str) -> None:
        """Remove the object; a missing one is not an error."""

    def uri(self, key: str) -> str: ...
