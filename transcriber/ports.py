"""Ports: what the pipeline needs from the outside world.

Adapters live in `transcriber.providers` and `transcriber.bot`; in-package
fakes that record their calls live in `transcriber.testing`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from transcriber.errors import TranscriberError
from transcriber.stages import HaltReason

UndeliveredReason = Literal["bot_not_running", "chat_missing", "blocked", "chat_not_found",
                            "refused", "window_passed"]
"""`bot_not_running`, `chat_missing`: P6, never sent later. `blocked` (403),
`chat_not_found` and `refused` (other 4xx): Telegram's permanent refusal.
`window_passed`: `telegram.delivery_window_hours` of failed tries."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyAddress:
    """Where a record's answer goes; HTTP records have no chat."""

    record_id: str
    source: Literal["http", "telegram"]
    tg_chat_id: int | None = None
    tg_message_id: int | None = None
    language: str = ""
    """The sender's catalogue (`ru`, `en`); empty: the bot's default."""


class Undelivered(TranscriberError):
    """A reply or notice could not be delivered; never fails a step (P6)."""

    def __init__(self, reason: UndeliveredReason) -> None:
        super().__init__(reason)
        self.reason: UndeliveredReason = reason


class Notifier(Protocol):
    async def send_transcript(self, address: ReplyAddress, text: str) -> int | None:
        """Answer the sender with the finished transcript; the sent message's id.

        Raise `Undelivered` for a refusal no later try can change; anything
        else is tried again by the outbox."""

    async def send_halt_notice(self, address: ReplyAddress, reason: HaltReason) -> int | None:
        """Tell the sender the record stopped and why (raises like `send_transcript`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Utterance:
    start_ms: int
    end_ms: int
    channel: int
    text: str
    speaker: str | None = None
    """`"S1"`, `"S2"`, … when speakers were told apart (structure version 2), else None."""


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


class ObjectStore(Protocol):
    async def exists(self, key: str) -> bool: ...

    async def upload(self, key: str, source: Path) -> None: ...

    async def delete(self, key: str) -> None:
        """Remove the object; a missing one is not an error."""

    def uri(self, key: str) -> str: ...
