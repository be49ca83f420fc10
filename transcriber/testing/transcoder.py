"""A fake transcoder that records its calls: no ffmpeg, answers set by the test."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from transcriber.core.errors import PermanentFailure, StepFailure
from transcriber.ports import AudioProbe, ProgressCallback

NOT_AUDIO_MARKER = b"NOT AUDIO"


class FakeTranscoder:
    """Implements the `Transcoder` port.

    A file starting with `NOT_AUDIO_MARKER` is "not audio" (PermanentFailure),
    like ffmpeg's answer for a text file; `probe_failure` / `normalize_failure`
    make every call fail with the given failure instead.
    """

    def __init__(self, *, duration_ms: int = 1000, sample_rate: int = 16000,
                 extension: str = ".ogg") -> None:
        self.duration_ms = duration_ms
        self.sample_rate = sample_rate
        self.extension = extension
        self.probe_failure: StepFailure | None = None
        self.normalize_failure: StepFailure | None = None
        self.probed: list[Path] = []
        self.normalized: list[tuple[Path, Path]] = []
        # What the fake "ffmpeg" reports while it converts, in order.
        self.progress_reports_ms: list[int] = []
        # What `kept_channels` answers (2: the original is a stereo call).
        self.channels = 1
        # The channels the probe finds in the original's header.
        self.input_channels = 1
        self.normalized_channels: list[int] = []
        self.decoded: list[tuple[Path, int, int]] = []

    async def probe_duration_ms(self, path: Path) -> int:
        self.probed.append(path)
        if self.probe_failure is not None:
            raise self.probe_failure
        with path.open("rb") as handle:
            if handle.read(len(NOT_AUDIO_MARKER)) == NOT_AUDIO_MARKER:
                raise PermanentFailure("not audio")
        return self.duration_ms

    async def probe(self, path: Path) -> AudioProbe:
        duration_ms = await self.probe_duration_ms(path)
        return AudioProbe(extension=self.extension, duration_ms=duration_ms,
                          sample_rate=self.sample_rate, channels=self.input_channels)

    async def normalize(self, source: Path, target: Path, *, max_seconds: int,
                        on_progress: ProgressCallback | None = None, channels: int = 1) -> None:
        self.normalized.append((source, target))
        self.normalized_channels.append(channels)
        if self.normalize_failure is not None:
            raise self.normalize_failure
        if on_progress is not None:
            for done_ms in self.progress_reports_ms:
                await on_progress(done_ms)
        shutil.copyfile(source, target)

    async def kept_channels(self, source: Path, *, max_seconds: int) -> int:
        return self.channels

    async def samples(self, source: Path, *, start_ms: int, length_ms: int) -> bytes:
        """The `DecodesSamples` port: each byte of the file is 1 ms of audio, a square
        wave as loud as the byte's value (a zero byte: a millisecond of silence)."""
        self.decoded.append((source, start_ms, length_ms))
        data = (await asyncio.to_thread(source.read_bytes))[start_ms:start_ms + length_ms]
        return b"".join(
            (value * 100).to_bytes(2, "little", signed=True) * 8
            + (-value * 100).to_bytes(2, "little", signed=True) * 8 for value in data)
