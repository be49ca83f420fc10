"""The described record over HTTP: the card's `described`, a person's edit (or clearing,
or keeping) making a field theirs, search finding records by their automatic title,
brief and topics, exports carrying the title, and the search index kept whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tests.helpers.database import TestDatabase
from tests.helpers.followups import describer_of
from tests.helpers.meetings import MEETING_EN, MEETING_RU, utterances
from tests.helpers.search import search_row_problems
from tests.helpers.web import Client, advance, transcribe, upload
from transcriber.db.connection import database_path
from transcriber.maintenance.verify import verify


async def _card(client: Client, record_id: str) -> dict[str, Any]:
    response = await client.get(f"/app/audiorecords/{record_id}")
    assert response.status == 200
    body: dict[str, Any] = await response.json()
    return body


async def _described(client: Client, lines: tuple[str, ...] = MEETING_EN,
                     name: str = "call.wav") -> str:
    """A record transcribed, `done` with its describe job, then described."""
    record_id = str((await upload(client, name=name))["id"])
    await transcribe(client, record_id, utterances(lines))
    await advance(client, record_id)  # done, with its describe job
    pending = await _card(client, record_id)
    assert pending["described"]["state"] == "pending"
    assert pending["poll_after_ms"] is not None  # still changing: the card keeps asking
    assert await describer_of(client.app).round() >= 1
    return record_id


async def _found(client: Client, query: str) -> list[str]:
    body = await (await client.get("/app/audiorecords", params={"q": query})).json()
    return [item["id"] for item in body["items"]]


async def _patch(client: Client, record_id: str, **fields: object) -> dict[str, Any]:
    response = await client.patch(f"/app/audiorecords/{record_id}", json=fields)
    assert response.status == 200, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def test_the_card_shows_what_the_describer_wrote(client: Client) -> None:
    record_id = await _described(client)
    card = await _card(client, record_id)
    assert card["described"] == {"title": "auto", "brief": "auto", "topics": "auto",
                                 "by": "extractive", "state": "done"}
    assert "mobile app" in card["title"].lower()
    assert card["brief"]
    assert "mobile app" in card["topics"]
    assert card["poll_after_ms"] is None  # settled now
    listed = (await (await client.get("/app/audiorecords")).json())["items"][0]
    assert listed["title"] == card["title"]
    assert listed["described"] == card["described"]


async def test_an_edit_a_clearing_and_a_keep_make_fields_the_persons(client: Client) -> None:
    record_id = await _described(client)
    card = await _card(client, record_id)
    kept = await _patch(client, record_id, title=card["title"])  # "Keep": the same value
    assert kept["title"] == card["title"]
    assert kept["described"]["title"] == "human"
    cleared = await _patch(client, record_id, brief="")
    assert (cleared["brief"], cleared["described"]["brief"]) == ("", "human")
    renamed = await _patch(client, record_id, topics=["Launch"])
    assert (renamed["topics"], renamed["described"]["topics"]) == (["Launch"], "human")
    assert renamed["described"]["by"] == "extractive"  # who wrote what is still automatic


async def test_search_finds_records_by_their_automatic_title_brief_and_topics(
    client: Client,
) -> None:
    english = await _described(client)
    russian = await _described(client, MEETING_RU)
    card = await _card(client, russian)
    assert "переезд офиса" in card["topics"]
    assert await _found(client, "переезды") == [russian]  # any form of the word
    assert await _found(client, "переезд офиса") == [russian]
    assert await _found(client, "mobile") == [english]
    # A word that is only in the topics: found until the topics change.
    await _patch(client, english, topics=["Quarterly roadmap"])
    assert await _found(client, "roadmap") == [english]
    await _patch(client, english, topics=[])
    assert await _found(client, "roadmap") == []


async def test_topic_changes_keep_the_search_index_whole(
    client: Client, data_dir: Path, database: TestDatabase
) -> None:
    first = await _described(client)
    second = await _described(client, MEETING_RU)
    await _patch(client, first, topics=["Alpha", "Beta gamma"])
    await _patch(client, second, topics=["Beta gamma"])
    await _patch(client, first, topics=["Delta"])  # Alpha goes, Beta gamma stays (second)
    response = await client.delete(f"/app/audiorecords/{second}")
    assert response.status == 204
    if database.engine == "sqlite":
        assert verify(database_path(data_dir), data_dir).problems == {}
    else:  # `verify` reads a SQLite file; the same check of PostgreSQL's index
        assert search_row_problems(database) == []
    assert await _found(client, "gamma") == []
    assert await _found(client, "delta") == [first]


async def test_exports_carry_the_title_where_the_format_has_a_place(client: Client) -> None:
    record_id = await _described(client)
    title = (await _card(client, record_id))["title"]
    txt = await (await client.get(f"/app/audiorecords/{record_id}/transcript")).text()
    assert txt.startswith(f"{title}\n\n")
    srt = await (await client.get(
        f"/app/audiorecords/{record_id}/transcript?format=srt")).text()
    # SRT has no place for a title: a cue would show it as something said (issue 38).
    assert srt.startswith(f"1\n00:00:00,000 --> 00:00:02,280\nS1: {MEETING_EN[0]}\n")
    vtt = await (await client.get(
        f"/app/audiorecords/{record_id}/transcript?format=vtt")).text()
    assert f"\nNOTE {title}\n" in vtt
    body = await (await client.get(
        f"/app/audiorecords/{record_id}/transcript?format=json")).read()
    assert orjson.loads(body)["title"] == title


async def test_a_failed_description_shows_on_the_card_and_the_record_stays_done(
    client: Client, database: TestDatabase,
) -> None:
    record_id = str((await upload(client))["id"])
    await transcribe(client, record_id, utterances(MEETING_EN))
    await advance(client, record_id)
    # The transcript turns unreadable before the describer reads it (a write behind the
    # service's back).
    database.execute("UPDATE structures SET contents = 'not json' WHERE record_id = :id",
                     {"id": record_id})
    await describer_of(client.app).round()
    card = await _card(client, record_id)
    assert card["described"]["state"] == "failed"
    assert card["stage"] == "done"
    assert card["halt"] is None
    assert card["poll_after_ms"] is None
