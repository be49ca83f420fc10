"""The transcript's quality report where the transcript goes: the card (with each word's
confidence), the list's mark, the JSON export (beside the utterances, kept whole) and
the webhook payload's record; a correction keeps the recognizer's report. On both
engines (the `engine` fixture)."""

from __future__ import annotations

from typing import Any

import orjson

from tests.helpers.followups import webhook_worker
from tests.helpers.pipeline import until
from tests.helpers.web import Client, StartApi, advance, transcribe, upload
from tests.helpers.webhooks import SECRET
from transcriber.domain.quality import assess
from transcriber.ports import Span, Utterance, Word
from transcriber.testing.webhooks import FakeWebhookTransport

SAID = (
    Utterance(start_ms=0, end_ms=1800, channel=0, text="Hello there.", words=(
        Word(start_ms=0, end_ms=600, text=" Hello", probability=0.95),
        Word(start_ms=600, end_ms=1800, text=" there.", probability=0.31))),
    Utterance(start_ms=60_000, end_ms=62_000, channel=0, text="The budget."),
)
REPORT = assess(SAID, speech=[Span(start_ms=0, end_ms=200_000)],
                unclear=[Span(start_ms=42_000, end_ms=60_000),
                         Span(start_ms=190_000, end_ms=205_000)], repeats_removed=0)
EXPECTED = {"verdict": "check", "reasons": ["unclear_speech", "low_confidence"],
            "speech_seconds": 205.0, "unclear_seconds": 33.0,
            "unclear_spans": [{"start_ms": 42_000, "end_ms": 60_000},
                              {"start_ms": 190_000, "end_ms": 205_000}],
            "repeats_removed": 0, "low_confidence_share": 0.5,
            # Stored without the model (a report made before it was kept): null.
            "model": None}


async def _json(client: Client, path: str) -> Any:
    response = await client.get(path)
    assert response.status == 200, await response.text()
    return await response.json()


async def _done(client: Client) -> str:
    record_id = str((await upload(client))["id"])
    await transcribe(client, record_id, SAID, quality=REPORT)
    await advance(client, record_id)  # finish → done
    return record_id


async def test_the_card_and_the_list_carry_the_report_and_the_words(client: Client) -> None:
    record_id = await _done(client)
    card = await _json(client, f"/app/audiorecords/{record_id}")
    assert card["quality"] == EXPECTED
    assert card["quality_verdict"] == "check"
    assert card["utterances"][0]["words"] == [
        {"start_ms": 0, "end_ms": 600, "text": " Hello", "probability": 0.95},
        {"start_ms": 600, "end_ms": 1800, "text": " there.", "probability": 0.31}]
    assert card["utterances"][1]["words"] == []
    [item] = (await _json(client, "/app/audiorecords"))["items"]
    assert item["quality_verdict"] == "check"
    assert "quality" not in item  # the list carries the mark only


async def test_a_record_without_a_report_says_null(client: Client) -> None:
    record_id = str((await upload(client))["id"])
    await transcribe(client, record_id)  # recognized before reports were made
    card = await _json(client, f"/app/audiorecords/{record_id}")
    assert (card["quality"], card["quality_verdict"]) == (None, None)


async def test_the_json_export_has_the_report_beside_the_whole_utterances(
        client: Client) -> None:
    record_id = await _done(client)
    response = await client.get(f"/app/audiorecords/{record_id}/transcript?format=json")
    assert response.status == 200
    data = orjson.loads(await response.read())
    assert data["quality"] == EXPECTED
    assert data["version"] == 3
    assert data["utterances"][0]["words"][1] == {"start_ms": 600, "end_ms": 1800,
                                                 "text": " there.", "probability": 0.31}


async def test_a_correction_keeps_the_recognizers_report_and_drops_the_lines_words(
        client: Client) -> None:
    record_id = await _done(client)
    card = await _json(client, f"/app/audiorecords/{record_id}")
    response = await client.patch(f"/app/audiorecords/{record_id}/transcript", json={
        "revision": card["revision"], "utterances": [{"index": 0, "text": "Hello, Clare."}]})
    assert response.status == 200, await response.text()
    card = await _json(client, f"/app/audiorecords/{record_id}")
    assert card["quality"] == EXPECTED
    assert card["utterances"][0]["words"] == []  # of the old text: no longer underlined
    original = await client.get(
        f"/app/audiorecords/{record_id}/transcript?format=json&version=original")
    assert orjson.loads(await original.read())["utterances"][0]["words"]


async def test_the_webhook_payloads_record_carries_the_report(start_api: StartApi) -> None:
    host = "hooks.example.net"  # the fake transport's table: never sent anywhere
    transport = FakeWebhookTransport(names={host: ["93.184.216.34"]})
    client = await start_api(webhook_transport=transport)
    response = await client.post("/app/webhooks", json={
        "url": f"http://{host}/in", "events": ["record.done"], "secret": SECRET})
    assert response.status == 201, await response.text()
    await _done(client)
    webhook_worker(client.app).wake()

    async def posted_once() -> bool:
        return len(transport.posts) == 1

    await until(posted_once)
    [posted] = transport.posts
    record = orjson.loads(posted.body)["record"]
    assert record["quality"] == EXPECTED
    assert record["quality_verdict"] == "check"
    assert "utterances" not in record  # nor the words: the transcript stays home
