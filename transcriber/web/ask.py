"""`POST /app/ask`: a question answered from the asker's own archive (docs/ask.md).

The body is read and checked first (`question`, `scope`, `conversation`);
the passages come from `ask.retrieval` (the search's read: only what the
asker may see); the answer is the passages offline (`answer` null), or the
language model's text with its citations checked (`ask.answers`), streamed
to a client that asks for server-sent events as the model writes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import structlog
from aiohttp import web

from transcriber.ask.answers import TextSink, answer
from transcriber.ask.retrieval import retrieve
from transcriber.core.errors import QueryTooBroad
from transcriber.core.ids import parse_id
from transcriber.db.reads.ask import Conversation
from transcriber.domain.ask import (
    QUESTION_MAX,
    RECORDS_MAX,
    AskScope,
    Question,
    read_question,
)
from transcriber.domain.ask_passages import Citation, Passage
from transcriber.domain.shapes import to_json
from transcriber.domain.shapes_ask import AskBody, CitationBody, PassageBody
from transcriber.web import ask_conversations, keys
from transcriber.web.errors import ApiError, bad_request
from transcriber.web.identity import current_user
from transcriber.web.jsonbody import read_json
from transcriber.web.operations import JSON, declare, json_body, media, ref
from transcriber.web.responses import json_response
from transcriber.web.texts import language_of, message

log = structlog.get_logger(__name__)

_SCOPE_KEYS = frozenset({"space", "records", "from", "to", "speaker", "topics"})
_NAME_MAX = 64


def _day(value: object, name: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(str(value)[:10]) if isinstance(value, str) else None
    except ValueError:
        pass
    raise bad_request(f"scope.{name} must be a date (YYYY-MM-DD)")


def _names(value: object, name: str, *, most: int) -> tuple[str, ...]:
    if value is None:
        return ()
    if (not isinstance(value, list) or len(value) > most
            or not all(isinstance(v, str) and 0 < len(v) <= _NAME_MAX for v in value)):
        raise bad_request(f"scope.{name} must be a list of at most {most} names")
    return tuple(value)


def read_scope(raw: object) -> AskScope:
    """The body's `scope` (400 for anything else than its documented keys and types)."""
    if raw is None:
        return AskScope()
    if not isinstance(raw, Mapping) or not set(raw) <= _SCOPE_KEYS:
        raise bad_request("scope takes space, records, from, to, speaker and topics")
    records = _names(raw.get("records"), "records", most=RECORDS_MAX)
    if any(parse_id(record) is None for record in records):
        raise bad_request("scope.records must be record ids")
    speaker, space = raw.get("speaker"), raw.get("space")
    for name, value in (("speaker", speaker), ("space", space)):
        if value is not None and (not isinstance(value, str) or not 0 < len(value) <= _NAME_MAX):
            raise bad_request(f"scope.{name} must be a name")
    date_to = _day(raw.get("to"), "to")
    return AskScope(space=space, records=records, date_from=_day(raw.get("from"), "from"),
                 # `to` is the last day asked for: the scope's end is the day after.
                 date_to=None if date_to is None else date.fromordinal(date_to.toordinal() + 1),
                 speaker=speaker, topics=_names(raw.get("topics"), "topics", most=5))


def citation_body(citation: Citation) -> CitationBody:
    line = citation.line
    return CitationBody(record_id=citation.record_id, utterance_index=line.index,
                        start_ms=line.start_ms, end_ms=line.end_ms, speaker=line.speaker,
                        quote=citation.quote, passage=citation.passage)


