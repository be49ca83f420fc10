"""The webhook transport over HTTP (aiohttp), guarded against SSRF.

Where the guard sits: in the resolver. `GuardedResolver` wraps aiohttp's
threaded resolver (the system's `getaddrinfo`, so `/etc/hosts` counts) and
answers the connector only when every address of the host passes
`webhook_rules.address_refusal`; the connector then connects to exactly
those addresses, so a name cannot be checked on one lookup and connected on
another (DNS rebinding). A literal address never reaches a resolver in
aiohttp, so `post` checks it itself before the request. The DNS cache is
off (each delivery resolves afresh: a name that moved to a private address
is refused at once), environment proxies are not used (`trust_env` off: a
proxy would connect where the guard never looked), redirects are not
followed, the answer's body is read at most `ANSWER_MAX_BYTES` and thrown
away, and every connection is closed after its answer.

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
from aiohttp.resolver import ThreadedResolver

from transcriber.ports import WebhookAnswer, WebhookUnreachable
from transcriber.webhook_rules import TargetRefused, check_address, parse_target

ANSWER_MAX_BYTES = 64 * 1024
USER_AGENT = "transcriber-webhooks/1"


class GuardedResolver(AbstractResolver):
    """A resolver that answers only addresses a delivery may reach; `TargetRefused`
    for a host with any other (one bad address refuses the whole host)."""

    def __init__(self, inner: AbstractResolver, *, allow_private: bool) -> None:
        self._inner = inner
        self._allow_private = allow_private

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
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
                 resolver: AbstractResolver | None = None) -> None:
        self._allow_private = allow_private
        self._connect_timeout = connect_timeout_seconds
        self._timeout = aiohttp.ClientTimeout(total=request_timeout_seconds,
                                              connect=connect_timeout_seconds)
        self._concurrency = concurrency
        self._inner = resolver
        self._resolver: GuardedResolver | None = None
        self._session: aiohttp.ClientSession | None = None

    def _guarded(self) -> GuardedResolver:
        if self._resolver is None:  # ThreadedResolver needs the running loop
            self._resolver = GuardedResolver(self._inner or ThreadedResolver(),
                                             allow_private=self._allow_private)
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
            async with asyncio.timeout(self._connect_timeout):
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


async def _drain(content: aiohttp.StreamReader) -> None:
    """Read the answer's body, at most `ANSWER_MAX_BYTES` (the rest is never read:
    the connection closes with it)."""
    left = ANSWER_MAX_BYTES
    while left > 0:
        chunk = await content.read(left)
        if not chunk:
            return
        left -= len(chunk)
