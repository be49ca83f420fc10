"""The webhook transport port: how a delivery reaches a person's receiver.

The adapter is `transcriber.providers.webhook_http` (aiohttp, with the address
guard of `transcriber.domain.webhooks` applied to every address it connects
to); the fake that answers from a script and never touches the network is
`transcriber.testing.webhooks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from transcriber.core.errors import TranscriberError


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookAnswer:
    """The receiver's answer: its status and, when it sent one, its `Retry-After`."""

    status: int
    retry_after: str | None = None


class WebhookUnreachable(TranscriberError):
    """No answer came (refused or reset connection, DNS, TLS, timeout); tried again.

    `reason` is a short word for the log and the delivery row, never a URL."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WebhookTransport(Protocol):
    async def check(self, url: str) -> None:
        """At registration: parse the URL, resolve its host and check every
        address; raise `webhooks.TargetRefused` when any may not be reached."""

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> WebhookAnswer:
        """One POST, redirects not followed, to checked addresses only.

        Raises `TargetRefused` (an address the rules refuse: it is tried again
        later, DNS may change) or `WebhookUnreachable`."""

    async def close(self) -> None:
        """Release the connections."""
