"""`/metrics` only for `server.metrics_allowed`, and cheap: a scrape flood runs
one round of count queries per refresh period, not one per scrape."""

from __future__ import annotations

import asyncio
from collections import Counter
from ipaddress import ip_network
from typing import Any

import pytest

from tests.helpers.web import Client, StartApi, upload
from transcriber.db import queries as q
from transcriber.testing.clock import FakeClock
from transcriber.web import keys
from transcriber.web.ops import METRICS_REFRESH_SECONDS

COUNTS = {q.records.COUNT_BY_STAGE: "by_stage", q.records.COUNT_BY_HALT_REASON: "halted",
          q.records.OLDEST_IN_STAGE: "oldest"}


async def test_metrics_are_refused_outside_metrics_allowed(start_api: StartApi) -> None:
    client = await start_api(server={"metrics_allowed": (ip_network("10.0.0.0/8"),)})
    response = await client.get("/metrics")
    assert response.status == 403
    body = await response.json()
    assert body["error"]["code"] == "forbidden"
    assert "transcriber_" not in str(body)


@pytest.mark.parametrize(("forwarded_for", "status"), [
    (None, 200),  # loopback itself
    ("127.0.0.1", 200),
    ("203.0.113.5", 403),  # a client of the proxy on loopback
    ("203.0.113.5, 127.0.0.1", 403),
])
async def test_the_client_behind_a_trusted_proxy_is_who_is_asked_about(
    client: Client, forwarded_for: str | None, status: int
) -> None:
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    response = await client.get("/metrics", headers=headers)
    assert response.status == status


def _count_queries(client: Client, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    seen: Counter[str] = Counter()
    readers = client.app[keys.READERS]
    for name in ("fetch_all", "fetch_one"):
        original = getattr(readers, name)

        async def spy(sql: str, params: Any = None, *, _original: Any = original) -> Any:
            if sql in COUNTS:
                seen[COUNTS[sql]] += 1
            return await _original(sql, params)

        monkeypatch.setattr(readers, name, spy)
    return seen


async def test_a_scrape_flood_runs_one_round_of_counts_per_period(
    client: Client, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    await upload(client)
    seen = _count_queries(client, monkeypatch)
    answers = await asyncio.gather(*(client.get("/metrics") for _ in range(50)))
    assert {a.status for a in answers} == {200}
    for _ in range(50):
        assert (await client.get("/metrics")).status == 200
    assert seen["by_stage"] == 1
    assert seen["halted"] == 1
    rounds_of_oldest = seen["oldest"]
    clock.advance(METRICS_REFRESH_SECONDS - 0.5)
    await client.get("/metrics")
    assert seen["by_stage"] == 1
    clock.advance(1)
    metrics = await (await client.get("/metrics")).text()
    assert seen["by_stage"] == 2
    assert seen["oldest"] == 2 * rounds_of_oldest
    assert 'transcriber_records{stage="uploaded"} 1.0' in metrics


async def test_refused_scrapes_run_no_query(
    start_api: StartApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await start_api(server={"metrics_allowed": (ip_network("10.0.0.0/8"),)})
    seen = _count_queries(client, monkeypatch)
    for _ in range(20):
        assert (await client.get("/metrics")).status == 403
    assert sum(seen.values()) == 0
