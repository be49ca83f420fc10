"""Hostile input, round 4 (docs/hostile-input.md): a webhook whose name server never
answers must not stall the service.

The resolver is pointed at `SilentNameServer` on 127.0.0.1 (injected into the
transport: there is no setting for it), which reads every query and answers
none until the test releases it. Nothing leaves loopback. Time plays no part
in the assertions: the bystander's download is answered while every lookup is
still held by the silent server (the deadline is far away), and only then are
the lookups let go.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.helpers.silent_dns import SilentNameServer
from tests.helpers.web import Client, StartApi, upload
from transcriber.domain.webhooks import TargetRefused
from transcriber.ports import WebhookUnreachable
from transcriber.providers.webhook_http import (
    HttpWebhookTransport,
    dns_resolver,
    resolves_without_threads,
)

STUCK = 10
BOB = {"Remote-User": "bob"}


@pytest.fixture
async def silent() -> AsyncIterator[SilentNameServer]:
    server = SilentNameServer()
    yield server
    server.release()
    server.close()


def guarded(nameserver: str, *, resolve_timeout: float) -> HttpWebhookTransport:
    return HttpWebhookTransport(
        allow_private=False, connect_timeout_seconds=5.0, request_timeout_seconds=10.0,
        concurrency=4, resolve_timeout_seconds=resolve_timeout,
        resolver=dns_resolver(timeout_seconds=resolve_timeout, nameservers=[nameserver]))


async def test_a_silent_name_server_fails_fast_and_borrows_no_thread(
        silent: SilentNameServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lookup ends at its own deadline (not at the caller's), as `dns` for a
    delivery and `unresolvable` at registration, and the loop's default thread pool
    is never asked for anything."""
    loop = asyncio.get_running_loop()
    borrowed: list[Any] = []
    real = loop.run_in_executor

    def recording(executor: Any, func: Any, *args: Any) -> Any:
        borrowed.append((executor, func))
        return real(executor, func, *args)

    monkeypatch.setattr(loop, "run_in_executor", recording)
    sender = guarded(await silent.start(), resolve_timeout=0.2)
    try:
        with pytest.raises(WebhookUnreachable) as caught:
            await sender.post("http://hooks.example.net/in", b"{}", {})
        assert caught.value.reason == "dns"
        with pytest.raises(TargetRefused) as refused:
            await sender.check("https://other.example.net/in")
        assert refused.value.reason == "unresolvable"
    finally:
        await sender.close()
    assert {"hooks.example.net", "other.example.net"} <= silent.names
    assert [b for b in borrowed if b[0] is None] == []


async def test_ten_stuck_webhooks_leave_another_persons_download_alone(
        start_api: StartApi, silent: SilentNameServer) -> None:
    """The attack: ten registrations whose names never resolve are in flight (each
    lookup held by the silent server, far from its deadline) while another person
    uploads and downloads. Before: each lookup held one of the loop's 6 shared
    threads, which the file reads of downloads need too (9.7-19.5 s a download)."""
    transport = guarded(await silent.start(), resolve_timeout=120.0)
    client = await start_api(webhook_transport=transport)
    names = {f"hook{i}.attacker.example" for i in range(STUCK)}

    async def register(name: str) -> int:
        response = await client.post("/app/webhooks", json={
            "url": f"https://{name}/in", "events": ["record.done"]})
        return response.status

    registrations = [asyncio.create_task(register(name)) for name in sorted(names)]
    await silent.asked(names)  # every lookup is now held by the silent server

    bystander = await _upload_and_download(client)
    assert bystander == b"RIFF....WAVEfmt fake audio bytes"
    assert not any(task.done() for task in registrations)  # still stuck meanwhile

    silent.release()  # NXDOMAIN for all: the lookups end, the registrations are refused
    assert await asyncio.gather(*registrations) == [400] * STUCK


async def _upload_and_download(client: Client) -> bytes:
    record = await upload(client, headers=BOB)
    response = await client.get(f"/app/audiorecords/{record['id']}/file", headers=BOB)
    assert response.status == 200, await response.text()
    return await response.read()


def test_every_outbound_aiohttp_session_resolves_with_c_ares() -> None:
    """SpeechKit, the describer, the Telegram bot (aiogram) and the object store
    (aiobotocore) make their sessions with aiohttp's default resolver: with aiodns
    installed (a dependency) that is c-ares, so none of them borrows the shared
    thread pool for a lookup either."""
    assert resolves_without_threads()  # what `serve` checks at its start
