"""Identity under `/app/`: who the request is from.

A valid bearer token (`web.bearer`, checked before this) is its owner's,
from any address, whatever else the request says. Otherwise the reverse
proxy authenticates people and passes `Remote-User` (and optionally
`Remote-Name`, `Remote-Email`); those headers are believed only when the TCP
peer is a trusted proxy. Without them the request is the
`[server] anonymous_user`, or refused with 401 when that is empty. The user
row is created by the first request through the writer (`EnsureUser`
resolves the race of concurrent first requests); later requests find it
through a reader and a small in-process cache (users are never rewritten).
A login is stored NFKC-normalized and refused (400 `bad_identity`) when it
holds invisible or white-space characters (`transcriber.domain.text`): two
logins that look alike are one person or none.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler

from transcriber.db import reads
from transcriber.db.commands.users import EnsureUser, User
from transcriber.domain.text import LoginRefused, canonical_login, text_problem
from transcriber.settings import ServerSettings
from transcriber.web import keys
from transcriber.web.addresses import is_trusted, parse_address
from transcriber.web.bearer import BEARER
from transcriber.web.errors import ApiError
from transcriber.web.ratelimit import API_PREFIX, PUBLIC_PATHS

log = structlog.get_logger(__name__)

IDENTITY_MAX = 255
_CACHE_MAX = 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimedIdentity:
    """The identity a request claims, before the user row is looked up."""

    login: str
    display_name: str = ""
    email: str = ""


IDENTITY_HEADERS = ("Remote-User", "Remote-Name", "Remote-Email")
LOGIN_HEADER = "Remote-User"


class BadIdentity(ApiError):
    """400 `bad_identity`; `header` and `problem` are what the log line may carry."""

    def __init__(self, header: str, problem: str) -> None:
        super().__init__(400, "bad_identity", f"{header} {problem}")
        self.header = header
        self.problem = problem


def _single(header: str, values: Sequence[str]) -> str:
    if len(values) > 1:
        # A proxy that appends instead of replacing would let the client's
        # own header through beside the proxy's: believe neither.
        raise BadIdentity(header, "is given more than once")
    value = values[0] if values else ""
    # aiohttp decodes header bytes as UTF-8 with surrogateescape: a surrogate
    # here is a byte that was not UTF-8.
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise BadIdentity(header, "is not valid UTF-8")
    return value


def _login(values: Sequence[str]) -> str:
    """The login as stored (`text.canonical_login`), "" when none is given.

    Never stripped: `alice\u00a0` would otherwise be alice."""
    value = _single(LOGIN_HEADER, values)
    if not value:
        return ""
    try:
        return canonical_login(value)
    except LoginRefused as exc:
        raise BadIdentity(LOGIN_HEADER, str(exc)) from None


def _shown(header: str, values: Sequence[str]) -> str:
    """A display name or e-mail: shown, never identifying, so trimmed."""
    value = unicodedata.normalize("NFC", _single(header, values).strip())
    if len(value) > IDENTITY_MAX:
        raise BadIdentity(header, f"is longer than {IDENTITY_MAX} characters")
    problem = text_problem(value)
    if problem is not None:
        raise BadIdentity(header, problem)
    return value


def claimed_identity(
    peer: str | None, headers: Mapping[str, Sequence[str]], settings: ServerSettings
) -> ClaimedIdentity | None:
    """Pure: the identity of a request, or None when it has none (→ 401).

    `headers` holds every value of each identity header, repeats included."""
    if is_trusted(parse_address(peer), settings.trusted_proxies):
        login = _login(headers.get(LOGIN_HEADER, ()))
        if login:
            return ClaimedIdentity(
                login=login,
                display_name=_shown("Remote-Name", headers.get("Remote-Name", ())),
                email=_shown("Remote-Email", headers.get("Remote-Email", ())),
            )
    if settings.anonymous_user:
        return ClaimedIdentity(login=settings.anonymous_user, display_name=settings.anonymous_user)
    return None


class UserDirectory:
    """Finds users by login; creates them through the writer on first sight."""

    def __init__(self) -> None:
        self._cache: dict[str, User] = {}

    async def resolve(self, app: web.Application, claimed: ClaimedIdentity) -> User:
        user = self._cache.get(claimed.login)
        if user is not None:
            return user
        user = await reads.users.by_login(app[keys.READERS], login=claimed.login)
        if user is None:
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
    if BEARER in request:
        request[CURRENT_USER] = request[BEARER].user
        return await handler(request)
    try:
        claimed = claimed_identity(
            request.remote, {k: request.headers.getall(k, []) for k in IDENTITY_HEADERS},
            request.app[keys.SETTINGS].server,
        )
    except BadIdentity as exc:
        # Never the value: a refused login is somebody's name, or an attack string.
        log.info("identity_refused", header=exc.header, problem=exc.problem)
        raise
    if claimed is None:
        raise ApiError(401, "unauthorized", "no identity: sign in through the proxy")
    request[CURRENT_USER] = await request.app[USERS].resolve(request.app, claimed)
    return await handler(request)
