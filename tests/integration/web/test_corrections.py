"""PATCH /app/audiorecords/{id}/transcript: corrections as revisions, the original kept."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.web import SPEECH, Client, advance, transcribe, upload


async def _correct(client: Client, record_id: str, body: Any, status: int = 200) -> Any:
    response = await client.patch(f"/app/audiorecords/{record_id}/transcript", json=body)
    assert response.status == status, await response.text()
    return await response.json()


async def _card(client: Client, record_id: str) -> dict[str, Any]:
    body: dict[str, Any] = await (await client.get(f"/app/audiorecords/{record_id}")).json()
    return body


async def _download(client: Client, record_id: str, query: str) -> str:
    response = await client.get(f"/app/audiorecords/{record_id}/transcript?{query}")
    assert response.status == 200, await response.text()
    return await response.text()


async def _done(client: Client) -> str:
    record_id = str((await upload(client))["id"])
    await transcribe(client, record_id)
    await advance(client, record_id)
    return record_id


async def test_a_correction_is_a_new_revision_everywhere(client: Client) -> None:
    record_id = await _done(client)
    card = await _card(client, record_id)
    revision = card["revision"]
    corrected = await _correct(client, record_id, {"revision": revision, "utterances": [
        {"index": 1, "text": "The quarterly zebra meeting"}]})
    assert corrected["revision"] == revision + 1
    assert corrected["utterances"][1] == {
        "index": 1, "start_ms": SPEECH[1].start_ms, "end_ms": SPEECH[1].end_ms,
        "channel": SPEECH[1].channel, "speaker": None, "text": "The quarterly zebra meeting",
        "words": []}
    assert corrected["utterances"][0]["text"] == SPEECH[0].text
    assert "zebra" in corrected["transcript"]
    assert "budget" not in corrected["transcript"]
    assert corrected == await _card(client, record_id)
    # Every export follows the correction; the original stays downloadable.
    for fmt in ("txt", "srt", "vtt", "json"):
        assert "zebra" in await _download(client, record_id, f"format={fmt}")
        original = await _download(client, record_id, f"format={fmt}&version=original")
        assert "budget" in original
        assert "zebra" not in original
    # The search index follows too.
    found = await (await client.get("/app/audiorecords?q=zebra")).json()
    assert [item["id"] for item in found["items"]] == [record_id]
    gone = await (await client.get("/app/audiorecords?q=budget")).json()
    assert gone["items"] == []


async def test_a_stale_revision_is_a_conflict_and_changes_nothing(client: Client) -> None:
    record_id = await _done(client)
    revision = (await _card(client, record_id))["revision"]
    await _correct(client, record_id, {"revision": revision, "utterances": [
        {"index": 0, "text": "first"}]})
    before = await _card(client, record_id)
    answer = await _correct(client, record_id, {"revision": revision, "utterances": [
        {"index": 0, "text": "second"}]}, 409)
    assert answer["error"]["code"] == "conflict"
    assert await _card(client, record_id) == before
    await _correct(client, record_id, {"revision": revision + 1, "utterances": [
        {"index": 0, "text": "second"}]})
    assert (await _card(client, record_id))["utterances"][0]["text"] == "second"


@pytest.mark.parametrize("body", [
    {"revision": 1},
    {"utterances": [{"index": 0, "text": "x"}]},
    {"revision": 1, "utterances": []},
    {"revision": 1, "utterances": [{"index": 99, "text": "x"}]},
    {"revision": 1, "utterances": [{"index": -1, "text": "x"}]},
    {"revision": 1, "utterances": [{"index": 0, "start_ms": 5}]},
    {"revision": 1, "utterances": [{"index": 0, "text": 5}]},
    {"revision": 1, "utterances": [{"index": 0, "text": "x" * 5001}]},
    {"revision": 1, "utterances": ["x"]},
    {"revision": "1", "utterances": [{"index": 0, "text": "x"}]},
    {"revision": 1, "utterances": [{"index": 0, "text": "x"}], "extra": 1},
])
async def test_bad_corrections_are_refused(client: Client, body: dict[str, Any]) -> None:
    record_id = await _done(client)
    before = await _card(client, record_id)
    assert before["revision"] == 1
    answer = await _correct(client, record_id, body, 400)
    assert answer["error"]["code"] == "bad_request"
    assert await _card(client, record_id) == before


async def test_no_transcript_yet_and_unknown_records(client: Client) -> None:
    record_id = str((await upload(client))["id"])
    answer = await _correct(client, record_id, {"revision": 0, "utterances": [
        {"index": 0, "text": "x"}]}, 409)
    assert answer["error"]["code"] == "not_ready"
    await _correct(client, "01" + "0" * 24, {"revision": 0, "utterances": [
        {"index": 0, "text": "x"}]}, 404)
    await _correct(client, "nope", {"revision": 0, "utterances": [
        {"index": 0, "text": "x"}]}, 404)
