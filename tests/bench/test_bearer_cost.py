"""What a bearer token costs a request: `GET /app/me` with a token against the proxy's login.

The whole app over real HTTP on loopback (aiohttp's test server, one
client), the same user either way: `Remote-User` from the trusted proxy
(found in the user directory's cache after the first request) or
`Authorization: Bearer tx_…` (hashed and looked up in `api_tokens` on every
request, so a revocation holds at once). Rounds alternate between the two;
the medians per request are printed for docs/api.md, "Tokens". It also checks
that using a token all the while writes `last_used_at` once, not per request.

Run: `PYTHONPATH=$PWD python -m pytest -m bench -s -p no:cacheprovider
tests/bench/test_bearer_cost.py`.
"""

from __future__ import annotations

import statistics
import time

import pytest
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client import REGISTRY

from tests.helpers.settings import SettingsFactory
from tests.helpers.tokens import bearer, make_token
from transcriber.service.app import build_app
from transcriber.testing.clock import FakeClock

pytestmark = pytest.mark.bench

ROUNDS = 15
PER_ROUND = 200


def _touches() -> float:
    return REGISTRY.get_sample_value("transcriber_writer_commands_total",
                                     {"command": "touch_token", "outcome": "ok"}) or 0.0


async def test_a_bearer_request_against_a_proxy_login(make_settings: SettingsFactory) -> None:
    settings = make_settings(pipeline={"workers": 0},
                             server={"rate_limit_requests": 10**9})
    app = build_app(settings, clock=FakeClock())
    async with TestClient(TestServer(app)) as client:
        token = await make_token(app, "alice")
        ways = {"Remote-User (trusted proxy)": {"Remote-User": "alice"},
                "Authorization: Bearer": bearer(token)}
        touched_before = _touches()
        samples: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(ROUNDS):
            for name, headers in ways.items():
                started = time.perf_counter()
                for _ in range(PER_ROUND):
                    async with client.get("/app/me", headers=headers) as response:
                        assert response.status == 200
                        await response.read()
                samples[name].append((time.perf_counter() - started) * 1000 / PER_ROUND)
        touches = _touches() - touched_before
    medians = {name: statistics.median(values) for name, values in samples.items()}
    print()
    for name, value in medians.items():
        print(f"| {name} | {value:.3f} ms |")
    extra = medians["Authorization: Bearer"] - medians["Remote-User (trusted proxy)"]
    print(f"| the token's own cost | {extra:.3f} ms |")
    assert touches <= 1  # the clock stood still: one last_used_at write, not thousands