@declare("ask", "A question answered from the asker's recordings, every part cited to the "
                "moment it was said", {
    200: media("The answer (`answer` null offline); with a language model and `Accept: "
               "text/event-stream`, server-sent events `passages` (a list of Passage), "
               "`delta`s ({text}: the model's text as it is written, unchecked), then "
               "`answer` (this object, checked: it replaces the deltas' text)",
               {JSON: {"schema": ref("Ask")}, "text/event-stream": {"schema": {"type": "string"}}}),
    400: "A bad question or scope; query_too_broad",
    404: "No such conversation",
}, body=json_body("AskRequest"))
async def ask(request: web.Request) -> web.StreamResponse:
    body: Any = await read_json(request)
    if not isinstance(body, Mapping) or not set(body) <= {"question", "scope", "conversation"}:
        raise bad_request("the body takes question, scope and conversation")
    question_text = body.get("question")
    if not isinstance(question_text, str) or not question_text.strip():
        raise bad_request("question must be a non-empty string")
    if len(question_text) > QUESTION_MAX:
        raise bad_request(f"question is longer than {QUESTION_MAX} characters")
    scope = read_scope(body.get("scope"))
    today = request.app[keys.CLOCK].now().date()
    try:
        question = read_question(question_text, today=today, scope=scope)
    except QueryTooBroad as exc:
        raise ApiError(400, "query_too_broad", message(language_of(request), exc.reason),
                       param="question") from None
    conversation = None
    if body.get("conversation") is not None:
        conversation = await ask_conversations.load(request, body["conversation"])
    history = [] if conversation is None else await ask_conversations.history(
        request, conversation)
    found = await _passages(request, question, conversation)
    answerer = request.app.get(keys.ANSWERER)
    settings = request.app[keys.SETTINGS].ask
    stream = None
    on_text = None
    if answerer is not None and "text/event-stream" in request.headers.get("Accept", ""):
        # The passages go out at once, then the model's text as it writes it (`delta`,
        # unchecked), then the answer with its citations checked, which replaces the
        # text (docs/ask.md, "Streamed answers").
        stream = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                             "Cache-Control": "no-store",
                                             "X-Content-Type-Options": "nosniff"})
        await stream.prepare(request)
        await _event(stream, "passages", [_passage(p, n) for n, p in enumerate(found, 1)])
        on_text = _deltas(stream)
    result = await answer(question, found, answerer=answerer,
                          max_prompt_chars=settings.max_prompt_chars, history=history,
                          on_text=on_text)
    log.info("ask_answered", passages=len(result.passages), how=result.how,
             terms=len(question.query.required), dropped=result.unchecked)
    citations = [citation_body(c) for c in result.citations]
    conversation_id = await ask_conversations.save(
        request, conversation_id=None if conversation is None else conversation.id,
        question=question_text, answer=result.text, citations=citations)
    reply = AskBody(
        answer=result.text,
        passages=[_passage(p, n) for n, p in enumerate(result.passages, start=1)],
        citations=citations, conversation=conversation_id, unchecked=result.unchecked,
        language=question.language)
    if stream is None:
        return json_response(reply)
    await _event(stream, "answer", reply)
    await stream.write_eof()
    return stream


async def _passages(request: web.Request, question: Question,
                    conversation: Conversation | None) -> Sequence[Passage]:
    """The question's passages; a follow-up that finds nothing alone ("and who signed
    it?") is read once more with the conversation's previous question."""
    scope = question.scope
    readers, owner_id = request.app[keys.READERS], current_user(request).id
    found = await retrieve(readers, owner_id=owner_id, question=question)
    if found or conversation is None or not conversation.turns:
        return found
    today = request.app[keys.CLOCK].now().date()
    try:
        wider = read_question(f"{conversation.turns[-1].question} {question.text}",
                              today=today, scope=scope)
    except QueryTooBroad:
        return found
    return await retrieve(readers, owner_id=owner_id, question=wider)


def _passage(passage: Passage, number: int) -> PassageBody:
    return PassageBody.of(passage, number)


async def _event(stream: web.StreamResponse, name: str, payload: object) -> None:
    await stream.write(b"event: " + name.encode() + b"\ndata: " + to_json(payload) + b"\n\n")


def _deltas(stream: web.StreamResponse) -> TextSink:
    """Each piece of the model's text as a `delta` event. A client that hung up stops
    the events, not the answer: it is still checked and kept in the conversation."""
    gone = False

    async def send(piece: str) -> None:
        nonlocal gone
        if gone or not piece:
            return
        try:
            await _event(stream, "delta", {"text": piece})
        except (ConnectionError, RuntimeError):
            gone = True
    return send
