"""`/app/tokens`: the signed-in person's personal access tokens (the web app's page).

`POST` makes one and answers it once (`token`), never again: only its hash is
stored (`transcriber.domain.tokens`). `GET` lists them without the token; `DELETE
/app/tokens/{id}` revokes one at once. Making and revoking take the person
signed in through the proxy (or the anonymous user), not a token: a leaked
token must not be able to mint itself a successor, nor revoke its owner's
other tokens (403). Listing is a read, open to any of the person's tokens.

A person holds at most `server.tokens_per_user_max` tokens (409 past it) and
makes at most `server.token_creations_per_hour` an hour (429 with
`Retry-After` past it): making and revoking in a loop buys neither requests
(the rate limit counts per person, `ratelimit`) nor lookups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import structlog
from aiohttp import web

from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import parse_id
from transcriber.db import reads
from transcriber.db.commands.tokens import CreateToken, RevokeToken
from transcriber.db.reads.tokens import TokenInfo
from transcriber.domain import tokens
from transcriber.domain.shapes import Items
from transcriber.domain.shapes_integrations import NewTokenBody, TokenBody
from transcriber.web import keys
from transcriber.web.bearer import BEARER
from transcriber.web.errors import ApiError, bad_request, not_found
from transcriber.web.identity import current_user
from transcriber.web.jsonbody import read_json
from transcriber.web.operations import declare, empty, json_body, ok
from transcriber.web.ratelimit import TOKEN_CREATIONS
from transcriber.web.responses import json_response

log = structlog.get_logger(__name__)

FIELDS = frozenset({"name", "scope", "expires_days"})


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenRequest:
    name: str = ""
    scope: tokens.Scope = "write"
    expires_days: int | None = None


def parse_token_request(data: object) -> TokenRequest:
    """Pure: a POST body, `{"name"?, "scope"?, "expires_days"?}`; 400 for anything else."""
    if not isinstance(data, dict):
        raise bad_request("the body must be a JSON object with name, scope or expires_days")
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise bad_request("unknown fields: " + ", ".join(unknown))
    name = data.get("name", "")
    if not isinstance(name, str):
        raise bad_request("name must be a string")
    problem = tokens.name_problem(name)
    if problem is not None:
        raise bad_request(f"name {problem}")
    scope = next((s for s in tokens.SCOPES if s == data.get("scope", "write")), None)
    if scope is None:
        raise bad_request("scope must be read or write")
    days = data.get("expires_days")
    if days is not None and (not isinstance(days, int) or isinstance(days, bool)
                             or not 1 <= days <= tokens.EXPIRES_DAYS_MAX):
        raise bad_request(f"expires_days must be a whole number from 1 to "
                          f"{tokens.EXPIRES_DAYS_MAX}, or null (never expires)")
    return TokenRequest(name=name.strip(), scope=scope, expires_days=days)


def token_fields(info: TokenInfo) -> dict[str, Any]:
    return {"id": info.id, "name": info.name, "scope": info.scope,
            "created_at": info.created_at, "expires_at": info.expires_at,
            "last_used_at": info.last_used_at}


# A token may not make or revoke tokens (`_by_the_person`).
_CHANGES = "Cross-site request, a read token, or any token: tokens are made and revoked by " \
           "the person signed in"


def _by_the_person(request: web.Request, what: str) -> None:
    if BEARER in request:
        raise ApiError(403, "forbidden", f"a token cannot {what} tokens; sign in as the "
                                         "person whose tokens they are")


@declare("listTokens", "The user's personal access tokens (never the tokens themselves)",
         {200: ok("The tokens, newest first", Items[TokenBody])})
async def list_tokens(request: web.Request) -> web.Response:
    found = await reads.tokens.of_user(request.app[keys.READERS], user_id=current_user(request).id)
    return json_response(Items(items=[TokenBody(**token_fields(info)) for info in found]))


@declare("createToken", "Make a token; the answer shows it, this once", {
    201: ok("The token, with `token`", NewTokenBody), 403: _CHANGES,
    400: "Unknown field, a bad name, scope or expires_days",
    409: "The user holds the most tokens one may (server.tokens_per_user_max)",
    429: "Rate limited, or more tokens made this hour than server.token_creations_per_hour "
         "(see Retry-After)",
}, body=json_body("TokenRequest"))
async def create_token(request: web.Request) -> web.Response:
    _by_the_person(request, "make")
    wanted = parse_token_request(await read_json(request))
    owner = current_user(request)
    settings = request.app[keys.SETTINGS].server
    verdict = request.app[TOKEN_CREATIONS].hit(owner.id)
    if not verdict.allowed:
        log.info("token_creation_limited", user_id=owner.id)
        raise ApiError(429, "rate_limited", (
            f"a person may make at most {settings.token_creations_per_hour} tokens an hour; "
            f"retry in {verdict.retry_after_seconds} s"),
            headers={"Retry-After": str(verdict.retry_after_seconds)})
    made = tokens.new_token()
    try:
        info = await request.app[keys.WRITER].ask(CreateToken(
            user_id=owner.id, token_name=wanted.name, scope=wanted.scope,
            token_hash=made.hash,
            expires_at=tokens.expires_at(request.app[keys.CLOCK].now(), wanted.expires_days),
            most=settings.tokens_per_user_max))
    except Conflict:
        raise ApiError(409, "conflict", f"a person may hold at most "
                                        f"{settings.tokens_per_user_max} tokens; revoke one "
                                        "first") from None
    log.info("token_created", token_id=info.id, user_id=owner.id, scope=info.scope)
    # Shown once: `Cache-Control: no-store` like every private answer (`web.private`).
    return json_response(NewTokenBody(**token_fields(info), token=made.text), status=201)


@declare("revokeToken", "Revoke a token: refused from its next request on", {
    204: empty("Revoked"), 403: _CHANGES, 404: "No such token of this user"})
async def revoke_token(request: web.Request) -> web.Response:
    _by_the_person(request, "revoke")
    token_id = parse_id(request.match_info["id"])
    if token_id is None:
        raise not_found("no such token")
    try:
        await request.app[keys.WRITER].ask(RevokeToken(token_id=token_id,
                                                       user_id=current_user(request).id))
    except NotFound:
        raise not_found("no such token") from None
    log.info("token_revoked", token_id=token_id)
    return web.Response(status=204)
