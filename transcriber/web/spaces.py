"""The routes of sharing: spaces and their members, a record's direct shares
(docs/sharing.md). Who may do each is `domain.access`'s answer: a space's
members and webhooks by the person's role there (`may_in_space`), a record's
shares by the access middleware's grant (`Action.SHARE`)."""

from __future__ import annotations

import structlog
from aiohttp import web

from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import parse_id
from transcriber.db import reads
from transcriber.db.commands.spaces import (
    CreateSpace,
    RemoveMember,
    SetDefaultSpace,
    SetMember,
    ShareRecord,
    Unshare,
)
from transcriber.db.commands.users import EnsureUser, User
from transcriber.domain.access import (
    SHARE_ROLES,
    SPACE_NAME_MAX,
    SPACE_ROLES,
    AccessAnswer,
    AccessRole,
    Action,
    may_in_space,
)
from transcriber.domain.shapes import Items, ShareBody
from transcriber.domain.shapes_people import SpaceBody
from transcriber.domain.text import LoginRefused, canonical_login, text_problem
from transcriber.web import keys
from transcriber.web.access import answer_error, record_grant, upload_space
from transcriber.web.archive import record_id_of
from transcriber.web.errors import ApiError, bad_request, not_found
from transcriber.web.identity import current_user
from transcriber.web.jsonbody import read_json
from transcriber.web.operations import JSON, RECORD_ID, declare, empty, json_body, ok, path_param
from transcriber.web.responses import json_response
from transcriber.web.uploadguard import expect_handler

log = structlog.get_logger(__name__)

LOGIN_MAX = 255


def parse_space_name(data: object) -> str:
    """`{"name": "..."}`: one line of 1 to 64 characters."""
    if not isinstance(data, dict) or set(data) != {"name"}:
        raise bad_request("the body must be a JSON object with name only")
    name = data["name"].strip() if isinstance(data["name"], str) else ""
    if not name or len(name) > SPACE_NAME_MAX:
        raise bad_request(f"a space's name is one line of 1 to {SPACE_NAME_MAX} characters")
    problem = text_problem(name)
    if problem is not None:
        raise bad_request(f"name {problem}")
    return name


def parse_holder(data: object, roles: tuple[str, ...]) -> tuple[str, AccessRole]:
    """`{"login": "...", "role": "..."}` with a role of `roles`."""
    if not isinstance(data, dict) or set(data) != {"login", "role"}:
        raise bad_request("the body must be a JSON object with login and role only")
    login, role = data["login"], data["role"]
    if not isinstance(login, str) or not login or len(login) > LOGIN_MAX:
        raise bad_request("login must be a person's login")
    if role not in roles:
        raise bad_request("role must be one of " + ", ".join(roles))
    return login, AccessRole(role)


async def person(request: web.Request, login: str) -> User:
    """The person of a login, made when first named (as their first request would)."""
    try:
        if canonical_login(login) != login:
            raise LoginRefused("is not in its canonical form")
        return await request.app[keys.WRITER].ask(EnsureUser(login=login))
    except LoginRefused:
        raise bad_request("login is not a valid login") from None


def _space_id(request: web.Request) -> str:
    space_id = parse_id(request.match_info["id"])
    if space_id is None:
        raise not_found("no such space")
    return space_id


async def check_space(request: web.Request, action: Action) -> str:
    """The route's space id when the asking person may do `action` there."""
    space_id = _space_id(request)
    role = await reads.access.role_in_space(request.app[keys.READERS], space_id=space_id,
                                            user_id=current_user(request).id)
    answer = may_in_space(action, role)
    if answer is AccessAnswer.NOT_FOUND:
        raise not_found("no such space")
    error = answer_error(answer)
    if error is not None:
        raise error
    return space_id


SPACE_ID = path_param("id", "The space id; one the user is not a member of is 404.")
_LOGIN = path_param("login", "A person's login")
NO_SPACE = "No such space of the user's"
# What a refused role answers; a state-changing route's 403 is the cross-site one it
# derives (`openapi`), a record route's is derived as this.
_FORBIDDEN = "The user's role does not allow this (docs/sharing.md)"


