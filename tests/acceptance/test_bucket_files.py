"""`storage.files = s3` end to end: a real `serve` (real ffmpeg, the fake recognizer)
with its record files in a bucket (moto on loopback).

An upload streams to the bucket in parts with the server's peak memory flat
(300 MiB sent, its growth measured); a record goes through the real pipeline
with nothing under `data_dir/records`; its files download with Range through the
service; the OpenAI door takes a file the same way; delete removes the objects;
neither keys nor the endpoint are logged.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import openai
import pytest

from tests.helpers.audio import FIXTURES
from tests.helpers.processes import free_port, start_server_with_fake_recognizer, wait_ready
from tests.helpers.s3 import Bucket

pytestmark = pytest.mark.slow

AUDIO = FIXTURES / "librivox_0880.mp3"
SAID = "hello from the fake recognizer"
MIB = 1024 * 1024
BIG = 300 * MIB
# One 16 MiB part held, its copy joined for the request, the client's buffers: far
# below what the body would cost if it were held.
GROWTH_MAX = 100 * MIB


def peak_rss(pid: int) -> int:
    """The process's peak resident memory so far (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


async def _noise(total: int) -> AsyncIterator[bytes]:
    """Bytes that are no audio, made as they are sent (never held here either)."""
    block = bytes(range(256)) * 1024
    sent = 0
    while sent < total:
        piece = block[: min(len(block), total - sent)]
        sent += len(piece)
        yield piece


async def _until_done(session: aiohttp.ClientSession, card_url: str) -> dict[str, object]:
    for _ in range(300):
        async with session.get(card_url) as response:
            card = await response.json()
        assert card["halt"] is None, card["halt"]
        if card["stage"] == "done":
            assert isinstance(card, dict)
            return card
        await asyncio.sleep(0.2)
    raise AssertionError("the record did not get done")


async def test_files_in_a_bucket_end_to_end(tmp_path: Path, s3_bucket: Bucket) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server_with_fake_recognizer(
        data_dir, port,
        TRANSCRIBER_PIPELINE_WORKERS="1",
        TRANSCRIBER_STORAGE_MIN_FREE_BYTES="0",
        TRANSCRIBER_RECOGNIZER_DIARIZATION="off",
        TRANSCRIBER_DESCRIBER_PROVIDER="off",
        TRANSCRIBER_STORAGE_FILES="s3",
        TRANSCRIBER_S3_ENDPOINT_URL=s3_bucket.endpoint,
        TRANSCRIBER_S3_BUCKET=s3_bucket.name,
        TRANSCRIBER_S3_REGION="us-east-1",
        TRANSCRIBER_S3_PREFIX=s3_bucket.prefix,
        TRANSCRIBER_S3_ACCESS_KEY_ID="test",
        TRANSCRIBER_S3_SECRET_ACCESS_KEY="test",
    )
    try:
        await asyncio.to_thread(wait_ready, port, server)
        async with aiohttp.ClientSession() as session:
            # A large upload: streamed to the bucket in parts, then refused (not audio);
            # the server's peak memory barely moves, and nothing stays anywhere.
            before = peak_rss(server.pid)
            async with session.post(f"{base}/app/audiorecords", data=_noise(BIG),
                                    headers={"X-Filename": "noise.wav",
                                             "Content-Length": str(BIG)}) as up:
                assert up.status == 415, await up.text()
            growth = peak_rss(server.pid) - before
            print(f"peak memory growth over a {BIG // MIB} MiB upload: {growth / MIB:.1f} MiB")
            assert growth < GROWTH_MAX, f"the server grew by {growth / MIB:.0f} MiB"
            assert s3_bucket.record_keys() == []
            assert s3_bucket.uploads_in_progress() == []

            # A record through the real pipeline, its files only in the bucket.
            body = AUDIO.read_bytes()
            async with session.post(f"{base}/app/audiorecords", data=body,
                                    headers={"X-Filename": AUDIO.name}) as up:
                assert up.status == 201, await up.text()
                record_id = str((await up.json())["id"])
                card_url = base + up.headers["Location"]
            await _until_done(session, card_url)
            keys = s3_bucket.record_keys(record_id)
            assert {key.rsplit(".", 1)[-1] for key in keys} >= {"mp3", "ogg"}
            assert not (data_dir / "records").exists()
            assert list((data_dir / "work").glob("*/*")) == []  # released when done

            # Downloads through the service, with Range.
            async with session.get(f"{card_url}/file",
                                   headers={"Range": "bytes=100-199"}) as part:
                assert part.status == 206
                assert part.headers["Content-Range"] == f"bytes 100-199/{len(body)}"
                assert await part.read() == body[100:200]
            async with session.get(f"{card_url}/file?copy=normalized") as normalized:
                assert normalized.status == 200
                assert normalized.headers["Content-Type"] == "audio/ogg"
                copy = await normalized.read()
            [ogg_key] = [key for key in keys if key.endswith(".ogg")]
            assert copy == s3_bucket.get(ogg_key)
            async with session.get(f"{card_url}/transcript") as text:
                assert (await text.text()).strip() == SAID

        # The OpenAI-compatible door stores its file the same way.
        made = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "transcriber.cli", "token", "create", "alice"],
            env={**os.environ, "TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir)},
            capture_output=True, text=True, timeout=120, check=False)
        assert made.returncode == 0, made.stderr
        token = made.stdout.strip()
        async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key=token) as speech:
            with AUDIO.open("rb") as audio:
                answer = await speech.audio.transcriptions.create(model="whisper-1",
                                                                  file=audio)
        assert answer.text == SAID

        async with aiohttp.ClientSession() as session, session.delete(card_url) as deleted:
            assert deleted.status == 204
        assert s3_bucket.record_keys(record_id) == []
    finally:
        server.terminate()
        output = (await asyncio.to_thread(server.communicate, timeout=30))[0].decode()
    assert server.returncode == 0, output[-3000:]
    assert s3_bucket.endpoint not in output
    assert f"{s3_bucket.prefix}records" not in output
    assert not [key for key in keys if key.rsplit("/", 1)[-1].split(".")[0] in output]
