"""Hostile edits through HTTP: another person's record tells nothing (always the
404 of a missing record), and free text refuses bidi, format and control characters."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.web import Client, advance, transcribe, upload
from transcriber.ports import Utterance

ALICE = {"Remote-User": "alice"}
BOB = {"Remote-User": "bob"}
MISSING = "01arz3ndektsv4rrffq69g5fav"
DIALOGUE = (
    Utterance(start_ms=0, end_ms=1000, channel=0, text="Good morning.", speaker="S1"),
    Utterance(start_ms=1000, end_ms=4000, channel=0, text="Morning.", speaker="S2"),
)


async def _alices_record(client: Client) -> str:
    record_id = str((await upload(client, headers=ALICE))["id"])
    await transcribe(client, record_id, DIALOGUE)
    await advance(client, record_id)
    response = await client.patch(f"/app/audiorecords/{record_id}", headers=ALICE,
                                  json={"topics": ["a", "b", "c", "d", "e"]})
    assert response.status == 200
    return record_id


# Every route of a record, with bodies whose answer on the owner's record
# would depend on what the record holds (its speakers, revision, utterances,
# stage, copies, topics).
PROBES: list[tuple[str, str, Any]] = [
    ("PATCH", "", {"speakers": {"S1": "Eve"}}),
    ("PATCH", "", {"speakers": {"S2": ""}}),
    ("PATCH", "", {"speakers": {"S9": "Eve"}}),
    ("PATCH", "", {"title": "mine now"}),
    ("PATCH", "", {"topics": ["a", "b", "c", "d", "e", "f"][:5]}),
    ("PATCH", "/transcript", {"revision": 0, "utterances": [{"index": 0, "text": "x"}]}),
    ("PATCH", "/transcript", {"revision": 1, "utterances": [{"index": 0, "text": "x"}]}),
    ("PATCH", "/transcript", {"revision": 1, "utterances": [{"index": 99, "text": "x"}]}),
    ("PATCH", "/transcript", {"revision": 1, "utterances": [{"index": 0, "speaker": "S9"}]}),
    ("PATCH", "/transcript", {"revision": 1, "utterances": [{"index": 0, "speaker": "S2"}]}),
    ("GET", "", None),
    ("GET", "/transcript?format=vtt", None),
    ("GET", "/transcript?version=original", None),
    ("GET", "/transcript?version=bogus", None),
    ("GET", "/file", None),
    ("GET", "/file?copy=normalized", None),
    ("POST", "/resume", None),
    ("POST", "/retranscribe", None),
    ("POST", "/retranscribe", {"language": "en"}),
    ("DELETE", "", None),
]


@pytest.mark.parametrize(("method", "suffix", "body"), PROBES)
async def test_another_persons_record_answers_as_a_missing_one(
    client: Client, method: str, suffix: str, body: Any
) -> None:
    record_id = await _alices_record(client)
    answers = []
    for target in (record_id, MISSING):
        response = await client.request(method, f"/app/audiorecords/{target}{suffix}",
                                        headers=BOB, json=body)
        answers.append((response.status, await response.read()))
    assert answers[0] == answers[1]
    assert answers[0][0] == 404
    card = await (await client.get(f"/app/audiorecords/{record_id}", headers=ALICE)).json()
    assert card["title"] == ""
    assert card["speakers"]["S1"]["name"] == ""


async def _patch(client: Client, record_id: str, body: Any) -> tuple[int, dict[str, Any]]:
    response = await client.patch(f"/app/audiorecords/{record_id}", json=body)
    return response.status, await response.json()


@pytest.mark.parametrize(("body", "field"), [
    ({"title": "report\u202egnp.exe"}, "title"),
    ({"title": "two\nlines"}, "title"),
    ({"title": "zero\u200bwidth"}, "title"),
    ({"brief": "notes \u2066hidden\u2069"}, "brief"),
    ({"brief": "bell\x07"}, "brief"),
    ({"topics": ["work", "mo\u200bney"]}, "a topic"),
    ({"topics": ["\u202ekrow"]}, "a topic"),
    ({"speakers": {"S1": "Anna\u202e"}}, "the name of S1"),
    ({"speakers": {"S2": "Bo\u00adris"}}, "the name of S2"),
])
async def test_free_text_with_bidi_or_control_characters_is_400_naming_the_field(
    client: Client, body: dict[str, Any], field: str
) -> None:
    record_id = str((await upload(client))["id"])
    await transcribe(client, record_id, DIALOGUE)
    status, answer = await _patch(client, record_id, body)
    assert status == 400
    assert answer["error"]["code"] == "bad_request"
    assert answer["error"]["message"].startswith(f"{field} holds")
    card = await (await client.get(f"/app/audiorecords/{record_id}")).json()
    assert (card["title"], card["brief"], card["topics"]) == ("", "", [])
    assert all(v["name"] == "" for v in card["speakers"].values())


async def test_what_people_write_still_passes(client: Client) -> None:
    record_id = str((await upload(client))["id"])
    await transcribe(client, record_id, DIALOGUE)
    status, card = await _patch(client, record_id, {
        "title": "Q3 \u2764\ufe0f call", "brief": "line one\nline two\twith a tab",
        "topics": ["\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"],
        "speakers": {"S1": "Ann\u00e9e"}})
    assert status == 200, card
    assert card["brief"] == "line one\nline two\twith a tab"


@pytest.mark.parametrize("correction", [
    {"index": 0, "text": "report\u202egnp.exe"},
    {"index": 1, "text": "ok \u2067then\u2069"},
    {"index": 0, "text": "nul\x00"},
])
async def test_a_correction_with_bidi_or_control_characters_is_400(
    client: Client, correction: dict[str, Any]
) -> None:
    record_id = str((await upload(client))["id"])
    await transcribe(client, record_id, DIALOGUE)
    card = await (await client.get(f"/app/audiorecords/{record_id}")).json()
    response = await client.patch(f"/app/audiorecords/{record_id}/transcript", json={
        "revision": card["revision"], "utterances": [correction]})
    assert response.status == 400
    message = (await response.json())["error"]["message"]
    assert message.startswith(f"the text of utterance {correction['index']} holds")
    after = await (await client.get(f"/app/audiorecords/{record_id}")).json()
    assert after["revision"] == card["revision"]


async def test_a_correction_may_hold_a_line_break_but_the_exports_keep_it_in_its_line(
    client: Client
) -> None:
    record_id = str((await upload(client))["id"])
    await transcribe(client, record_id, DIALOGUE)
    card = await (await client.get(f"/app/audiorecords/{record_id}")).json()
    response = await client.patch(f"/app/audiorecords/{record_id}/transcript", json={
        "revision": card["revision"],
        "utterances": [{"index": 1, "text": "I approve\n\nS1: <v Boss>pay &c"}]})
    assert response.status == 200, await response.text()
    txt = await (await client.get(f"/app/audiorecords/{record_id}/transcript")).text()
    assert txt.splitlines() == ["S1: Good morning.", "S2: I approve S1: <v Boss>pay &c"]
    vtt = await (await client.get(
        f"/app/audiorecords/{record_id}/transcript?format=vtt")).text()
    assert "<v S2>I approve S1: &lt;v Boss&gt;pay &amp;c\n" in vtt
    assert vtt.count("<v ") == 2