def _holder(roles: list[str]) -> dict[str, object]:
    return {"required": True, "content": {JSON: {"schema": {
        "type": "object", "required": ["login", "role"], "additionalProperties": False,
        "properties": {"login": {"type": "string", "minLength": 1, "maxLength": 255},
                       "role": {"type": "string", "enum": roles}}}}}}


@declare("createSpace", "A new space; the user becomes its admin", {
    201: ok("The space", SpaceBody), 400: "A bad name", 409: "A space of that name exists",
}, body=json_body({"type": "object", "required": ["name"], "additionalProperties": False,
                   "properties": {"name": {"type": "string", "minLength": 1,
                                           "maxLength": 64}}}))
async def create_space(request: web.Request) -> web.Response:
    name = parse_space_name(await read_json(request))
    try:
        space = await request.app[keys.WRITER].ask(
            CreateSpace(space_name=name, admin_id=current_user(request).id))
    except Conflict:
        raise ApiError(409, "conflict", "a space of that name exists") from None
    log.info("space_created", space_id=space.id)
    return json_response(SpaceBody(id=space.id, name=space.name, created_at=space.created_at,
                                   role=AccessRole.ADMIN.value), status=201)


@declare("listSpaces", "The spaces the user is a member of, with their role", {
    200: ok("The spaces", Items[SpaceBody])})
async def list_spaces(request: web.Request) -> web.Response:
    readers, person = request.app[keys.READERS], current_user(request).id
    mine = await reads.access.spaces_of(readers, user_id=person)
    default = await reads.access.default_space(readers, user_id=person)
    return json_response(Items(items=[
        SpaceBody(id=s.id, name=s.name, created_at=s.created_at, role=s.role.value,
                  default=s.id == default)
        for s in mine]))


@declare("setDefaultSpace", "The space the user's uploads go to when they name none (null: "
                            "their own)", {
    200: ok("The spaces", Items[SpaceBody]), 400: "A bad body", 404: NO_SPACE,
}, body=json_body({"type": "object", "required": ["space"], "additionalProperties": False,
                   "properties": {"space": {"type": ["string", "null"]}}}))
async def set_default_space(request: web.Request) -> web.Response:
    """`{"space": id|null}`: where the person's uploads go when they name no space (one
    where they may file records)."""
    data = await read_json(request)
    if not isinstance(data, dict) or set(data) != {"space"}:
        raise bad_request("the body must be a JSON object with space only")
    value = data["space"]
    if value is not None and not isinstance(value, str):
        raise bad_request("space must be a space's id or null")
    space_id = await upload_space(request, value or "")
    await request.app[keys.WRITER].ask(SetDefaultSpace(user_id=current_user(request).id,
                                                       space_id=space_id))
    return await list_spaces(request)


@declare("listMembers", "The space's members", {
    200: ok("The members", Items[ShareBody]), 404: NO_SPACE}, parameters=(SPACE_ID,))
async def list_members(request: web.Request) -> web.Response:
    space_id = await check_space(request, Action.LIST)
    found = await reads.access.members(request.app[keys.READERS], space_id=space_id)
    return json_response(Items(items=[
        ShareBody(login=m.login, role=m.role.value, created_at=m.created_at) for m in found]))


@declare("setMember", "Add a member or change their role (admins)", {
    201: ok("The member", ShareBody), 400: "A bad login or role", 404: NO_SPACE,
    409: "The space's last admin cannot step down",
}, parameters=(SPACE_ID,), body=_holder(["viewer", "editor", "admin"]))
async def add_member(request: web.Request) -> web.Response:
    space_id = await check_space(request, Action.MEMBERS)
    login, role = parse_holder(await read_json(request), SPACE_ROLES)
    member = await person(request, login)
    try:
        await request.app[keys.WRITER].ask(SetMember(space_id=space_id, user_id=member.id,
                                                     role=role))
    except Conflict:
        raise ApiError(409, "last_admin", "a space keeps at least one admin") from None
    log.info("space_member_set", space_id=space_id, role=role.value)
    found = [m for m in await reads.access.members(request.app[keys.READERS], space_id=space_id)
             if m.login == login]
    return json_response(ShareBody(login=login, role=role.value,
                                   created_at=found[0].created_at if found else ""),
                         status=201)


