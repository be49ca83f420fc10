"""Bounded uploads over real sockets: the caps answer before the body, stalled bodies are
cut, coded bodies refused, a client gone mid-body is no server error."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator
from contextlib import suppress
from pathlib import Path

import pytest
import structlog
from prometheus_client import REGISTRY

from tests.helpers.web import Client, StartApi, stored_files
from transcriber.providers.local_files import TEMP_SUFFIX
from transcriber.testing.transcoder import FakeTranscoder


@pytest.fixture
def engine() -> str:
    """What this module checks is decided at the door, before any storage: it runs on
    the embedded engine only (the API tests that read or write records run on both)."""
    return "sqlite"


def _head(user: str, length: int = 10_000_000,
          content_type: str = "application/octet-stream") -> bytes:
    return (f"POST /app/audiorecords HTTP/1.1\r\nHost: 127.0.0.1\r\nRemote-User: {user}\r\n"
            f"X-Filename: a.wav\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def _counted(route: str, status: str) -> float:
    value = REGISTRY.get_sample_value("transcriber_http_requests_total",
                                      {"route": route, "status": status})
    return value or 0.0


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
    server's linger (`web/errors.py`'s `_linger`) it failed about one run in three under
    CPU load."""
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


GZIPPED_SILENCE = gzip.compress(b"\0" * (8 * 1024**2), compresslevel=9)  # 8 KB, 8 MiB inflated


def _coded_form(part_headers: str) -> bytes:
    return (b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n"
            + part_headers.encode() + b"\r\n" + GZIPPED_SILENCE + b"\r\n--XyZ--\r\n")


@pytest.mark.parametrize(("content_type", "body", "coding"), [
    ("application/octet-stream", GZIPPED_SILENCE, "gzip"),
    ("application/octet-stream", GZIPPED_SILENCE, "deflate"),
    ("application/octet-stream", GZIPPED_SILENCE, "br"),
    ("multipart/form-data; boundary=XyZ", _coded_form(""), "gzip"),
    ("multipart/form-data; boundary=XyZ", _coded_form("Content-Encoding: gzip\r\n"), None),
    ("multipart/form-data; boundary=XyZ",
     _coded_form("Content-Transfer-Encoding: base64\r\n"), None),
])
async def test_a_coded_upload_is_refused_with_415_and_nothing_is_written(
    client: Client, data_dir: Path, transcoder: FakeTranscoder,
    content_type: str, body: bytes, coding: str | None,
) -> None:
    async def chunks() -> AsyncIterator[bytes]:  # chunked: no declared length either
        for start in range(0, len(body), 1000):
            yield body[start:start + 1000]

    headers = {"X-Filename": "a.wav", "Content-Type": content_type}
    if coding is not None:
        headers["Content-Encoding"] = coding
    response = await client.post("/app/audiorecords", data=chunks(), headers=headers)
    assert response.status == 415
    assert (await response.json())["error"]["code"] == "unsupported_encoding"
    assert response.headers["Accept-Encoding"] == "identity"
    assert stored_files(data_dir) == []
    assert transcoder.probed == []


async def test_a_coded_upload_is_refused_before_100_continue(client: Client) -> None:
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(b"POST /app/audiorecords HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Expect: 100-continue\r\nContent-Encoding: gzip\r\nX-Filename: a.wav\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(GZIPPED_SILENCE))
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
    assert answer.startswith(b"HTTP/1.1 415"), answer[:100]
    assert b"100 Continue" not in answer


@pytest.mark.parametrize("multipart", [False, True])
async def test_a_client_gone_mid_upload_is_499_at_info_and_leaves_nothing(
    client: Client, data_dir: Path, multipart: bool
) -> None:
    route = "/app/audiorecords"
    before = {status: _counted(route, status) for status in ("400", "499", "500")}
    # Gone in the form's head, before its file part, or in the middle of a raw body.
    body, content_type = ((b"--XyZ\r\nContent-Disposition: form-da",
                           "multipart/form-data; boundary=XyZ") if multipart
                          else (b"\0" * 5000, "application/octet-stream"))
    with structlog.testing.capture_logs() as logs:
        _, writer = await asyncio.open_connection(client.host, client.port)
        writer.write(_head("alice", content_type=content_type) + body)
        await writer.drain()
        await asyncio.sleep(0.1)  # the handler is waiting for the rest
        writer.close()
        await writer.wait_closed()
        for _ in range(500):
            if _counted(route, "499") > before["499"]:
                break
            await asyncio.sleep(0.01)
    assert {status: _counted(route, status) for status in before} == {
        **before, "499": before["499"] + 1}
    gone = [entry for entry in logs if entry["event"] == "http_client_gone"]
    assert gone == [{"event": "http_client_gone", "route": route, "status": 499,
                     "log_level": "info"}]
    assert not [entry for entry in logs if entry["log_level"] in {"error", "critical"}]
    assert stored_files(data_dir) == []
