"""`/app/audiorecords/{id}/links`: a record's links for people outside (docs/sharing.md).

`POST` makes one and answers its URL once (`url`, `/s/<secret>`), never again:
only the secret's hash is stored (`transcriber.domain.links`). `GET` lists the
record's links with their expiry and how often each was opened; `DELETE
…/links/{link_id}` revokes one at once. The page itself is `web.public_links`.

Who may make, list and revoke a record's links is decided in one place,
`shareable_record`: today the record's owner (anyone else gets the 404 of a
record that does not exist).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import structlog
from aiohttp import web

from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import parse_id
from transcriber.db import reads
from transcriber.db.commands.links import CreateLink, RevokeLink
from transcriber.db.reads.links import LinkInfo
from transcriber.domain import links
from transcriber.domain.shapes import Items
from transcriber.domain.shapes_links import LinkBody, NewLinkBody
from transcriber.web import keys
from transcriber.web.archive import record_id_of
from transcriber.web.errors import ApiError, bad_request, not_found
from transcriber.web.identity import current_user
from transcriber.web.jsonbody import read_json
from transcriber.web.operations import RECORD_ID, declare, empty, json_body, ok, path_param
from transcriber.web.responses import json_response

log = structlog.get_logger(__name__)

FIELDS = frozenset({"expires_in_days", "audio"})


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkRequest:
    expires_in_days: int = links.DEFAULT_DAYS
    audio: bool = False


def parse_link_request(data: object, *, max_days: int) -> LinkRequest:
    """Pure: a POST body, `{"expires_in_days"?, "audio"?}`; 400 for anything else."""
    if not isinstance(data, dict):
        raise bad_request("the body must be a JSON object with expires_in_days or audio")
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise bad_request("unknown fields: " + ", ".join(unknown))
    days = data.get("expires_in_days", min(links.DEFAULT_DAYS, max_days))
    problem = links.days_problem(days, max_days)
    if problem is not None:
        raise bad_request(problem)
    audio = data.get("audio", False)
    if not isinstance(audio, bool):
        raise bad_request("audio must be true or false")
    assert isinstance(days, int)
    return LinkRequest(expires_in_days=days, audio=audio)


async def shareable_record(request: web.Request) -> str:
    """The route's record: who makes, lists and revokes its links was decided before
    the handler, by the one access decision (`web/access.py`: `Action.SHARE`, the owner
    or a space admin); anyone else, and a record that does not exist, got its 404."""
    return record_id_of(request)


def link_body(info: LinkInfo, now: datetime) -> LinkBody:
    return LinkBody(id=info.id, audio=info.audio, created_at=info.created_at,
                    expires_at=info.expires_at,
                    expired=not links.open_now(info.expires_at, now),
                    views=info.views, last_opened_at=info.last_opened_at)


_NOT_RECORD = "No such record of this user"


@declare("listLinks", "The record's links for people outside, newest first, with how often "
                      "each was opened (never their URLs)", {
    200: ok("The links", Items[LinkBody]), 404: _NOT_RECORD}, parameters=(RECORD_ID,))
async def list_links(request: web.Request) -> web.Response:
    record_id = await shareable_record(request)
    found = await reads.links.of_record(request.app[keys.READERS], record_id=record_id)
    now = request.app[keys.CLOCK].now()
    return json_response(Items(items=[link_body(info, now) for info in found]))


@declare("createLink", "Make a link to a read-only page of the record; the answer shows its "
                       "URL, this once", {
    201: ok("The link, with `url`", NewLinkBody),
    400: "Unknown field, a bad expires_in_days or audio", 404: _NOT_RECORD,
    409: "The record holds the most links one may (links.per_record_max)",
}, parameters=(RECORD_ID,), body=json_body("LinkRequest"))
async def create_link(request: web.Request) -> web.Response:
    record_id = await shareable_record(request)
    settings = request.app[keys.SETTINGS].links
    wanted = parse_link_request(await read_json(request), max_days=settings.max_days)
    made = links.new_link()
    now = request.app[keys.CLOCK].now()
    try:
        info = await request.app[keys.WRITER].ask(CreateLink(
            record_id=record_id, created_by=current_user(request).id,
            secret_hash=made.hash, audio=wanted.audio,
            expires_at=links.expires_at(now, wanted.expires_in_days),
            most=settings.per_record_max))
    except Conflict:
        raise ApiError(409, "conflict", f"a record may have at most {settings.per_record_max} "
                                        "links; revoke one first") from None
    # Never the secret nor the URL: the link's id is what an operator can follow.
    log.info("link_created", record_id=record_id, link_id=info.id, audio=info.audio,
             days=wanted.expires_in_days)
    body = link_body(info, now)
    # Shown once: `Cache-Control: no-store` like every private answer (`web.private`).
    return json_response(NewLinkBody(**{name: getattr(body, name) for name in
                                        LinkBody.__dataclass_fields__},
                                     url=made.path), status=201)


@declare("revokeLink", "Revoke a link: its page answers 404 from the next request on", {
    204: empty("Revoked"),
    404: "No such record of this user, or no such link of the record",
}, parameters=(RECORD_ID, path_param("link_id", "The link id (from the list); another "
                                                "record's is 404.")))
async def revoke_link(request: web.Request) -> web.Response:
    record_id = await shareable_record(request)
    link_id = parse_id(request.match_info["link_id"])
    if link_id is None:
        raise not_found("no such link")
    try:
        await request.app[keys.WRITER].ask(RevokeLink(
            link_id=link_id, record_id=record_id, actor_id=current_user(request).id))
    except NotFound:
        raise not_found("no such link") from None
    log.info("link_revoked", record_id=record_id, link_id=link_id)
    return web.Response(status=204)
