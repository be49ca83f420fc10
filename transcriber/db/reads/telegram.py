"""The Telegram side: the outbox, the living status messages, the sender's records, the
group chats linked to a space."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.rows import columns
from transcriber.db.reads.webhooks import record_in_space
from transcriber.domain.access import AccessAnswer, AccessRole, Action, may_in_space, role_of


@dataclass(frozen=True, slots=True, kw_only=True)
class OutboxRow:
    """A reply still to send."""

    id: str
    record_id: str
    chat_id: int
    reply_to: int | None
    kind: str
    """`transcript` or `halt_notice`."""
    halt_reason: str | None
    language: str
    attempts: int
    next_attempt_at: str
    created_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> OutboxRow:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveStatus:
    """A status message still followed, with what its record is doing now."""

    record_id: str
    chat_id: int
    message_id: int
    language: str
    shown_text: str
    state: str
    halted_at: str | None
    halt_reason: str | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> LiveStatus:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class RecentRecord:
    """One of the sender's latest records (`/status`)."""

    id: str
    title: str
    original_filename: str
    state: str
    halted_at: str | None
    halt_reason: str | None
    created_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> RecentRecord:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class LatestTranscript:
    """The sender's latest finished transcript (`/last`)."""

    record_id: str
    tg_chat_id: int | None
    contents: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> LatestTranscript:
        return cls(record_id=row["id"], tg_chat_id=row["tg_chat_id"], contents=row["contents"])


async def due_chats(readers: ReaderPool, *, now: str, limit: int) -> list[int]:
    """Chats with a pending row whose time has come."""
    rows = await readers.fetch_all(q.telegram.DUE_CHATS, {"now": now, "limit": limit})
    return [int(row["chat_id"]) for row in rows]


async def pending_of_chat(readers: ReaderPool, *, chat_id: int, limit: int) -> list[OutboxRow]:
    """The chat's pending rows, oldest first (the order they are sent in)."""
    rows = await readers.fetch_all(q.telegram.PENDING_OF_CHAT,
                                   {"chat_id": chat_id, "limit": limit})
    return [OutboxRow.from_row(row) for row in rows]


async def chat_of_record(readers: ReaderPool, *, record_id: str) -> int | None:
    """The chat of the record's pending reply, if it has one."""
    row = await readers.fetch_one(q.telegram.CHAT_OF_RECORD, {"record_id": record_id})
    return None if row is None else int(row["chat_id"])


async def outbox_depth(readers: ReaderPool) -> int:
    row = await readers.fetch_one(q.telegram.OUTBOX_DEPTH, {})
    return 0 if row is None else int(row["n"])


async def live_statuses(readers: ReaderPool, *, limit: int) -> list[LiveStatus]:
    rows = await readers.fetch_all(q.telegram.LIVE_STATUSES, {"limit": limit})
    return [LiveStatus.from_row(row) for row in rows]


async def latest_of_owner(readers: ReaderPool, *, owner_id: str,
                          limit: int) -> list[RecentRecord]:
    rows = await readers.fetch_all(q.telegram.LATEST_OF_OWNER,
                                   {"owner_id": owner_id, "limit": limit})
    return [RecentRecord.from_row(row) for row in rows]


async def latest_transcript(readers: ReaderPool, *, owner_id: str) -> LatestTranscript | None:
    row = await readers.fetch_one(q.telegram.LATEST_TRANSCRIPT_OF_OWNER, {"owner_id": owner_id})
    return None if row is None else LatestTranscript.from_row(row)


async def latest_of_space(readers: ReaderPool, *, space_id: str,
                          limit: int) -> list[RecentRecord]:
    rows = await readers.fetch_all(q.telegram.LATEST_OF_SPACE,
                                   {"space_id": space_id, "limit": limit})
    return [RecentRecord.from_row(row) for row in rows]


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkedGroup:
    """A group chat's link to a space, with the role its linker holds there now."""

    chat_id: int
    space_id: str
    space_name: str
    linked_by: str
    created_at: str
    linker_role: AccessRole | None
    """None: the linker is no longer a member of the space."""

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> LinkedGroup:
        return cls(**columns(cls, row, linker_role=role_of(row["linker_role"])))

    def live(self) -> bool:
        """Whether the link holds: its linker may still file records into the space (a
        linker removed from the space, or made a viewer, takes the group's view along)."""
        return may_in_space(Action.MOVE, self.linker_role) is AccessAnswer.ALLOWED


async def group_of_chat(readers: ReaderPool, *, chat_id: int) -> LinkedGroup | None:
    """The chat's link (None: not linked), lapsed or not: `bot.rules` decides."""
    row = await readers.fetch_one(q.telegram.GROUP_OF_CHAT, {"chat_id": chat_id})
    return None if row is None else LinkedGroup.from_row(row)


async def group_sees(readers: ReaderPool, *, chat_id: int, record_id: str) -> bool:
    """Whether a group chat may be told about the record (a reply, a status edit): it is
    in the space the group is linked to, and the link holds."""
    group = await group_of_chat(readers, chat_id=chat_id)
    if group is None or not group.live():
        return False
    return await record_in_space(readers, record_id=record_id,
                                 space_id=group.space_id) is True
