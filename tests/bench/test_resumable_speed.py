"""One-shot against resumable (tus, 16 MiB pieces) upload of the same 100 MB WAV to a
real `transcriber serve` on loopback: what the pieces, their fsyncs and offsets, and
the copy from the partial file into the record cost. Two rounds, each one-shot then
resumable; it fails if the resumable upload takes over three times the one-shot's.

Run: `PYTHONPATH=$PWD pytest -m bench -s -p no:cacheprovider tests/bench/test_resumable_speed.py`.
"""

from __future__ import annotations

import asyncio
import io
import subprocess
import time
from pathlib import Path

import aiohttp
import pytest
from yarl import URL

from tests.helpers.processes import free_port, start_server_with_fake_recognizer, wait_ready
from transcriber.cli import resumable
from transcriber.providers.ffmpeg import ffmpeg_executable
from transcriber.settings import FfmpegSettings

pytestmark = pytest.mark.bench
ROUNDS = 2


async def _rounds(wav: Path, size: int, data_dir: Path) -> list[tuple[float, float]]:
    port = free_port()
    server = start_server_with_fake_recognizer(data_dir, port)
    timings: list[tuple[float, float]] = []
    try:
        await asyncio.to_thread(wait_ready, port, server)
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as session:
            for _ in range(ROUNDS):
                began = time.perf_counter()
                with wav.open("rb") as body:
                    async with session.post(f"{base}/app/audiorecords", data=body, headers={
                            "X-Filename": "big.wav",
                            "Content-Type": "application/octet-stream"}) as answer:
                        assert answer.status == 201, await answer.text()
                one_shot = time.perf_counter() - began
                began = time.perf_counter()
                result = await resumable.send(session, URL(base), wav, size, language=None,
                                              timeout_seconds=120, err=io.StringIO())
                assert result.record_id, result
                timings.append((one_shot, time.perf_counter() - began))
    finally:
        server.terminate()
        server.communicate(timeout=20)
    return timings


def test_resumable_upload_costs_little_over_one_shot(
        tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    wav = tmp_path / "big.wav"
    subprocess.run([ffmpeg_executable(FfmpegSettings()), "-nostdin", "-loglevel", "error",
                    "-f", "lavfi", "-i", "sine=frequency=440:duration=3125", "-ar", "16000",
                    "-ac", "1", str(wav)], check=True, timeout=300)
    size = wav.stat().st_size
    size_mb = size / 1e6
    timings = asyncio.run(_rounds(wav, size, data_dir))
    for one_shot, tus in timings:
        print(f"{size_mb:.0f} MB: one-shot {one_shot:.2f} s ({size_mb / one_shot:.0f} MB/s), "
              f"tus in 16 MiB pieces {tus:.2f} s ({size_mb / tus:.0f} MB/s)")
    assert min(tus for _, tus in timings) < 3 * min(one for one, _ in timings)
