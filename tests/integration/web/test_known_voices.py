"""Known voices through HTTP, on real voices: a speaker named on one record is suggested
on the next, confirmed or rejected; profiles listed, renamed, merged, deleted, purged;
lines moved between speakers teach the profiles; one owner's voices never reach another.

The recordings are real speech (`tests/helpers/known_voices.py`: the LibriVox reader
`LV`, the `cards` speaker `CD`, the `DH` clips), separated by the real engine (VAD,
ONNX embedder, clustering) once per module; the records move through the pipeline with
the poll step's own effects (`SaveTranscript`, `voices_effect`), the recognition being
the only thing not run (its words are one a 400 ms of each known turn).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from tests.helpers.known_voices import Recording, separated_recordings
from tests.helpers.web import Client, StartApi, advance, upload
from transcriber.cli.voices import purge_command
from transcriber.db import queries as q
from transcriber.domain.transcripts import dump_structure, plain_text
from transcriber.pipeline.effects import SaveTranscript
from transcriber.pipeline.voices import voices_effect
from transcriber.web import keys


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Recording]:
    return separated_recordings(tmp_path_factory.mktemp("voices"))


async def _record(client: Client, recording: Recording, headers: dict[str, str] | None = None,
                  ) -> str:
    """A record through the pipeline whose transcript and voices are the recording's."""
    record_id = str((await upload(client, headers=headers))["id"])
    utterances = recording.separation.utterances
    await advance(client, record_id)
    await advance(client, record_id)
    await advance(client, record_id,
                  SaveTranscript(text=plain_text(utterances),
                                 structure_json=dump_structure(utterances)),
                  voices_effect(client.app[keys.SETTINGS], recording.separation.voices,
                                utterances))
    await advance(client, record_id)
    return record_id


async def _card(client: Client, record_id: str, headers: dict[str, str] | None = None) -> dict:  # type: ignore[type-arg]
    response = await client.get(f"/app/audiorecords/{record_id}", headers=headers)
    assert response.status == 200, await response.text()
    return await response.json()  # type: ignore[no-any-return]


async def _name(client: Client, record_id: str, names: dict[str, str]) -> dict:  # type: ignore[type-arg]
    response = await client.patch(f"/app/audiorecords/{record_id}", json={"speakers": names})
    assert response.status == 200, await response.text()
    return await response.json()  # type: ignore[no-any-return]


async def _voices(client: Client, headers: dict[str, str] | None = None) -> dict[str, dict]:  # type: ignore[type-arg]
    response = await client.get("/app/voices", headers=headers)
    assert response.status == 200
    return {v["name"]: v for v in (await response.json())["items"]}


async def _enrolled(client: Client, recordings: dict[str, Recording]) -> str:
    enrol = recordings["enrol"]
    record_id = await _record(client, enrol)
    card = await _card(client, record_id)
    assert all(s["suggested"] is None for s in card["speakers"].values())  # no profile yet
    await _name(client, record_id, {enrol.label("LV"): "Анна", enrol.label("CD"): "Борис"})
    return record_id


async def test_a_named_voice_is_suggested_then_confirmed_or_rejected(
        client: Client, recordings: dict[str, Recording]) -> None:
    await _enrolled(client, recordings)
    voices = await _voices(client)
    assert set(voices) == {"Анна", "Борис"}
    assert voices["Анна"]["records"] == 1
    assert voices["Анна"]["talk_ms"] > 5000
    # Names and counts only: never an embedding.
    assert set(voices["Анна"]) == {"id", "name", "records", "talk_ms", "created_at",
                                   "updated_at"}

    known = recordings["known"]
    made = REGISTRY.get_sample_value("transcriber_voice_suggestions_total",
                                     {"outcome": "made"}) or 0.0
    record_id = await _record(client, known)
    assert REGISTRY.get_sample_value("transcriber_voice_suggestions_total",
                                     {"outcome": "made"}) == made + 2
    speakers = (await _card(client, record_id))["speakers"]
    anna, boris = known.label("LV"), known.label("CD")
    threshold = client.app[keys.SETTINGS].speakers.suggestion_threshold
    assert speakers[anna]["suggested"]["name"] == "Анна"
    assert speakers[anna]["suggested"]["profile_id"] == voices["Анна"]["id"]
    assert speakers[anna]["suggested"]["similarity"] >= threshold
    assert speakers[boris]["suggested"]["name"] == "Борис"
    assert speakers[anna]["name"] == ""  # shown, not applied
    assert "Анна" not in await (await client.get(
        f"/app/audiorecords/{record_id}/transcript?format=txt")).text()

    # Confirm: the name is given and the profile learns from this record too.
    path = f"/app/audiorecords/{record_id}/speakers"
    stale = await client.post(f"{path}/{anna}/confirm",
                              json={"profile_id": voices["Борис"]["id"]})
    assert stale.status == 409
    response = await client.post(f"{path}/{anna}/confirm",
                                 json={"profile_id": voices["Анна"]["id"]})
    assert response.status == 200, await response.text()
    card = await response.json()
    assert card["speakers"][anna] == {**card["speakers"][anna], "name": "Анна",
                                      "suggested": None}
    after = await _voices(client)
    assert after["Анна"]["records"] == 2
    assert after["Анна"]["talk_ms"] > voices["Анна"]["talk_ms"]

    # Reject: gone, and never suggested again for this speaker (not after a rename either).
    response = await client.post(f"{path}/{boris}/reject")
    assert response.status == 200
    assert (await response.json())["speakers"][boris]["suggested"] is None
    await _name(client, record_id, {anna: "Анна"})  # suggestions are chosen again
    assert (await _card(client, record_id))["speakers"][boris]["suggested"] is None
    assert (await client.post(f"{path}/{boris}/reject")).status == 409
    assert (await client.post(f"{path}/S9/confirm")).status == 409
    assert (await client.post(f"{path}/X1/confirm")).status == 404


