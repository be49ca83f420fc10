"""The webhook transport over HTTP (aiohttp), guarded against SSRF.

Where the guard sits: in the resolver. `GuardedResolver` wraps aiohttp's
asynchronous resolver (c-ares through aiodns; it reads `/etc/hosts` and
`/etc/resolv.conf` as the system's `getaddrinfo` does) and answers the
connector only when every address of the host passes
`webhooks.address_refusal`; the connector then connects to exactly
those addresses, so a name cannot be checked on one lookup and connected on
another (DNS rebinding). A literal address never reaches a resolver in
aiohttp, so `post` checks it itself before the request. The DNS cache is
off (each delivery resolves afresh: a name that moved to a private address
is refused at once), environment proxies are not used (`trust_env` off: a
proxy would connect where the guard never looked), redirects are not
followed, the answer's body is read at most `ANSWER_MAX_BYTES` and thrown
away, and every connection is closed after its answer.

Why c-ares and not the system's `getaddrinfo`: `getaddrinfo` blocks, so
aiohttp's threaded resolver runs it on the event loop's default thread pool
(a handful of threads the whole process shares: file reads of downloads and
uploads run there too), and a name whose name server never answers holds a
thread ~10 s (glibc: 5 s x 2 tries) whatever timeout the caller sets: a
timeout abandons the wait, not the thread. Ten such webhooks made another
person's downloads take 10-20 s (docs/hostile-input.md). c-ares runs the
lookup on the loop itself; `resolve_timeout_seconds` bounds the lookup (one
c-ares try of that length, and the same deadline around the call, which
cancels the query itself), and a name that does not resolve in time is
`WebhookUnreachable("dns")` for a delivery, `TargetRefused("unresolvable")`
at registration.

Why a resolver rather than a socket-level check: aiohttp asks the resolver
for every connection it opens and connects to what it answers, which is
the one point where the addresses are known and not yet used; a check of
the URL before the request would resolve the name twice.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Mapping

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import AsyncResolver

from transcriber.domain.webhooks import TargetRefused, check_address, parse_target
from transcriber.ports import WebhookAnswer, WebhookUnreachable

ANSWER_MAX_BYTES = 64 * 1024
USER_AGENT = "transcriber-webhooks/1"


class GuardedResolver(AbstractResolver):
    """A resolver that answers only addresses a delivery may reach; `TargetRefused`
    for a host with any other (one bad address refuses the whole host)."""

    def __init__(self, inner: AbstractResolver, *, allow_private: bool,
                 timeout_seconds: float | None = None) -> None:
        self._inner = inner
        self._allow_private = allow_private
        self._timeout = timeout_seconds

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        try:
            async with asyncio.timeout(self._timeout):  # cancels the lookup itself
                results = await self._inner.resolve(host, port, family)
        except TimeoutError:
            raise OSError("name resolution timed out") from None
        if not results:
            raise TargetRefused("unresolvable")
        for result in results:
            try:
                address = ipaddress.ip_address(result["host"])
            except ValueError:  # not an address we can judge: not one we connect to
                raise TargetRefused("unresolvable") from None
            check_address(address, allow_private=self._allow_private)
        return results

    async def close(self) -> None:
        await self._inner.close()


class HttpWebhookTransport:
    def __init__(self, *, allow_private: bool, connect_timeout_seconds: float,
                 request_timeout_seconds: float, concurrency: int,
                 resolve_timeout_seconds: float | None = None,
                 resolver: AbstractResolver | None = None) -> None:
        """`resolver` replaces c-ares (tests: one pointed at their own name server,
        `dns_resolver`); there is no setting for it."""
        self._allow_private = allow_private
        self._connect_timeout = connect_timeout_seconds
        self._resolve_timeout = (connect_timeout_seconds if resolve_timeout_seconds is None
                                 else resolve_timeout_seconds)
        self._timeout = aiohttp.ClientTimeout(total=request_timeout_seconds,
                                              connect=connect_timeout_seconds)
        self._concurrency = concurrency
        self._inner = resolver
        self._resolver: GuardedResolver | None = None
        self._session: aiohttp.ClientSession | None = None

    def _guarded(self) -> GuardedResolver:
        if self._resolver is None:  # the c-ares channel needs the running loop
            inner = self._inner or dns_resolver(timeout_seconds=self._resolve_timeout)
            self._resolver = GuardedResolver(inner, allow_private=self._allow_private,
                                             timeout_seconds=self._resolve_timeout)
        return self._resolver

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(
                resolver=self._guarded(), use_dns_cache=False, force_close=True,
                limit=self._concurrency)
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=self._timeout, trust_env=False,
                auto_decompress=False, headers={"User-Agent": USER_AGENT})
        return self._session

    async def check(self, url: str) -> None:
        target = parse_target(url)
        if target.address is not None:
            check_address(target.address, allow_private=self._allow_private)
            return
        try:
            await self._guarded().resolve(target.host, target.port, socket.AF_UNSPEC)
        except (OSError, TimeoutError):
            raise TargetRefused("unresolvable") from None

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> WebhookAnswer:
        target = parse_target(url)
        if target.address is not None:
            check_address(target.address, allow_private=self._allow_private)
        try:
            async with self._client().post(url, data=body, headers=dict(headers),
                                           allow_redirects=False) as response:
                await _drain(response.content)
                return WebhookAnswer(status=response.status,
                                     retry_after=response.headers.get("Retry-After"))
        except TargetRefused:
            raise
        except TimeoutError:
            raise WebhookUnreachable("timeout") from None
        except aiohttp.ClientConnectorDNSError:
            raise WebhookUnreachable("dns") from None
        except aiohttp.ClientSSLError:
            raise WebhookUnreachable("tls") from None
        except aiohttp.ClientConnectorError:
            raise WebhookUnreachable("connect") from None
        except (aiohttp.ClientError, OSError):
            raise WebhookUnreachable("http") from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()  # the connector does not own the resolver
        if self._resolver is not None:
            await self._resolver.close()


def resolves_without_threads() -> bool:
    """Whether aiohttp's default resolver — the one of every outbound session that
    names none: SpeechKit, the describer, the bot, the object store — is c-ares,
    not the system's `getaddrinfo` on the loop's shared thread pool (it is when
    aiodns, a dependency, is installed)."""
    return aiohttp.resolver.DefaultResolver is AsyncResolver


def dns_resolver(*, timeout_seconds: float,
                 nameservers: list[str] | None = None) -> AsyncResolver:
    """c-ares with one try of `timeout_seconds` per server; the system's name servers
    unless `nameservers` ("127.0.0.1:5353": tests only, through `resolver`)."""
    if nameservers is None:
        return AsyncResolver(timeout=timeout_seconds, tries=1)
    return AsyncResolver(nameservers=nameservers, timeout=timeout_seconds, tries=1)


async def _drain(content: aiohttp.StreamReader) -> None:
    """Read the answer's body, at most `ANSWER_MAX_BYTES` (the rest is never read:
    the connection closes with it)."""
    left = ANSWER_MAX_BYTES
    while left > 0:
        chunk = await content.read(left)
        if not chunk:
            return
        left -= len(chunk)
