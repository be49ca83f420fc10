"""The routes of a person's edits: title, brief and topics, corrections, deletion, topics.

The request bodies are checked here by pure functions (`parse_*`): a bad
body is a 400 and nothing is written. The writes are writer commands that
never touch a step's claim (`transcriber.db.commands.edits`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
import structlog
from aiohttp import web

from transcriber.core.errors import Conflict, NotFound, TranscriberError
from transcriber.core.ids import parse_id
from transcriber.db import reads
from transcriber.db.commands.edits import CorrectTranscript, DeleteRecord, EditRecord
from transcriber.db.commands.retranscribe import Retranscribe
from transcriber.db.commands.spaces import Journal, MoveRecord
from transcriber.db.reads.records import OwnedRecord
from transcriber.domain import transcripts
from transcriber.domain.access import Action, may, may_in_space
from transcriber.domain.shapes import CardBody, Page, TopicBody
from transcriber.domain.text import text_problem
from transcriber.pipeline.part_rows import object_key
from transcriber.pipeline.voices import spoken_lines, voice_rules
from transcriber.web import keys
from transcriber.web.access import answer_error, record_grant, record_owner
from transcriber.web.archive import card_body, current_utterances, record_id_of
from transcriber.web.errors import ApiError, bad_request, not_found
from transcriber.web.identity import current_user
from transcriber.web.jsonbody import has_body, read_json
from transcriber.web.language import check_language, check_model
from transcriber.web.operations import (
    CURSOR,
    LANGUAGE,
    LIMIT,
    MODEL,
    NO_RECORD,
    RECORD_ID,
    declare,
    empty,
    json_body,
    ok,
)
from transcriber.web.paging import decode_topic_cursor, encode_topic_cursor, parse_limit
from transcriber.web.responses import json_response

log = structlog.get_logger(__name__)

TITLE_MAX = 255
BRIEF_MAX = 2000
TOPICS_MAX = 5
TOPIC_NAME_MAX = 64
CORRECTIONS_MAX = 10_000
SPEAKERS_MAX = 99


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordEdit:
    title: str | None = None
    brief: str | None = None
    topics: tuple[str, ...] | None = None
    speakers: Mapping[str, str] | None = None
    """Label → name; an empty name takes the name away."""
    moves: bool = False
    """The body names `space`: the record goes into that space (`space`), or out (None)."""
    space: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TranscriptEdit:
    revision: int
    utterances: tuple[Mapping[str, object], ...]


def checked_text(field: str, value: str, *, multiline: bool = False) -> str:
    """`value` when its field may hold it (`text.text_problem`), else a 400
    naming the field: refused rather than stripped, so the client learns why."""
    problem = text_problem(value, multiline=multiline)
    if problem is not None:
        raise bad_request(f"{field} {problem}")
    return value


def _text(data: Mapping[str, Any], name: str, limit: int, *,
          multiline: bool = False) -> str | None:
    if name not in data:
        return None
    value = data[name]
    if not isinstance(value, str) or len(value) > limit:
        raise bad_request(f"{name} must be a string of at most {limit} characters")
    return checked_text(name, value, multiline=multiline)


def parse_record_edit(data: object) -> RecordEdit:
    """A PATCH body of the card: any of title, brief, topics and speakers, nothing else."""
    if not isinstance(data, dict) or not data:
        raise bad_request("the body must be a JSON object with title, brief, topics, "
                          "speakers or space")
    unknown = sorted(set(data) - {"title", "brief", "topics", "speakers", "space"})
    if unknown:
        raise bad_request("unknown fields: " + ", ".join(unknown))
    topics: tuple[str, ...] | None = None
    if "topics" in data:
        raw = data["topics"]
        if not isinstance(raw, list) or len(raw) > TOPICS_MAX:
            raise bad_request(f"topics must be a list of at most {TOPICS_MAX} names")
        names = []
        for item in raw:
            name = item.strip() if isinstance(item, str) else None
            if not name or len(name) > TOPIC_NAME_MAX:
                raise bad_request(
                    f"a topic is a non-empty name of at most {TOPIC_NAME_MAX} characters")
            names.append(checked_text("a topic", name))
        topics = tuple(dict.fromkeys(names))
    space = data.get("space")
    if space is not None and (not isinstance(space, str) or parse_id(space) is None):
        raise bad_request("space must be a space's id or null")
    return RecordEdit(title=_text(data, "title", TITLE_MAX),
                      brief=_text(data, "brief", BRIEF_MAX, multiline=True), topics=topics,
                      speakers=_speaker_names(data), moves="space" in data, space=space)


def _speaker_names(data: Mapping[str, Any]) -> dict[str, str] | None:
    if "speakers" not in data:
        return None
    raw = data["speakers"]
    if not isinstance(raw, dict) or not raw or len(raw) > SPEAKERS_MAX:
        raise bad_request(f"speakers must be an object of at most {SPEAKERS_MAX} names")
    names = {}
    for label, name in raw.items():
        if not transcripts.SPEAKER_RE.fullmatch(label):
            raise bad_request(f"{label!r} is not a speaker label (S1, S2, …)")
        limit = transcripts.SPEAKER_NAME_MAX
        if not isinstance(name, str) or len(name) > limit:
            raise bad_request(f"a speaker's name is one line of at most {limit} characters")
        names[label] = checked_text(f"the name of {label}", name).strip()
    return names


async def record_speakers(request: web.Request, record_id: str) -> set[str]:
    """The labels of the record's speakers: the recognizer's and any a correction uses."""
    labels: set[str] = set()
    for original in (True, False):
        utterances = await current_utterances(request, record_id, original=original)
        labels.update(transcripts.speakers_of(utterances or ()))
    return labels


async def owned_head(request: web.Request, record_id: str, owner_id: str) -> OwnedRecord:
    """The record's head when it is the owner's; 404 otherwise, the answer for a
    record that does not exist."""
    head = await reads.records.owned(request.app[keys.READERS], record_id=record_id,
                                     owner_id=owner_id)
    if head is None:
        raise not_found()
    return head


def parse_transcript_edit(data: object) -> TranscriptEdit:
    """`{"revision": R, "utterances": [{"index": i, "text": "..."}]}`, nothing else."""
    if not isinstance(data, dict) or set(data) != {"revision", "utterances"}:
        raise bad_request("the body must be a JSON object with revision and utterances only")
    revision, items = data["revision"], data["utterances"]
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 0:
        raise bad_request("revision must be a non-negative integer")
    if not isinstance(items, list) or not items or len(items) > CORRECTIONS_MAX:
        raise bad_request("utterances must be a non-empty list of corrections")
    if not all(isinstance(item, dict) for item in items):
        raise bad_request("each correction is an object with index and text")
    return TranscriptEdit(revision=revision, utterances=tuple(items))


async def _move(request: web.Request, record_id: str, space_id: str | None) -> None:
    """Into a space or out of it: the record's owner only, into a space where they
    may file records (editor or admin)."""
    actor = current_user(request).id
    error = answer_error(may(Action.MOVE, record_grant(request)))
    if error is None and space_id is not None:
        role = await reads.access.role_in_space(request.app[keys.READERS], space_id=space_id,
                                                user_id=actor)
        error = answer_error(may_in_space(Action.MOVE, role))
        if isinstance(error, ApiError) and error.status == 404:
            error = not_found("no such space")
    if error is not None:
        raise error
    await request.app[keys.WRITER].ask(MoveRecord(record_id=record_id, space_id=space_id,
                                                  actor_id=actor))
    log.info("record_moved", record_id=record_id)


@declare("editRecord", "Set title, brief, topics or speaker names", {
    200: ok("The updated card", CardBody), 404: NO_RECORD,
    400: "Unknown field, value too long, a sixth topic",
}, parameters=(RECORD_ID,), body=json_body("RecordEdit"))
async def patch_record(request: web.Request) -> web.Response:
    record_id = record_id_of(request)
    owner_id = record_owner(request)
    actor = current_user(request).id
    edit = parse_record_edit(await read_json(request))
    if edit.moves:
        await _move(request, record_id, edit.space)
        if edit == RecordEdit(moves=True, space=edit.space):
            return json_response(await card_body(request, record_id))
    names_patch = None
    if edit.speakers is not None:
        # The owner first: whatever is checked against the record after this
        # must never tell another person anything about it (a 400 naming its
        # speakers against a 404 would).
        await owned_head(request, record_id, owner_id)
        try:
            known = await record_speakers(request, record_id)
        except transcripts.BadStructure:
            known = set()
        unknown = sorted(set(edit.speakers) - known)
        if unknown:
            raise bad_request("not speakers of this record: " + ", ".join(unknown))
        # JSON merge patch: null removes a name, so an empty name takes it away.
        names_patch = orjson.dumps({label: name or None
                                    for label, name in edit.speakers.items()}).decode()
    try:
        await request.app[keys.WRITER].ask(EditRecord(
            record_id=record_id, owner_id=owner_id, title=edit.title, brief=edit.brief,
            topics=edit.topics, speaker_names_patch=names_patch,
            # Names teach the owner's voice profiles, and only when the owner gives them.
            voices=voice_rules(request.app[keys.SETTINGS]) if actor == owner_id else None))
    except NotFound:
        raise not_found() from None
    except sqlite3.IntegrityError:  # the schema's own five-topic limit
        raise bad_request(f"a record has at most {TOPICS_MAX} topics") from None
    await request.app[keys.WRITER].ask(Journal(
        record_id=record_id, step="edited", actor_id=actor,
        detail=",".join(name for name in ("title", "brief", "topics", "speakers")
                        if getattr(edit, name) is not None)))
    log.info("record_edited", record_id=record_id)
    return json_response(await card_body(request, record_id))


@declare("correctTranscript", "Correct utterances: a new revision of the transcript", {
    200: ok("The updated card", CardBody), 404: NO_RECORD,
    400: "Malformed correction, unknown utterance or field",
    409: "Stale revision (conflict) or no transcript yet",
}, parameters=(RECORD_ID,), body=json_body("TranscriptEdit"))
async def patch_transcript(request: web.Request) -> web.Response:
    record_id = record_id_of(request)
    owner_id = record_owner(request)
    actor = current_user(request).id
    edit = parse_transcript_edit(await read_json(request))
    head = await owned_head(request, record_id, owner_id)
    if head.revision != edit.revision:
        raise ApiError(409, "conflict", "the transcript changed since it was read; reload it")
    try:
        utterances = await current_utterances(request, record_id)
    except transcripts.BadStructure:
        log.error("transcript_bad_structure", record_id=record_id)
        raise ApiError(500, "internal", "the stored transcript cannot be read") from None
    if utterances is None:
        raise ApiError(409, "not_ready", "the record has no transcript yet")
    try:
        speakers = await record_speakers(request, record_id)
        corrected = transcripts.apply_corrections(utterances, edit.utterances,
                                                  speakers=speakers)
    except transcripts.BadCorrection as exc:
        raise bad_request(str(exc)) from None
    rules = voice_rules(request.app[keys.SETTINGS])
    moved = any("speaker" in item for item in edit.utterances)
    try:
        stored = await request.app[keys.WRITER].ask(CorrectTranscript(
            record_id=record_id, owner_id=owner_id, revision=edit.revision,
            structure_json=transcripts.dump_structure(corrected),
            text=transcripts.plain_text(corrected),
            revisions_max=request.app[keys.SETTINGS].storage.revisions_max,
            voice_lines=tuple(spoken_lines(corrected)) if moved and rules else None,
            voices=rules if actor == owner_id else None))
    except Conflict:
        raise ApiError(409, "conflict",
                       "the transcript changed since it was read; reload it") from None
    except NotFound:
        raise not_found() from None
    # The revision's author: the journal names who wrote each revision.
    await request.app[keys.WRITER].ask(Journal(
        record_id=record_id, step="transcript_corrected", actor_id=actor,
        detail=f"revision {stored.revision}"))
    log.info("transcript_corrected", record_id=record_id, utterances=len(edit.utterances))
    return json_response(await card_body(request, record_id))


@declare("deleteRecord", "Delete the record with its files, in any stage", {
    204: empty("Deleted"), 404: NO_RECORD}, parameters=(RECORD_ID,))
async def delete_record(request: web.Request) -> web.Response:
    record_id = record_id_of(request)
    try:
        deleted = await request.app[keys.WRITER].ask(
            DeleteRecord(record_id=record_id, owner_id=record_owner(request)))
    except NotFound:
        raise not_found() from None
    # The rows are gone (committed): from here on the record does not exist,
    # whatever happens to its files. What stays behind after a crash here
    # the start-up sweep removes (folders no files row names).
    log.info("record_deleted", record_id=record_id)
    await request.app[keys.FILES].remove_record(record_id)
    store = request.app.get(keys.OBJECT_STORE)
    if store is not None:
        prefix = request.app[keys.SETTINGS].s3.prefix
        for part in deleted.part_indexes:
            try:
                await store.delete(object_key(prefix, record_id, part))
            except TranscriberError as exc:
                log.warning("record_object_not_deleted", record_id=record_id,
                            error=type(exc).__name__)
    return web.Response(status=204)


@declare("listTopics", "One keyset page of the user's topics by name, with record counts", {
    200: ok("A page of topics", Page[TopicBody]), 400: "Bad limit or cursor",
}, parameters=(LIMIT, CURSOR))
async def list_topics(request: web.Request) -> web.Response:
    """The owner's topics by name, in keyset pages (`limit`, `cursor`, `next_cursor`)."""
    server = request.app[keys.SETTINGS].server
    limit = parse_limit(request.query.get("limit"), default=server.page_default,
                        maximum=server.page_max)
    raw_cursor = request.query.get("cursor") or None
    after_name = decode_topic_cursor(raw_cursor) if raw_cursor else None
    topics = await reads.lists.owner_topics(request.app[keys.READERS],
                                            owner_id=current_user(request).id,
                                            limit=limit + 1, after_name=after_name)
    page = topics[:limit]
    next_cursor = encode_topic_cursor(page[-1].name) if len(topics) > limit else None
    return json_response(Page(items=[TopicBody(name=t.name, records=t.records) for t in page],
                              next_cursor=next_cursor))


