"""A webhook transport that never touches the network.

Names resolve from a table (`names`; any other is unresolvable), addresses
pass the real rules (`domain.webhooks`), and a post is recorded and answered
from a script (`answers`: a status, a `WebhookAnswer`, or an exception to
raise), then 200 once the script is used up. A post to a host of `stalled`
is a receiver that never answers: it waits until `release_stalled`, then
fails as a timeout would (`stalling` counts those waiting). Tests that must never send
anything anywhere (the schemathesis run) use it; tests of the real HTTP
transport use receivers on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from transcriber.domain.webhooks import TargetRefused, check_address, parse_target
from transcriber.ports import WebhookAnswer, WebhookUnreachable


@dataclass(frozen=True, slots=True, kw_only=True)
class Posted:
    url: str
    body: bytes
    headers: Mapping[str, str]


class FakeWebhookTransport:
    def __init__(self, *, names: Mapping[str, Sequence[str]] | None = None,
                 allow_private: bool = False,
                 answers: Iterable[int | WebhookAnswer | Exception] = ()) -> None:
        self.names = dict(names or {})
        self.allow_private = allow_private
        self.answers = list(answers)
        self.posts: list[Posted] = []
        self.closed = False
        self.stalled: set[str] = set()
        self.stalling = 0
        self._released = asyncio.Event()

    def release_stalled(self) -> None:
        self._released.set()

    def _check(self, url: str) -> None:
        target = parse_target(url)
        addresses = ([str(target.address)] if target.address is not None
                     else self.names.get(target.host, []))
        if not addresses:
            raise TargetRefused("unresolvable")
        for address in addresses:
            check_address(ipaddress.ip_address(address), allow_private=self.allow_private)

    async def check(self, url: str) -> None:
        self._check(url)

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> WebhookAnswer:
        self._check(url)
        self.posts.append(Posted(url=url, body=body, headers=dict(headers)))
        if parse_target(url).host in self.stalled:
            self.stalling += 1
            try:
                await self._released.wait()
            finally:
                self.stalling -= 1
            raise WebhookUnreachable("timeout")
        answer = self.answers.pop(0) if self.answers else 200
        if isinstance(answer, Exception):
            raise answer
        return answer if isinstance(answer, WebhookAnswer) else WebhookAnswer(status=answer)

    async def close(self) -> None:
        self.closed = True
