"""What an archive keeps does not grow without bound: corrections are capped
(`storage.revisions_max`, the recognizer's original always kept), topics no
record carries are removed, and `/app/topics` is paged."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.database import TestDatabase
from tests.helpers.web import SPEECH, Client, StartApi, advance, transcribe, upload
from transcriber.web.paging import PageAfter, encode_cursor


async def _correct(client: Client, record_id: str, text: str) -> dict[str, Any]:
    card = await (await client.get(f"/app/audiorecords/{record_id}")).json()
    response = await client.patch(f"/app/audiorecords/{record_id}/transcript", json={
        "revision": card["revision"], "utterances": [{"index": 0, "text": text}]})
    assert response.status == 200, await response.text()
    body = await response.json()
    assert isinstance(body, dict)
    return body


async def test_only_the_newest_corrections_are_kept_and_the_original_stays(
    start_api: StartApi, database: TestDatabase
) -> None:
    client = await start_api(storage={"revisions_max": 3})
    record_id = str((await upload(client))["id"])
    await transcribe(client, record_id)
    await advance(client, record_id)
    for n in range(10):
        card = await _correct(client, record_id, f"take {n}")
    rows = database.rows("SELECT revision FROM structure_revisions WHERE record_id = :id"
                         " ORDER BY revision", {"id": record_id})
    assert [r[0] for r in rows] == [card["revision"] - 2, card["revision"] - 1,
                                    card["revision"]]
    assert card["utterances"][0]["text"] == "take 9"
    current = await client.get(f"/app/audiorecords/{record_id}/transcript")
    assert (await current.text()).startswith("take 9\n")
    original = await client.get(f"/app/audiorecords/{record_id}/transcript?version=original")
    assert (await original.text()).startswith(SPEECH[0].text + "\n")


async def _topics(client: Client, **query: str) -> dict[str, Any]:
    response = await client.get("/app/topics", params=query)
    assert response.status == 200, await response.text()
    body = await response.json()
    assert isinstance(body, dict)
    return body


async def test_topics_come_in_keyset_pages_by_name(client: Client) -> None:
    names = [f"topic-{n:02d}" for n in range(12)]
    for start in range(0, len(names), 4):
        record_id = str((await upload(client))["id"])
        response = await client.patch(f"/app/audiorecords/{record_id}",
                                      json={"topics": names[start:start + 4]})
        assert response.status == 200
    seen: list[str] = []
    cursor: str | None = None
    sizes = []
    while True:
        page = await _topics(client, limit="5", **({"cursor": cursor} if cursor else {}))
        sizes.append(len(page["items"]))
        seen += [item["name"] for item in page["items"]]
        assert all(item["records"] == 1 for item in page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == names
    assert sizes == [5, 5, 2]
    first = await _topics(client)
    assert len(first["items"]) == 12
    assert first["next_cursor"] is None


@pytest.mark.parametrize("query", [
    {"limit": "0"}, {"limit": "101"}, {"limit": "x"}, {"cursor": "garbage"},
    {"cursor": encode_cursor(PageAfter(created_at="2026-01-01T00:00:00Z",
                                       id="01arz3ndektsv4rrffq69g5fav"))},
])
async def test_a_bad_topic_page_is_400(client: Client, query: dict[str, str]) -> None:
    response = await client.get("/app/topics", params=query)
    assert response.status == 400
    assert (await response.json())["error"]["code"] == "bad_request"


async def test_a_topic_goes_when_the_last_record_drops_it(
    client: Client, database: TestDatabase
) -> None:
    first = str((await upload(client))["id"])
    second = str((await upload(client))["id"])
    await client.patch(f"/app/audiorecords/{first}", json={"topics": ["old", "shared"]})
    await client.patch(f"/app/audiorecords/{second}", json={"topics": ["shared"]})
    (shared_id,) = database.rows("SELECT id FROM topics WHERE name = 'shared'")
    await client.patch(f"/app/audiorecords/{first}", json={"topics": ["shared", "new"]})
    listed = await _topics(client)
    assert listed["items"] == [{"name": "new", "records": 1}, {"name": "shared", "records": 2}]
    # A topic kept through an edit keeps its row.
    assert database.rows("SELECT id FROM topics WHERE name = 'shared'") == [shared_id]
    assert (await client.delete(f"/app/audiorecords/{first}")).status == 204
    assert (await _topics(client))["items"] == [{"name": "shared", "records": 1}]
    await client.patch(f"/app/audiorecords/{second}", json={"topics": []})
    assert (await _topics(client))["items"] == []
    assert database.count("topics") == 0


async def test_a_full_record_can_keep_its_five_topics_and_swap_one(client: Client) -> None:
    record_id = str((await upload(client))["id"])
    five = ["a", "b", "c", "d", "e"]
    await client.patch(f"/app/audiorecords/{record_id}", json={"topics": five})
    response = await client.patch(f"/app/audiorecords/{record_id}",
                                  json={"topics": ["a", "b", "c", "d", "f"]})
    assert response.status == 200, await response.text()
    assert (await response.json())["topics"] == ["a", "b", "c", "d", "f"]
    assert [t["name"] for t in (await _topics(client))["items"]] == ["a", "b", "c", "d", "f"]