@declare("removeMember", "Remove a member (admins; any member may leave); their records in "
                         "the space leave it with them", {
    204: empty("Removed"), 404: "No such space of the user's, or not a member",
    409: "The space's last admin cannot leave",
}, parameters=(SPACE_ID, _LOGIN))
async def remove_member(request: web.Request) -> web.Response:
    """An admin removes anyone; any member may leave (remove themselves)."""
    login = request.match_info["login"]
    me = current_user(request)
    space_id = await check_space(request, Action.LIST if login == me.login else Action.MEMBERS)
    member = await reads.users.by_login(request.app[keys.READERS], login=login)
    if member is None:
        raise not_found("not a member")
    try:
        await request.app[keys.WRITER].ask(RemoveMember(space_id=space_id, user_id=member.id,
                                                        actor_id=me.id))
    except NotFound:
        raise not_found("not a member") from None
    except Conflict:
        raise ApiError(409, "last_admin", "a space keeps at least one admin") from None
    log.info("space_member_removed", space_id=space_id)
    return web.Response(status=204)


@declare("listShares", "The people the record is shared with (who may share it)", {
    200: ok("The shares", Items[ShareBody]), 403: _FORBIDDEN, 404: "No such record",
}, parameters=(RECORD_ID,))
async def list_shares(request: web.Request) -> web.Response:
    found = await reads.access.shares(request.app[keys.READERS],
                                      record_id=record_grant(request).record_id)
    return json_response(Items(items=[
        ShareBody(login=h.login, role=h.role.value, created_at=h.created_at) for h in found]))


@declare("shareRecord", "Share the record with a person (the owner or a space admin)", {
    201: ok("The share", ShareBody), 400: "A bad login or role, or the owner",
    404: "No such record",
}, parameters=(RECORD_ID,), body=_holder(["viewer", "editor"]))
async def share(request: web.Request) -> web.Response:
    record_id = record_id_of(request)
    grant = record_grant(request)
    login, role = parse_holder(await read_json(request), SHARE_ROLES)
    target = await person(request, login)
    if target.id == grant.owner_id:
        raise bad_request("the record's owner holds it already")
    await request.app[keys.WRITER].ask(ShareRecord(
        record_id=record_id, user_id=target.id, login=login, role=role,
        actor_id=current_user(request).id))
    log.info("record_shared", record_id=record_id, role=role.value)
    found = [h for h in await reads.access.shares(request.app[keys.READERS], record_id=record_id)
             if h.login == login]
    return json_response(ShareBody(login=login, role=role.value,
                                   created_at=found[0].created_at if found else ""),
                         status=201)


@declare("unshareRecord", "Revoke a person's share", {
    204: empty("Revoked"), 404: "No such record, or not shared with that person",
}, parameters=(RECORD_ID, _LOGIN))
async def unshare(request: web.Request) -> web.Response:
    record_id = record_id_of(request)
    login = request.match_info["login"]
    target = await reads.users.by_login(request.app[keys.READERS], login=login)
    if target is None:
        raise not_found("not shared with that person")
    try:
        await request.app[keys.WRITER].ask(Unshare(
            record_id=record_id, user_id=target.id, login=login,
            actor_id=current_user(request).id))
    except NotFound:
        raise not_found("not shared with that person") from None
    log.info("record_unshared", record_id=record_id)
    return web.Response(status=204)


def add_routes(app: web.Application) -> None:
    router, body = app.router, {"expect_handler": expect_handler}
    router.add_get("/app/spaces", list_spaces)
    router.add_post("/app/spaces", create_space, **body)
    router.add_put("/app/spaces/default", set_default_space, **body)
    router.add_get("/app/spaces/{id}/members", list_members)
    router.add_post("/app/spaces/{id}/members", add_member, **body)
    router.add_delete("/app/spaces/{id}/members/{login}", remove_member, **body)
    record = "/app/audiorecords/{id}"
    router.add_get(f"{record}/shares", list_shares)
    router.add_post(f"{record}/shares", share, **body)
    router.add_delete(f"{record}/shares/{{login}}", unshare, **body)
