"""Rate limiting under `/app/` and `/v1/`: a token bucket per client address, or
per PERSON for requests that present a bearer token (a script behind a shared
address has its owner's budget; a guessed token's refusal is charged to the
address by `bearer`). All of a person's tokens share one bucket, so minting
more tokens buys no more requests.

A token's owner is known only after its row is read, and the limit comes
before any work: `TokenOwners` remembers whose each lately seen token is, so
a token seen before is charged to its owner here, before the database; a
token not seen before is charged by `bearer` right after its one lookup
(`charge_once`). Making tokens is itself limited (`TOKEN_CREATIONS`:
`server.token_creations_per_hour` per person), so the lookups of new tokens
are bounded too.

Each address may make `requests` requests per `window` seconds, with bursts
up to the whole budget; a refused request learns when the next one will be
allowed (`Retry-After`). Buckets idle longer than `idle` seconds are
dropped, and the table holds at most `table_max` buckets (the least
recently seen goes first), so neither every address ever seen nor a flood
of distinct `X-Forwarded-For` values from a trusted proxy can grow it. Time
comes from the application clock, so tests drive it with the fake clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aiohttp import web
from aiohttp.typedefs import Handler

from transcriber.core.clock import Clock
from transcriber.domain.tokens import bearer_credentials, token_hash
from transcriber.settings import ServerSettings
from transcriber.web import keys
from transcriber.web.addresses import bucket_key, client_address, forwarded_chain
from transcriber.web.errors import OPENAI_PREFIX, ApiError

API_PREFIX = "/app/"
# Paths under /app/ that anybody may read (the API's own description).
PUBLIC_PATHS = frozenset({"/app/openapi.json"})


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


@dataclass(frozen=True, slots=True, kw_only=True)
class RateVerdict:
    allowed: bool
    retry_after_seconds: int = 0


class RateLimiter:
    def __init__(
        self, *, requests: int, window_seconds: float, idle_seconds: float, clock: Clock,
        table_max: int = 10_000,
    ) -> None:
        self._capacity = float(requests)
        self._rate = requests / window_seconds
        self._idle = idle_seconds
        self._table_max = table_max
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._last_sweep = clock.monotonic()

    @classmethod
    def from_settings(cls, settings: ServerSettings, clock: Clock) -> RateLimiter:
        return cls(requests=settings.rate_limit_requests,
                   window_seconds=settings.rate_limit_window_seconds,
                   idle_seconds=settings.rate_limit_idle_seconds, clock=clock,
                   table_max=settings.rate_limit_table_max)

    @property
    def tracked(self) -> int:
        return len(self._buckets)

    def hit(self, key: str) -> RateVerdict:
        now = self._clock.monotonic()
        self._sweep(now)
        # Popped and put back: the dict's order is least recently seen first.
        bucket = self._buckets.pop(key, None)
        if bucket is None:
            while len(self._buckets) >= self._table_max:
                del self._buckets[next(iter(self._buckets))]
            bucket = _Bucket(tokens=self._capacity, updated=now)
        else:
            elapsed = max(now - bucket.updated, 0.0)
            bucket.tokens = min(self._capacity, bucket.tokens + elapsed * self._rate)
            bucket.updated = now
        self._buckets[key] = bucket
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return RateVerdict(allowed=True)
        wait = (1.0 - bucket.tokens) / self._rate
        return RateVerdict(allowed=False, retry_after_seconds=max(1, math.ceil(wait)))

    def _sweep(self, now: float) -> None:
        # At most a few times per idle period: the sweep is O(buckets).
        if now - self._last_sweep < min(self._idle, 60.0):
            return
        self._last_sweep = now
        stale = [key for key, b in self._buckets.items() if now - b.updated >= self._idle]
        for key in stale:
            del self._buckets[key]


class TokenOwners:
    """Token hash (a prefix of it) → its owner's user id, for the tokens seen lately.

    Bounded (the least recently learned goes first). Only the rate limit reads it:
    whether a token is valid is still read from the database on every request."""

    def __init__(self, most: int = 10_000) -> None:
        self._owners: dict[str, str] = {}
        self._most = most

    def owner(self, digest: str) -> str | None:
        return self._owners.get(digest)

    def learn(self, digest: str, user_id: str) -> None:
        self._owners.pop(digest, None)
        while len(self._owners) >= self._most:
            del self._owners[next(iter(self._owners))]
        self._owners[digest] = user_id

    def forget(self, digest: str) -> None:
        self._owners.pop(digest, None)


RATE_LIMITER = web.AppKey("rate_limiter", RateLimiter)
TOKEN_OWNERS = web.AppKey("token_owners", TokenOwners)
# Tokens made per person: `server.token_creations_per_hour`, bursts up to all of it.
TOKEN_CREATIONS = web.AppKey("token_creations", RateLimiter)
# Set once a request has spent its request of a bucket (`charge_once`).
CHARGED = web.RequestKey("rate_charged", bool)


def setup_rate_limits(app: web.Application) -> None:
    settings, clock = app[keys.SETTINGS].server, app[keys.CLOCK]
    app[RATE_LIMITER] = RateLimiter.from_settings(settings, clock)
    app[TOKEN_OWNERS] = TokenOwners(settings.rate_limit_table_max)
    app[TOKEN_CREATIONS] = RateLimiter(
        requests=settings.token_creations_per_hour, window_seconds=3600.0,
        idle_seconds=3600.0, clock=clock, table_max=settings.rate_limit_table_max)


def address_key(request: web.Request) -> str:
    """The bucket of the request's client address (behind trusted proxies, the client's)."""
    settings = request.app[keys.SETTINGS].server
    return bucket_key(client_address(
        request.remote, forwarded_chain(request.headers.getall("X-Forwarded-For", [])),
        settings.trusted_proxies,
    ))


def person_key(user_id: str) -> str:
    """The bucket every token of one person spends."""
    return "person:" + user_id


def token_digest(text: str) -> str:
    """What `TokenOwners` knows a token by."""
    return token_hash(text)[:32]


def rate_key(request: web.Request) -> str | None:
    """A bearer request's bucket is its owner's, when the token was seen lately; None
    when it was not (`bearer` charges the owner after the lookup). Any other
    request's bucket is its address's, and so is that of a bearer request on a
    public path (no token is read there)."""
    presented = bearer_credentials(request.headers.getall("Authorization", []))
    if not presented or request.path in PUBLIC_PATHS:
        return address_key(request)
    owner = request.app[TOKEN_OWNERS].owner(token_digest(presented))
    return None if owner is None else person_key(owner)


def enforce(request: web.Request, key: str) -> None:
    """Spend one request of bucket `key`; 429 with `Retry-After` when it is empty."""
    verdict = request.app[RATE_LIMITER].hit(key)
    if not verdict.allowed:
        raise ApiError(429, "rate_limited",
                       f"too many requests; retry in {verdict.retry_after_seconds} s",
                       headers={"Retry-After": str(verdict.retry_after_seconds)})


def charge_once(request: web.Request, key: str) -> None:
    """`enforce`, unless this request has spent its request already."""
    if request.get(CHARGED):
        return
    request[CHARGED] = True
    enforce(request, key)


@web.middleware
async def rate_limit_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.path.startswith((API_PREFIX, OPENAI_PREFIX)):
        key = rate_key(request)
        if key is not None:
            charge_once(request, key)
    return await handler(request)
