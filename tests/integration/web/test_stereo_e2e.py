"""A stereo call end to end: uploaded over HTTP, normalized by real ffmpeg, each
channel recognized by the real Whisper, the card and the JSON export showing each
utterance's channel and speaker."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import orjson
import pytest
from pytest_aiohttp import AiohttpClient

from tests.helpers.settings import SettingsFactory
from tests.helpers.stereo_audio import stereo_call
from tests.helpers.whisper import MakeWhisper
from transcriber.service.app import build_app

pytestmark = pytest.mark.slow


async def test_a_stereo_call_comes_back_with_a_speaker_per_channel(
    tmp_path: Path, aiohttp_client: AiohttpClient, make_settings: SettingsFactory,
    make_whisper: MakeWhisper,
) -> None:
    call = tmp_path / "call.wav"
    if stereo_call(call, seconds=20.0) is None:
        pytest.skip("apt-get install pocketsphinx-testdata")
    # Polled every 0.1 s, far above the card's polling share of the rate limit.
    settings = make_settings(pipeline={"workers": 1, "idle_sleep_seconds": 0.05},
                             recognizer={"language": "en"},
                             server={"rate_limit_requests": 100_000})
    whisper = make_whisper(settings.recognizer)
    client = await aiohttp_client(build_app(settings, recognizer=whisper))
    response = await client.post("/app/audiorecords", data=io.BytesIO(call.read_bytes()), headers={
        "X-Filename": "call.wav", "Content-Type": "application/octet-stream"})
    assert response.status in (200, 201, 202), await response.text()
    record_id = (await response.json())["id"]
    card: dict[str, Any] = {}
    for _ in range(1200):  # the real model on 2 × 20 s of audio, on a shared CPU
        card = await (await client.get(f"/app/audiorecords/{record_id}")).json()
        if card.get("stage") == "done" or card.get("error"):
            break
        await asyncio.sleep(0.1)
    assert card.get("stage") == "done", card
    assert {(u["channel"], u["speaker"]) for u in card["utterances"]} == {(0, "S1"), (1, "S2")}
    assert set(card["speakers"]) == {"S1", "S2"}
    starts = [u["start_ms"] for u in card["utterances"]]
    assert starts == sorted(starts)
    exported = await client.get(f"/app/audiorecords/{record_id}/transcript?format=json")
    assert exported.status == 200
    utterances = orjson.loads(await exported.read())["utterances"]
    assert {(u["channel"], u["speaker"]) for u in utterances} == {(0, "S1"), (1, "S2")}
