"""Bearer tokens: `Authorization: Bearer tx_…` identifies its owner, from any address.

A person's script, phone shortcut or another service reaches the API without
the reverse proxy's login: the token is the proof, so it is believed from
every address, not only from `server.trusted_proxies`, and it wins over
`Remote-User`. A bearer header that is not a valid token (malformed,
unknown, revoked, expired) is 401: never the anonymous user, never the
proxy's login. Other schemes (a proxy's `Basic`) are not ours and are left
alone.

Each presented token is read from the database (one lookup by its hash):
revocation, from the web app or from `transcriber token revoke` in another
process, holds at the very next request; nothing is cached (but whose token it
is, for the rate limit). A refused token counts against its client address's
rate bucket (the valid ones spend their owner's, `ratelimit.rate_key`), so
guessing costs the guesser its budget.
`last_used_at` is written through the writer at most once a minute per token,
without the request waiting for it.
"""

from __future__ import annotations

import asyncio

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler

from transcriber.core.clock import stamp
from transcriber.core.errors import WriterUnavailable
from transcriber.core.observability import TOKEN_CHECKS
from transcriber.db import reads
from transcriber.db.commands.tokens import TouchToken
from transcriber.db.reads.tokens import Bearer
from transcriber.domain.tokens import (
    TOUCH_SECONDS,
    bearer_credentials,
    same_hash,
    scope_allows,
    token_hash,
    well_formed,
)
from transcriber.web import keys
from transcriber.web.errors import OPENAI_PREFIX, ApiError
from transcriber.web.ratelimit import (
    API_PREFIX,
    PUBLIC_PATHS,
    TOKEN_OWNERS,
    address_key,
    charge_once,
    enforce,
    person_key,
    token_digest,
)

log = structlog.get_logger(__name__)

BEARER = web.RequestKey("bearer", Bearer)
_TOUCHED_MAX = 10_000
_REFUSED = "the bearer token is not valid (unknown, revoked or expired)"
CHALLENGE = {"WWW-Authenticate": 'Bearer error="invalid_token"'}


def token_path(path: str) -> bool:
    """The paths a bearer token opens: the archive API and OpenAI's."""
    return (path.startswith((API_PREFIX, OPENAI_PREFIX))) and path not in PUBLIC_PATHS


def presented(request: web.Request) -> str | None:
    """The bearer credentials the request carries, None without a bearer header."""
    return bearer_credentials(request.headers.getall("Authorization", []))


class TokenCheck:
    """Finds the presented token's row; remembers which tokens it touched lately."""

    def __init__(self) -> None:
        self._touched: dict[str, float] = {}

    async def verify(self, app: web.Application, text: str) -> Bearer | str:
        """The stored token, or why it is refused (`malformed`, `unknown`, `expired`)."""
        if not well_formed(text):
            return "malformed"
        digest = token_hash(text)
        found = await reads.tokens.bearer(app[keys.READERS], token_hash=digest)
        if found is None or not same_hash(found.token_hash, digest):
            return "unknown"  # bad, or revoked (its row is gone)
        if found.expires_at is not None and found.expires_at <= stamp(app[keys.CLOCK]):
            return "expired"
        return found

    def touch(self, app: web.Application, found: Bearer) -> None:
        """Queue `last_used_at` when it is a minute old, at most once a minute here."""
        clock = app[keys.CLOCK]
        cutoff = stamp(clock, plus_seconds=-TOUCH_SECONDS)
        if found.last_used_at is not None and found.last_used_at >= cutoff:
            return
        now = clock.monotonic()
        last = self._touched.get(found.token_id)
        if last is not None and now - last < TOUCH_SECONDS:
            return
        if len(self._touched) >= _TOUCHED_MAX:
            self._touched.clear()
        self._touched[found.token_id] = now
        try:
            pending = app[keys.WRITER].submit(
                TouchToken(token_id=found.token_id, every_seconds=TOUCH_SECONDS))
        except WriterUnavailable:
            return  # the service is stopping; the request itself still gets its answer
        pending.add_done_callback(_touched)


def _touched(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("token_touch_failed", error=type(future.exception()).__name__)


TOKEN_CHECK = web.AppKey("token_check", TokenCheck)


@web.middleware
async def bearer_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not token_path(request.path):
        return await handler(request)
    text = presented(request)
    if text is None:
        return await handler(request)
    found = await request.app[TOKEN_CHECK].verify(request.app, text)
    owners = request.app[TOKEN_OWNERS]
    if isinstance(found, str):
        owners.forget(token_digest(text))
        TOKEN_CHECKS.labels(found).inc()
        # Never the token, nor any part of it.
        log.info("token_refused", reason=found)
        # Guesses spend the guesser's address budget (429 once it is gone).
        enforce(request, address_key(request))
        raise ApiError(401, "unauthorized", _REFUSED, headers=CHALLENGE)
    if not scope_allows(found.scope, request.method):
        TOKEN_CHECKS.labels("read_only").inc()
        raise ApiError(403, "forbidden", "this token may only read (its scope is read)")
    # Its owner's bucket (a token seen lately was charged to it before the lookup).
    owners.learn(token_digest(text), found.user.id)
    charge_once(request, person_key(found.user.id))
    TOKEN_CHECKS.labels("ok").inc()
    request[BEARER] = found
    request.app[TOKEN_CHECK].touch(request.app, found)
    return await handler(request)


def setup_bearer(app: web.Application) -> None:
    app[TOKEN_CHECK] = TokenCheck()
