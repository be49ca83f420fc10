"""A space's webhooks (issue 41, docs/api.md "A space's webhooks"): who may register
one (by role, as the roles table says), every event of a record in the space
delivered to it with the record as a member sees it, and a record moved out of the
space stops reaching it — its pending delivery included.

Deliveries go to the fake transport (no network); the delivery actor sleeps on the
fake clock, so a test runs its rounds itself.
"""

from __future__ import annotations

from typing import Any

import orjson

from tests.helpers.followups import webhook_worker
from tests.helpers.pipeline import until
from tests.helpers.web import Client, StartApi, advance, halt, transcribe, upload
from transcriber.testing.webhooks import FakeWebhookTransport

URL = "http://hooks.example.net/family"  # the fake transport's table: never sent anywhere
NAMES = {"hooks.example.net": ["93.184.216.34"]}
EVENTS = ["record.done", "record.halted", "record.deleted"]


def _as(login: str) -> dict[str, str]:
    return {"Remote-User": login}


async def _ok(response: Any, status: int) -> Any:
    assert response.status == status, await response.text()
    return await response.json() if status != 204 else None


async def _family(client: Client) -> str:
    """adam (admin), olga and eddy (editors), vera (viewer); rita added and removed."""
    space = await _ok(await client.post("/app/spaces", json={"name": "family"},
                                        headers=_as("adam")), 201)
    for login, role in (("olga", "editor"), ("eddy", "editor"), ("vera", "viewer"),
                        ("rita", "admin")):
        await _ok(await client.post(f"/app/spaces/{space['id']}/members",
                                    json={"login": login, "role": role},
                                    headers=_as("adam")), 201)
    await _ok(await client.delete(f"/app/spaces/{space['id']}/members/rita",
                                  headers=_as("adam")), 204)
    return str(space["id"])


async def _register(client: Client, space_id: str, login: str = "adam") -> Any:
    return await client.post(f"/app/spaces/{space_id}/webhooks",
                             json={"url": URL, "events": EVENTS}, headers=_as(login))


async def _done_in_space(client: Client, space_id: str, owner: str = "olga") -> str:
    record_id = str((await upload(client, headers=_as(owner)))["id"])
    await _ok(await client.patch(f"/app/audiorecords/{record_id}", json={"space": space_id},
                                 headers=_as(owner)), 200)
    await transcribe(client, record_id)
    await advance(client, record_id)  # done
    return record_id


async def _deliveries(client: Client, space_id: str, webhook_id: str) -> list[dict[str, Any]]:
    body = await _ok(await client.get(f"/app/spaces/{space_id}/webhooks/{webhook_id}/"
                                      "deliveries", headers=_as("adam")), 200)
    items = body["items"]
    assert isinstance(items, list)
    return items


async def _send_due(client: Client, space_id: str, webhook_id: str) -> None:
    """Rounds of the delivery actor until none of the webhook's deliveries is pending (a
    round starts at most `per_owner_concurrency` of one registrant's at once)."""
    worker = webhook_worker(client.app)

    async def none_pending() -> bool:
        await worker.round()
        await worker.finish()
        return all(d["status"] != "pending"
                   for d in await _deliveries(client, space_id, webhook_id))

    await until(none_pending)


async def test_only_a_spaces_admin_manages_its_webhooks(start_api: StartApi) -> None:
    client = await start_api(webhook_transport=FakeWebhookTransport(names=NAMES))
    space_id = await _family(client)
    # An editor and a viewer know the space (403); a stranger and a removed member do
    # not (404, as for a space that does not exist).
    for login, status in (("eddy", 403), ("vera", 403), ("sam", 404), ("rita", 404)):
        assert (await _register(client, space_id, login)).status == status, login
        listed = await client.get(f"/app/spaces/{space_id}/webhooks", headers=_as(login))
        assert listed.status == status, login
    made = await _ok(await _register(client, space_id), 201)
    assert made["secret"].startswith("whsec_")
    assert made["events"] == EVENTS
    item = f"/app/spaces/{space_id}/webhooks/{made['id']}"
    for login, status in (("eddy", 403), ("vera", 403), ("sam", 404), ("rita", 404)):
        assert (await client.get(f"{item}/deliveries", headers=_as(login))).status == status
        assert (await client.delete(item, headers=_as(login))).status == status, login
    listed = await _ok(await client.get(f"/app/spaces/{space_id}/webhooks",
                                        headers=_as("adam")), 200)
    assert [w["id"] for w in listed["items"]] == [made["id"]]
    assert all("secret" not in w for w in listed["items"])
    # The space's webhook is not its registrant's own: not in their list, not theirs
    # to delete through the person's routes.
    assert (await _ok(await client.get("/app/webhooks", headers=_as("adam")), 200)
            )["items"] == []
    assert (await client.delete(f"/app/webhooks/{made['id']}", headers=_as("adam"))
            ).status == 404
    other = await _ok(await client.post("/app/spaces", json={"name": "work"},
                                        headers=_as("adam")), 201)
    assert (await client.delete(f"/app/spaces/{other['id']}/webhooks/{made['id']}",
                                headers=_as("adam"))).status == 404
    assert (await client.delete(item, headers=_as("adam"))).status == 204
    assert (await client.delete(item, headers=_as("adam"))).status == 404


