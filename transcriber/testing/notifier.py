"""A recording notifier: remembers every send; can be told to fail."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from transcriber.domain.quality import Quality
from transcriber.domain.stages import HaltReason
from transcriber.ports import ReplyAddress, Undelivered, UndeliveredReason


@dataclass(frozen=True, slots=True, kw_only=True)
class Sent:
    kind: Literal["transcript", "halt_notice"]
    address: ReplyAddress
    text: str | None = None
    reason: HaltReason | None = None
    title: str = ""
    brief: str = ""
    quality: Quality | None = None


@dataclass(slots=True, kw_only=True)
class RecordingNotifier:
    """Every attempt lands in `attempts`; successful ones also in `sent`.

    `fail_with` makes every send raise `Undelivered(reason)`; `crash` makes
    it raise an unexpected error (a broken door). `before_send` runs first on
    every attempt (to observe the world at the moment of sending)."""

    fail_with: UndeliveredReason | None = None
    crash: bool = False
    before_send: Callable[[Sent], Awaitable[None]] | None = None
    attempts: list[Sent] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)

    async def send_transcript(self, address: ReplyAddress, text: str, *, title: str = "",
                              brief: str = "", quality: Quality | None = None) -> int | None:
        await self._record(Sent(kind="transcript", address=address, text=text, title=title,
                                brief=brief, quality=quality))
        return len(self.sent)

    async def send_halt_notice(self, address: ReplyAddress, reason: HaltReason) -> int | None:
        await self._record(Sent(kind="halt_notice", address=address, reason=reason))
        return len(self.sent)

    async def _record(self, item: Sent) -> None:
        if self.before_send is not None:
            await self.before_send(item)
        self.attempts.append(item)
        if self.crash:
            raise ConnectionError("fake notifier is down")
        if self.fail_with is not None:
            raise Undelivered(self.fail_with)
        self.sent.append(item)

    def notices(self, record_id: str | None = None) -> list[Sent]:
        return [s for s in self.attempts if s.kind == "halt_notice"
                and (record_id is None or s.address.record_id == record_id)]
