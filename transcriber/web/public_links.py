"""`/s/<secret>`: a record's page for people outside, with no identity (docs/sharing.md).

Three routes hang under a link, and nothing else is reachable with it: the
page (`GET /s/<secret>`), the transcript as TXT or SRT (`…/transcript?format=`)
and, for a link made with `audio`, the recording with Range support
(`…/audio`). They sit outside `/app/`, so no identity, bearer token or
same-origin check runs: the secret is the whole credential, and it opens one
record, read-only.

Each request is first charged to its address's bucket (the API's limiter:
guessing secrets costs what any request costs), then, once the link is found,
to the link's own bucket (`links.requests_per_minute`). A secret of the wrong
shape never reaches the database; a well-formed one is found by its hash (one
indexed lookup). Unknown, expired and revoked links answer the very same 404
page. Every answer under `/s/` carries `noindex`, `no-referrer`, `no-store`
and the page's strict CSP (`mark_public_link`, one hook, so an error answer
has them too). Logs name the link's id, never its secret or URL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import ClassVar

import structlog
from aiohttp import web

from transcriber.core.clock import Clock
from transcriber.core.errors import TranscriberError
from transcriber.core.observability import LINK_REQUESTS
from transcriber.db import reads
from transcriber.db.commands.links import CountOpening
from transcriber.db.reads.links import OpenedLink
from transcriber.db.reads.records import RecordCard
from transcriber.domain import documents, links, transcripts
from transcriber.domain.languages import AUTO
from transcriber.domain.transcript_formats import TranscriptFormat
from transcriber.ports import Utterance
from transcriber.settings import LinkSettings
from transcriber.web import keys
from transcriber.web.downloads import audio_type, content_disposition, send_file
from transcriber.web.link_page import CSP, PageLine, PageView, render_notice, render_page
from transcriber.web.ratelimit import RATE_LIMITER, RateLimiter, address_key
from transcriber.web.texts import language_of

log = structlog.get_logger(__name__)

PAGE = links.PATH_PREFIX + "{secret}"
HTML = "text/html; charset=utf-8"
HEADERS = {
    "X-Robots-Tag": "noindex, nofollow, noarchive",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}
# The copies a link's player may play, the lighter first.
AUDIO_COPIES = ("normalized", "original")

LINK_BUCKETS = web.AppKey("link_buckets", RateLimiter)


class _Refused(TranscriberError):
    """What a link answers instead: `kind` is the notice's (`link_page.NOTICES`)."""

    STATUSES: ClassVar[Mapping[str, int]] = {
        "not_found": 404, "limited": 429, "not_ready": 409, "bad_format": 400}

    def __init__(self, kind: str, *, retry_after: int = 0) -> None:
        super().__init__(kind)
        self.kind = kind
        self.status = self.STATUSES[kind]
        self.retry_after = retry_after


def link_limiter(settings: LinkSettings, clock: Clock, table_max: int) -> RateLimiter:
    return RateLimiter(requests=settings.requests_per_minute, window_seconds=60.0,
                       idle_seconds=600.0, clock=clock, table_max=table_max)


def setup_public_links(app: web.Application) -> None:
    settings = app[keys.SETTINGS]
    app[LINK_BUCKETS] = link_limiter(settings.links, app[keys.CLOCK],
                                      settings.server.rate_limit_table_max)
    app.on_response_prepare.append(mark_public_link)
    app.router.add_get(PAGE, page)
    app.router.add_get(PAGE + "/transcript", transcript)
    app.router.add_get(PAGE + "/audio", audio)


async def mark_public_link(request: web.Request, response: web.StreamResponse) -> None:
    if request.path.startswith(links.PATH_PREFIX):
        response.headers.update(HEADERS)


def _notice(request: web.Request, refused: _Refused) -> web.Response:
    LINK_REQUESTS.labels(refused.kind).inc()
    headers = {"Retry-After": str(refused.retry_after)} if refused.retry_after else {}
    return web.Response(text=render_notice(language_of(request), refused.kind),
                        status=refused.status, content_type="text/html", charset="utf-8",
                        headers=headers)


def _spend(limiter: RateLimiter, key: str) -> None:
    verdict = limiter.hit(key)
    if not verdict.allowed:
        raise _Refused("limited", retry_after=verdict.retry_after_seconds)


