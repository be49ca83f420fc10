"""The archive routes: list and search, the card, file and transcript downloads, resume."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import structlog
from aiohttp import web

from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import parse_id
from transcriber.db import reads
from transcriber.db.commands.pipeline import Resume
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.records import ListItem
from transcriber.domain import documents, transcripts
from transcriber.domain.access import Action, allowed, role_name
from transcriber.domain.search import Query
from transcriber.domain.shapes import CardBody, Page, RecordBody, ShareBody, UserBody
from transcriber.domain.shapes_search import MatchListBody, SearchResultBody
from transcriber.domain.transcript_formats import FORMATS
from transcriber.followups.card import Cards, record_summary
from transcriber.pipeline.progress import OnItsWay
from transcriber.ports import Utterance
from transcriber.web import keys
from transcriber.web.access import record_grant, record_owner
from transcriber.web.downloads import (
    audio_type,
    content_disposition,
    download_name,
    send_file,
)
from transcriber.web.errors import ApiError, bad_request, not_found
from transcriber.web.identity import current_user
from transcriber.web.match_pool import MATCH_POOL
from transcriber.web.matches import FIND_MATCHES, RESULT_MATCHES, FoundMatches
from transcriber.web.operations import (
    BINARY,
    CURSOR,
    LIMIT,
    NO_RECORD,
    QUERY_SYNTAX,
    RECORD_ID,
    declare,
    media,
    ok,
    query_param,
)
from transcriber.web.paging import (
    PageAfter,
    SearchAfter,
    decode_cursor,
    encode_cursor,
    parse_limit,
    parse_query,
)
from transcriber.web.responses import json_response
from transcriber.web.texts import language_of

log = structlog.get_logger(__name__)

COPIES = ("original", "normalized")
TRANSCRIPT_VERSIONS = ("current", "original")


def record_id_of(request: web.Request) -> str:
    """The route's record id; a malformed one is "not found" and never reaches SQL."""
    record_id = parse_id(request.match_info["id"])
    if record_id is None:
        raise not_found()
    return record_id


@declare("me", "The current user", {200: ok("The user", UserBody)})
async def me(request: web.Request) -> web.Response:
    user = current_user(request)
    return json_response(UserBody(id=user.id, login=user.login, name=user.name,
                                  email=user.email, created_at=user.created_at))


