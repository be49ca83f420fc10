"""The archive routes: list and search, the card, file and transcript downloads, resume."""

from __future__ import annotations

import sqlite3
from typing import Any

import structlog
from aiohttp import web

from transcriber import keys, transcripts
from transcriber.db import queries as q
from transcriber.db.commands.pipeline import Resume
from transcriber.errors import Conflict, NotFound
from transcriber.ids import parse_id
from transcriber.pipeline.progress import progress_for_row
from transcriber.ports import Utterance
from transcriber.stages import Stage
from transcriber.web.downloads import (
    audio_type,
    check_range,
    content_disposition,
    download_name,
    servable_file,
)
from transcriber.web.errors import ApiError, bad_request, not_found
from transcriber.web.identity import current_user
from transcriber.web.paging import (
    PageAfter,
    SearchAfter,
    decode_cursor,
    encode_cursor,
    match_expression,
    parse_limit,
)
from transcriber.web.ratelimit import poll_after_ms
from transcriber.web.responses import json_response
from transcriber.web.views import record_card, record_summary, speaker_names

log = structlog.get_logger(__name__)

COPIES = ("original", "normalized")
TRANSCRIPT_VERSIONS = ("current", "original")


def record_id_of(request: web.Request) -> str:
    """The route's record id; a malformed one is "not found" and never reaches SQL."""
    record_id = parse_id(request.match_info["id"])
    if record_id is None:
        raise not_found()
    return record_id


async def me(request: web.Request) -> web.Response:
    user = current_user(request)
    return json_response({"id": user.id, "login": user.login, "name": user.name,
                          "email": user.email, "created_at": user.created_at})


async def list_records(request: web.Request) -> web.Response:
    server = request.app[keys.SETTINGS].server
    readers = request.app[keys.READERS]
    owner_id = current_user(request).id
    limit = parse_limit(request.query.get("limit"), default=server.page_default,
                        maximum=server.page_max)
    raw_cursor = request.query.get("cursor") or None
    query = request.query.get("q", "").strip()
    topic = request.query.get("topic")
    params: dict[str, Any] = {"owner_id": owner_id, "limit": limit + 1}
    if topic is not None and query:
        raise bad_request("q and topic cannot be combined")
    if topic is not None:
        params["topic"] = topic
        after = decode_cursor(raw_cursor, search=False) if raw_cursor else None
        if isinstance(after, PageAfter):
            params.update(after_created_at=after.created_at, after_id=after.id)
            rows = await readers.fetch_all(q.archive.TOPIC_PAGE_AFTER, params)
        else:
            rows = await readers.fetch_all(q.archive.TOPIC_PAGE_FIRST, params)
    elif query:
        match = match_expression(query, owner_id)
        after = decode_cursor(raw_cursor, search=True) if raw_cursor else None
        if match is None:
            return json_response({"items": [], "next_cursor": None})
        params["match"] = match
        if isinstance(after, SearchAfter):
            params.update(after_score=after.score, after_id=after.id)
            rows = await readers.fetch_all(q.archive.SEARCH_AFTER, params)
        else:
            rows = await readers.fetch_all(q.archive.SEARCH_FIRST, params)
    else:
        after = decode_cursor(raw_cursor, search=False) if raw_cursor else None
        if isinstance(after, PageAfter):
            params.update(after_created_at=after.created_at, after_id=after.id)
            rows = await readers.fetch_all(q.archive.PAGE_AFTER, params)
        else:
            rows = await readers.fetch_all(q.archive.PAGE_FIRST, params)
    page, more = rows[:limit], len(rows) > limit
    next_cursor = None
    if more:
        last = page[-1]
        next_cursor = encode_cursor(
            SearchAfter(score=last["score"], id=last["id"]) if query
            else PageAfter(created_at=last["created_at"], id=last["id"])
        )
    return json_response({"items": [record_summary(r, progress=await _progress(request, r))
                                    for r in page],
                          "next_cursor": next_cursor})


async def _progress(request: web.Request, row: sqlite3.Row) -> dict[str, Any] | None:
    return await record_progress(request.app, row)


async def record_progress(app: web.Application, row: sqlite3.Row) -> dict[str, Any] | None:
    """The record's progress (None unless it is on its way, and only then read)."""
    progress = await progress_for_row(app[keys.READERS], row, settings=app[keys.SETTINGS],
                                      now=app[keys.CLOCK].now(),
                                      recognizer=app.get(keys.RECOGNIZER))
    return None if progress is None else progress.as_dict()


