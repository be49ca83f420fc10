"""JSON request bodies over real sockets: a size cap before anything is looked up, no
content coding, the upload's pace limits, a cap on bodies at once, a client gone."""

from __future__ import annotations

import asyncio
import gzip
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import suppress

import pytest
import structlog
from prometheus_client import REGISTRY

from tests.helpers.web import Client, StartApi, upload


@pytest.fixture
def engine() -> str:
    """What this module checks is decided at the door, before any storage: it runs on
    the embedded engine only (the API tests that read or write records run on both)."""
    return "sqlite"

ABSENT = "01arz3ndektsv4rrffq69g5fav"  # well-formed, no such record
ROUTES = [
    ("PATCH", f"/app/audiorecords/{ABSENT}"),
    ("PATCH", f"/app/audiorecords/{ABSENT}/transcript"),
    ("POST", f"/app/audiorecords/{ABSENT}/retranscribe"),
]
JSON = {"Content-Type": "application/json"}


def _head(method: str, path: str, *extra: str, length: int | None = None) -> bytes:
    size = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1",
             "Content-Type: application/json", size, *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _error_code(response: object) -> str:
    assert hasattr(response, "json")
    return str((await response.json())["error"]["code"])


def _counted(route: str, status: str) -> float:
    value = REGISTRY.get_sample_value("transcriber_http_requests_total",
                                      {"route": route, "status": status})
    return value or 0.0


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_a_body_over_the_cap_is_413_before_the_record_is_looked_up(
    start_api: StartApi, method: str, path: str
) -> None:
    client = await start_api(server={"json_max_bytes": 1000})
    body = b'{"title": "' + b"x" * 2000 + b'"}'
    declared = await client.request(method, path, data=body, headers=JSON)
    assert declared.status == 413
    assert await _error_code(declared) == "payload_too_large"

    async def chunks() -> AsyncIterator[bytes]:  # no declared length: counted while read
        for _ in range(10):
            yield b" " * 200

    streamed = await client.request(method, path, data=chunks(), headers=JSON)
    assert streamed.status == 413
    # Within the cap the same request reaches the record (absent here).
    small = await client.request(method, path, json={"title": "x"}, headers=JSON)
    assert small.status in {400, 404}


async def test_an_unbounded_body_is_not_held_in_memory(start_api: StartApi) -> None:
    client = await start_api()  # the default cap, 64 KiB
    reader, writer = await asyncio.open_connection(client.host, client.port)
    chunk = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
    tracemalloc.start()
    try:
        writer.write(_head("PATCH", ROUTES[0][1]))

        async def send() -> None:
            with suppress(ConnectionError):
                for _ in range(400):  # 25 MiB of white space, never a JSON value
                    writer.write(chunk)
                    await writer.drain()

        sending = asyncio.create_task(send())
        answer = await asyncio.wait_for(reader.read(), 10)
        sending.cancel()
        with suppress(asyncio.CancelledError):
            await sending
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        writer.close()
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert peak < 8 * 1024**2, f"peak {peak} bytes"


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "x-unknown", "identity, gzip"])
async def test_a_coded_body_is_refused_with_415(client: Client, coding: str) -> None:
    record = await upload(client)
    payload = gzip.compress(b'{"title": "zipped"}')
    response = await client.patch(f"/app/audiorecords/{record['id']}", data=payload,
                                  headers={**JSON, "Content-Encoding": coding})
    assert response.status == 415
    assert await _error_code(response) == "unsupported_encoding"
    assert response.headers["Accept-Encoding"] == "identity"
    card = await (await client.get(f"/app/audiorecords/{record['id']}")).json()
    assert card["title"] != "zipped"
    plain = await client.patch(f"/app/audiorecords/{record['id']}", json={"title": "plain"},
                               headers={"Content-Encoding": "identity"})
    assert plain.status == 200


async def test_a_gzip_bomb_is_never_inflated(client: Client) -> None:
    bomb = gzip.compress(b"[" + b" " * (64 * 1024**2) + b"]", compresslevel=9)
    tracemalloc.start()
    try:
        response = await client.patch(f"/app/audiorecords/{ABSENT}", data=bomb,
                                      headers={**JSON, "Content-Encoding": "gzip"})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.status == 415
    assert peak < 8 * 1024**2, f"peak {peak} bytes"


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_a_silent_body_is_cut_after_the_idle_limit(
    start_api: StartApi, method: str, path: str
) -> None:
    client = await start_api(server={"upload_idle_seconds": 0.3})
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(_head(method, path, length=100) + b'{"title": ')
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b'"body_too_slow"' in answer


async def test_a_crawling_body_is_cut_after_the_window(start_api: StartApi) -> None:
    client = await start_api(server={"upload_idle_seconds": 5, "upload_rate_window_seconds": 0.5,
                                     "upload_min_bytes_per_second": 1000})
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(_head("PATCH", ROUTES[0][1], length=60_000) + b'{"title": "')

    async def crawl() -> None:
        with suppress(ConnectionError):
            for _ in range(300):  # 100 B/s: never idle, below the floor
                writer.write(b"x")
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
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]


async def test_bodies_at_once_are_capped_with_503_and_reading_goes_on(
    start_api: StartApi,
) -> None:
    client = await start_api(server={"json_bodies_max": 2, "upload_idle_seconds": 30})
    record = await upload(client)
    held = []
    try:
        for _ in range(2):
            reader, writer = await asyncio.open_connection(client.host, client.port)
            writer.write(_head("PATCH", f"/app/audiorecords/{record['id']}", length=100)
                         + b"{")
            await writer.drain()
            held.append((reader, writer))
        for _ in range(200):  # both handlers are reading their bodies
            refused = await client.patch(f"/app/audiorecords/{record['id']}",
                                         json={"title": "third"})
            if refused.status == 503:
                break
            await asyncio.sleep(0.01)
        assert refused.status == 503
        assert refused.headers["Retry-After"] == "30"
        assert await _error_code(refused) == "busy"
        # Reading needs no body slot; an upload has slots of its own.
        assert (await client.get(f"/app/audiorecords/{record['id']}")).status == 200
        await upload(client)
    finally:
        for _, writer in held:
            writer.close()
    for _ in range(200):  # the hung-up bodies give their slots back
        ok = await client.patch(f"/app/audiorecords/{record['id']}", json={"title": "later"})
        if ok.status == 200:
            break
        await asyncio.sleep(0.02)
    assert ok.status == 200


async def test_a_client_gone_mid_body_is_499_at_info_never_500(client: Client) -> None:
    record = await upload(client)
    route = "/app/audiorecords/{id}"
    before = {status: _counted(route, status) for status in ("499", "500")}
    with structlog.testing.capture_logs() as logs:
        _, writer = await asyncio.open_connection(client.host, client.port)
        writer.write(_head("PATCH", f"/app/audiorecords/{record['id']}", length=1000)
                     + b'{"title": "cut')
        await writer.drain()
        await asyncio.sleep(0.1)  # the handler is waiting for the rest
        writer.close()
        await writer.wait_closed()
        for _ in range(500):
            if _counted(route, "499") > before["499"]:
                break
            await asyncio.sleep(0.01)
    assert _counted(route, "499") == before["499"] + 1
    assert _counted(route, "500") == before["500"]
    gone = [entry for entry in logs if entry["event"] == "http_client_gone"]
    assert gone == [{"event": "http_client_gone", "route": route, "status": 499,
                     "log_level": "info"}]
    assert not [entry for entry in logs if entry["log_level"] in {"error", "critical"}]
