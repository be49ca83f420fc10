"""`wyoming.zeroconf`: the Wyoming server announced by mDNS as `_wyoming._tcp.local.`,
found and resolved by a real zeroconf instance on loopback (as Home Assistant's
discovery finds it), answering `describe` at the address and port announced, and
withdrawn (a goodbye) when the server stops."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import secrets

import pytest
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info

from transcriber.settings import WyomingSettings
from transcriber.testing.recognizer import FakeVoiceRecognizer
from transcriber.voice.announce import SERVICE_TYPE, instance_name
from transcriber.voice.server import WyomingServer

zeroconf = pytest.importorskip("zeroconf", reason="pip install 'transcriber[zeroconf]'")
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf  # noqa: E402

pytestmark = pytest.mark.timeout(60)


async def _resolve(name: str, *, wait_ms: int) -> AsyncServiceInfo | None:
    """The instance as a browser on loopback resolves it, or None within `wait_ms`."""
    browser = AsyncZeroconf(interfaces=["127.0.0.1"],
                            ip_version=zeroconf.IPVersion.V4Only)
    try:
        info = AsyncServiceInfo(SERVICE_TYPE, name)
        return info if await info.async_request(browser.zeroconf, wait_ms) else None
    finally:
        await browser.async_close()


async def test_the_server_is_announced_found_answers_and_is_withdrawn() -> None:
    # Unique: the suite's processes share loopback's mDNS group.
    label = f"transcriber-test-{os.getpid()}-{secrets.token_hex(3)}"
    settings = dataclasses.replace(WyomingSettings(enabled=True, port=0), zeroconf=True,
                                   zeroconf_name=label)
    server = WyomingServer(settings, recognizer=FakeVoiceRecognizer(), version="test")
    stopping = asyncio.Event()
    task = asyncio.create_task(server.run(stopping), name="wyoming-zeroconf-test")
    name = f"{label}.{SERVICE_TYPE}"
    try:
        port = await server.bound
        found = await _resolve(name, wait_ms=5000)
        assert found is not None, "the announcement was not found on loopback"
        assert found.port == port
        assert found.parsed_addresses() == ["127.0.0.1"]
        # What was announced is the Wyoming server itself.
        async with AsyncTcpClient(found.parsed_addresses()[0], port) as client:
            await client.write_event(Describe().event())
            answer = await client.read_event()
        assert answer is not None
        assert Info.is_type(answer.type)
    finally:
        stopping.set()
        await task
    assert await _resolve(name, wait_ms=1500) is None, "still announced after the stop"


def test_the_instance_is_named_by_the_setting_or_the_host() -> None:
    assert instance_name(WyomingSettings(), "kitchen.lan") == "transcriber-kitchen"
    assert instance_name(WyomingSettings(zeroconf_name="Office STT"), "x") == "Office STT"
    assert len(instance_name(WyomingSettings(), "h" * 80).encode()) == 63
