"""Identity under `/app/`: who the request is from.

The reverse proxy authenticates people and passes `Remote-User` (and
optionally `Remote-Name`, `Remote-Email`); those headers are believed only
when the TCP peer is a trusted proxy. Without them the request is the
`[server] anonymous_user`, or refused with 401 when that is empty. The user
row is created by the first request through the writer (`EnsureUser`
resolves the race of concurrent first requests); later requests find it
through a reader and a small in-process cache (users are never rewritten).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aiohttp import web
from aiohttp.typedefs import Handler

from transcriber import keys
from transcriber.db import queries as q
from transcriber.db.commands.users import EnsureUser, User
from transcriber.settings import ServerSettings
from transcriber.web.addresses import is_trusted, parse_address
from transcriber.web.errors import ApiError
from transcriber.web.ratelimit import API_PREFIX

IDENTITY_MAX = 255
# Paths under /app/ that anybody may read (the API's own description).
PUBLIC_PATHS = frozenset({"/app/openapi.json"})
_CACHE_MAX = 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class Claimed:
    """The identity a request claims, before the user row is looked up."""

    login: str
    display_name: str = ""
    email: str = ""


IDENTITY_HEADERS = ("Remote-User", "Remote-Name", "Remote-Email")
# Control characters break logs and layouts; format characters (U+200B,
# U+202E, U+FEFF…) are invisible or reorder text, so "alice" and
# "ali\u200bce" would be two people who look the same.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf"})


def _bad(message: str) -> ApiError:
    return ApiError(400, "bad_identity", message)


def _checked(header: str, values: Sequence[str]) -> str:
    if len(values) > 1:
        # A proxy that appends instead of replacing would let the client's
        # own header through beside the proxy's: believe neither.
        raise _bad(f"{header} is given more than once")
    value = values[0] if values else ""
    # aiohttp decodes header bytes as UTF-8 with surrogateescape: a surrogate
    # here is a byte that was not UTF-8.
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise _bad(f"{header} is not valid UTF-8")
    value = unicodedata.normalize("NFC", value.strip())
    if len(value) > IDENTITY_MAX:
        raise _bad(f"{header} is longer than {IDENTITY_MAX} characters")
    if any(unicodedata.category(ch) in _REFUSED_CATEGORIES for ch in value):
        raise _bad(f"{header} contains control or format characters")
    return value


def claimed_identity(
    peer: str | None, headers: Mapping[str, Sequence[str]], settings: ServerSettings
) -> Claimed | None:
    """Pure: the identity of a request, or None when it has none (→ 401).

    `headers` holds every value of each identity header, repeats included."""
    if is_trusted(parse_address(peer), settings.trusted_proxies):
        login = _checked("Remote-User", headers.get("Remote-User", ()))
        if login:
            return Claimed(
                login=login,
                display_name=_checked("Remote-Name", headers.get("Remote-Name", ())),
                email=_checked("Remote-Email", headers.get("Remote-Email", ())),
            )
    if settings.anonymous_user:
        return Claimed(login=settings.anonymous_user, display_name=settings.anonymous_user)
    return None


class UserDirectory:
    """Finds users by login; creates them through the writer on first sight."""

    def __init__(self) -> None:
        self._cache: dict[str, User] = {}

    async def resolve(self, app: web.Application, claimed: Claimed) -> User:
        user = self._cache.get(claimed.login)
        if user is not None:
            return user
        row = await app[keys.READERS].fetch_one(q.users.SELECT_BY_LOGIN,
                                                {"login": claimed.login})
        if row is not None:
            user = User.from_row(row)
        else:
            user = await app[keys.WRITER].ask(EnsureUser(
                login=claimed.login, display_name=claimed.display_name, email=claimed.email,
            ))
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[claimed.login] = user
        return user


USERS = web.AppKey("user_directory", UserDirectory)
CURRENT_USER = web.RequestKey("user", User)


def current_user(request: web.Request) -> User:
    return request[CURRENT_USER]


@web.middleware
async def identity_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not request.path.startswith(API_PREFIX) or request.path in PUBLIC_PATHS:
        return await handler(request)
    claimed = claimed_identity(
        request.remote, {k: request.headers.getall(k, []) for k in IDENTITY_HEADERS},
        request.app[keys.SETTINGS].server,
    )
    if claimed is None:
        raise ApiError(401, "unauthorized", "no identity: sign in through the proxy")
    request[CURRENT_USER] = await request.app[USERS].resolve(request.app, claimed)
    return await handler(request)
