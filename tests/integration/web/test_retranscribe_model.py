"""A re-transcription names the model: checked against the service's models (the
active one's and the models folder's), kept on the record, handed to the recognizer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pytest_aiohttp import AiohttpClient

from tests.helpers.gigaam_model import build_model
from tests.helpers.settings import SettingsFactory
from tests.helpers.tokens import bearer, make_token
from tests.helpers.web import Client
from transcriber.pipeline.steps import build_step_table
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.service.app import build_app
from transcriber.testing.recognizer import FakeRecognizer
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys


async def _done(client: Client, record_id: str) -> dict[str, Any]:
    card: dict[str, Any] = {}
    for _ in range(400):
        card = await (await client.get(f"/app/audiorecords/{record_id}")).json()
        if card["stage"] == "done":
            break
        await asyncio.sleep(0.05)
    return card


async def test_a_retranscription_names_a_model_of_the_folder(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory, tmp_path: Path,
) -> None:
    models = tmp_path / "models"
    build_model(models / "gigaam-v3", [("привет", 5)])
    settings = make_settings(pipeline={"workers": 1, "idle_sleep_seconds": 0.05},
                             recognizer={"models_dir": models})
    recognizer = FakeRecognizer()
    transcoder = FakeTranscoder(duration_ms=1500)
    steps = build_step_table(transcoder=transcoder, cutter=FfmpegTranscoder(settings.ffmpeg),
                             recognizer=recognizer, store=None)
    app = build_app(settings, steps=steps, recognizer=recognizer)
    app[keys.TRANSCODER] = transcoder
    client = await aiohttp_client(app)
    response = await client.post("/app/audiorecords", data=b"audio", headers={
        "X-Filename": "a.wav", "Content-Type": "application/octet-stream"})
    record_id = (await response.json())["id"]
    assert (await _done(client, record_id))["model"] == "fake"
    path = f"/app/audiorecords/{record_id}/retranscribe"
    refused = await client.post(path, json={"model": "whisper-large"})
    assert refused.status == 400
    assert (await refused.json())["error"]["message"] == (
        "model must be one of: fake, whisper-base, gigaam-v3")
    assert (await client.post(path, json={"model": 3})).status == 400
    again = await client.post(path, json={"model": "gigaam-v3", "language": "ru"})
    assert again.status == 200
    await _done(client, record_id)
    assert [(p.model, p.language) for p in recognizer.submitted] == [
        (None, "auto"), ("gigaam-v3", "ru")]
    # Without a model the routes choose again.
    assert (await client.post(f"{path}?language=ru")).status == 200
    await _done(client, record_id)
    assert recognizer.submitted[-1].model is None


async def test_the_openai_door_lists_the_models_folder_beside_the_recognizer(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory, tmp_path: Path,
) -> None:
    models = tmp_path / "models"
    build_model(models / "gigaam-v3", [("привет", 5)])
    settings = make_settings(recognizer={"models_dir": models})
    recognizer = FakeRecognizer()
    app = build_app(settings, steps=build_step_table(
        transcoder=FakeTranscoder(), cutter=FfmpegTranscoder(settings.ffmpeg),
        recognizer=recognizer, store=None), recognizer=recognizer)
    client = await aiohttp_client(app)
    token = await make_token(app)
    listed = await (await client.get("/v1/models", headers=bearer(token))).json()
    assert [m["id"] for m in listed["data"]] == ["fake", "gigaam-v3"]
    one = await client.get("/v1/models/gigaam-v3", headers=bearer(token))
    assert (one.status, (await one.json())["id"]) == (200, "gigaam-v3")
    missing = await client.get("/v1/models/whisper-large", headers=bearer(token))
    assert missing.status == 404
    assert (await missing.json())["error"]["code"] == "model_not_found"