@declare("retranscribeRecord",
         "Transcribe a done or halted record again, optionally in another language", {
    200: ok("The card (the old transcript until the new one)", CardBody),
    400: "Unknown language or model (the message lists them)", 404: NO_RECORD,
    409: "Neither done nor halted",
}, parameters=(RECORD_ID, LANGUAGE, MODEL), body=json_body({
    "type": "object", "additionalProperties": False,
    "properties": {"language": {"type": "string"}, "model": {"type": "string"}}},
    required=False))
async def retranscribe(request: web.Request) -> web.Response:
    record_id = record_id_of(request)
    owner_id = record_owner(request)
    language = request.query.get("language")
    model = request.query.get("model")
    if has_body(request):
        data = await read_json(request)
        if not isinstance(data, dict) or set(data) - {"language", "model"}:
            raise bad_request("the body may hold only language and model")
        value = data.get("language", language)
        if value is not None and not isinstance(value, str):
            raise bad_request("language must be a string")
        language = value
        model = data.get("model", model)
    try:
        await request.app[keys.WRITER].ask(Retranscribe(
            record_id=record_id, owner_id=owner_id,
            language=check_language(request.app, language),
            model=check_model(request.app, model), actor_id=current_user(request).id))
    except NotFound:
        raise not_found() from None
    except Conflict:
        raise ApiError(409, "not_settled", "only a done or halted record can be "
                                           "transcribed again") from None
    log.info("record_retranscribed", record_id=record_id, origin="human")
    return json_response(await card_body(request, record_id))
