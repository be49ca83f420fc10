"""`GET/PUT /app/vocabulary`: a person's names and terms, kept per person, with their
known voices' names beside them, and told to the recognizer with each part."""

from __future__ import annotations

import asyncio
from typing import Any

from pytest_aiohttp import AiohttpClient

from tests.helpers.database import TestDatabase
from tests.helpers.settings import SettingsFactory
from tests.helpers.web import Client
from transcriber.pipeline.steps import build_step_table
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.service.app import build_app
from transcriber.testing.recognizer import FakeRecognizer
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys

BOB = {"Remote-User": "bob"}


async def test_a_vocabulary_is_kept_per_person(client: Client) -> None:
    empty = await client.get("/app/vocabulary")
    assert empty.status == 200
    assert await empty.json() == {"terms": [], "voice_names": []}
    saved = await client.put("/app/vocabulary",
                             json={"terms": [" Тимофей ", "GitLab", "gitlab", "Open  AI"]})
    assert saved.status == 200
    assert await saved.json() == {"terms": ["Тимофей", "GitLab", "Open AI"],
                                  "voice_names": []}
    assert (await (await client.get("/app/vocabulary")).json())["terms"] == [
        "Тимофей", "GitLab", "Open AI"]
    # Another person's is their own.
    assert (await (await client.get("/app/vocabulary", headers=BOB)).json())["terms"] == []
    replaced = await client.put("/app/vocabulary", json={"terms": []})
    assert (await replaced.json())["terms"] == []


async def test_a_bad_vocabulary_is_400_and_keeps_the_old_one(client: Client) -> None:
    await client.put("/app/vocabulary", json={"terms": ["Яна"]})
    bodies: list[object] = [{"terms": "Яна"}, {"terms": [1]}, {"terms": ["x" * 65]},
                            {"terms": ["a"] * 201}, {"words": []}, ["Яна"]]
    for body in bodies:
        response = await client.put("/app/vocabulary", json=body)
        assert response.status == 400, body
    assert (await (await client.get("/app/vocabulary")).json())["terms"] == ["Яна"]


async def _done(client: Client, record_id: str) -> dict[str, Any]:
    card: dict[str, Any] = {}
    for _ in range(400):
        card = await (await client.get(f"/app/audiorecords/{record_id}")).json()
        if card["stage"] == "done":
            break
        await asyncio.sleep(0.05)
    return card


async def test_the_recognizer_is_told_the_terms_and_the_voices_names(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory, database: TestDatabase,
) -> None:
    settings = make_settings(pipeline={"workers": 1, "idle_sleep_seconds": 0.05})
    recognizer = FakeRecognizer()
    transcoder = FakeTranscoder(duration_ms=1500)
    steps = build_step_table(transcoder=transcoder, cutter=FfmpegTranscoder(settings.ffmpeg),
                             recognizer=recognizer, store=None)
    app = build_app(settings, steps=steps, recognizer=recognizer)
    app[keys.TRANSCODER] = transcoder
    client = await aiohttp_client(app)
    await client.put("/app/vocabulary", json={"terms": ["Тимофей", "GitLab"]})
    owner = (await (await client.get("/app/me")).json())["id"]
    database.execute(
        "INSERT INTO voice_profiles (id, owner_id, name, centroid, exemplars, created_at, "
        "updated_at) VALUES (:id, :owner, :name, :blob, :blob, :now, :now)",
        {"id": "01j00000000000000000000000", "owner": owner, "name": "Анна Каренина",
         "blob": b"\0", "now": "2026-01-01T00:00:00Z"})
    listed = await (await client.get("/app/vocabulary")).json()
    assert listed == {"terms": ["Тимофей", "GitLab"], "voice_names": ["Анна Каренина"]}
    response = await client.post("/app/audiorecords", data=b"audio", headers={
        "X-Filename": "a.wav", "Content-Type": "application/octet-stream"})
    card = await _done(client, (await response.json())["id"])
    assert card["stage"] == "done"
    assert [part.terms for part in recognizer.submitted] == [
        ("Тимофей", "GitLab", "Анна Каренина")]