async def test_every_event_of_a_record_in_the_space_goes_to_it_as_a_member_sees_it(
        start_api: StartApi) -> None:
    transport = FakeWebhookTransport(names=NAMES)
    client = await start_api(webhook_transport=transport)
    space_id = await _family(client)
    webhook = await _ok(await _register(client, space_id), 201)
    record = await _done_in_space(client, space_id)
    await _ok(await client.post(f"/app/audiorecords/{record}/shares",
                                json={"login": "dora", "role": "viewer"},
                                headers=_as("olga")), 201)
    private = str((await upload(client, headers=_as("olga")))["id"])
    await halt(client, private)  # olga's own record: never the space's business
    halted = str((await upload(client, headers=_as("eddy")))["id"])
    await _ok(await client.patch(f"/app/audiorecords/{halted}", json={"space": space_id},
                                 headers=_as("eddy")), 200)
    await halt(client, halted)
    await _ok(await client.delete(f"/app/audiorecords/{halted}", headers=_as("adam")), 204)
    events = [(d["event"], d["record_id"])
              for d in reversed(await _deliveries(client, space_id, webhook["id"]))]
    assert events == [("record.done", record), ("record.halted", halted),
                      ("record.deleted", halted)]

    await _send_due(client, space_id, webhook["id"])
    posted = {orjson.loads(p.body)["event"]: orjson.loads(p.body)["record"]
              for p in transport.posts}
    assert set(posted) == {"record.done", "record.halted", "record.deleted"}
    card = posted["record.done"]
    assert card["id"] == record
    assert card["space"] == space_id
    # What the least of the members sees: a viewer's card, not the owner's (no shares,
    # no voice suggestions), and never the transcript.
    assert card["role"] == "viewer"
    assert card["shares"] is None
    assert "transcript" not in card
    assert "utterances" not in card
    assert all(s["suggested"] is None for s in card["speakers"].values())


async def test_a_record_moved_out_of_the_space_stops_reaching_its_webhook(
        start_api: StartApi) -> None:
    transport = FakeWebhookTransport(names=NAMES)
    client = await start_api(webhook_transport=transport)
    space_id = await _family(client)
    webhook = await _ok(await _register(client, space_id), 201)
    # Both done while in the space; no delivery has gone yet (no round ran).
    moved = await _done_in_space(client, space_id)
    removed = await _done_in_space(client, space_id, owner="eddy")
    # One moved out by its owner, the other leaving with its owner, a removed member.
    await _ok(await client.patch(f"/app/audiorecords/{moved}", json={"space": None},
                                 headers=_as("olga")), 200)
    await _ok(await client.delete(f"/app/spaces/{space_id}/members/eddy",
                                  headers=_as("adam")), 204)
    await _send_due(client, space_id, webhook["id"])
    assert transport.posts == []
    ended = await _deliveries(client, space_id, webhook["id"])
    assert sorted((d["record_id"], d["status"], d["last_error"], d["attempts"])
                  for d in ended) == sorted((record, "failed", "left_space", 0)
                                            for record in (moved, removed))
    # Their later events write nothing for the space.
    await _ok(await client.delete(f"/app/audiorecords/{moved}", headers=_as("olga")), 204)
    assert len(await _deliveries(client, space_id, webhook["id"])) == 2
