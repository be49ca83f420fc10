"""Speakers through the API: names by PATCH, a line moved by a correction, named
exports, and search by a speaker's name."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import FormData

from tests.helpers.web import Client, advance, transcribe, upload
from transcriber.db import queries as q
from transcriber.ports import Utterance
from transcriber.web import keys

DIALOGUE = (
    Utterance(start_ms=0, end_ms=1000, channel=0, text="Good morning.", speaker="S1"),
    Utterance(start_ms=1000, end_ms=4000, channel=0, text="Morning, how are you?",
              speaker="S2"),
    Utterance(start_ms=4000, end_ms=4500, channel=0, text="Fine.", speaker="S1"),
)


async def _done(client: Client) -> str:
    record_id = str((await upload(client))["id"])
    await transcribe(client, record_id, DIALOGUE)
    await advance(client, record_id)
    return record_id


async def _patch(client: Client, record_id: str, body: Any, status: int = 200) -> Any:
    response = await client.patch(f"/app/audiorecords/{record_id}", json=body)
    assert response.status == status, await response.text()
    return await response.json()


async def _text(client: Client, record_id: str, fmt: str) -> str:
    response = await client.get(f"/app/audiorecords/{record_id}/transcript?format={fmt}")
    assert response.status == 200, await response.text()
    return await response.text()


async def test_card_shows_speakers_with_talk_time(client: Client) -> None:
    record_id = await _done(client)
    card = await (await client.get(f"/app/audiorecords/{record_id}")).json()
    assert card["speakers"] == {"S1": {"name": "", "talk_ms": 1500, "suggested": None},
                                "S2": {"name": "", "talk_ms": 3000, "suggested": None}}
    assert [u["speaker"] for u in card["utterances"]] == ["S1", "S2", "S1"]


async def test_names_reach_the_card_and_every_export(client: Client) -> None:
    record_id = await _done(client)
    card = await _patch(client, record_id, {"speakers": {"S1": "Anna", "S2": "Boris"}})
    assert card["speakers"]["S1"] == {"name": "Anna", "talk_ms": 1500, "suggested": None}
    assert (await _text(client, record_id, "txt")).splitlines() == [
        "Anna: Good morning.", "Boris: Morning, how are you?", "Anna: Fine."]
    assert "Boris: Morning, how are you?" in await _text(client, record_id, "srt")
    assert "<v Anna>Good morning." in await _text(client, record_id, "vtt")
    data = orjson.loads(await _text(client, record_id, "json"))
    assert [u["speaker_name"] for u in data["utterances"]] == ["Anna", "Boris", "Anna"]
    # Renaming one keeps the other; an empty name takes it away.
    card = await _patch(client, record_id, {"speakers": {"S2": ""}})
    assert {k: v["name"] for k, v in card["speakers"].items()} == {"S1": "Anna", "S2": ""}


async def test_unknown_speaker_or_long_name_is_400(client: Client) -> None:
    record_id = await _done(client)
    await _patch(client, record_id, {"speakers": {"S3": "Vera"}}, status=400)
    await _patch(client, record_id, {"speakers": {"S1": "x" * 65}}, status=400)
    await _patch(client, record_id, {"speakers": {"Anna": "x"}}, status=400)
    await _patch(client, record_id, {"speakers": {"S1": "two\nlines"}}, status=400)
    card = await (await client.get(f"/app/audiorecords/{record_id}")).json()
    assert all(v["name"] == "" for v in card["speakers"].values())


async def test_a_line_moves_to_another_speaker(client: Client) -> None:
    record_id = await _done(client)
    card = await (await client.get(f"/app/audiorecords/{record_id}")).json()
    response = await client.patch(f"/app/audiorecords/{record_id}/transcript", json={
        "revision": card["revision"], "utterances": [{"index": 2, "speaker": "S2"}]})
    assert response.status == 200, await response.text()
    card = await response.json()
    assert [u["speaker"] for u in card["utterances"]] == ["S1", "S2", "S2"]
    assert card["speakers"]["S2"]["talk_ms"] == 3500
    assert card["speakers"]["S1"]["talk_ms"] == 1000
    # S1 keeps no line but stays a speaker of the record: a line can move back.
    response = await client.patch(f"/app/audiorecords/{record_id}/transcript", json={
        "revision": card["revision"], "utterances": [{"index": 0, "speaker": "S2"}]})
    assert response.status == 200
    assert (await response.json())["speakers"]["S1"] == {"name": "", "talk_ms": 0,
                                                         "suggested": None}
    response = await client.patch(f"/app/audiorecords/{record_id}/transcript", json={
        "revision": card["revision"] + 1, "utterances": [{"index": 0, "speaker": "S1"}]})
    assert response.status == 200, await response.text()
    response = await client.patch(f"/app/audiorecords/{record_id}/transcript", json={
        "revision": card["revision"] + 2, "utterances": [{"index": 0, "speaker": "S9"}]})
    assert response.status == 400


async def test_search_finds_a_record_by_a_speakers_name(client: Client) -> None:
    record_id = await _done(client)
    other = await _done(client)
    assert (await (await client.get("/app/audiorecords", params={"q": "Zinaida"})).json())[
        "items"] == []
    await _patch(client, record_id, {"speakers": {"S2": "Zinaida Petrova"}})
    body = await (await client.get("/app/audiorecords", params={"q": "zinai*"})).json()
    assert [item["id"] for item in body["items"]] == [record_id]
    await _patch(client, record_id, {"speakers": {"S2": "Boris"}})
    body = await (await client.get("/app/audiorecords", params={"q": "zinaida"})).json()
    assert body["items"] == []
    body = await (await client.get("/app/audiorecords", params={"q": "boris"})).json()
    assert [item["id"] for item in body["items"]] == [record_id]
    assert other != record_id


async def _speakers_column(client: Client, record_id: str) -> object:
    row = await client.app[keys.READERS].fetch_one(
        q.results.SELECT_STEP_RECORD, {"record_id": record_id})
    assert row is not None
    return row["speakers"]


async def test_upload_stores_the_number_of_speakers(client: Client) -> None:
    form = FormData()
    form.add_field("speakers", "1")
    form.add_field("file", b"audio bytes", filename="b.wav")
    response = await client.post("/app/audiorecords", data=form)
    assert response.status == 201, await response.text()
    assert await _speakers_column(client, (await response.json())["id"]) == 1
    raw = await upload(client, headers={})
    assert await _speakers_column(client, str(raw["id"])) is None
    response = await client.post("/app/audiorecords?speakers=3", data=b"audio bytes",
                                 headers={"Content-Type": "application/octet-stream"})
    assert response.status == 201, await response.text()
    assert await _speakers_column(client, (await response.json())["id"]) == 3


async def test_speakers_outside_one_to_eight_is_400(client: Client) -> None:
    for value in ("0", "9", "two"):
        form = FormData()
        form.add_field("speakers", value)
        form.add_field("file", b"audio bytes", filename="b.wav")
        response = await client.post("/app/audiorecords", data=form)
        assert response.status == 400, value
