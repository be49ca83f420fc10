"""Writer commands of the Telegram outbox and of the living status messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.writer import Command, WriteContext

OutboxKind = Literal["transcript", "halt_notice"]


async def enqueue_reply(ctx: WriteContext, *, record_id: str, kind: OutboxKind,
                        halt_reason: str | None = None) -> bool:
    """Inside the transaction of `done` or a halt: the row that delivers it.

    True when a row was written (a Telegram record with a chat)."""
    cursor = await ctx.conn.execute(q.telegram.ENQUEUE, {
        "id": new_id(), "record_id": record_id, "kind": kind, "halt_reason": halt_reason,
        "now": ctx.now()})
    return cursor.rowcount == 1


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkSent(Command[None]):
    name: ClassVar[str] = "outbox_sent"
    outbox_id: str
    message_id: int | None

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.telegram.MARK_SENT, {
            "id": self.outbox_id, "message_id": self.message_id, "now": ctx.now()})


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkRetry(Command[None]):
    name: ClassVar[str] = "outbox_retry"
    outbox_id: str
    delay_seconds: float

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.telegram.MARK_RETRY, {
            "id": self.outbox_id,
            "next_attempt_at": ctx.now(plus_seconds=self.delay_seconds)})


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkEnded(Command[None]):
    """The row will not be sent: Telegram refused it, or its window passed."""

    name: ClassVar[str] = "outbox_ended"
    outbox_id: str
    reason: str

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.telegram.MARK_ENDED, {"id": self.outbox_id,
                                                       "reason": self.reason})


@dataclass(frozen=True, slots=True, kw_only=True)
class NoteStatus(Command[None]):
    """The record's status message (or, without one, the sender's language)."""

    name: ClassVar[str] = "note_status"
    record_id: str
    chat_id: int
    message_id: int | None
    language: str
    shown_text: str

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.telegram.UPSERT_STATUS, {
            "record_id": self.record_id, "chat_id": self.chat_id,
            "message_id": self.message_id, "language": self.language,
            "shown_text": self.shown_text, "now": ctx.now()})


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkStatusShown(Command[None]):
    name: ClassVar[str] = "status_shown"
    record_id: str
    shown_text: str
    live: bool

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.telegram.MARK_STATUS_SHOWN, {
            "record_id": self.record_id, "shown_text": self.shown_text,
            "live": int(self.live), "now": ctx.now()})


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkGroup(Command[None]):
    """`/link SPACE` in a group chat: the group's audio goes to the space from now on
    (a group linked before is linked to this space instead)."""

    name: ClassVar[str] = "telegram_link_group"
    savepoint: ClassVar[bool] = False  # one statement
    chat_id: int
    space_id: str
    linked_by: str

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.telegram.LINK_GROUP, {
            "chat_id": self.chat_id, "space_id": self.space_id, "linked_by": self.linked_by,
            "now": ctx.now()})


@dataclass(frozen=True, slots=True, kw_only=True)
class UnlinkGroup(Command[bool]):
    """`/unlink`: the group takes no audio any more; False when it was not linked."""

    name: ClassVar[str] = "telegram_unlink_group"
    savepoint: ClassVar[bool] = False  # one statement
    chat_id: int

    async def execute(self, ctx: WriteContext) -> bool:
        cursor = await ctx.conn.execute(q.telegram.UNLINK_GROUP, {"chat_id": self.chat_id})
        return cursor.rowcount == 1
