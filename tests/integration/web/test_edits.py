"""PATCH /app/audiorecords/{id}: title, brief, topics; the topic filter; /app/topics."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from tests.helpers.web import Client, StartApi, upload
from transcriber.db.commands.edits import EditRecord
from transcriber.web import keys

JSON = {"Content-Type": "application/json"}


async def _patch(client: Client, record_id: object, body: Any, status: int = 200) -> Any:
    response = await client.patch(f"/app/audiorecords/{record_id}", json=body)
    assert response.status == status, await response.text()
    return await response.json()


async def _card(client: Client, record_id: object) -> dict[str, Any]:
    response = await client.get(f"/app/audiorecords/{record_id}")
    assert response.status == 200
    body: dict[str, Any] = await response.json()
    return body


async def test_title_brief_and_topics_are_stored_and_shown(client: Client) -> None:
    record = await upload(client)
    card = await _patch(client, record["id"], {"title": "Budget call", "brief": "Q3 numbers",
                                               "topics": ["work", "money", "work"]})
    assert (card["title"], card["brief"], card["topics"]) == (
        "Budget call", "Q3 numbers", ["money", "work"])
    assert card == await _card(client, record["id"])
    # Only the named fields change.
    card = await _patch(client, record["id"], {"brief": ""})
    assert (card["title"], card["brief"], card["topics"]) == ("Budget call", "", ["money", "work"])
    card = await _patch(client, record["id"], {"topics": ["home"]})
    assert card["topics"] == ["home"]
    listed = await (await client.get("/app/audiorecords")).json()
    assert listed["items"][0]["topics"] == ["home"]
    assert listed["items"][0]["title"] == "Budget call"


async def test_title_and_brief_are_searchable(client: Client) -> None:
    first = await upload(client)
    second = await upload(client)
    await _patch(client, first["id"], {"title": "Quarterly planning"})
    await _patch(client, second["id"], {"brief": "talked about elephants"})

    async def search(term: str) -> list[str]:
        body = await (await client.get(f"/app/audiorecords?q={term}")).json()
        return [item["id"] for item in body["items"]]

    assert await search("quarterly") == [first["id"]]
    assert await search("elephant") == [second["id"]]
    await _patch(client, second["id"], {"brief": "giraffes"})
    assert await search("elephant") == []


@pytest.mark.parametrize(("body", "status"), [
    ({"title": "x" * 256}, 400),
    ({"brief": "x" * 2001}, 400),
    ({"topics": ["a", "b", "c", "d", "e", "f"]}, 400),
    ({"topics": ["x" * 65]}, 400),
    ({"topics": [""]}, 400),
    ({"topics": "work"}, 400),
    ({"title": 5}, 400),
    ({"owner_id": "someone"}, 400),
    ({"title": "ok", "state": "done"}, 400),
    ({}, 400),
    ([], 400),
])
async def test_bad_edits_are_refused_and_change_nothing(
    client: Client, body: Any, status: int
) -> None:
    record = await upload(client)
    await _patch(client, record["id"], {"title": "Kept", "topics": ["one"]})
    before = await _card(client, record["id"])
    answer = await _patch(client, record["id"], body, status)
    assert answer["error"]["code"] == "bad_request"
    assert await _card(client, record["id"]) == before


async def test_not_json_and_malformed_json(client: Client) -> None:
    record = await upload(client)
    response = await client.patch(f"/app/audiorecords/{record['id']}", data=b"title=x")
    assert response.status == 415
    response = await client.patch(f"/app/audiorecords/{record['id']}", data=b"{",
                                  headers=JSON)
    assert response.status == 400


async def test_the_database_keeps_the_five_topic_limit(client: Client) -> None:
    record = await upload(client)
    with pytest.raises(sqlite3.IntegrityError):
        await client.app[keys.WRITER].ask(EditRecord(
            record_id=str(record["id"]), owner_id=(await (await client.get("/app/me")).json())[
                "id"], topics=tuple("abcdef")))
    assert (await _card(client, record["id"]))["topics"] == []


async def test_another_persons_record_and_malformed_ids(start_api: StartApi) -> None:
    client = await start_api()
    record = await upload(client, headers={"Remote-User": "alice"})
    response = await client.patch(f"/app/audiorecords/{record['id']}", json={"title": "mine"},
                                  headers={"Remote-User": "bob"})
    assert response.status == 404
    assert (await response.json())["error"]["code"] == "not_found"
    response = await client.get(f"/app/audiorecords/{record['id']}",
                                headers={"Remote-User": "alice"})
    assert (await response.json())["title"] == ""
    for bad in ("nope", "0" * 26 + "x"):
        response = await client.patch(f"/app/audiorecords/{bad}", json={"title": "x"},
                                      headers={"Remote-User": "alice"})
        assert response.status == 404


async def test_topic_filter_pages_and_topic_counts(client: Client) -> None:
    ids = [str((await upload(client))["id"]) for _ in range(5)]
    for n, record_id in enumerate(ids):
        await _patch(client, record_id, {"topics": ["all", "even" if n % 2 == 0 else "odd"]})
    seen: list[str] = []
    cursor = None
    while True:
        url = "/app/audiorecords?topic=even&limit=2" + (f"&cursor={cursor}" if cursor else "")
        page = await (await client.get(url)).json()
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [ids[4], ids[2], ids[0]]  # newest first, every one once
    nothing = await (await client.get("/app/audiorecords?topic=missing")).json()
    assert nothing == {"items": [], "next_cursor": None}
    topics = await (await client.get("/app/topics")).json()
    assert topics == {"items": [{"name": "all", "records": 5}, {"name": "even", "records": 3},
                                {"name": "odd", "records": 2}], "next_cursor": None}
    response = await client.get("/app/audiorecords?topic=even&q=x")
    assert response.status == 400


async def test_topics_are_the_owners_own(start_api: StartApi) -> None:
    client = await start_api()
    alice = {"Remote-User": "alice"}
    bob = {"Remote-User": "bob"}
    mine = await upload(client, headers=alice)
    theirs = await upload(client, headers=bob)
    await client.patch(f"/app/audiorecords/{mine['id']}", json={"topics": ["work"]},
                       headers=alice)
    await client.patch(f"/app/audiorecords/{theirs['id']}", json={"topics": ["work"]},
                       headers=bob)
    topics = await (await client.get("/app/topics", headers=alice)).json()
    assert topics == {"items": [{"name": "work", "records": 1}], "next_cursor": None}
    page = await (await client.get("/app/audiorecords?topic=work", headers=alice)).json()
    assert [item["id"] for item in page["items"]] == [mine["id"]]
