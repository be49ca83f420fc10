"""Conversations with the archive: a turn stored, a conversation deleted (docs/ask.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from transcriber.core.errors import NotFound
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.writer import Command, WriteContext

TURNS_MAX = 200
"""Turns one conversation keeps at most (a longer one is refused: start another)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SaveTurn(Command[str]):
    """Store a question and its answer in the owner's conversation (a new one when
    `conversation_id` is None); answers the conversation's id. `NotFound` when the
    conversation is not the owner's, or is full."""

    name: ClassVar[str] = "save_ask_turn"
    owner_id: str
    conversation_id: str | None
    question: str
    answer: str | None
    citations_json: str

    async def execute(self, ctx: WriteContext) -> str:
        now = ctx.now()
        conversation_id = self.conversation_id
        if conversation_id is None:
            conversation_id = new_id()
            await ctx.conn.execute(q.ask.INSERT_CONVERSATION, {
                "id": conversation_id, "owner_id": self.owner_id, "now": now})
        else:
            cursor = await ctx.conn.execute(q.ask.TOUCH_CONVERSATION, {
                "id": conversation_id, "owner_id": self.owner_id, "now": now})
            if cursor.rowcount != 1:
                raise NotFound("no such conversation")
        async with ctx.conn.execute(q.ask.NEXT_POSITION,
                                    {"conversation_id": conversation_id}) as cur:
            row = await cur.fetchone()
        position = int(row["position"]) if row is not None else 0
        if position >= TURNS_MAX:
            raise NotFound("the conversation is full")
        await ctx.conn.execute(q.ask.INSERT_TURN, {
            "conversation_id": conversation_id, "position": position,
            "question": self.question, "answer": self.answer,
            "citations": self.citations_json, "now": now})
        return conversation_id


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteConversation(Command[None]):
    """Delete the owner's conversation and its turns; `NotFound` when it is not theirs."""

    name: ClassVar[str] = "delete_ask_conversation"
    savepoint: ClassVar[bool] = False  # one DELETE (the turns go by the foreign key)
    owner_id: str
    conversation_id: str

    async def execute(self, ctx: WriteContext) -> None:
        cursor = await ctx.conn.execute(q.ask.DELETE_CONVERSATION, {
            "id": self.conversation_id, "owner_id": self.owner_id})
        if cursor.rowcount != 1:
            raise NotFound("no such conversation")
