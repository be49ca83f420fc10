"""Hostile pages: cross-site state changes (403) and foreign Host names (421).

Each refusal stores nothing; our own web app (its custom header), same-origin
browsers and scripts without browser markers (curl) keep working.
"""

from __future__ import annotations

from ipaddress import ip_network

import aiohttp
import pytest

from tests.helpers.database import TestDatabase
from tests.helpers.web import Client, StartApi, stored_files


@pytest.fixture
def engine() -> str:
    """What this module checks is decided at the door, before any storage: it runs on
    the embedded engine only (the API tests that read or write records run on both)."""
    return "sqlite"

EVIL = "https://evil.example"


def _records(database: TestDatabase) -> int:
    return database.count("audio_records")


def _form() -> aiohttp.FormData:
    form = aiohttp.FormData()
    form.add_field("file", b"audio bytes", filename="a.mp3", content_type="audio/mpeg")
    return form


@pytest.mark.parametrize("headers", [
    {"Origin": EVIL},
    {"Sec-Fetch-Site": "cross-site"},
    {"Origin": EVIL, "Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},  # another port or subdomain of ours
    {"Origin": "null"},  # a sandboxed frame or a data: page
    # A page cannot both be cross-site and send our header (no preflight is
    # granted); should a browser ever do so, its own marker wins.
    {"Sec-Fetch-Site": "cross-site", "X-Transcriber-Client": "web"},
])
@pytest.mark.parametrize("body", ["text/plain", "multipart"])
async def test_cross_site_post_is_refused_and_stores_nothing(
    client: Client, database: TestDatabase, headers: dict[str, str], body: str
) -> None:
    if body == "text/plain":  # what a cross-site <form enctype=text/plain> sends
        response = await client.post("/app/audiorecords", data=b"x=audio",
                                     headers={**headers, "Content-Type": "text/plain"})
    else:
        response = await client.post("/app/audiorecords", data=_form(), headers=headers)
    assert response.status == 403
    assert (await response.json())["error"]["code"] == "cross_site"
    assert _records(database) == 0
    assert stored_files(database.data_dir) == []


async def test_cross_site_resume_is_refused(client: Client) -> None:
    response = await client.post("/app/audiorecords/01arz3ndektsv4rrffq69g5fav/resume",
                                 headers={"Origin": EVIL})
    assert response.status == 403


async def test_a_cross_site_get_is_left_to_the_browser(client: Client) -> None:
    # Reading is guarded by the browser's same-origin policy (no CORS headers).
    response = await client.get("/app/me", headers={"Origin": EVIL,
                                                    "Sec-Fetch-Site": "cross-site"})
    assert response.status == 200
    assert "Access-Control-Allow-Origin" not in response.headers


@pytest.mark.parametrize("headers", [
    {"X-Transcriber-Client": "web"},  # the web app, also behind a Host-rewriting proxy
    {"Sec-Fetch-Site": "same-origin"},
    {"Sec-Fetch-Site": "none"},  # typed by the user
    {},  # curl, scripts: no browser sent this
])
async def test_our_own_and_non_browser_uploads_pass(
    client: Client, database: TestDatabase, headers: dict[str, str]
) -> None:
    response = await client.post("/app/audiorecords", data=_form(), headers=headers)
    assert response.status == 201
    assert _records(database) == 1


async def test_an_origin_equal_to_our_own_passes(client: Client) -> None:
    own = f"http://{client.host}:{client.port}"
    response = await client.post("/app/audiorecords", data=_form(), headers={"Origin": own})
    assert response.status == 201


async def test_an_origin_of_another_scheme_is_refused(
    client: Client, database: TestDatabase
) -> None:
    # https://host:port is another origin than the http service on host:port.
    other = f"https://{client.host}:{client.port}"
    response = await client.post("/app/audiorecords", data=_form(), headers={"Origin": other})
    assert response.status == 403
    assert (await response.json())["error"]["code"] == "cross_site"
    assert _records(database) == 0


@pytest.mark.parametrize(("proto", "origin", "status"), [
    ("https", "https", 201),
    ("http", "http", 201),
    ("http", "https", 403),
    ("https", "http", 403),
    ("gopher", "http", 201),  # nonsense is ignored: the connection's own scheme
    ("http, https", "https", 201),  # the last value is the trusted proxy's
])
async def test_a_trusted_proxy_says_which_scheme(
    client: Client, proto: str, origin: str, status: int
) -> None:
    response = await client.post(
        "/app/audiorecords", data=_form(),
        headers={"Origin": f"{origin}://{client.host}:{client.port}",
                 "X-Forwarded-Proto": proto})
    assert response.status == status


async def test_forwarded_proto_from_an_untrusted_peer_is_ignored(
    start_api: StartApi, database: TestDatabase
) -> None:
    client = await start_api(server={"trusted_proxies": (ip_network("10.0.0.0/8"),)})
    response = await client.post(
        "/app/audiorecords", data=_form(),
        headers={"Origin": f"https://{client.host}:{client.port}", "X-Forwarded-Proto": "https"})
    assert response.status == 403
    assert _records(database) == 0


@pytest.mark.parametrize("path", ["/app/audiorecords", "/app/me", "/", "/metrics"])
async def test_a_rebound_host_name_is_refused(client: Client, path: str) -> None:
    response = await client.get(path, headers={"Host": "rebind.evil.example"})
    assert response.status == 421
    assert (await response.json())["error"]["code"] == "unknown_host"


async def test_a_rebound_host_cannot_upload(client: Client, database: TestDatabase) -> None:
    response = await client.post("/app/audiorecords", data=_form(),
                                 headers={"Host": "rebind.evil.example:8080"})
    assert response.status == 421
    assert _records(database) == 0


@pytest.mark.parametrize("host", ["localhost:8080", "127.0.0.1", "[::1]:8080", "LOCALHOST."])
async def test_loopback_names_are_answered(client: Client, host: str) -> None:
    assert (await client.get("/app/me", headers={"Host": host})).status == 200


async def test_probes_answer_under_any_host(client: Client) -> None:
    for path in ("/healthz", "/readyz"):
        response = await client.get(path, headers={"Host": "10.1.2.3:8080"})
        assert response.status == 200


async def test_allowed_hosts_adds_the_public_name(start_api: StartApi) -> None:
    client = await start_api(server={"allowed_hosts": ("transcriber.example.org",)})
    ok = await client.get("/app/me", headers={"Host": "transcriber.example.org"})
    assert ok.status == 200
    refused = await client.get("/app/me", headers={"Host": "rebind.evil.example"})
    assert refused.status == 421
    # Behind that proxy the browser's Origin is the public name, as is Host,
    # and the proxy says the page came over https.
    response = await client.post(
        "/app/audiorecords", data=_form(),
        headers={"Host": "transcriber.example.org",
                 "Origin": "https://transcriber.example.org", "X-Forwarded-Proto": "https"})
    assert response.status == 201


async def test_a_star_answers_any_host(start_api: StartApi) -> None:
    client = await start_api(server={"allowed_hosts": ("*",)})
    assert (await client.get("/app/me", headers={"Host": "anything.example"})).status == 200
