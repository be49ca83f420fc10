"""Webhook deliveries: the payload and its signature, retries with backoff and
`Retry-After`, 410, the delivery window, deletions, metrics and logs.

The service runs on the fake clock: a test moves time and wakes the delivery
actor instead of sleeping. Deliveries go to the fake transport (no network)
or, for the real HTTP transport, to a receiver on 127.0.0.1 only.
"""

from __future__ import annotations

from typing import Any

import orjson
import structlog

from tests.helpers.followups import webhook_worker
from tests.helpers.pipeline import until
from tests.helpers.web import Client, StartApi, advance, halt, transcribe, upload
from tests.helpers.webhooks import SECRET, Receiver
from transcriber.core.clock import format_time
from transcriber.domain.webhooks import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    verify_signature,
)
from transcriber.ports import WebhookAnswer
from transcriber.testing.clock import FakeClock
from transcriber.testing.webhooks import FakeWebhookTransport

HOST = "hooks.example.net"
URL = f"http://{HOST}/in"  # the fake transport's table: never sent anywhere
NAMES = {HOST: ["93.184.216.34"]}


async def register(client: Client, url: str = URL,
                   events: tuple[str, ...] = ("record.done", "record.halted",
                                              "record.deleted")) -> str:
    response = await client.post("/app/webhooks",
                                 json={"url": url, "events": list(events), "secret": SECRET})
    assert response.status == 201, await response.text()
    webhook_id = (await response.json())["id"]
    assert isinstance(webhook_id, str)
    return webhook_id


async def deliveries(client: Client, webhook_id: str) -> list[dict[str, Any]]:
    response = await client.get(f"/app/webhooks/{webhook_id}/deliveries")
    assert response.status == 200
    items = (await response.json())["items"]
    assert isinstance(items, list)
    return items


async def attempted(client: Client, webhook_id: str, attempts: int) -> dict[str, Any]:
    """Wake the actor and wait until the (one) delivery has had `attempts` attempts."""
    webhook_worker(client.app).wake()

    async def reached() -> bool:
        items = await deliveries(client, webhook_id)
        return bool(items) and items[0]["attempts"] >= attempts

    await until(reached)
    [delivery] = await deliveries(client, webhook_id)
    assert delivery["attempts"] == attempts
    return delivery


async def test_a_delivery_is_the_signed_card_without_the_transcript(
        start_api: StartApi, clock: FakeClock) -> None:
    transport = FakeWebhookTransport(names=NAMES)
    client = await start_api(webhook_transport=transport)
    webhook_id = await register(client, events=("record.done",))
    record = str((await upload(client))["id"])
    await transcribe(client, record)
    await advance(client, record)  # done
    delivery = await attempted(client, webhook_id, 1)
    [posted] = transport.posts
    assert posted.url == URL
    assert posted.headers[EVENT_HEADER] == "record.done"
    assert posted.headers[DELIVERY_HEADER] == delivery["id"]
    assert posted.headers["Content-Type"] == "application/json"
    assert verify_signature(SECRET, posted.headers[SIGNATURE_HEADER], posted.body,
                            now=clock.now().timestamp())
    assert not verify_signature("another-secret-entirely", posted.headers[SIGNATURE_HEADER],
                                posted.body, now=clock.now().timestamp())
    payload = orjson.loads(posted.body)
    card = await (await client.get(f"/app/audiorecords/{record}")).json()
    assert card["transcript"]
    assert card["utterances"]
    del card["transcript"], card["utterances"]
    assert payload == {"id": delivery["id"], "event": "record.done",
                       "created_at": delivery["created_at"], "record": card}
    assert b"quarterly budget" not in posted.body  # the transcript's words stay home
    assert (delivery["status"], delivery["last_status"], delivery["next_attempt_at"]) == (
        "delivered", 200, None)