@declare("listRecords", "One keyset page of the user's records, newest first, or search", {
    200: ok("A page", Page[SearchResultBody | RecordBody]),
    400: "Bad limit, cursor or query, q with topic, or a query too broad (`query_too_broad`)",
    404: "A scope naming a space that is not one of the user's",
}, parameters=(
    LIMIT, CURSOR,
    query_param("q", {"type": "string", "maxLength": 200},
                QUERY_SYNTAX + " Results are best first (title and brief weigh most), then "
                "newest first; each carries `matches`."),
    query_param("topic", {"type": "string"},
                "Only the records carrying this topic (not with `q`)"),
    query_param("scope", {"type": "string",
                          "pattern": "^(mine|shared|space:[0-7][0-9a-hjkmnp-tv-z]{25})$"},
                "Only the user's own records, those shared with them, or one space's; "
                "absent: every record they may see (docs/sharing.md)"),
))
async def list_records(request: web.Request) -> web.Response:
    server = request.app[keys.SETTINGS].server
    readers = request.app[keys.READERS]
    owner_id = current_user(request).id
    limit = parse_limit(request.query.get("limit"), default=server.page_default,
                        maximum=server.page_max)
    raw_cursor = request.query.get("cursor") or None
    query = request.query.get("q", "").strip()
    topic = request.query.get("topic")
    if topic is not None and query:
        raise bad_request("q and topic cannot be combined")
    scope = await list_scope(request, request.query.get("scope"))
    hits: list[reads.lists.SearchHit] = []
    parsed = None
    if topic is not None:
        after = decode_cursor(raw_cursor, search=False) if raw_cursor else None
        page = await reads.lists.topic_page(
            readers, owner_id=owner_id, topic=topic, limit=limit + 1,
            after=after if isinstance(after, PageAfter) else None)
    elif query:
        parsed = parse_query(query, language=language_of(request))
        after = decode_cursor(raw_cursor, search=True) if raw_cursor else None
        search_after = after if isinstance(after, SearchAfter) else None
        if scope.kind == "mine":
            hits = await reads.lists.search_page(
                readers, owner_id=owner_id, query=parsed, limit=limit + 1, after=search_after)
        else:
            hits = await reads.access.search_page(
                readers, user_id=owner_id, query=parsed, limit=limit + 1, kind=scope.kind,
                space_id=scope.space_id, after=search_after)
        page = [hit.item for hit in hits]
    else:
        after = decode_cursor(raw_cursor, search=False) if raw_cursor else None
        page = await scope_page(readers, owner_id, scope, limit=limit + 1,
                                after=after if isinstance(after, PageAfter) else None)
    next_cursor = None
    if len(page) > limit:
        last = page[limit - 1]
        next_cursor = encode_cursor(
            SearchAfter(score=hits[limit - 1].score, id=last.id) if query
            else PageAfter(created_at=last.created_at, id=last.id)
        )
    items: list[SearchResultBody | RecordBody] = [
        record_summary(record, progress=await _progress(request, record))
        for record in page[:limit]]
    if parsed is not None:
        found = await _matches(request, [item.id for item in items], parsed,
                               limit=RESULT_MATCHES)
        items = [SearchResultBody.of(item, matches=one.matches,
                                     partial=one.partial)
                 for item, one in zip(items, found, strict=True)]
    return json_response(Page(items=items, next_cursor=next_cursor))


@dataclass(frozen=True, slots=True, kw_only=True)
class ListScope:
    """Which of the records a person may see a list shows: `visible` (all of them),
    `mine`, `shared` (with them directly) or one `space` of theirs."""

    kind: str
    space_id: str | None = None


async def list_scope(request: web.Request, value: str | None) -> ListScope:
    """`scope=mine|shared|space:<id>`; none: everything visible. A space the person is
    not a member of is 404, as a space that does not exist."""
    if value is None or value == "":
        return ListScope(kind="visible")
    if value in ("mine", "shared"):
        return ListScope(kind=value)
    if value.startswith("space:"):
        space_id = parse_id(value.removeprefix("space:"))
        if space_id is not None and await reads.access.role_in_space(
                request.app[keys.READERS], space_id=space_id,
                user_id=current_user(request).id) is not None:
            return ListScope(kind="space", space_id=space_id)
        raise not_found("no such space")
    raise bad_request("scope must be mine, shared or space:<id>")


async def scope_page(readers: ReaderPool, person: str, scope: ListScope, *, limit: int,
                     after: PageAfter | None) -> list[ListItem]:
    """A plain page (newest first) of the scope's records."""
    if scope.kind == "mine":
        return await reads.lists.owner_page(readers, owner_id=person, limit=limit, after=after)
    if scope.kind == "shared":
        return await reads.access.shared_page(readers, user_id=person, limit=limit, after=after)
    if scope.kind == "space" and scope.space_id is not None:
        return await reads.access.space_page(readers, space_id=scope.space_id, limit=limit,
                                             after=after)
    return await reads.access.visible_page(readers, user_id=person, limit=limit, after=after)


async def _matches(request: web.Request, record_ids: Sequence[str], query: Query, *,
                   limit: int) -> list[FoundMatches]:
    """The utterances of each record's current transcript that hold the query's words,
    found in the match pool's worker processes (`transcriber.web.match_pool`)."""
    readers = request.app[keys.READERS]
    contents = [await reads.transcripts.current_structure(readers, record_id=record_id)
                for record_id in record_ids]
    found = await request.app[MATCH_POOL].matches(contents, query, limit=limit)
    for record_id, one in zip(record_ids, found, strict=True):
        if one.unreadable:
            log.error("card_bad_structure", record_id=record_id)
    return found


