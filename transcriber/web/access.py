"""The record routes' access check: one middleware asks `domain.access.may` before any
handler under `/app/audiorecords/{id}` runs (docs/sharing.md).

Every such route names its action in `RECORD_ACTIONS`; a route registered
without one fails the app's start-up (`check_record_routes`), so a new route
can never skip the check. The handler then reads the request's grant
(`record_grant`): the record's owner is whose rows the owner-scoped queries
read, and the asking person is who the journal names.
"""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from transcriber.core.ids import parse_id
from transcriber.db import reads
from transcriber.db.commands.spaces import MoveRecord
from transcriber.db.readers import ReaderPool
from transcriber.domain.access import AccessAnswer, Action, Grant, may, may_in_space
from transcriber.web import keys
from transcriber.web.errors import ApiError, not_found
from transcriber.web.identity import current_user
from transcriber.web.jsonbody import READ_BODY, read_body

RECORD = "/app/audiorecords/{id}"

RECORD_ACTIONS: dict[tuple[str, str], Action] = {
    ("GET", RECORD): Action.OPEN,
    ("PATCH", RECORD): Action.EDIT,
    ("DELETE", RECORD): Action.DELETE,
    ("PATCH", f"{RECORD}/transcript"): Action.EDIT,
    ("GET", f"{RECORD}/file"): Action.LISTEN,
    ("GET", f"{RECORD}/transcript"): Action.EXPORT,
    ("GET", f"{RECORD}/matches"): Action.SEARCH,
    ("POST", f"{RECORD}/resume"): Action.RESUME,
    ("POST", f"{RECORD}/retranscribe"): Action.RETRANSCRIBE,
    ("POST", f"{RECORD}/speakers/{{speaker}}/confirm"): Action.VOICES,
    ("POST", f"{RECORD}/speakers/{{speaker}}/reject"): Action.VOICES,
    ("POST", f"{RECORD}/shares"): Action.SHARE,
    ("GET", f"{RECORD}/shares"): Action.SHARE,
    ("DELETE", f"{RECORD}/shares/{{login}}"): Action.SHARE,
    ("GET", f"{RECORD}/links"): Action.SHARE,
    ("POST", f"{RECORD}/links"): Action.SHARE,
    ("DELETE", f"{RECORD}/links/{{link_id}}"): Action.SHARE,
}
"""The action each record route is, keyed by (method, route pattern)."""

GRANT = web.RequestKey("grant", Grant)


def _pattern(request: web.Request) -> str | None:
    resource = request.match_info.route.resource
    return None if resource is None else resource.canonical


def is_record_route(pattern: str) -> bool:
    return pattern == RECORD or pattern.startswith(RECORD + "/")


async def check_record_routes(app: web.Application) -> None:
    """Every record route names its action (else the app refuses to start)."""
    for route in app.router.routes():
        resource = route.resource
        if resource is None or route.method in ("HEAD", "OPTIONS"):
            continue
        if is_record_route(resource.canonical) and \
                (route.method, resource.canonical) not in RECORD_ACTIONS:
            raise RuntimeError(f"{route.method} {resource.canonical} names no access action")


def forbidden(message: str = "your role does not allow this") -> ApiError:
    return ApiError(403, "forbidden", message)


def answer_error(answer: AccessAnswer) -> ApiError | None:
    """The error an answer is at the door (None: allowed)."""
    if answer is AccessAnswer.NOT_FOUND:
        return not_found()
    if answer is AccessAnswer.FORBIDDEN:
        return forbidden()
    return None


@web.middleware
async def access_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    pattern = _pattern(request)
    if pattern is None or not is_record_route(pattern):
        return await handler(request)
    # HEAD is GET without the body (aiohttp adds it beside each GET): the same action.
    method = "GET" if request.method == "HEAD" else request.method
    action = RECORD_ACTIONS.get((method, pattern))
    if action is None:  # pragma: no cover - check_record_routes refuses such an app
        raise ApiError(500, "internal", "this route names no access action")
    record_id = parse_id(request.match_info["id"])
    if record_id is None:
        raise not_found()
    if request.can_read_body and request.content_type == "application/json":
        # The body's cap first, as before any record is looked up (jsonbody.READ_BODY).
        request[READ_BODY] = await read_body(request)
    grant = await reads.access.grant(request.app[keys.READERS], record_id=record_id,
                                     user_id=current_user(request).id)
    error = answer_error(may(action, grant))
    if error is not None:
        raise error
    assert grant is not None
    request[GRANT] = grant
    return await handler(request)


def record_grant(request: web.Request) -> Grant:
    """The grant the access middleware checked for this record route."""
    return request[GRANT]


def record_owner(request: web.Request) -> str:
    """The record's owner: whose rows the owner-scoped reads and writes address."""
    return request[GRANT].owner_id


async def upload_space(request: web.Request, requested: str | None, *,
                       person: str | None = None) -> str | None:
    """The space a new record of the asking person goes to: the one asked for (an empty
    value: none), else their default space; refused (404 no such space, 403) unless
    they may file records there. Checked before the body is read. `person`: the
    uploader when the door knows them otherwise (OpenAI's, by its token)."""
    readers = request.app[keys.READERS]
    person = person or current_user(request).id
    if requested is None:
        space_id = await reads.access.default_space(readers, user_id=person)
        if space_id is None:
            return None
    elif not requested:
        return None
    else:
        parsed = parse_id(requested)
        if parsed is None:
            raise not_found("no such space")
        space_id = parsed
    answer = await _filing(readers, space_id=space_id, person=person)
    if requested is None and answer is not AccessAnswer.ALLOWED:
        return None  # a default space the person has since left or may no longer fill
    if answer is AccessAnswer.NOT_FOUND:
        raise not_found("no such space")
    if answer is AccessAnswer.FORBIDDEN:
        raise forbidden("your role in that space does not let you add records")
    return space_id


async def _filing(readers: ReaderPool, *, space_id: str, person: str) -> AccessAnswer:
    return may_in_space(Action.MOVE, await reads.access.role_in_space(
        readers, space_id=space_id, user_id=person))


async def may_file_into(readers: ReaderPool, *, space_id: str, person: str) -> bool:
    """Whether `person` may still add records to the space (a resumable upload's space,
    checked again when its last byte arrives)."""
    return await _filing(readers, space_id=space_id, person=person) is AccessAnswer.ALLOWED


async def file_into_space(request: web.Request, record_id: str, space_id: str | None, *,
                          person: str | None = None) -> None:
    """A new record into the space `upload_space` allowed (journaled as moved)."""
    if space_id is not None:
        await request.app[keys.WRITER].ask(MoveRecord(
            record_id=record_id, space_id=space_id,
            actor_id=person or current_user(request).id))
