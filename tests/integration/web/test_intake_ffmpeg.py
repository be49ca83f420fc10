"""Intake with the real transcoder: ffmpeg-made audio is measured, text is refused (415)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import imageio_ffmpeg
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from tests.helpers import hostile_media as hm
from tests.helpers.settings import SettingsFactory
from tests.helpers.web import stored_files
from transcriber.service.app import build_app
from transcriber.testing.clock import FakeClock

FIXTURES = Path(__file__).parents[2] / "fixtures" / "audio"


@pytest.fixture
async def real_client(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory
) -> TestClient[web.Request, web.Application]:
    # No transcoder injected: the app builds the ffmpeg one from its settings.
    app = build_app(make_settings(pipeline={"workers": 0}), clock=FakeClock())
    return await aiohttp_client(app)


def _tone(path: Path, seconds: float) -> Path:
    subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-nostdin", "-loglevel", "error", "-y",
         "-f", "lavfi", "-i", f"sine=frequency=440:duration={seconds}",
         "-ac", "1", "-ar", "16000", str(path)],
        check=True, timeout=60,
    )
    return path


async def test_real_audio_is_measured_at_intake(
    real_client: TestClient[web.Request, web.Application], tmp_path: Path
) -> None:
    tone = _tone(tmp_path / "tone.wav", 2.5)
    response = await real_client.post("/app/audiorecords", data=tone.read_bytes(),
                                      headers={"X-Filename": "tone.wav"})
    assert response.status == 201, await response.text()
    body = await response.json()
    assert abs(body["duration_ms"] - 2500) <= 50
    assert body["size_bytes"] == tone.stat().st_size


async def test_fixture_mp3_is_measured(
    real_client: TestClient[web.Request, web.Application],
) -> None:
    clip = FIXTURES / "librivox_0880.mp3"
    response = await real_client.post("/app/audiorecords", data=clip.read_bytes(),
                                      headers={"X-Filename": clip.name})
    assert response.status == 201, await response.text()
    assert (await response.json())["duration_ms"] > 500


async def test_text_file_is_refused_with_415_and_nothing_stays(
    real_client: TestClient[web.Request, web.Application], data_dir: Path
) -> None:
    response = await real_client.post(
        "/app/audiorecords", data=b"These are my meeting notes, not a recording.\n" * 50,
        headers={"X-Filename": "notes.mp3"})
    assert response.status == 415
    assert (await response.json())["error"]["code"] == "not_audio"
    assert stored_files(data_dir) == []


@pytest.mark.parametrize(("content", "code"), [
    (hm.wav(rate=384_000, seconds=0.05), "sample_rate_too_high"),
    (hm.wav(rate=1_048_575, seconds=0.05, channels=8), "sample_rate_too_high"),
    (hm.absurd_rate_wav(), "sample_rate_too_high"),
    (hm.wav(rate=48_000, seconds=0.05, channels=9), "too_many_channels"),
])
async def test_rates_and_channels_past_the_limits_are_refused_at_intake(
    real_client: TestClient[web.Request, web.Application], data_dir: Path,
    content: bytes, code: str,
) -> None:
    """What a header makes the normalizer pay grows with rate × channels, whatever the
    file's size: a 16.7 KB FLAC at 1 MHz × 8 channels took 4.9 s per 30 s."""
    response = await real_client.post("/app/audiorecords", data=content,
                                      headers={"X-Filename": "x.wav"})
    assert response.status == 415
    body = await response.json()
    assert body["error"]["code"] == code
    assert ("192000 Hz" if code == "sample_rate_too_high" else "8 channels") in \
        body["error"]["message"]
    assert stored_files(data_dir) == []


async def test_rates_and_channels_at_the_limits_are_taken(
    real_client: TestClient[web.Request, web.Application],
) -> None:
    for content in (hm.wav(rate=192_000, seconds=0.05), hm.wav(seconds=0.05, channels=8)):
        response = await real_client.post("/app/audiorecords", data=content,
                                          headers={"X-Filename": "x.wav"})
        assert response.status == 201, await response.text()
