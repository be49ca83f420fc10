"""The webhook routes: registration (and its SSRF refusals), the list, deletion,
the deliveries, owner scope, and the delivery rows each event writes.

NO TRAFFIC LEAVES LOOPBACK: the refusal tests only read the registration's
answer (with the real transport: literal addresses and `localhost`, which
resolves from /etc/hosts) and trigger no event; anything wrongly accepted is
deleted at once. Every other test injects the fake transport, which never
touches the network.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import ClientResponse

from tests.helpers.followups import webhook_worker
from tests.helpers.web import Client, StartApi, advance, halt, transcribe, upload
from transcriber.db.writer import WriteContext
from transcriber.testing.clock import FakeClock
from transcriber.testing.webhooks import FakeWebhookTransport

ALL_EVENTS = ["record.done", "record.halted", "record.deleted"]
PUBLIC = "http://hooks.example.net/in"  # resolved by the fake transport's table; never sent to
NAMES = {"hooks.example.net": ["93.184.216.34"], "inside.example.net": ["10.1.2.3"],
         "twofaced.example.net": ["93.184.216.35", "192.168.1.9"]}
SECRET = "s3cret-s3cret-s3cret"
BOB = {"Remote-User": "bob"}


def fake() -> FakeWebhookTransport:
    return FakeWebhookTransport(names=NAMES)


async def register(client: Client, url: str = PUBLIC, events: list[str] | None = None,
                   headers: dict[str, str] | None = None, **extra: Any) -> ClientResponse:
    return await client.post("/app/webhooks", json={
        "url": url, "events": ALL_EVENTS if events is None else events, **extra},
        headers=headers)


async def created(client: Client, **kwargs: Any) -> dict[str, Any]:
    response = await register(client, **kwargs)
    assert response.status == 201, await response.text()
    body = await response.json()
    assert isinstance(body, dict)
    return body


async def deliveries(client: Client, webhook_id: str,
                     headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    response = await client.get(f"/app/webhooks/{webhook_id}/deliveries", headers=headers)
    assert response.status == 200
    items = (await response.json())["items"]
    assert isinstance(items, list)
    return items


async def test_a_webhook_is_registered_listed_and_deleted(start_api: StartApi) -> None:
    client = await start_api(webhook_transport=fake())
    made = await created(client, events=["record.done", "record.done"])
    assert made["secret"].startswith("whsec_")
    assert len(made["secret"]) >= 40
    assert made["events"] == ["record.done"]
    assert (made["url"], made["disabled_at"]) == (PUBLIC, None)
    given = await created(client, secret=SECRET)
    assert given["secret"] == SECRET
    listed = (await (await client.get("/app/webhooks")).json())["items"]
    assert [w["id"] for w in listed] == [made["id"], given["id"]]
    assert all("secret" not in w for w in listed)
    assert await deliveries(client, made["id"]) == []
    assert (await client.delete(f"/app/webhooks/{made['id']}")).status == 204
    assert (await client.delete(f"/app/webhooks/{made['id']}")).status == 404
    assert (await client.get(f"/app/webhooks/{made['id']}/deliveries")).status == 404
    assert (await client.delete("/app/webhooks/not-an-id")).status == 404


async def test_another_persons_webhook_is_not_found(start_api: StartApi) -> None:
    client = await start_api(webhook_transport=fake())
    mine = await created(client)
    theirs = await created(client, headers=BOB)
    assert [w["id"] for w in (await (await client.get("/app/webhooks")).json())["items"]] == [
        mine["id"]]
    assert (await client.get(f"/app/webhooks/{theirs['id']}/deliveries")).status == 404
    assert (await client.delete(f"/app/webhooks/{theirs['id']}")).status == 404
    listed = await (await client.get("/app/webhooks", headers=BOB)).json()
    assert [w["id"] for w in listed["items"]] == [theirs["id"]]


@pytest.mark.parametrize("body", [
    {"events": ALL_EVENTS},
    {"url": PUBLIC},
    {"url": PUBLIC, "events": []},
    {"url": PUBLIC, "events": ["record.created"]},
    {"url": PUBLIC, "events": "record.done"},
    {"url": 7, "events": ALL_EVENTS},
    {"url": PUBLIC, "events": ALL_EVENTS, "secret": "short"},
    {"url": PUBLIC, "events": ALL_EVENTS, "secret": "with a space inside it"},
    {"url": PUBLIC, "events": ALL_EVENTS, "colour": "red"},
    {"url": "ftp://hooks.example.net/in", "events": ALL_EVENTS},
    {"url": "hooks.example.net/in", "events": ALL_EVENTS},
    {"url": "http://", "events": ALL_EVENTS},
    {"url": "http://unknown.example.net/", "events": ALL_EVENTS},
    {"url": "http://inside.example.net/", "events": ALL_EVENTS},
    {"url": "http://twofaced.example.net/", "events": ALL_EVENTS},
    {"url": "http://" + "a" * 2050 + ".net/", "events": ALL_EVENTS},
    [PUBLIC],
])
async def test_a_bad_registration_is_a_400_and_stores_nothing(
        start_api: StartApi, body: object) -> None:
    client = await start_api(webhook_transport=fake())
    response = await client.post("/app/webhooks", json=body)
    assert response.status == 400, await response.text()
    assert (await response.json())["error"]["code"] in {"bad_request", "target_refused"}
    assert (await (await client.get("/app/webhooks")).json())["items"] == []


REFUSED_WITHOUT_THE_SETTING = [
    "http://127.0.0.1/", "http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/",
    "http://localhost/", "http://localhost:8080/hook", "http://[::1]/", "http://192.168.0.10/",
    "http://172.16.5.4/", "http://100.64.0.1/", "http://[fd00:ec2::254]/", "http://[fe80::1]/",
    "http://[::ffff:127.0.0.1]/", "http://0.0.0.0/", "http://224.0.0.1/",
    "https://127.0.0.1:8443/", "http://127.1/", "http://2130706433/",
]


@pytest.mark.parametrize("url", REFUSED_WITHOUT_THE_SETTING)
async def test_private_and_metadata_targets_are_refused_at_registration(
        start_api: StartApi, url: str) -> None:
    """The real transport (as `serve` has it). Nothing here is ever sent: no record
    exists, no event happens, and a wrongly accepted webhook is deleted at once."""
    client = await start_api()
    response = await register(client, url)
    if response.status == 201:
        await client.delete(f"/app/webhooks/{(await response.json())['id']}")
    assert response.status == 400
    assert (await response.json())["error"]["code"] == "target_refused"
    assert (await (await client.get("/app/webhooks")).json())["items"] == []


@pytest.mark.parametrize(("url", "status"), [
    ("http://127.0.0.1:9/hook", 201), ("http://localhost:9/", 201), ("http://10.0.0.1/", 201),
    ("http://169.254.169.254/", 400), ("http://[fd00:ec2::254]/", 400),
    ("http://0.0.0.0/", 400), ("http://224.0.0.1/", 400),
])
async def test_the_setting_opens_private_targets_but_never_metadata(
        start_api: StartApi, url: str, status: int) -> None:
    """Nothing is sent here either: no event happens, and each webhook is deleted."""
    client = await start_api(webhooks={"allow_private_targets": True})
    response = await register(client, url)
    if response.status == 201:
        assert (await client.delete(f"/app/webhooks/{(await response.json())['id']}")
                ).status == 204
    assert response.status == status


async def test_a_person_has_at_most_the_configured_number(start_api: StartApi) -> None:
    client = await start_api(webhook_transport=fake(), webhooks={"per_user_max": 2})
    for _ in range(2):
        await created(client)
    response = await register(client)
    assert response.status == 409
    assert (await response.json())["error"]["code"] == "limit_reached"
    assert (await register(client, headers=BOB)).status == 201


async def test_each_event_writes_one_delivery_per_subscribed_webhook(
        start_api: StartApi) -> None:
    transport = FakeWebhookTransport(names=NAMES, answers=[500] * 50)
    client = await start_api(webhook_transport=transport)
    everything = await created(client)
    only_done = await created(client, events=["record.done"])
    bobs = await created(client, headers=BOB)
    record = str((await upload(client))["id"])
    await transcribe(client, record)
    await advance(client, record)  # done
    other = str((await upload(client))["id"])
    await halt(client, other)
    assert (await client.delete(f"/app/audiorecords/{other}")).status == 204

    events = [(d["event"], d["record_id"]) for d in reversed(await deliveries(
        client, everything["id"]))]
    assert events == [("record.done", record), ("record.halted", other),
                      ("record.deleted", other)]
    assert [(d["event"], d["record_id"]) for d in await deliveries(client, only_done["id"])
            ] == [("record.done", record)]
    assert await deliveries(client, bobs["id"], headers=BOB) == []
    first = (await deliveries(client, everything["id"]))[-1]
    assert set(first) == {"id", "event", "record_id", "status", "attempts", "next_attempt_at",
                          "last_status", "last_error", "created_at", "finished_at"}
    assert first["status"] in {"pending", "delivered"}


async def test_a_deleted_webhooks_pending_deliveries_are_never_sent(
        start_api: StartApi) -> None:
    transport = FakeWebhookTransport(names=NAMES)
    client = await start_api(webhook_transport=transport)
    webhook = await created(client)
    record = str((await upload(client))["id"])
    await halt(client, record)  # the delivery waits: the actor sleeps on the fake clock
    assert [d["status"] for d in await deliveries(client, webhook["id"])] == ["pending"]
    assert (await client.delete(f"/app/webhooks/{webhook['id']}")).status == 204
    assert await webhook_worker(client.app).round() == 0
    assert transport.posts == []


@dataclass(frozen=True, slots=True, kw_only=True)
class Explodes:
    """An effect that fails inside the advance: the whole advance is undone."""

    async def apply(self, ctx: WriteContext, *, record_id: str, step: str) -> None:
        raise RuntimeError("the finish step's write failed")


async def test_an_event_undone_writes_no_delivery(start_api: StartApi,
                                                  clock: FakeClock) -> None:
    client = await start_api(webhook_transport=fake())
    webhook = await created(client)
    record = str((await upload(client))["id"])
    await transcribe(client, record)
    with pytest.raises(RuntimeError):
        await advance(client, record, Explodes())  # done, rolled back with its effect
    assert (await (await client.get(f"/app/audiorecords/{record}")).json())["stage"] == (
        "transcribed")
    assert (await client.delete(f"/app/audiorecords/{record}", headers=BOB)).status == 404
    assert await deliveries(client, webhook["id"]) == []
    clock.advance(61)  # the failed attempt's lease runs out
    await advance(client, record)  # done, for real this time
    assert [d["event"] for d in await deliveries(client, webhook["id"])] == ["record.done"]