async def opened_link(request: web.Request) -> OpenedLink:
    """The link the path's secret opens now, its request charged; `_Refused` else."""
    _spend(request.app[RATE_LIMITER], address_key(request))
    secret = request.match_info["secret"]
    if not links.well_formed(secret):
        raise _Refused("not_found")
    found = await reads.links.by_hash(request.app[keys.READERS],
                                      secret_hash=links.secret_hash(secret))
    if (found is None or not links.matches(found.secret_hash, secret)
            or not links.open_now(found.expires_at, request.app[keys.CLOCK].now())):
        raise _Refused("not_found")
    _spend(request.app[LINK_BUCKETS], found.id)
    return found


async def _record(request: web.Request, link: OpenedLink) -> RecordCard:
    record = await reads.records.card(request.app[keys.READERS], record_id=link.record_id,
                                      owner_id=link.owner_id)
    if record is None:  # deleted since the link was read: its links went with it
        raise _Refused("not_found")
    return record


async def _utterances(request: web.Request, link: OpenedLink) -> list[Utterance] | None:
    try:
        return await reads.transcripts.utterances(request.app[keys.READERS],
                                                  record_id=link.record_id)
    except transcripts.BadStructure:
        log.error("transcript_bad_structure", record_id=link.record_id)
        raise


def _lines(found: list[Utterance] | None, names: Mapping[str, str]) -> list[PageLine] | None:
    """The page's lines, speakers named as the TXT download names them."""
    if found is None:
        return None
    several = transcripts.has_several(found)
    return [PageLine(voice=transcripts.voice_of(u, names, several),
                 time=documents.clock(u.start_ms), text=transcripts.one_line(u.text))
            for u in found if u.text.strip()]


def spoken_language(record: RecordCard) -> str:
    """The language the record was heard in, when one is known (not `auto`)."""
    heard = record.detected_language or record.language
    known = heard and heard != AUTO and heard.isascii() and heard.isalpha() and len(heard) <= 8
    return heard if known else ""


async def page(request: web.Request) -> web.Response:
    try:
        link = await opened_link(request)
        record = await _record(request, link)
        found = await _utterances(request, link)
        if request.method == "GET":
            # Counted before it is shown: a link revoked (or expired) since it was read
            # counts nothing, and then shows nothing either.
            views = await request.app[keys.WRITER].ask(
                CountOpening(link_id=link.id, record_id=link.record_id))
            if views == 0:
                log.info("link_gone_while_opened", link_id=link.id)
                raise _Refused("not_found")
            log.info("link_opened", link_id=link.id, record_id=link.record_id, views=views)
    except _Refused as refused:
        return _notice(request, refused)
    LINK_REQUESTS.labels("served").inc()
    names = record.speaker_names
    view = PageView(
        title=record.title, base=links.link_path(request.match_info["secret"]),
        audio=link.audio, lines=_lines(found, names),
        facts="" if found is None else documents.facts_line(
            found, names, date=record.created_at, duration_ms=record.duration_ms),
        spoken=spoken_language(record))
    return web.Response(text=render_page(view, language_of(request)),
                        content_type="text/html", charset="utf-8")


async def transcript(request: web.Request) -> web.Response:
    try:
        link = await opened_link(request)
        record = await _record(request, link)
        wanted = request.query.get("format", "txt")
        fmt: TranscriptFormat | None = next(
            (f for f in links.TRANSCRIPT_FORMATS if f == wanted), None)
        if fmt is None:
            raise _Refused("bad_format")
        found = await _utterances(request, link)
        if found is None:
            raise _Refused("not_ready")
    except _Refused as refused:
        return _notice(request, refused)
    # Only the names the owner gave: suggestions come from the owner's known voices.
    body = await asyncio.to_thread(documents.render_bytes, found, fmt, record.speaker_names,
                                   title=record.title)
    name = f"{transcripts.one_line(record.title) or 'transcript'}.{fmt}"
    LINK_REQUESTS.labels("served").inc()
    return web.Response(body=body, headers={
        "Content-Type": transcripts.CONTENT_TYPES[fmt],
        "Content-Disposition": content_disposition(name),
    })


async def audio(request: web.Request) -> web.StreamResponse:
    try:
        link = await opened_link(request)
        if not link.audio:
            raise _Refused("not_found")
    except _Refused as refused:
        return _notice(request, refused)
    readers = request.app[keys.READERS]
    for copy in AUDIO_COPIES:
        stored = await reads.records.record_file(readers, record_id=link.record_id,
                                                 owner_id=link.owner_id, copy=copy)
        if stored is not None:
            LINK_REQUESTS.labels("served").inc()
            return await send_file(request, request.app[keys.FILES], link.record_id,
                                   stored.file_name, copy=copy, headers={
                                       "Content-Type": audio_type(stored.format)})
    return _notice(request, _Refused("not_found"))