async def test_a_voice_never_named_gets_no_suggestion(
        client: Client, recordings: dict[str, Recording]) -> None:
    await _enrolled(client, recordings)
    stranger = recordings["stranger"]
    record_id = await _record(client, stranger)
    speakers = (await _card(client, record_id))["speakers"]
    assert speakers[stranger.label("DH")]["suggested"] is None
    assert speakers[stranger.label("LV")]["suggested"]["name"] == "Анна"


async def test_exports_use_suggestions_only_when_told_to(
        start_api: StartApi, recordings: dict[str, Recording]) -> None:
    client = await start_api(speakers={"apply_suggestions": True})
    await _enrolled(client, recordings)
    known = recordings["known"]
    record_id = await _record(client, known)
    text = await (await client.get(f"/app/audiorecords/{record_id}/transcript")).text()
    # The first turn is LV's, the second CD's.
    assert [line.split(":")[0] for line in text.splitlines()[:2]] == ["Анна (?)", "Борис (?)"]
    await _name(client, record_id, {known.label("LV"): "Anna K."})
    text = await (await client.get(f"/app/audiorecords/{record_id}/transcript")).text()
    assert text.splitlines()[0].startswith("Anna K.: w0")  # a given name wins


async def test_voices_are_renamed_merged_and_deleted(
        client: Client, recordings: dict[str, Recording]) -> None:
    enrolled = await _enrolled(client, recordings)
    voices = await _voices(client)
    anna, boris = voices["Анна"]["id"], voices["Борис"]["id"]
    assert (await client.patch(f"/app/voices/{anna}", json={"name": "Борис"})).status == 409
    renamed = await client.patch(f"/app/voices/{anna}", json={"name": "Анна К."})
    assert (await renamed.json())["name"] == "Анна К."
    assert (await client.patch(f"/app/voices/{anna}", json={"name": ""})).status == 400
    # The names already given on records stay as they were typed.
    card = await _card(client, enrolled)
    assert {s["name"] for s in card["speakers"].values()} == {"Анна", "Борис"}

    assert (await client.post(f"/app/voices/{anna}/merge", json={"into": anna})).status == 400
    merged = await client.post(f"/app/voices/{boris}/merge", json={"into": anna})
    assert merged.status == 200
    assert (await merged.json())["records"] == 1
    assert set(await _voices(client)) == {"Анна К."}
    assert (await client.patch(f"/app/voices/{boris}", json={"name": "x"})).status == 404

    assert (await client.delete(f"/app/voices/{anna}")).status == 204
    assert await _voices(client) == {}
    rows = await client.app[keys.READERS].fetch_all(q.voices.PROFILE_SOURCES,
                                                    {"profile_id": anna})
    assert rows == []  # what it learned went with it
    card = await _card(client, enrolled)
    assert {s["name"] for s in card["speakers"].values()} == {"Анна", "Борис"}
    assert (await client.delete(f"/app/voices/{anna}")).status == 404


