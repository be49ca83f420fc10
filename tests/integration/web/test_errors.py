"""One error shape for every 4xx/5xx, aiohttp's own included; nothing leaks."""

from __future__ import annotations

import asyncio
import logging
import sqlite3

import pytest
import structlog
from aiohttp import web
from pytest_aiohttp import AiohttpClient

from tests.helpers.web import Client, ServeLikeServer, upload
from transcriber.settings import ServerSettings
from transcriber.web.errors import ApiError, error_middleware
from transcriber.web.metrics import metrics_middleware


async def _error(response: object) -> dict[str, str]:
    assert hasattr(response, "json")
    body = await response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message"}
    assert isinstance(body["error"]["message"], str)
    return dict(body["error"])


async def test_unknown_route_is_json_404(client: Client) -> None:
    for path in ("/app/nothing", "/nothing/at/all"):
        response = await client.get(path)
        assert response.status == 404
        assert response.content_type == "application/json"
        assert (await _error(response))["code"] == "not_found"


async def test_wrong_method_is_json_405_with_allow(client: Client) -> None:
    response = await client.delete("/app/audiorecords")
    assert response.status == 405
    assert (await _error(response))["code"] == "method_not_allowed"
    assert set(response.headers["Allow"].split(",")) == {"GET", "HEAD", "POST"}


@pytest.mark.parametrize("raw_id", [
    "not-an-id", "0" * 25, "z" * 26, "01ARZ3NDEKTSV4RRFFQ69G5FAV%00", "..%2F..%2Fetc",
])
async def test_malformed_id_is_404(client: Client, raw_id: str) -> None:
    for suffix in ("", "/file", "/transcript"):
        response = await client.get(f"/app/audiorecords/{raw_id}{suffix}")
        assert response.status == 404, (raw_id, suffix)
        assert (await _error(response))["code"] == "not_found"
    assert (await client.post(f"/app/audiorecords/{raw_id}/resume")).status == 404


async def test_another_persons_record_is_404_everywhere(client: Client) -> None:
    record = await upload(client)  # owned by the anonymous user "local"
    record_id = record["id"]
    other = {"Remote-User": "bob"}
    for method, path in (
        ("GET", f"/app/audiorecords/{record_id}"),
        ("GET", f"/app/audiorecords/{record_id}/file"),
        ("GET", f"/app/audiorecords/{record_id}/file?copy=normalized"),
        ("GET", f"/app/audiorecords/{record_id}/transcript"),
        ("POST", f"/app/audiorecords/{record_id}/resume"),
    ):
        response = await client.request(method, path, headers=other)
        assert response.status == 404, path
        assert (await _error(response)) == {"code": "not_found", "message": "no such record"}
    page = await (await client.get("/app/audiorecords", headers=other)).json()
    assert page["items"] == []


async def test_aiohttp_own_413_and_unexpected_errors_are_shaped(
    aiohttp_client: AiohttpClient,
) -> None:
    """A bare app with the same middlewares: aiohttp's 413 and a leaking exception."""

    async def read_body(request: web.Request) -> web.Response:
        await request.read()
        return web.Response()

    async def leak(request: web.Request) -> web.Response:
        raise sqlite3.OperationalError(
            "no such column: secret_col in /srv/data/records/01x/01y.wav https://s3.example/b/k")

    app = web.Application(client_max_size=10, middlewares=[metrics_middleware,
                                                           error_middleware])
    app.router.add_post("/read", read_body)
    app.router.add_get("/leak", leak)
    client = await aiohttp_client(app)

    response = await client.post("/read", data=b"x" * 100)
    assert response.status == 413
    assert (await _error(response))["code"] == "payload_too_large"

    with structlog.testing.capture_logs() as logs:
        response = await client.get("/leak")
    assert response.status == 500
    text = await response.text()
    for secret in ("secret_col", "/srv/data", ".wav", "s3.example", "no such column"):
        assert secret not in text
        assert secret not in repr(logs)
    assert await _error(response) == {"code": "internal", "message": "internal error"}
    assert logs == [{"event": "http_unhandled_error", "route": "/leak",
                     "error": "OperationalError", "log_level": "error"}]


async def test_an_answer_before_the_body_to_a_client_gone_is_quiet(
    aiohttp_client: AiohttpClient, caplog: pytest.LogCaptureFixture
) -> None:
    """`ApiError(close=True)` writes its answer itself; a client gone by then is no error."""
    ended = asyncio.Event()

    async def refuse_late(request: web.Request) -> web.Response:
        try:
            # Until aiohttp has seen the hang-up (it sets no event for it).
            while request.transport is not None and not request.transport.is_closing():  # noqa: ASYNC110
                await asyncio.sleep(0.01)
            raise ApiError(503, "busy", "try again", close=True)
        finally:
            ended.set()

    app = web.Application(middlewares=[metrics_middleware, error_middleware])
    app.router.add_post("/refuse", refuse_late)
    server = ServeLikeServer(app, ServerSettings())
    await aiohttp_client(server)  # started
    _, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(b"POST /refuse HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\nab")
    await writer.drain()
    await asyncio.sleep(0.05)
    with caplog.at_level(logging.DEBUG, logger="aiohttp"):
        writer.close()
        await writer.wait_closed()
        await asyncio.wait_for(ended.wait(), 5)
        await asyncio.sleep(0.1)  # aiohttp finishes the request
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
