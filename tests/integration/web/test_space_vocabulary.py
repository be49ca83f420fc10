"""`GET/PUT /app/spaces/{id}/vocabulary` (issue 45): a space's names and terms, read by
any member, replaced by its editors and admins, unknown to a stranger (404, as for
every space route), and told to the recognizer for a record in the space: the owner's
terms, then the space's, then the owner's voices' names, each once."""

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


def _as(login: str) -> dict[str, str]:
    return {"Remote-User": login}


async def _ok(response: Any, status: int) -> Any:
    assert response.status == status, await response.text()
    return await response.json()


async def _family(client: Client) -> str:
    """adam (admin), olga (editor), vera (viewer); rita added and removed."""
    space = await _ok(await client.post("/app/spaces", json={"name": "family"},
                                        headers=_as("adam")), 201)
    for login, role in (("olga", "editor"), ("vera", "viewer"), ("rita", "admin")):
        await _ok(await client.post(f"/app/spaces/{space['id']}/members",
                                    json={"login": login, "role": role},
                                    headers=_as("adam")), 201)
    assert (await client.delete(f"/app/spaces/{space['id']}/members/rita",
                                headers=_as("adam"))).status == 204
    return str(space["id"])


async def test_members_read_a_spaces_vocabulary_and_editors_and_admins_replace_it(
    client: Client,
) -> None:
    space_id = await _family(client)
    path = f"/app/spaces/{space_id}/vocabulary"
    for login in ("adam", "olga", "vera"):
        assert await _ok(await client.get(path, headers=_as(login)), 200) == {"terms": []}
    for login, terms in (("adam", ["Тимофей", " GitLab "]), ("olga", ["GitLab", "gitlab"])):
        saved = await _ok(await client.put(path, json={"terms": terms},
                                           headers=_as(login)), 200)
        assert saved == {"terms": [t.strip() for t in terms][:2 if login == "adam" else 1]}
    # A viewer knows the space (403); a stranger and a removed member do not (404).
    for login, status in (("vera", 403), ("sam", 404), ("rita", 404)):
        response = await client.put(path, json={"terms": ["Вторженец"]}, headers=_as(login))
        assert response.status == status, login
    for login in ("sam", "rita"):
        assert (await client.get(path, headers=_as(login))).status == 404, login
    assert (await client.get("/app/spaces/not-an-id/vocabulary",
                             headers=_as("adam"))).status == 404
    # What stays is the last editor's, and a space's terms are not the person's.
    assert await _ok(await client.get(path, headers=_as("vera")), 200) == {"terms": ["GitLab"]}
    assert (await _ok(await client.get("/app/vocabulary", headers=_as("olga")), 200)
            )["terms"] == []
    bodies: list[object] = [{"terms": "Яна"}, {"terms": [1]}, {"words": []},
                            {"terms": ["x" * 65]}]
    for body in bodies:
        assert (await client.put(path, json=body, headers=_as("adam"))).status == 400, body
    assert await _ok(await client.get(path, headers=_as("adam")), 200) == {"terms": ["GitLab"]}


async def _done(client: Client, record_id: str, login: str) -> dict[str, Any]:
    card: dict[str, Any] = {}
    for _ in range(400):
        card = await (await client.get(f"/app/audiorecords/{record_id}",
                                       headers=_as(login))).json()
        if card["stage"] == "done":
            break
        await asyncio.sleep(0.05)
    return card


async def test_a_record_in_the_space_is_recognized_with_the_spaces_terms(
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
    space_id = await _family(client)
    await _ok(await client.put(f"/app/spaces/{space_id}/vocabulary",
                               json={"terms": ["GitLab", "Тимофей", "Анна Каренина"]},
                               headers=_as("adam")), 200)
    await _ok(await client.put("/app/vocabulary", json={"terms": ["Тимофей", "Яндекс"]},
                               headers=_as("olga")), 200)
    olga = (await _ok(await client.get("/app/me", headers=_as("olga")), 200))["id"]
    database.execute(
        "INSERT INTO voice_profiles (id, owner_id, name, centroid, exemplars, created_at, "
        "updated_at) VALUES (:id, :owner, :name, :blob, :blob, :now, :now)",
        {"id": "01j00000000000000000000000", "owner": olga, "name": "Анна Каренина",
         "blob": b"\0", "now": "2026-01-01T00:00:00Z"})
    upload = {"X-Filename": "a.wav", "Content-Type": "application/octet-stream"}
    # One record of olga's outside the space, then one in it.
    for space in ("", space_id):
        made = await _ok(await client.post(f"/app/audiorecords?space={space}", data=b"audio",
                                           headers={**upload, **_as("olga")}), 201)
        assert (await _done(client, made["id"], "olga"))["stage"] == "done"
    assert [part.terms for part in recognizer.submitted] == [
        ("Тимофей", "Яндекс", "Анна Каренина"),
        ("Тимофей", "Яндекс", "GitLab", "Анна Каренина")]
