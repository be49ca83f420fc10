"""Conversations with the archive, as their owner reads them back (docs/ask.md)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.rows import columns


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredTurn:
    position: int
    question: str
    answer: str | None
    citations: str
    """JSON: the citations as the answer gave them."""
    asked_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> StoredTurn:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class Conversation:
    id: str
    created_at: str
    turns: tuple[StoredTurn, ...]

    @classmethod
    def from_row(cls, row: sqlite3.Row, *, turns: tuple[StoredTurn, ...] = ()) -> Conversation:
        return cls(**columns(cls, row, turns=turns))


async def conversation(readers: ReaderPool, *, conversation_id: str,
                       owner_id: str) -> Conversation | None:
    """The owner's conversation with its turns in order; None when it is not theirs."""
    head = await readers.fetch_one(q.ask.CONVERSATION, {"id": conversation_id,
                                                        "owner_id": owner_id})
    if head is None:
        return None
    rows = await readers.fetch_all(q.ask.TURNS, {"conversation_id": conversation_id})
    return Conversation.from_row(head, turns=tuple(StoredTurn.from_row(row) for row in rows))


@dataclass(frozen=True, slots=True, kw_only=True)
class ListedConversation:
    """A conversation in its owner's list: when, what was asked first, how many turns."""

    id: str
    created_at: str
    updated_at: str
    first_question: str | None
    turns: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> ListedConversation:
        return cls(**columns(cls, row))


async def conversations(readers: ReaderPool, *, owner_id: str, limit: int,
                        after: tuple[str, str] | None = None) -> list[ListedConversation]:
    """The owner's conversations, the latest used first; `after`: the (updated_at, id)
    of the previous page's last one."""
    if after is None:
        rows = await readers.fetch_all(q.ask.CONVERSATIONS_FIRST,
                                       {"owner_id": owner_id, "limit": limit})
    else:
        rows = await readers.fetch_all(q.ask.CONVERSATIONS_AFTER, {
            "owner_id": owner_id, "limit": limit, "after_updated_at": after[0],
            "after_id": after[1]})
    return [ListedConversation.from_row(row) for row in rows]