async def test_moving_lines_teaches_the_profiles(
        client: Client, recordings: dict[str, Recording]) -> None:
    record_id = await _enrolled(client, recordings)
    enrol = recordings["enrol"]
    before = await _voices(client)
    card = await _card(client, record_id)
    moved = [{"index": u["index"], "speaker": enrol.label("LV")}
             for u in card["utterances"] if u["speaker"] == enrol.label("CD")]
    response = await client.patch(f"/app/audiorecords/{record_id}/transcript",
                                  json={"revision": card["revision"], "utterances": moved})
    assert response.status == 200, await response.text()
    after = await _voices(client)
    # Борис has no line left: his only source went, and the profile with it; Анна now
    # holds every line (the windows of the moved lines joined her print).
    assert set(after) == {"Анна"}
    assert after["Анна"]["talk_ms"] > before["Анна"]["talk_ms"]


async def test_one_owners_voices_never_reach_another(
        client: Client, recordings: dict[str, Recording]) -> None:
    await _enrolled(client, recordings)
    bob = {"Remote-User": "bob"}
    assert await _voices(client, bob) == {}
    anna = (await _voices(client))["Анна"]["id"]
    assert (await client.patch(f"/app/voices/{anna}", json={"name": "x"},
                               headers=bob)).status == 404
    assert (await client.delete(f"/app/voices/{anna}", headers=bob)).status == 404
    record_id = await _record(client, recordings["known"], headers=bob)
    card = await _card(client, record_id, bob)
    assert all(s["suggested"] is None for s in card["speakers"].values())


async def test_turned_off_nothing_is_learned_or_suggested(
        start_api: StartApi, recordings: dict[str, Recording]) -> None:
    client = await start_api(recognizer={"voice_profiles": False})
    await _enrolled(client, recordings)
    assert await _voices(client) == {}
    record_id = await _record(client, recordings["known"])
    rows = await client.app[keys.READERS].fetch_all(q.voices.RECORD_VOICES,
                                                    {"record_id": record_id})
    assert rows == []
    assert (await client.post(f"/app/audiorecords/{record_id}/speakers/S1/confirm")
            ).status == 409


async def test_purge_deletes_every_embedding(
        client: Client, recordings: dict[str, Recording], data_dir: Path) -> None:
    record_id = await _enrolled(client, recordings)
    bob = {"Remote-User": "bob"}
    bobs = await _record(client, recordings["enrol"], headers=bob)
    enrol = recordings["enrol"]
    response = await client.patch(f"/app/audiorecords/{bobs}", headers=bob,
                                  json={"speakers": {enrol.label("LV"): "Ann"}})
    assert response.status == 200
    readers = client.app[keys.READERS]
    assert await readers.fetch_all(q.voices.RECORD_VOICES, {"record_id": record_id})
    settings = client.app[keys.SETTINGS]
    assert await purge_command(settings, "nobody-here") != 0
    # One user's purge leaves everybody else's voices as they were.
    assert await purge_command(settings, settings.server.anonymous_user) == 0
    assert await _voices(client) == {}
    assert set(await _voices(client, bob)) == {"Ann"}
    assert await readers.fetch_all(q.voices.RECORD_VOICES, {"record_id": bobs})
    assert await readers.fetch_all(q.voices.RECORD_VOICES, {"record_id": record_id}) == []
    assert await readers.fetch_one(q.voices.RECORD_WINDOWS, {"record_id": record_id}) is None
    card = await _card(client, record_id)
    assert {s["name"] for s in card["speakers"].values()} == {"Анна", "Борис"}
    # Without a login: everybody's.
    assert await purge_command(settings, None) == 0
    assert await _voices(client, bob) == {}
    assert await readers.fetch_all(q.voices.RECORD_VOICES, {"record_id": bobs}) == []


async def test_a_deleted_record_takes_its_prints_not_what_the_profiles_learned(
        client: Client, recordings: dict[str, Recording]) -> None:
    record_id = await _enrolled(client, recordings)
    assert (await client.delete(f"/app/audiorecords/{record_id}")).status == 204
    readers = client.app[keys.READERS]
    assert await readers.fetch_all(q.voices.RECORD_VOICES, {"record_id": record_id}) == []
    assert await readers.fetch_one(q.voices.RECORD_WINDOWS, {"record_id": record_id}) is None
    # The profiles keep what they learned (the owner deletes a profile, or purges).
    assert set(await _voices(client)) == {"Анна", "Борис"}
    known = recordings["known"]
    card = await _card(client, await _record(client, known))
    assert card["speakers"][known.label("LV")]["suggested"]["name"] == "Анна"
