"""Conversations with the archive at the door: a follow-up's context, a turn stored,
a person's conversations listed (`GET /app/ask/conversations`, the latest used
first, keyset pages), one read back and deleted (`GET`/`DELETE
/app/ask/conversations/{id}`). Only the asker's own are ever listed or found.

What a stored turn shows follows what its asker may see now: a turn citing a
record the person can no longer see (deleted, or no longer shared) is read
back without its answer and without that record's citations, and is not sent
to a model as context.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from aiohttp import web

from transcriber.core.errors import NotFound
from transcriber.core.ids import parse_id
from transcriber.db import reads
from transcriber.db.commands.ask import DeleteConversation, SaveTurn
from transcriber.db.reads.ask import Conversation, StoredTurn
from transcriber.domain.access import Action, allowed
from transcriber.domain.ask_prompt import AskTurn
from transcriber.domain.shapes import ID_PATTERN, Page
from transcriber.domain.shapes_ask import (
    CitationBody,
    ConversationBody,
    ConversationSummaryBody,
    ConversationTurnBody,
)
from transcriber.web import keys
from transcriber.web.errors import not_found
from transcriber.web.identity import current_user
from transcriber.web.operations import CURSOR, LIMIT, declare, empty, ok
from transcriber.web.paging import PageAfter, decode_cursor, encode_cursor, parse_limit
from transcriber.web.responses import json_response


def _conversation_id(value: object) -> str:
    conversation_id = parse_id(value) if isinstance(value, str) else None
    if conversation_id is None:
        raise not_found("no such conversation")
    return conversation_id


async def load(request: web.Request, raw_id: object) -> Conversation:
    """The asker's conversation named in a body or a path; 404 when it is not theirs."""
    found = await reads.ask.conversation(request.app[keys.READERS],
                                         conversation_id=_conversation_id(raw_id),
                                         owner_id=current_user(request).id)
    if found is None:
        raise not_found("no such conversation")
    return found


async def _visible(request: web.Request, turns: Sequence[StoredTurn]) -> set[str]:
    readers, owner_id = request.app[keys.READERS], current_user(request).id
    cited = {c["record_id"] for t in turns for c in orjson.loads(t.citations)}
    return {record_id for record_id in cited
            if allowed(Action.OPEN, await reads.access.grant(readers, record_id=record_id,
                                                             user_id=owner_id))}


def _whole(turn: StoredTurn, visible: set[str]) -> bool:
    return all(c["record_id"] in visible for c in orjson.loads(turn.citations))


async def history(request: web.Request, conversation: Conversation) -> list[AskTurn]:
    """The earlier turns a model may be given: answered, citing only what is visible."""
    visible = await _visible(request, conversation.turns)
    return [AskTurn(question=t.question, answer=t.answer) for t in conversation.turns
            if t.answer is not None and _whole(t, visible)]


async def save(request: web.Request, *, conversation_id: str | None, question: str,
               answer: str | None, citations: Sequence[CitationBody]) -> str:
    try:
        return await request.app[keys.WRITER].ask(SaveTurn(
            owner_id=current_user(request).id, conversation_id=conversation_id,
            question=question, answer=answer,
            citations_json=orjson.dumps(citations).decode()))
    except NotFound:
        raise not_found("no such conversation") from None


def _citation(stored: dict[str, Any]) -> CitationBody:
    return CitationBody(**stored)


_CONVERSATION = {"name": "conversation", "in": "path", "required": True,
                 "schema": {"type": "string", "pattern": ID_PATTERN},
                 "description": "Another person's, or anything else, is 404"}


LIST_DEFAULT, LIST_MAX = 20, 100


@declare("listConversations", "The asker's conversations, the latest used first", {
    200: ok("A page of conversations", Page[ConversationSummaryBody]),
    400: "Bad limit or cursor",
}, parameters=(LIMIT, CURSOR))
async def list_conversations(request: web.Request) -> web.Response:
    limit = parse_limit(request.query.get("limit"), default=LIST_DEFAULT, maximum=LIST_MAX)
    raw = request.query.get("cursor")
    after = None
    if raw:
        # The cursor holds the last one's (updated_at, id), as a plain page's key.
        key = decode_cursor(raw, search=False)
        assert isinstance(key, PageAfter)
        after = (key.created_at, key.id)
    found = await reads.ask.conversations(request.app[keys.READERS],
                                          owner_id=current_user(request).id,
                                          limit=limit + 1, after=after)
    page = found[:limit]
    following = None
    if len(found) > limit:
        following = encode_cursor(PageAfter(created_at=page[-1].updated_at, id=page[-1].id))
    return json_response(Page(items=[ConversationSummaryBody(
        id=c.id, created_at=c.created_at, updated_at=c.updated_at,
        first_question=c.first_question, turns=c.turns) for c in page],
        next_cursor=following))


@declare("getConversation", "A conversation's questions and answers", {
    200: ok("The conversation", ConversationBody), 404: "No such conversation",
}, parameters=(_CONVERSATION,))
async def get_conversation(request: web.Request) -> web.Response:
    conversation = await load(request, request.match_info["conversation"])
    visible = await _visible(request, conversation.turns)
    turns = []
    for turn in conversation.turns:
        cited = [_citation(c) for c in orjson.loads(turn.citations)]
        turns.append(ConversationTurnBody(
            question=turn.question,
            answer=turn.answer if _whole(turn, visible) else None,
            citations=[c for c in cited if c.record_id in visible], asked_at=turn.asked_at))
    return json_response(ConversationBody(id=conversation.id,
                                          created_at=conversation.created_at, turns=turns))


@declare("deleteConversation", "Delete a conversation", {
    204: empty("Deleted"), 404: "No such conversation"}, parameters=(_CONVERSATION,))
async def delete_conversation(request: web.Request) -> web.Response:
    conversation_id = _conversation_id(request.match_info["conversation"])
    try:
        await request.app[keys.WRITER].ask(DeleteConversation(
            owner_id=current_user(request).id, conversation_id=conversation_id))
    except NotFound:
        raise not_found("no such conversation") from None
    return web.Response(status=204)
