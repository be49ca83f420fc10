"""Rate limiting under /app/ over real HTTP, with the fake clock."""

from __future__ import annotations

import ipaddress

import pytest

from tests.helpers.web import Client, StartApi
from transcriber.testing.clock import FakeClock


@pytest.fixture
def engine() -> str:
    """What this module checks is decided at the door, before any storage: it runs on
    the embedded engine only (the API tests that read or write records run on both)."""
    return "sqlite"


async def _statuses(client: Client, n: int, **headers: str) -> list[int]:
    return [(await client.get("/app/me", headers=headers)).status for _ in range(n)]


async def test_budget_per_address_then_429_with_retry_after(
    client: Client, clock: FakeClock
) -> None:
    assert await _statuses(client, 120) == [200] * 120
    response = await client.get("/app/me")
    assert response.status == 429
    assert response.headers["Retry-After"] == "1"
    assert (await response.json())["error"]["code"] == "rate_limited"
    clock.advance(1)
    assert (await client.get("/app/me")).status == 200


async def test_limit_from_settings_and_refill(start_api: StartApi, clock: FakeClock) -> None:
    client = await start_api(server={"rate_limit_requests": 3,
                                     "rate_limit_window_seconds": 30.0})
    assert await _statuses(client, 4) == [200, 200, 200, 429]
    refused = await client.get("/app/audiorecords")
    assert refused.headers["Retry-After"] == "10"
    clock.advance(10)
    assert await _statuses(client, 2) == [200, 429]


async def test_forwarded_clients_behind_a_trusted_proxy_have_own_budgets(
    start_api: StartApi,
) -> None:
    client = await start_api(server={"rate_limit_requests": 2})
    first = {"X-Forwarded-For": "198.51.100.1"}
    second = {"X-Forwarded-For": "203.0.113.5, 198.51.100.2"}
    forged = {"X-Forwarded-For": "198.51.100.2, 198.51.100.1"}  # spoofed left part
    assert await _statuses(client, 2, **first) == [200, 200]
    assert await _statuses(client, 1, **forged) == [429]  # still 198.51.100.1's budget
    assert await _statuses(client, 3, **second) == [200, 200, 429]


async def test_forwarded_for_is_ignored_from_an_untrusted_peer(start_api: StartApi) -> None:
    client = await start_api(server={"rate_limit_requests": 2,
                                     "trusted_proxies": (ipaddress.ip_network("10.0.0.0/8"),)})
    assert await _statuses(client, 1, **{"X-Forwarded-For": "198.51.100.1"}) == [200]
    assert await _statuses(client, 1, **{"X-Forwarded-For": "198.51.100.2"}) == [200]
    assert await _statuses(client, 1, **{"X-Forwarded-For": "198.51.100.3"}) == [429]


async def test_only_app_routes_are_limited(start_api: StartApi) -> None:
    client = await start_api(server={"rate_limit_requests": 1})
    assert await _statuses(client, 2) == [200, 429]
    for path in ("/healthz", "/metrics", "/healthz"):
        assert (await client.get(path)).status == 200


async def test_rate_limit_comes_before_identity(start_api: StartApi) -> None:
    client = await start_api(server={"rate_limit_requests": 1, "anonymous_user": ""})
    assert (await client.get("/app/me")).status == 401
    assert (await client.get("/app/me")).status == 429
