"""A bystander's download while ten webhooks' name lookups hang (docs/hostile-input.md).

The whole app over loopback (aiohttp's test server). Alice registers ten
webhooks whose names never resolve, at once; while every lookup hangs, Bob
uploads once and downloads his file `DOWNLOADS` times. Three resolvers:

- `none stuck`: no registrations (the baseline);
- `c-ares`: the service's resolver pointed at a name server on 127.0.0.1 that
  reads and drops every query (`tests/helpers/silent_dns.py`);
- `threads (as before)`: the old way's cost, emulated — a resolver that blocks
  one thread of the loop's default pool for `BLOCK_SECONDS` per lookup, which
  is what the system's `getaddrinfo` did under aiohttp's threaded resolver
  with a silent name server (glibc: 5 s x 2 tries; the same pool serves the
  file reads of downloads).

Bob's download times (median and max, ms) are printed.

Run: `PYTHONPATH=$PWD python -m pytest -m bench -s -p no:cacheprovider
tests/bench/test_webhook_stall.py`.
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import time

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.test_utils import TestClient, TestServer

from tests.helpers.settings import SettingsFactory
from tests.helpers.silent_dns import SilentNameServer
from transcriber.providers.webhook_http import HttpWebhookTransport, dns_resolver
from transcriber.service.app import build_app
from transcriber.testing.clock import FakeClock
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys

pytestmark = pytest.mark.bench

STUCK = 10
DOWNLOADS = 10
BLOCK_SECONDS = 5.0
BOB = {"Remote-User": "bob"}
AUDIO = b"RIFF....WAVEfmt " + bytes(256 * 1024)


class _BlockingThreads(AbstractResolver):
    """getaddrinfo against a silent name server, as the threaded resolver ran it."""

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        await asyncio.get_running_loop().run_in_executor(None, time.sleep, BLOCK_SECONDS)
        raise OSError("name resolution timed out")

    async def close(self) -> None:
        return None


async def _bob_downloads(make_settings: SettingsFactory, resolver: AbstractResolver | None,
                         silent: SilentNameServer | None) -> list[float]:
    settings = make_settings(pipeline={"workers": 0},
                             server={"rate_limit_requests": 10**9})
    transport = HttpWebhookTransport(
        allow_private=False, connect_timeout_seconds=60.0, request_timeout_seconds=60.0,
        concurrency=8, resolve_timeout_seconds=60.0, resolver=resolver)
    app = build_app(settings, clock=FakeClock(), webhook_transport=transport)
    app[keys.TRANSCODER] = FakeTranscoder(duration_ms=1500)
    async with TestClient(TestServer(app)) as client:
        response = await client.post("/app/audiorecords", data=AUDIO, headers={
            **BOB, "X-Filename": "talk.wav", "Content-Type": "application/octet-stream"})
        assert response.status == 201, await response.text()
        record = (await response.json())["id"]
        names = {f"hook{i}.attacker.example" for i in range(STUCK)}
        registrations = [asyncio.create_task(client.post("/app/webhooks", json={
            "url": f"https://{name}/in", "events": ["record.done"]}))
            for name in (sorted(names) if resolver is not None else [])]
        if silent is not None:
            await silent.asked(names)
        elif registrations:
            await asyncio.sleep(0.2)  # the blocking lookups have taken their threads
        took = []
        for _ in range(DOWNLOADS):
            started = time.perf_counter()
            async with client.get(f"/app/audiorecords/{record}/file", headers=BOB) as got:
                assert got.status == 200
                assert len(await got.read()) == len(AUDIO)
            took.append((time.perf_counter() - started) * 1000)
        if silent is not None:
            silent.release()
        for answer in await asyncio.gather(*registrations):
            assert answer.status == 400
    return took


async def test_a_bystanders_download_while_ten_lookups_hang(
        make_settings: SettingsFactory) -> None:
    silent = SilentNameServer()
    nameserver = await silent.start()
    try:
        results = {
            "none stuck": await _bob_downloads(make_settings, None, None),
            "c-ares, 10 stuck": await _bob_downloads(
                make_settings, dns_resolver(timeout_seconds=60.0, nameservers=[nameserver]),
                silent),
            "threads (as before), 10 stuck": await _bob_downloads(
                make_settings, _BlockingThreads(), None),
        }
    finally:
        silent.close()
    print()
    for name, took in results.items():
        print(f"{name:32} median {statistics.median(took):8.1f} ms   max {max(took):8.1f} ms")
    assert max(results["c-ares, 10 stuck"]) < BLOCK_SECONDS * 1000
