"""The notifier port: how a record's answer, or the notice that it stopped, reaches its sender.

The adapter is the Telegram bot (`transcriber.bot`); the fake that records its
calls is `transcriber.testing.notifier`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from transcriber.core.errors import TranscriberError
from transcriber.domain.stages import HaltReason

if TYPE_CHECKING:
    # Types only: the report is the domain's (`domain/quality.py`), named for typing.
    from transcriber.domain.quality import Quality

UndeliveredReason = Literal["bot_not_running", "chat_missing", "blocked", "chat_not_found",
                            "refused", "window_passed", "not_visible"]
"""`bot_not_running`, `chat_missing`: P6, never sent later. `blocked` (403),
`chat_not_found` and `refused` (other 4xx): Telegram's permanent refusal.
`window_passed`: `telegram.delivery_window_hours` of failed tries. `not_visible`: a
group chat that may no longer see the record (moved out of the group's space, the
group unlinked, its link lapsed): never told about it."""


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
    async def send_transcript(self, address: ReplyAddress, text: str, *, title: str = "",
                              brief: str = "", quality: Quality | None = None) -> int | None:
        """Answer the sender with the finished transcript; the sent message's id. The
        reply starts with the record's `title` and `brief` where they are given, and
        says in one line where the transcript is not to be trusted (`quality` not good).

        Raise `Undelivered` for a refusal no later try can change; anything
        else is tried again by the outbox."""

    async def send_halt_notice(self, address: ReplyAddress, reason: HaltReason) -> int | None:
        """Tell the sender the record stopped and why (raises like `send_transcript`)."""