async def test_a_receiver_on_loopback_answering_500_twice_gets_three_attempts_of_one_id(
        start_api: StartApi, clock: FakeClock) -> None:
    """The real HTTP transport, `allow_private_targets` on, a receiver on 127.0.0.1
    that checks the signature: 500, 500, then 200."""
    receiver = Receiver(answers=[500, 500], now=lambda: clock.now().timestamp())
    url = await receiver.start()
    try:
        client = await start_api(webhooks={"allow_private_targets": True})
        webhook_id = await register(client, url)
        record = str((await upload(client))["id"])
        await halt(client, record)
        started = clock.now()
        first = await attempted(client, webhook_id, 1)
        assert (first["status"], first["last_status"]) == ("pending", 500)
        assert first["next_attempt_at"] == format_time(started.replace(second=1))
        clock.advance(1)
        second = await attempted(client, webhook_id, 2)
        assert second["next_attempt_at"] == format_time(started.replace(second=3))
        clock.advance(2)
        third = await attempted(client, webhook_id, 3)
        assert (third["status"], third["last_status"], third["finished_at"]) == (
            "delivered", 200, format_time(clock.now()))
        got = receiver.received
        assert len(got) == 3
        assert {r.delivery for r in got} == {first["id"]}
        assert all(r.signed for r in got)
        assert {r.body for r in got} == {got[0].body}  # every retry sends the same bytes
        assert {r.event for r in got} == {"record.halted"}
        assert got[0].payload()["record"]["halt"]["reason"] == "step_failed"
    finally:
        await receiver.stop()


async def test_retry_after_longer_than_the_backoff_is_honoured(
        start_api: StartApi, clock: FakeClock) -> None:
    transport = FakeWebhookTransport(
        names=NAMES, answers=[WebhookAnswer(status=503, retry_after="120"),
                              WebhookAnswer(status=429, retry_after="0")])
    client = await start_api(webhook_transport=transport)
    webhook_id = await register(client)
    await halt(client, str((await upload(client))["id"]))
    started = clock.now()
    delivery = await attempted(client, webhook_id, 1)
    assert delivery["next_attempt_at"] == format_time(started.replace(minute=2))
    clock.advance(120)
    delivery = await attempted(client, webhook_id, 2)
    # A shorter Retry-After than the backoff (2 s after two failures) changes nothing.
    assert delivery["next_attempt_at"] == format_time(started.replace(minute=2, second=2))


async def test_a_410_disables_the_webhook_and_ends_what_it_had_pending(
        start_api: StartApi) -> None:
    transport = FakeWebhookTransport(names=NAMES, answers=[410, 410])
    client = await start_api(webhook_transport=transport)
    webhook_id = await register(client)
    await halt(client, str((await upload(client))["id"]))
    await halt(client, str((await upload(client))["id"]))
    webhook_worker(client.app).wake()

    async def all_ended() -> bool:
        return all(d["status"] == "failed" for d in await deliveries(client, webhook_id))

    await until(all_ended)
    [webhook] = (await (await client.get("/app/webhooks")).json())["items"]
    assert webhook["disabled_at"] is not None
    assert webhook["disabled_reason"] == "gone"
    posts = len(transport.posts)
    await halt(client, str((await upload(client))["id"]))
    assert len(await deliveries(client, webhook_id)) == 2  # a disabled webhook gets no more
    assert await webhook_worker(client.app).round() == 0
    assert len(transport.posts) == posts


async def test_a_delivery_failing_past_its_window_is_given_up(
        start_api: StartApi, clock: FakeClock) -> None:
    """A 36-second window: tries at 0, 1, 3, 7, 15 and 31 s; the next (63 s) is past it."""
    transport = FakeWebhookTransport(names=NAMES, answers=[500] * 10)
    client = await start_api(webhook_transport=transport,
                             webhooks={"delivery_window_hours": 0.01})
    webhook_id = await register(client)
    await halt(client, str((await upload(client))["id"]))
    for attempts, wait in enumerate((1, 2, 4, 8, 16), start=1):
        delivery = await attempted(client, webhook_id, attempts)
        assert delivery["status"] == "pending"
        clock.advance(wait)
    delivery = await attempted(client, webhook_id, 6)
    assert (delivery["status"], delivery["last_status"]) == ("failed", 500)
    assert delivery["finished_at"] == format_time(clock.now())
    assert len(transport.posts) == 6