@declare("findInTranscript",
         "Every utterance of the current transcript holding the query's words", {
    200: ok("The matches, in time order", MatchListBody),
    400: "q is longer than 200 characters, or too broad (`query_too_broad`: a prefix of "
         "one letter, more than 4 prefixes)",
    404: NO_RECORD,
}, parameters=(RECORD_ID, query_param("q", {"type": "string", "maxLength": 200},
                                      QUERY_SYNTAX)))
async def find_in_transcript(request: web.Request) -> web.Response:
    """`GET …/matches?q=`: every utterance holding the query's words (the card's find box)."""
    record_id = record_id_of(request)
    parsed = parse_query(request.query.get("q", "").strip(), language=language_of(request))
    (found,) = await _matches(request, [record_id], parsed, limit=FIND_MATCHES)
    return json_response(MatchListBody(matches=found.matches,
                                       partial=found.partial))


async def _progress(request: web.Request, record: OnItsWay) -> dict[str, Any] | None:
    return await record_progress(request.app, record)


def cards_of(app: web.Application) -> Cards:
    """The card builder over the app's readers, settings and clock."""
    return Cards(readers=app[keys.READERS], settings=app[keys.SETTINGS], clock=app[keys.CLOCK],
                 recognizer=lambda: app.get(keys.RECOGNIZER))


async def record_progress(app: web.Application, record: OnItsWay) -> dict[str, Any] | None:
    """The record's progress (None unless it is on its way, and only then read)."""
    return await cards_of(app).progress(record)


async def current_utterances(
    request: web.Request, record_id: str, *, original: bool = False
) -> list[Utterance] | None:
    """The owner's latest correction, else (or with `original`) the recognizer's own."""
    return await reads.transcripts.utterances(request.app[keys.READERS], record_id=record_id,
                                              original=original)


@declare("getRecord", "The record card", {200: ok("The card", CardBody), 404: NO_RECORD},
         parameters=(RECORD_ID,))
async def card(request: web.Request) -> web.Response:
    record_id = record_id_of(request)
    return json_response(await card_body(request, record_id))


async def card_body(request: web.Request, record_id: str) -> CardBody:
    grant = record_grant(request)
    card = await cards_of(request.app).card(record_id, grant.owner_id, suggest=grant.is_owner)
    if card is None:
        raise not_found()
    shares = None
    if allowed(Action.SHARE, grant):
        shares = [ShareBody(login=h.login, role=h.role.value, created_at=h.created_at)
                  for h in await reads.access.shares(request.app[keys.READERS],
                                                     record_id=record_id)]
    return replace(card, role=role_name(grant), shares=shares)


@declare("downloadFile", "The audio, with Range support", {
    200: media("The whole file", {"audio/*": {"schema": BINARY},
                                  "application/octet-stream": {"schema": BINARY}}),
    206: media("The requested range", {"audio/*": {"schema": BINARY}}),
    400: "Bad copy", 404: "No such record or copy", 416: "Range not satisfiable",
    503: "The bucket holding the file cannot be reached now (`storage.files = s3`)",
}, parameters=(RECORD_ID, query_param("copy", {"type": "string", "enum": list(COPIES),
                                               "default": "original"})))
async def download_file(request: web.Request) -> web.StreamResponse:
    record_id = record_id_of(request)
    copy = request.query.get("copy", "original")
    if copy not in COPIES:
        raise bad_request("copy must be original or normalized")
    readers, owner_id = request.app[keys.READERS], record_owner(request)
    stored = await reads.records.record_file(readers, record_id=record_id, owner_id=owner_id,
                                             copy=copy)
    if stored is None:
        if not await reads.records.exists(readers, record_id=record_id, owner_id=owner_id):
            raise not_found()
        raise not_found(f"the {copy} copy does not exist yet")
    name = download_name(stored.original_filename, record_id, stored.format)
    return await send_file(request, request.app[keys.FILES], record_id, stored.file_name,
                           copy=copy, headers={
                               "Content-Type": audio_type(stored.format),
                               "Content-Disposition": content_disposition(name),
                               "X-Content-Type-Options": "nosniff",
                           })


