"""Rate limiting under `/app/` and `/v1/`: a token bucket per client address, or
per bearer token for requests that present one (a script behind a shared
address has its own budget; a guessed token's refusal is charged to the
address by `bearer`).

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

from transcriber import keys
from transcriber.clock import Clock
from transcriber.settings import ServerSettings
from transcriber.tokens import bearer_credentials, token_hash
from transcriber.web.addresses import bucket_key, client_address, forwarded_chain
from transcriber.web.errors import OPENAI_PREFIX, ApiError

API_PREFIX = "/app/"


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
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

    def hit(self, key: str) -> Verdict:
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
            return Verdict(allowed=True)
        wait = (1.0 - bucket.tokens) / self._rate
        return Verdict(allowed=False, retry_after_seconds=max(1, math.ceil(wait)))

    def _sweep(self, now: float) -> None:
        # At most a few times per idle period: the sweep is O(buckets).
        if now - self._last_sweep < min(self._idle, 60.0):
            return
        self._last_sweep = now
        stale = [key for key, b in self._buckets.items() if now - b.updated >= self._idle]
        for key in stale:
            del self._buckets[key]


def poll_after_ms(settings: ServerSettings) -> int:
    """How often a card may be polled: its share of the budget, spread over the window."""
    polls_per_window = max(settings.rate_limit_requests * settings.rate_limit_poll_share, 1e-9)
    return math.ceil(settings.rate_limit_window_seconds * 1000 / polls_per_window)


RATE_LIMITER = web.AppKey("rate_limiter", RateLimiter)


def address_key(request: web.Request) -> str:
    """The bucket of the request's client address (behind trusted proxies, the client's)."""
    settings = request.app[keys.SETTINGS].server
    return bucket_key(client_address(
        request.remote, forwarded_chain(request.headers.getall("X-Forwarded-For", [])),
        settings.trusted_proxies,
    ))


def rate_key(request: web.Request) -> str:
    """A bearer request's bucket is its token's (by the token's hash: the token itself
    is checked after this); any other request's, its address's."""
    presented = bearer_credentials(request.headers.getall("Authorization", []))
    if presented:
        return "token:" + token_hash(presented)[:32]
    return address_key(request)


def enforce(request: web.Request, key: str) -> None:
    """Spend one request of bucket `key`; 429 with `Retry-After` when it is empty."""
    verdict = request.app[RATE_LIMITER].hit(key)
    if not verdict.allowed:
        raise ApiError(429, "rate_limited",
                       f"too many requests; retry in {verdict.retry_after_seconds} s",
                       headers={"Retry-After": str(verdict.retry_after_seconds)})


@web.middleware
async def rate_limit_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.path.startswith((API_PREFIX, OPENAI_PREFIX)):
        enforce(request, rate_key(request))
    return await handler(request)