async def test_a_target_that_turned_private_is_refused_at_delivery_and_tried_again(
        start_api: StartApi, clock: FakeClock) -> None:
    transport = FakeWebhookTransport(names=NAMES)
    client = await start_api(webhook_transport=transport)
    webhook_id = await register(client)
    transport.names[HOST] = ["10.9.8.7"]  # DNS changed after the registration
    await halt(client, str((await upload(client))["id"]))
    delivery = await attempted(client, webhook_id, 1)
    assert (delivery["status"], delivery["last_error"], delivery["last_status"]) == (
        "pending", "refused_private", None)
    assert transport.posts == []
    transport.names[HOST] = NAMES[HOST]
    clock.advance(1)
    delivery = await attempted(client, webhook_id, 2)
    assert delivery["status"] == "delivered"


async def test_a_deleted_record_is_sent_as_it_was_known(
        start_api: StartApi) -> None:
    transport = FakeWebhookTransport(names=NAMES)
    client = await start_api(webhook_transport=transport)
    webhook_id = await register(client, events=("record.done", "record.deleted"))
    record = str((await upload(client))["id"])
    edited = await client.patch(f"/app/audiorecords/{record}",
                                json={"title": "Board call", "topics": ["money"]})
    assert edited.status == 200
    await transcribe(client, record)
    await advance(client, record)  # done: written, not yet sent (the actor sleeps)
    assert (await client.delete(f"/app/audiorecords/{record}")).status == 204
    webhook_worker(client.app).wake()
    await until(lambda: len(transport.posts) == 2)
    sent = {p.headers[EVENT_HEADER]: orjson.loads(p.body) for p in transport.posts}
    for event in ("record.done", "record.deleted"):
        known = sent[event]["record"]
        assert (known["id"], known["title"], known["topics"]) == (record, "Board call",
                                                                 ["money"])
        assert "transcript" not in known
        assert "utterances" not in known
    assert sent["record.done"]["record"]["stage"] == "done"
    assert sent["record.deleted"]["record"]["stage"] == "done"

    async def both_written() -> bool:  # the posts came; their results follow
        return {d["status"] for d in await deliveries(client, webhook_id)} == {"delivered"}

    await until(both_written)


async def test_metrics_count_outcomes_and_the_queue(start_api: StartApi) -> None:
    transport = FakeWebhookTransport(names=NAMES, answers=[500])
    client = await start_api(webhook_transport=transport)
    webhook_id = await register(client)
    before = await _metrics(client)
    await halt(client, str((await upload(client))["id"]))
    await attempted(client, webhook_id, 1)
    retried = 'transcriber_webhook_deliveries_total{outcome="retry"}'

    async def counted() -> bool:  # counted once the attempt's result is written
        after = await _metrics(client)
        return (_sample(after, retried) == _sample(before, retried) + 1
                and _sample(after, "transcriber_webhook_queue_depth") == 1)

    await until(counted)


async def _metrics(client: Client) -> str:
    response = await client.get("/metrics")
    assert response.status == 200
    return await response.text()


def _sample(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


async def test_logs_name_the_webhook_never_its_url_or_secret(
        start_api: StartApi, clock: FakeClock) -> None:
    transport = FakeWebhookTransport(names=NAMES, answers=[500, 200])
    client = await start_api(webhook_transport=transport)
    with structlog.testing.capture_logs() as logs:
        webhook_id = await register(client)
        await halt(client, str((await upload(client))["id"]))
        await attempted(client, webhook_id, 1)
        clock.advance(1)
        await attempted(client, webhook_id, 2)
        # Logged once the attempt's result is written.
        await until(lambda: any(e["event"] == "webhook_delivered" for e in logs))
    events = {entry["event"] for entry in logs}
    assert {"webhook_created", "webhook_retry", "webhook_delivered"} <= events
    assert "webhook_round_failed" not in events
    assert all(entry.get("webhook_id") == webhook_id for entry in logs
               if str(entry["event"]).startswith("webhook_"))
    text = repr(logs)
    assert HOST not in text
    assert SECRET not in text
