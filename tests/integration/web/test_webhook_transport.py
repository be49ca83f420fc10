"""The HTTP webhook transport against receivers on 127.0.0.1 (nothing else is ever
contacted): redirects not followed, timeouts, the answer's body read at most
64 KiB, environment proxies ignored, and the address guard applied to
literal addresses and to names before any connection is made."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from tests.helpers.processes import free_port
from transcriber.domain.webhooks import TargetRefused
from transcriber.ports import WebhookUnreachable
from transcriber.providers.webhook_http import (
    ANSWER_MAX_BYTES,
    GuardedResolver,
    HttpWebhookTransport,
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
BODY = b'{"id":"x"}'


class Loopback:
    """A server on 127.0.0.1 with one route per test, counting who it saw."""

    def __init__(self) -> None:
        self.app = web.Application()
        self.hits: list[str] = []
        self.runner: web.AppRunner | None = None
        self.base = ""

    def route(self, path: str, handler: Handler) -> None:
        async def counted(request: web.Request) -> web.StreamResponse:
            self.hits.append(path)
            return await handler(request)

        self.app.router.add_route("*", path, counted)

    async def start(self) -> str:
        self.runner = web.AppRunner(self.app, shutdown_timeout=0.5)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", 0).start()
        self.base = f"http://127.0.0.1:{self.runner.addresses[0][1]}"
        return self.base


@pytest.fixture
async def loopback() -> AsyncIterator[Loopback]:
    server = Loopback()
    yield server
    if server.runner is not None:
        await server.runner.cleanup()


def transport(*, allow_private: bool = True, total: float = 10.0) -> HttpWebhookTransport:
    return HttpWebhookTransport(allow_private=allow_private, connect_timeout_seconds=5.0,
                                request_timeout_seconds=total, concurrency=2)


async def test_a_redirect_is_an_answer_not_followed(loopback: Loopback) -> None:
    async def moved(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound(location="/landing")

    async def landing(request: web.Request) -> web.StreamResponse:
        return web.Response(text="landed")

    loopback.route("/hook", moved)
    loopback.route("/landing", landing)
    base = await loopback.start()
    sender = transport()
    try:
        answer = await sender.post(f"{base}/hook", BODY, {})
    finally:
        await sender.close()
    assert answer.status == 302
    assert loopback.hits == ["/hook"]


async def test_a_receiver_slower_than_the_timeout_is_unreachable(loopback: Loopback) -> None:
    async def slow(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(5)
        return web.Response()

    loopback.route("/hook", slow)
    base = await loopback.start()
    sender = transport(total=0.3)
    try:
        with pytest.raises(WebhookUnreachable) as caught:
            await sender.post(f"{base}/hook", BODY, {})
    finally:
        await sender.close()
    assert caught.value.reason == "timeout"


async def test_nothing_listening_is_unreachable() -> None:
    sender = transport()
    try:
        with pytest.raises(WebhookUnreachable) as caught:
            await sender.post(f"http://127.0.0.1:{free_port()}/hook", BODY, {})
    finally:
        await sender.close()
    assert caught.value.reason == "connect"


async def test_at_most_64_kib_of_the_answer_is_read(loopback: Loopback) -> None:
    written = 0
    total = 64 * 1024 * 1024

    async def endless(request: web.Request) -> web.StreamResponse:
        nonlocal written
        response = web.StreamResponse(status=500)
        response.content_length = total
        await response.prepare(request)
        chunk = b"x" * 65536
        try:
            while written < total:
                await response.write(chunk)
                written += len(chunk)
        except (ConnectionError, RuntimeError):
            pass  # the client closed the connection: it read what it wanted
        return response

    loopback.route("/hook", endless)
    base = await loopback.start()
    sender = transport()
    try:
        answer = await sender.post(f"{base}/hook", BODY, {})
    finally:
        await sender.close()
    await asyncio.sleep(0.2)
    assert answer.status == 500
    # What the kernel buffers beside the 64 KiB read, never the 64 MiB offered.
    assert ANSWER_MAX_BYTES <= written < 16 * 1024 * 1024


async def test_environment_proxies_are_not_used(
        loopback: Loopback, monkeypatch: pytest.MonkeyPatch) -> None:
    async def answer(request: web.Request) -> web.StreamResponse:
        return web.Response(status=204)

    loopback.route("/hook", answer)
    base = await loopback.start()
    proxy = Loopback()
    proxy.route("/{tail:.*}", answer)
    try:
        monkeypatch.setenv("HTTP_PROXY", await proxy.start())
        monkeypatch.setenv("http_proxy", proxy.base)
        sender = transport()
        try:
            assert (await sender.post(f"{base}/hook", BODY, {})).status == 204
        finally:
            await sender.close()
    finally:
        assert proxy.runner is not None
        await proxy.runner.cleanup()
    assert proxy.hits == []
    assert loopback.hits == ["/hook"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::ffff:127.0.0.1]"])
async def test_the_guard_refuses_before_connecting(loopback: Loopback, host: str) -> None:
    async def answer(request: web.Request) -> web.StreamResponse:
        return web.Response()

    loopback.route("/hook", answer)
    base = await loopback.start()
    port = base.rsplit(":", 1)[1]
    sender = transport(allow_private=False)
    try:
        with pytest.raises(TargetRefused) as caught:
            await sender.post(f"http://{host}:{port}/hook", BODY, {})
        with pytest.raises(TargetRefused):
            await sender.check(f"http://{host}:{port}/hook")
    finally:
        await sender.close()
    assert caught.value.reason == "private"
    assert loopback.hits == []


class _Answers(AbstractResolver):
    """A resolver answering a fixed list (no DNS): what the guard is given to judge."""

    def __init__(self, *hosts: str) -> None:
        self.hosts = hosts

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        return [{"hostname": host, "host": h, "port": port, "family": family, "proto": 0,
                 "flags": 0} for h in self.hosts]

    async def close(self) -> None:
        return None


@pytest.mark.parametrize(("hosts", "reason"), [
    (("93.184.216.34", "10.0.0.1"), "private"),  # one bad address refuses the name
    (("169.254.169.254",), "metadata"),
    (("not-an-address",), "unresolvable"),
    ((), "unresolvable"),
])
async def test_every_address_of_a_name_is_judged(hosts: tuple[str, ...], reason: str) -> None:
    guard = GuardedResolver(_Answers(*hosts), allow_private=False)
    with pytest.raises(TargetRefused) as caught:
        await guard.resolve("hooks.example.net", 443, socket.AF_UNSPEC)
    assert caught.value.reason == reason
