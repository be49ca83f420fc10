"""GET /app/audiorecords: keyset pages newest first, and ranked search with the same paging."""

from __future__ import annotations

import re

import pytest

from tests.helpers.database import TestDatabase
from tests.helpers.factories import make_record, make_user
from tests.helpers.web import Client, transcribe, upload
from transcriber.db import queries as q
from transcriber.ports import Utterance
from transcriber.testing.clock import FakeClock
from transcriber.web import keys


async def _make_records(
    client: Client, clock: FakeClock, n: int, login: str = "local"
) -> list[str]:
    writer = client.app[keys.WRITER]
    owner = await make_user(writer, login)
    ids = []
    for i in range(n):
        if i % 7 == 0:
            clock.advance(1)  # some share a second, some do not
        ids.append(await make_record(writer, owner))
    return ids


async def _all_pages(client: Client, query: str = "", limit: int | None = None) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor = None
    while True:
        params = {"q": query} if query else {}
        if limit is not None:
            params["limit"] = str(limit)
        if cursor:
            params["cursor"] = cursor
        response = await client.get("/app/audiorecords", params=params)
        assert response.status == 200, await response.text()
        body = await response.json()
        pages.append([item["id"] for item in body["items"]])
        cursor = body["next_cursor"]
        if cursor is None:
            return pages


async def test_default_page_is_30_newest_first(client: Client, clock: FakeClock) -> None:
    ids = await _make_records(client, clock, 35)
    pages = await _all_pages(client)
    assert [len(p) for p in pages] == [30, 5]
    assert [i for p in pages for i in p] == list(reversed(ids))


async def test_pages_of_a_given_limit_cover_everything_once(
    client: Client, clock: FakeClock
) -> None:
    ids = await _make_records(client, clock, 23)
    pages = await _all_pages(client, limit=5)
    assert [len(p) for p in pages] == [5, 5, 5, 5, 3]
    assert [i for p in pages for i in p] == list(reversed(ids))


async def test_exact_multiple_has_no_empty_last_page(client: Client, clock: FakeClock) -> None:
    await _make_records(client, clock, 10)
    assert [len(p) for p in await _all_pages(client, limit=5)] == [5, 5]


async def test_records_created_while_paging_do_not_shift_pages(
    client: Client, clock: FakeClock
) -> None:
    ids = await _make_records(client, clock, 6)
    first = await (await client.get("/app/audiorecords", params={"limit": "3"})).json()
    await _make_records(client, clock, 2)  # newer: they belong before page one
    second = await (await client.get("/app/audiorecords",
                                      params={"limit": "3", "cursor": first["next_cursor"]})
                    ).json()
    assert [i["id"] for i in second["items"]] == list(reversed(ids))[3:6]


async def test_only_own_records_are_listed(client: Client, clock: FakeClock) -> None:
    mine = await _make_records(client, clock, 2)
    await _make_records(client, clock, 3, login="bob")
    assert await _all_pages(client) == [list(reversed(mine))]


async def test_list_item_shape(client: Client) -> None:
    record = await upload(client, name="meeting.wav")
    body = await (await client.get("/app/audiorecords")).json()
    assert body == {"items": [record], "next_cursor": None}
    assert set(record) == {"id", "title", "original_filename", "source", "via", "stage", "halt",
                           "duration_ms", "size_bytes", "created_at", "updated_at", "brief",
                           "topics", "progress", "described", "quality_verdict", "space"}
    assert record["quality_verdict"] is None  # not transcribed: no quality report yet
    # Nobody described it yet (it is not done).
    assert record["described"] == {"title": None, "brief": None, "topics": None, "by": None,
                                   "state": None}
    # Just accepted: queued, nothing normalized yet, no speed measured: the warm-up
    # figure's estimate (a second of audio: a moment).
    assert record["progress"] == {"stage": "queue", "done": 0, "total": 1,
                                  "fraction": 0.0, "eta_seconds": 1}


@pytest.mark.parametrize("params", [
    {"limit": "0"}, {"limit": "101"}, {"limit": "ten"}, {"limit": "-5"},
    {"cursor": "garbage"}, {"cursor": "W10"}, {"q": "x" * 201},
])
async def test_bad_parameters_are_400(client: Client, params: dict[str, str]) -> None:
    response = await client.get("/app/audiorecords", params=params)
    assert response.status == 400
    assert (await response.json())["error"]["code"] == "bad_request"


async def test_cursor_of_a_search_is_refused_by_the_plain_list(
    client: Client, clock: FakeClock
) -> None:
    for _ in range(3):
        await upload(client, name="alpha.wav")
    page = await (await client.get("/app/audiorecords",
                                   params={"q": "alpha", "limit": "1"})).json()
    assert page["next_cursor"]
    response = await client.get("/app/audiorecords", params={"cursor": page["next_cursor"]})
    assert response.status == 400


async def test_search_finds_file_names_and_transcripts_ranked(client: Client) -> None:
    in_transcript = await upload(client, name="call.wav")
    await transcribe(client, str(in_transcript["id"]), [
        Utterance(start_ms=0, end_ms=900, channel=0,
                  text="We discussed the budget for a long time, and then other things"),
    ])
    in_name = await upload(client, name="budget review.wav")
    unrelated = await upload(client, name="holiday.wav")
    body = await (await client.get("/app/audiorecords", params={"q": "budget"})).json()
    found = [item["id"] for item in body["items"]]
    # A file-name hit weighs more than a transcript hit.
    assert found == [in_name["id"], in_transcript["id"]]
    assert unrelated["id"] not in found


async def test_search_prefix_and_all_words_required(client: Client) -> None:
    both = await upload(client, name="quarterly budget.wav")
    await upload(client, name="quarterly report.wav")
    body = await (await client.get("/app/audiorecords", params={"q": "quart* budg*"})).json()
    assert [item["id"] for item in body["items"]] == [both["id"]]
    body = await (await client.get("/app/audiorecords", params={"q": "quart budg"})).json()
    assert body["items"] == []  # a word is a prefix only when typed as one


async def test_search_is_owner_scoped(client: Client) -> None:
    await upload(client, name="secret plans.wav", headers={"Remote-User": "bob"})
    body = await (await client.get("/app/audiorecords", params={"q": "secret"})).json()
    assert body["items"] == []


async def test_search_pages(client: Client) -> None:
    uploaded = {str((await upload(client, name=f"standup {i}.wav"))["id"]) for i in range(7)}
    pages = await _all_pages(client, query="standup", limit=3)
    assert [len(p) for p in pages] == [3, 3, 1]
    assert {i for p in pages for i in p} == uploaded


@pytest.mark.parametrize("query", ['"', "NEAR(", "a OR", "*", "-x", "(((", "'; DROP TABLE"])
async def test_search_syntax_never_fails(client: Client, query: str) -> None:
    await upload(client, name="x.wav")
    response = await client.get("/app/audiorecords", params={"q": query})
    assert response.status == 200


async def test_page_queries_use_the_owner_index(client: Client, database: TestDatabase) -> None:
    for query in (q.archive.PAGE_FIRST, q.archive.PAGE_AFTER):
        plan = database.plan(query, {"owner_id": "u", "limit": 3, "after_created_at": "t",
                                     "after_id": "i"})
        assert "idx_audio_records_owner_page" in plan, plan
        # No table read whole, no sort: the index gives the page's order.
        assert not re.search(r"SCAN|TEMP B-TREE|Seq Scan|Sort", plan), plan