async def current_utterances(
    request: web.Request, record_id: str, *, original: bool = False
) -> list[Utterance] | None:
    """The owner's latest correction, else (or with `original`) the recognizer's own."""
    readers = request.app[keys.READERS]
    if not original:
        corrected = await readers.fetch_one(q.archive.CORRECTED_STRUCTURE,
                                            {"record_id": record_id})
        if corrected is not None:
            return transcripts.load_structure(corrected["contents"])
    row = await readers.fetch_one(
        q.archive.STRUCTURE, {"record_id": record_id, "version": transcripts.STRUCTURE_ROW}
    )
    if row is None:
        return None
    return transcripts.load_structure(row["contents"])


async def card(request: web.Request) -> web.Response:
    record_id = record_id_of(request)
    return json_response(await card_body(request, record_id))


async def card_body(request: web.Request, record_id: str) -> dict[str, Any]:
    readers = request.app[keys.READERS]
    row = await readers.fetch_one(q.archive.CARD,
                                  {"id": record_id, "owner_id": current_user(request).id})
    if row is None:
        raise not_found()
    timeline = await readers.fetch_all(q.archive.TIMELINE, {"record_id": record_id})
    text = await readers.fetch_one(q.archive.TRANSCRIPT_TEXT, {"record_id": record_id})
    try:
        utterances = await current_utterances(request, record_id)
        original = await current_utterances(request, record_id, original=True)
    except transcripts.BadStructure:
        log.error("card_bad_structure", record_id=record_id)
        utterances = original = None
    settled = row["halted_at"] is not None or row["state"] == Stage.DONE.value
    poll = None if settled else poll_after_ms(request.app[keys.SETTINGS].server)
    return record_card(
        row, timeline=timeline, transcript=None if text is None else text["contents"],
        utterances=utterances, poll_after_ms=poll, progress=await _progress(request, row),
        original_speakers=transcripts.speakers_of(original or ()),
    )


async def download_file(request: web.Request) -> web.StreamResponse:
    record_id = record_id_of(request)
    copy = request.query.get("copy", "original")
    if copy not in COPIES:
        raise bad_request("copy must be original or normalized")
    row = await request.app[keys.READERS].fetch_one(
        q.archive.RECORD_FILE, {"id": record_id, "owner_id": current_user(request).id,
                                "copy": copy},
    )
    if row is None:
        exists = await request.app[keys.READERS].fetch_one(
            q.archive.RECORD_EXISTS, {"id": record_id, "owner_id": current_user(request).id})
        if exists is None:
            raise not_found()
        raise not_found(f"the {copy} copy does not exist yet")
    path, size = await servable_file(request.app[keys.FILES], record_id, row["file_name"],
                                     copy=copy)
    check_range(request, size)
    name = download_name(row["original_filename"], record_id, row["format"])
    return web.FileResponse(path, headers={
        "Content-Type": audio_type(row["format"]),
        "Content-Disposition": content_disposition(name),
        "Cache-Control": "private, no-cache",
        "X-Content-Type-Options": "nosniff",
    })


async def download_transcript(request: web.Request) -> web.Response:
    record_id = record_id_of(request)
    wanted = request.query.get("format", "txt")
    fmt = next((f for f in transcripts.FORMATS if f == wanted), None)
    if fmt is None:
        raise bad_request("format must be one of " + ", ".join(transcripts.FORMATS))
    row = await request.app[keys.READERS].fetch_one(
        q.archive.CARD, {"id": record_id, "owner_id": current_user(request).id})
    if row is None:
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
    body = transcripts.render(utterances, fmt, speaker_names(row))
    name = download_name(row["original_filename"], record_id, fmt)
    return web.Response(body=body.encode(), headers={
        "Content-Type": transcripts.CONTENT_TYPES[fmt],
        "Content-Disposition": content_disposition(name),
        "Cache-Control": "private, no-cache",
        "X-Content-Type-Options": "nosniff",
    })


async def resume(request: web.Request) -> web.Response:
    record_id = record_id_of(request)
    owner_id = current_user(request).id
    try:
        await request.app[keys.WRITER].ask(Resume(record_id=record_id, owner_id=owner_id))
    except NotFound:
        raise not_found() from None
    except Conflict:
        raise ApiError(409, "not_halted", "the record is not halted") from None
    log.info("record_resumed", record_id=record_id, origin="human")
    row = await request.app[keys.READERS].fetch_one(
        q.archive.CARD, {"id": record_id, "owner_id": owner_id})
    if row is None:  # pragma: no cover - records are never deleted
        raise not_found()
    return json_response(record_summary(row, progress=await _progress(request, row)))
