"""A resumable upload survives its client dying and its server's SIGKILL (issue 42,
item 7): `transcriber serve` in a process of its own, a 42 MB WAV sent through tus;
the client's connection is cut a quarter of the way in, then the server is killed
with SIGKILL three quarters in; after a restart the upload goes on from the offset
the server stored, and the stored file's SHA-256 is the source's.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.helpers.processes import free_port, start_server_with_fake_recognizer, wait_ready
from tests.helpers.web import stored_files
from transcriber.providers.ffmpeg import ffmpeg_executable
from transcriber.settings import FfmpegSettings
from transcriber.web.upload_bytes import PERSIST_BYTES

# Over 10 s: two real `serve` processes and a 42 MB file.
pytestmark = pytest.mark.slow

TUS = {"Tus-Resumable": "1.0.0"}
OCTETS = {**TUS, "Content-Type": "application/offset+octet-stream"}
PIECE = 256 * 1024


def _source(tmp_path: Path) -> bytes:
    wav = tmp_path / "tone.wav"
    subprocess.run([ffmpeg_executable(FfmpegSettings()), "-nostdin", "-loglevel", "error",
                    "-f", "lavfi", "-i", "sine=frequency=440:duration=1300", "-ar", "16000",
                    "-ac", "1", str(wav)], check=True, timeout=120)
    return wav.read_bytes()


async def _body(data: bytes, sent: asyncio.Event, hold: asyncio.Event
                ) -> AsyncIterator[bytes]:
    for start in range(0, len(data), PIECE):
        yield data[start:start + PIECE]
    sent.set()
    await hold.wait()  # the body stays open: the connection is cut, or the server dies


async def _offset(session: aiohttp.ClientSession, url: str) -> int:
    async with session.head(url, headers=TUS) as response:
        assert response.status == 200
        return int(response.headers["Upload-Offset"])


def _patch(session: aiohttp.ClientSession, url: str, data: bytes, offset: int, end: int,
           sent: asyncio.Event) -> asyncio.Future[aiohttp.ClientResponse]:
    """PATCH `data[offset:end]` (declaring the rest of the file) and keep the body open."""
    return asyncio.ensure_future(session.patch(
        url, data=_body(data[offset:end], sent, asyncio.Event()),
        headers={**OCTETS, "Upload-Offset": str(offset),
                 "Content-Length": str(len(data) - offset)}))


async def _until_offset(session: aiohttp.ClientSession, url: str, low: int) -> int:
    for _ in range(400):
        offset = await _offset(session, url)
        if offset >= low:
            return offset
        await asyncio.sleep(0.05)
    raise AssertionError(f"the stored offset never reached {low}")


async def _gone(patching: asyncio.Future[aiohttp.ClientResponse]) -> None:
    patching.cancel()  # the client goes away: its connection closes mid-body
    with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError):
        await patching


async def _scenario(tmp_path: Path, data_dir: Path) -> None:
    data = _source(tmp_path)
    quarter, three_quarters = len(data) // 4, len(data) * 3 // 4
    assert three_quarters - quarter > 2 * PERSIST_BYTES
    port = free_port()
    server = start_server_with_fake_recognizer(data_dir, port)
    try:
        await asyncio.to_thread(wait_ready, port, server)
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as session:
            async with session.post(f"{base}/app/uploads/", headers={
                    **TUS, "Upload-Length": str(len(data)),
                    "Upload-Metadata": "filename dG9uZS53YXY="}) as created:
                assert created.status == 201
                url = base + created.headers["Location"]
            # The client dies a quarter of the way in: the server keeps what arrived.
            sent = asyncio.Event()
            patching = _patch(session, url, data, 0, quarter, sent)
            await sent.wait()
            await _gone(patching)
            kept = await _until_offset(session, url, 1)
            assert kept <= quarter
            # Three quarters in, the server is killed (SIGKILL: no chance to store
            # anything more) once it has stored at least one PERSIST_BYTES step.
            sent = asyncio.Event()
            patching = _patch(session, url, data, kept, three_quarters, sent)
            await sent.wait()
            stored_before_kill = await _until_offset(session, url, kept + PERSIST_BYTES)
            server.kill()
            await asyncio.to_thread(server.communicate, timeout=10)
            await _gone(patching)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()

    port = free_port()
    server = start_server_with_fake_recognizer(data_dir, port)
    try:
        await asyncio.to_thread(wait_ready, port, server)
        url = f"http://127.0.0.1:{port}" + url.split(str(port_of(url)), 1)[1]
        async with aiohttp.ClientSession() as session:
            offset = await _offset(session, url)
            # Not back at the start, nor past what was sent before the kill.
            assert stored_before_kill <= offset <= three_quarters
            async with session.patch(url, data=io.BytesIO(data[offset:]), headers={
                    **OCTETS, "Upload-Offset": str(offset)}) as last:
                assert last.status == 204, await last.text()
                record_id = last.headers["X-Record-Id"]
    finally:
        server.terminate()
        server.communicate(timeout=20)
    (stored,) = stored_files(data_dir)
    assert stored.parent.name == record_id
    assert hashlib.sha256(stored.read_bytes()).hexdigest() == hashlib.sha256(data).hexdigest()


def port_of(url: str) -> int:
    return int(url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])


def test_an_upload_survives_its_client_dying_and_its_server_killed(
        tmp_path: Path, data_dir: Path) -> None:
    asyncio.run(_scenario(tmp_path, data_dir))
