"""POST /app/audiorecords/{id}/retranscribe: back to recognition, the old transcript kept until
the new one is written; resume repeats nothing already paid for."""

from __future__ import annotations

from typing import Any

from tests.helpers.database import TestDatabase
from tests.helpers.web import Client, advance, claim, halt, transcribe, upload
from transcriber.core.ids import new_id
from transcriber.db.commands.files import StoredFile
from transcriber.db.commands.pipeline import Advance, Halt
from transcriber.db.commands.recognition import RegisterRecognition
from transcriber.domain.stages import HaltReason
from transcriber.domain.transcripts import dump_structure, plain_text
from transcriber.pipeline.effects import AddFile, SaveTranscript, SetColumns
from transcriber.ports import Utterance
from transcriber.web import keys


async def _card(client: Client, record_id: str) -> dict[str, Any]:
    body: dict[str, Any] = await (await client.get(f"/app/audiorecords/{record_id}")).json()
    return body


async def _retranscribe(client: Client, record_id: str, status: int = 200, **kwargs: Any) -> Any:
    response = await client.post(f"/app/audiorecords/{record_id}/retranscribe", **kwargs)
    assert response.status == status, await response.text()
    return await response.json()


def _recognitions(database: TestDatabase, record_id: str) -> int:
    return int(database.scalar("SELECT count(*) FROM recognitions WHERE record_id = :id",
                               {"id": record_id}))


async def test_a_done_record_goes_back_and_keeps_its_transcript_until_the_new_one(
    client: Client, database: TestDatabase
) -> None:
    record_id = str((await upload(client))["id"])
    normalized_id = new_id()
    await advance(client, record_id,  # normalized, with its copy
                  AddFile(file=StoredFile(id=normalized_id, file_name=f"{normalized_id}.ogg",
                                          size_bytes=4, format="ogg", duration_ms=1490)),
                  SetColumns(values={"normalized_file_id": normalized_id}))
    claimed = await claim(client, record_id)  # submit: registers the paid operation
    await client.app[keys.WRITER].ask(RegisterRecognition(
        record_id=record_id, token=claimed.token, part_index=0, offset_ms=0, provider="fake",
        model="m", source_uri=None))
    await client.app[keys.WRITER].ask(Advance(record_id=record_id, token=claimed.token,
                                              step="submit"))
    old = [Utterance(start_ms=0, end_ms=5, channel=0, text="old words")]
    await advance(client, record_id, SaveTranscript(text=plain_text(old),
                                                    structure_json=dump_structure(old)))
    await advance(client, record_id)  # done
    before = await _card(client, record_id)
    await client.patch(f"/app/audiorecords/{record_id}/transcript", json={
        "revision": before["revision"], "utterances": [{"index": 0, "text": "fixed words"}]})
    assert _recognitions(database, record_id) == 1

    card = await _retranscribe(client, record_id, json={"language": "ru"})
    assert card["stage"] == "normalized"
    assert card["language"] == {"requested": "ru", "detected": None}
    assert card["transcript"] == "fixed words"  # the old one until the new one is written
    assert card["files"]["original"] is not None
    assert card["files"]["normalized"] is not None
    assert card["timeline"][-1]["origin"] == "human"
    assert card["timeline"][-1]["step"] == "retranscribe"
    assert _recognitions(database, record_id) == 0  # the new operation is a new one
    stale = card["revision"]

    fresh = [Utterance(start_ms=0, end_ms=5, channel=0, text="brand new words")]
    await advance(client, record_id)  # submit
    await advance(client, record_id, SaveTranscript(text=plain_text(fresh),
                                                    structure_json=dump_structure(fresh)))
    card = await _card(client, record_id)
    assert card["transcript"] == "brand new words"
    assert card["utterances"][0]["text"] == "brand new words"
    assert card["revision"] == stale + 1
    original = await client.get(f"/app/audiorecords/{record_id}/transcript?version=original")
    assert await original.text() == "brand new words\n"
    # A correction made on the old transcript is refused now.
    response = await client.patch(f"/app/audiorecords/{record_id}/transcript", json={
        "revision": stale, "utterances": [{"index": 0, "text": "late"}]})
    assert response.status == 409


async def test_a_halted_record_without_a_normalized_copy_starts_at_normalization(
    client: Client
) -> None:
    record_id = str((await upload(client))["id"])
    await halt(client, record_id)
    card = await _retranscribe(client, record_id)
    assert (card["stage"], card["halt"]) == ("uploaded", None)
    assert card["language"]["requested"] == "auto"


async def test_other_stages_unknown_languages_and_records(client: Client) -> None:
    record_id = str((await upload(client))["id"])
    answer = await _retranscribe(client, record_id, 409)
    assert answer["error"]["code"] == "not_settled"
    await transcribe(client, record_id)  # transcribed, not done
    await _retranscribe(client, record_id, 409)
    await advance(client, record_id)
    before = await _card(client, record_id)
    answer = await _retranscribe(client, record_id, 400, params={"language": "klingon"})
    assert "ru" in answer["error"]["message"]
    await _retranscribe(client, record_id, 400, json={"language": 5})
    await _retranscribe(client, record_id, 400, json={"speakers": 2})
    assert await _card(client, record_id) == before
    await _retranscribe(client, "nope", 404)
    response = await client.post(f"/app/audiorecords/{record_id}/retranscribe",
                                 headers={"Remote-User": "mallory"})
    assert response.status == 404
    card = await _retranscribe(client, record_id, params={"language": "EN"})
    assert card["language"]["requested"] == "en"


async def test_resume_keeps_the_paid_operation_retranscribe_does_not(
    client: Client, database: TestDatabase
) -> None:
    record_id = str((await upload(client))["id"])
    await advance(client, record_id)
    claimed = await claim(client, record_id)
    await client.app[keys.WRITER].ask(RegisterRecognition(
        record_id=record_id, token=claimed.token, part_index=0, offset_ms=0, provider="fake",
        model="m", source_uri=None))
    await client.app[keys.WRITER].ask(Halt(record_id=record_id, token=claimed.token,
                                           reason=HaltReason.STUCK, error_text="slow"))
    assert (await client.post(f"/app/audiorecords/{record_id}/resume")).status == 200
    assert _recognitions(database, record_id) == 1  # submit will find it: nothing paid twice
    claimed = await claim(client, record_id)
    await client.app[keys.WRITER].ask(Halt(record_id=record_id, token=claimed.token,
                                           reason=HaltReason.STUCK, error_text="slow"))
    await _retranscribe(client, record_id)
    assert _recognitions(database, record_id) == 0
