"""GET /app/audiorecords/{id}: the card with files, transcript, utterances, timeline, polling."""

from __future__ import annotations

from tests.helpers.followups import describer_of
from tests.helpers.web import SPEECH, Client, advance, halt, transcribe, upload
from transcriber.core.ids import new_id
from transcriber.db.commands.files import StoredFile
from transcriber.pipeline.effects import AddFile, SetColumns


async def _card(client: Client, record_id: object) -> dict[str, object]:
    response = await client.get(f"/app/audiorecords/{record_id}")
    assert response.status == 200, await response.text()
    body = await response.json()
    assert isinstance(body, dict)
    return body


async def test_fresh_record_card(client: Client) -> None:
    record = await upload(client, b"0123456789", name="talk.wav")
    card = await _card(client, record["id"])
    assert {k: card[k] for k in record} == record
    assert card["files"] == {
        "original": {"size_bytes": 10, "format": "ogg", "duration_ms": 1500},
        "normalized": None,
    }
    assert card["transcript"] is None
    assert card["utterances"] == []
    assert card["timeline"] == []
    # 1/8 of 120 requests per 60 s: one poll every 4 s.
    assert card["poll_after_ms"] == 4000


async def test_card_of_a_transcribed_record(client: Client) -> None:
    record = await upload(client)
    record_id = str(record["id"])
    normalized_id = new_id()
    await advance(client, record_id,
                  AddFile(file=StoredFile(id=normalized_id, file_name=f"{normalized_id}.ogg",
                                     size_bytes=4, format="ogg", duration_ms=1490)),
                  SetColumns(values={"normalized_file_id": normalized_id}))
    await advance(client, record_id)
    await advance(client, record_id)  # poll: no transcript saved in this one
    card = await _card(client, record_id)
    assert card["stage"] == "transcribed"
    assert card["files"]["normalized"] == {  # type: ignore[index]
        "size_bytes": 4, "format": "ogg", "duration_ms": 1490}
    assert [(e["step"], e["outcome"], e["origin"]) for e in card["timeline"]] == [  # type: ignore[attr-defined]
        ("normalize", "done", "pipeline"), ("submit", "done", "pipeline"),
        ("poll", "done", "pipeline")]
    assert all(e["duration_ms"] == 7 for e in card["timeline"])  # type: ignore[attr-defined]
    assert card["poll_after_ms"] == 4000


async def test_card_transcript_and_utterances(client: Client) -> None:
    record = await upload(client)
    await transcribe(client, str(record["id"]))
    await advance(client, str(record["id"]))  # finish → done
    card = await _card(client, record["id"])
    assert card["stage"] == "done"
    assert card["transcript"] == "\n".join(" ".join(u.text.split()) for u in SPEECH)
    assert card["utterances"] == [
        {"index": i, "start_ms": u.start_ms, "end_ms": u.end_ms, "channel": u.channel,
         "speaker": None, "text": u.text, "words": []}
        for i, u in enumerate(SPEECH)
    ]
    assert card["speakers"] == {}  # the fake recognizer tells no speakers apart
    assert card["revision"] == 1  # the recognizer's transcript is the first revision
    # `done` asked for its description: the card changes until it is written.
    assert card["described"] == {"title": None, "brief": None, "topics": None, "by": None,
                                 "state": "pending"}
    assert card["poll_after_ms"] is not None
    await describer_of(client.app).round()
    card = await _card(client, record["id"])
    assert card["described"] != {"title": None, "brief": None, "topics": None, "by": None,
                                 "state": "pending"}
    assert card["poll_after_ms"] is None  # nothing will change by itself


async def test_halted_card_shows_the_halt_without_paths(client: Client) -> None:
    record = await upload(client)
    await halt(client, str(record["id"]),
               "ffmpeg failed on /srv/data/records/01x/01y.wav (see https://s3.x/b/k)")
    card = await _card(client, record["id"])
    halt_info = card["halt"]
    assert isinstance(halt_info, dict)
    assert halt_info["reason"] == "step_failed"
    assert halt_info["at"] == card["updated_at"] or halt_info["at"]
    assert "/srv/data" not in halt_info["message"]
    assert "s3.x" not in halt_info["message"]
    assert halt_info["message"].startswith("ffmpeg failed on")
    assert card["stage"] == "uploaded"
    assert card["poll_after_ms"] is None
    assert [(e["step"], e["outcome"]) for e in card["timeline"]] == [  # type: ignore[attr-defined]
        ("normalize", "halted")]
