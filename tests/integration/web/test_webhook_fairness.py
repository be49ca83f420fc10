"""Hostile input, round 4 (docs/hostile-input.md): one person's receivers that never
answer must not hold another person's delivery back (head-of-line blocking), and
such a target is backed off and shown failing on its webhook.

The fake transport's `stalled` host is a receiver that never answers: its posts
wait until the test releases them. Nothing here waits on wall-clock time: the
fake clock never moves while Bob's delivery is sent, so it was sent with every
one of Alice's attempts still hanging — no attempt's time at all.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from prometheus_client import REGISTRY

from tests.helpers.followups import webhook_worker
from tests.helpers.pipeline import until
from tests.helpers.tokens import bearer, make_token
from tests.helpers.web import Client, StartApi, halt, upload
from transcriber.testing.clock import FakeClock
from transcriber.testing.webhooks import FakeWebhookTransport

ALICE = {"Remote-User": "alice"}
BOB = {"Remote-User": "bob"}
DEAD, LIVE = "dead.example.net", "live.example.net"
NAMES = {DEAD: ["93.184.216.34"], LIVE: ["93.184.216.35"]}
EVENTS = ["record.halted"]


async def _register(client: Client, url: str, headers: dict[str, str]) -> str:
    response = await client.post("/app/webhooks", json={"url": url, "events": EVENTS},
                                 headers=headers)
    assert response.status == 201, await response.text()
    return str((await response.json())["id"])


async def _halted(client: Client, headers: dict[str, str]) -> None:
    await halt(client, str((await upload(client, headers=headers))["id"]))


def _pauses() -> float:
    return REGISTRY.get_sample_value("transcriber_webhook_target_pauses_total") or 0.0


async def _webhooks(client: Client, headers: dict[str, str]) -> list[dict[str, Any]]:
    items = (await (await client.get("/app/webhooks", headers=headers)).json())["items"]
    assert isinstance(items, list)
    return items


async def test_sixty_deliveries_to_a_dead_receiver_do_not_delay_another_persons(
        start_api: StartApi, clock: FakeClock) -> None:
    transport = FakeWebhookTransport(names=NAMES)
    transport.stalled.add(DEAD)
    client = await start_api(webhook_transport=transport)
    for i in range(10):  # Alice: 10 webhooks x 6 events = 60 deliveries, all older
        await _register(client, f"https://{DEAD}/in/{i}", ALICE)
    for _ in range(6):
        await _halted(client, ALICE)
    await _register(client, f"https://{LIVE}/in", BOB)
    await _halted(client, BOB)
    started = clock.now()

    webhook_worker(client.app).wake()
    await until(lambda: any(LIVE in p.url for p in transport.posts))
    # Bob's went while Alice's hang, with no time passing: no attempt had to end first.
    assert clock.now() == started
    share = 2  # webhooks.per_owner_concurrency's default
    await until(lambda: transport.stalling == share)
    assert len([p for p in transport.posts if DEAD in p.url]) == share  # never more

    async def bob_delivered() -> bool:
        [hook] = await _webhooks(client, BOB)
        items = (await (await client.get(f"/app/webhooks/{hook['id']}/deliveries",
                                         headers=BOB)).json())["items"]
        return [d["status"] for d in items] == ["delivered"]

    await until(bob_delivered)

    # The dead receiver's attempts time out (every later one at once): each of Alice's
    # webhooks is backed off after its first silent try and shows it; with the clock
    # still, none is due again, so her remaining deliveries wait.
    pauses = _pauses()
    transport.release_stalled()
    failing: list[dict[str, Any]] = []

    async def all_failing() -> bool:
        nonlocal failing
        failing = [w for w in await _webhooks(client, ALICE)
                   if w["health"]["state"] == "failing"]
        return len(failing) == 10 and webhook_worker(client.app).in_flight == 0

    await until(all_failing)
    for hook in failing:
        assert hook["health"]["last_error"] == "timeout"
        assert hook["health"]["next_attempt_at"] > hook["created_at"]
    assert await webhook_worker(client.app).round() == 0  # all of Alice's wait out their pause
    dead_posts = len([p for p in transport.posts if DEAD in p.url])
    assert dead_posts < 60
    assert _pauses() - pauses == dead_posts  # counted: one per attempt without an answer
    [bobs] = await _webhooks(client, BOB)
    assert bobs["health"] == {"state": "ok", "last_error": None, "next_attempt_at": None}


async def test_one_target_host_gets_its_share_whoever_owns_the_webhooks(
        start_api: StartApi) -> None:
    """Two people's webhooks at one dead host hold at most the host's share, and a
    third person's delivery to another host still goes."""
    transport = FakeWebhookTransport(names=NAMES)
    transport.stalled.add(DEAD)
    client = await start_api(webhook_transport=transport,
                             webhooks={"per_owner_concurrency": 5,
                                       "per_host_concurrency": 2})
    for who in (ALICE, BOB):
        for i in range(3):
            await _register(client, f"https://{DEAD}/in/{i}", who)
        await _halted(client, who)
    carol = {"Remote-User": "carol"}
    await _register(client, f"https://{LIVE}/in", carol)
    await _halted(client, carol)
    webhook_worker(client.app).wake()
    await until(lambda: any(LIVE in p.url for p in transport.posts))
    await until(lambda: transport.stalling == 2)
    assert len([p for p in transport.posts if DEAD in p.url]) == 2  # the host's share
    transport.release_stalled()