@declare("downloadTranscript", "The transcript as a download", {
    200: media("The transcript", {
        transcripts.CONTENT_TYPES[fmt].split(";")[0]: {"schema": BINARY if fmt == "docx" else
                                         {"type": "object"} if fmt == "json" else
                                         {"type": "string"}} for fmt in FORMATS}),
    400: "Bad format or version", 404: NO_RECORD, 409: "No transcript yet",
}, parameters=(
    RECORD_ID,
    query_param("format", {"type": "string", "enum": list(FORMATS), "default": "txt"}),
    query_param("version", {"type": "string", "enum": list(TRANSCRIPT_VERSIONS),
                            "default": "current"},
                "`original`: the recognizer's, without corrections"),
))
async def download_transcript(request: web.Request) -> web.Response:
    record_id = record_id_of(request)
    wanted = request.query.get("format", "txt")
    fmt = next((f for f in FORMATS if f == wanted), None)
    if fmt is None:
        raise bad_request("format must be one of " + ", ".join(FORMATS))
    record = await reads.records.card(request.app[keys.READERS], record_id=record_id,
                                      owner_id=record_owner(request))
    if record is None:
        raise not_found()
    version = request.query.get("version", "current")
    if version not in TRANSCRIPT_VERSIONS:
        raise bad_request("version must be current or original")
    try:
        utterances = await current_utterances(request, record_id,
                                              original=version == "original")
    except transcripts.BadStructure:
        log.error("transcript_bad_structure", record_id=record_id)
        raise ApiError(500, "internal", "the stored transcript cannot be read") from None
    if utterances is None:
        raise ApiError(409, "not_ready", "the record has no transcript yet")
    names: Mapping[str, str] = record.speaker_names
    if request.app[keys.SETTINGS].speakers.apply_suggestions and record_grant(request).is_owner:
        suggested = await cards_of(request.app).suggestions(record_id,
                                                            current_user(request).id)
        names = transcripts.with_suggested_names(names, {s.speaker: s.name for s in suggested})
    quality = None if record.quality is None else record.quality.as_dict()
    # Cutting subtitle cues takes ~0.25 s an hour of speech (docs/recognition.md): a thread.
    body = await asyncio.to_thread(documents.render_bytes, utterances, fmt, names,
                                   title=record.title, quality=quality,
                                   date=record.created_at, duration_ms=record.duration_ms)
    name = download_name(record.original_filename, record_id, fmt)
    return web.Response(body=body, headers={
        "Content-Type": transcripts.CONTENT_TYPES[fmt],
        "Content-Disposition": content_disposition(name),
        "X-Content-Type-Options": "nosniff",
    })


@declare("resumeRecord", "Resume a halted record", {
    200: ok("The record", RecordBody), 404: NO_RECORD, 409: "Not halted"},
    parameters=(RECORD_ID,))
async def resume(request: web.Request) -> web.Response:
    record_id = record_id_of(request)
    owner_id = record_owner(request)
    try:
        await request.app[keys.WRITER].ask(Resume(record_id=record_id, owner_id=owner_id,
                                                  actor_id=current_user(request).id))
    except NotFound:
        raise not_found() from None
    except Conflict:
        raise ApiError(409, "not_halted", "the record is not halted") from None
    log.info("record_resumed", record_id=record_id, origin="human")
    record = await reads.records.card(request.app[keys.READERS], record_id=record_id,
                                      owner_id=owner_id)
    if record is None:  # pragma: no cover - records are never deleted
        raise not_found()
    return json_response(record_summary(record, progress=await _progress(request, record)))
