"""A webhook receiver for tests: an aiohttp server on 127.0.0.1 only.

Deliveries in tests go nowhere else. The receiver checks each delivery's
signature with the receiver's own code (`webhooks.verify_signature`,
the function docs/api.md shows), answers from a script (a status, or a
status with a `Retry-After`), then 200, and keeps what it got.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from transcriber.domain.webhooks import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    verify_signature,
)

LOOPBACK = "127.0.0.1"
SECRET = "test-secret-0123456789"


@dataclass(frozen=True, slots=True, kw_only=True)
class Received:
    event: str
    delivery: str
    signature: str
    body: bytes
    signed: bool
    """The signature checked out with the receiver's secret."""

    def payload(self) -> dict[str, Any]:
        data = orjson.loads(self.body)
        assert isinstance(data, dict)
        return data


Answer = int | tuple[int, str]
"""A status, or (status, Retry-After)."""


class Receiver:
    def __init__(self, *, secret: str = SECRET, answers: Iterable[Answer] = (),
                 now: Callable[[], float] | None = None) -> None:
        self.secret = secret
        self.answers = list(answers)
        self.received: list[Received] = []
        self.before_answer: Callable[[Received], Awaitable[None]] | None = None
        self._now = now
        self._arrived = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/hook", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, LOOPBACK, 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://{LOOPBACK}:{port}/hook"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        signature = request.headers.get(SIGNATURE_HEADER, "")
        got = Received(
            event=request.headers.get(EVENT_HEADER, ""),
            delivery=request.headers.get(DELIVERY_HEADER, ""),
            signature=signature, body=body,
            signed=verify_signature(self.secret, signature, body,
                                    now=self._now() if self._now else None))
        async with self._arrived:
            self.received.append(got)
            self._arrived.notify_all()
        if self.before_answer is not None:
            await self.before_answer(got)
        answer = self.answers.pop(0) if self.answers else 200
        status, retry_after = answer if isinstance(answer, tuple) else (answer, None)
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return web.Response(status=status, headers=headers, text="noted")

    async def wait_for(self, count: int, *, within: float = 20.0) -> list[Received]:
        async with asyncio.timeout(within), self._arrived:
            await self._arrived.wait_for(lambda: len(self.received) >= count)
        return list(self.received)