async def test_a_read_token_sees_where_a_webhook_leads_never_its_secret_parts(
        start_api: StartApi) -> None:
    """`GET /app/webhooks` with a `read` token: scheme, host and port only (URLs carry
    receivers' secrets in the userinfo, the query or the path); a `write` token and
    the person through the proxy see the whole URL."""
    client = await start_api(webhook_transport=FakeWebhookTransport(names=NAMES))
    url = f"https://user:pa55@{LIVE}:8443/services/T0/B0/s3cretpath?token=s3cretquery"
    await _register(client, url, ALICE)
    reader = bearer(await make_token(client.app, "alice", scope="read"))
    writer = bearer(await make_token(client.app, "alice", scope="write"))
    response = await client.get("/app/webhooks", headers=reader)
    text = await response.text()
    assert response.status == 200
    for secret in ("pa55", "s3cretpath", "s3cretquery", "user:"):
        assert secret not in text
    [seen] = (await response.json())["items"]
    assert seen["url"] == f"https://{LIVE}:8443/\u2026"
    for whole in (writer, ALICE):
        [full] = await _webhooks(client, whole)
        assert full["url"] == url


async def test_a_try_cut_before_its_answer_is_resent_with_the_same_body(
        start_api: StartApi) -> None:
    """A crash between sending and writing the result (here: the attempt's task cut,
    as a stop or `kill -9` cuts it) while the record changes: the retry carries the
    bytes the cut try sent, under the same delivery id — not a newer card."""
    transport = FakeWebhookTransport(names=NAMES)
    transport.stalled.add(LIVE)
    client = await start_api(webhook_transport=transport)
    await _register(client, f"https://{LIVE}/in", ALICE)
    record = str((await upload(client, headers=ALICE))["id"])
    await halt(client, record)
    webhook_worker(client.app).wake()
    await until(lambda: transport.stalling == 1)
    edited = await client.patch(f"/app/audiorecords/{record}", json={"title": "Renamed"},
                                headers=ALICE)
    assert edited.status == 200
    transport.stalled.clear()  # the receiver is back: the next try is answered
    for task in asyncio.all_tasks():
        if task.get_name() == "webhook-attempt":
            task.cancel()
    await until(lambda: webhook_worker(client.app).in_flight == 0)
    webhook_worker(client.app).wake()  # as the next start's first look would
    await until(lambda: len(transport.posts) == 2)
    first, again = transport.posts
    assert again.body == first.body
    assert again.headers["X-Transcriber-Delivery"] == first.headers["X-Transcriber-Delivery"]
    assert orjson.loads(again.body)["record"]["title"] != "Renamed"
