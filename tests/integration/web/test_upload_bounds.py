"""Bounded uploads over real sockets: the caps answer before the body, stalled bodies are cut."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import suppress
from pathlib import Path

from tests.integration.web.conftest import Client, StartApi
from tests.integration.web.helpers import stored_files
from transcriber.files import TEMP_SUFFIX


def _head(user: str, length: int = 10_000_000) -> bytes:
    return (f"POST /app/audiorecords HTTP/1.1\r\nHost: 127.0.0.1\r\nRemote-User: {user}\r\n"
            f"X-Filename: a.wav\r\nContent-Type: application/octet-stream\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


async def _open_upload(client: Client, user: str) -> tuple[asyncio.StreamReader,
                                                            asyncio.StreamWriter]:
    """An upload that sends its head and a little of its body, then waits."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(_head(user) + b"\0" * 1000)
    await writer.drain()
    return reader, writer


async def _wait_for_parts(data_dir: Path, count: int) -> None:
    for _ in range(200):
        if len([p for p in stored_files(data_dir)
                if p.name.endswith(TEMP_SUFFIX)]) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the uploads did not start")


async def test_caps_refuse_before_the_body_with_retry_after(
    start_api: StartApi, data_dir: Path
) -> None:
    client = await start_api(server={"uploads_max": 3, "uploads_per_user_max": 2})
    held = [await _open_upload(client, "alice"), await _open_upload(client, "alice"),
            await _open_upload(client, "bob")]
    try:
        await _wait_for_parts(data_dir, 3)
        # The whole body is not sent: the answer must come without it.
        refused = await client.post("/app/audiorecords", data=b"a" * 10,
                                    headers={"Remote-User": "alice", "X-Filename": "b.wav"})
        assert refused.status == 429
        assert refused.headers["Retry-After"] == "30"
        assert (await refused.json())["error"]["code"] == "too_many_uploads"
        busy = await client.post("/app/audiorecords", data=b"a" * 10,
                                 headers={"Remote-User": "carol", "X-Filename": "b.wav"})
        assert busy.status == 503
        assert busy.headers["Retry-After"] == "30"
        # Reading is not uploading.
        assert (await client.get("/app/audiorecords",
                                 headers={"Remote-User": "alice"})).status == 200
    finally:
        for _, writer in held:
            writer.close()
    for _ in range(200):  # the hung-up uploads give their slots back
        ok = await client.post("/app/audiorecords", data=b"audio",
                               headers={"Remote-User": "carol", "X-Filename": "c.wav"})
        if ok.status == 201:
            break
        await asyncio.sleep(0.02)
    assert ok.status == 201


async def test_a_stalled_body_is_cut_with_408_and_leaves_nothing(
    start_api: StartApi, data_dir: Path
) -> None:
    client = await start_api(server={"upload_idle_seconds": 0.3})
    reader, writer = await _open_upload(client, "alice")
    try:
        answer = await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
    assert answer.startswith(b"HTTP/1.1 408"), answer[:100]
    assert b'"upload_too_slow"' in answer
    assert stored_files(data_dir) == []


async def test_a_crawling_body_is_cut_after_the_window(
    start_api: StartApi, data_dir: Path
) -> None:
    """The client still sending when it is cut reads its 408, not a reset: without the
    server's linger (`upload._linger`) it failed about one run in three under CPU load."""
    client = await start_api(server={"upload_idle_seconds": 5, "upload_rate_window_seconds": 0.5,
                                     "upload_min_bytes_per_second": 100_000})
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(_head("alice"))

    async def crawl() -> None:
        with suppress(ConnectionError):
            for _ in range(400):  # 50 KB/s: never idle, below the floor
                writer.write(b"\0" * 500)
                await writer.drain()
                await asyncio.sleep(0.01)

    crawling = asyncio.create_task(crawl())
    try:
        answer = await asyncio.wait_for(reader.read(), 5)
    finally:
        crawling.cancel()
        with suppress(asyncio.CancelledError):
            await crawling
        writer.close()
    assert answer.startswith(b"HTTP/1.1 408"), answer[:100]
    assert stored_files(data_dir) == []


async def test_an_ordinary_upload_is_not_cut(start_api: StartApi, data_dir: Path) -> None:
    client = await start_api(server={"upload_idle_seconds": 0.5, "upload_rate_window_seconds": 1,
                                     "upload_min_bytes_per_second": 1000})

    async def body() -> AsyncIterator[bytes]:
        for _ in range(6):  # 1.5 s at 40 KB/s
            yield b"\0" * 10_000
            await asyncio.sleep(0.25)

    response = await client.post("/app/audiorecords", data=body(),
                                 headers={"X-Filename": "a.wav"})
    assert response.status == 201
