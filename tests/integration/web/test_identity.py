"""Identity: trusted-proxy headers, the anonymous user, 401, limits, the first-request race."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import structlog

from tests.helpers.database import TestDatabase
from tests.helpers.web import Client, StartApi


def _users(database: TestDatabase) -> list[tuple[Any, ...]]:
    return database.rows("SELECT provider_login, name, email FROM users ORDER BY 1")


async def test_headers_from_trusted_proxy_name_the_user(
    client: Client, database: TestDatabase
) -> None:
    response = await client.get("/app/me", headers={
        "Remote-User": "alice", "Remote-Name": "Alice A.", "Remote-Email": "alice@example.org"})
    assert response.status == 200
    me = await response.json()
    assert (me["login"], me["name"], me["email"]) == ("alice", "Alice A.", "alice@example.org")
    assert _users(database) == [("alice", "Alice A.", "alice@example.org")]


async def test_without_headers_the_anonymous_user_is_used(client: Client) -> None:
    response = await client.get("/app/me")
    assert response.status == 200
    assert (await response.json())["login"] == "local"


async def test_empty_anonymous_user_means_401(start_api: StartApi) -> None:
    client = await start_api(server={"anonymous_user": ""})
    response = await client.get("/app/me")
    assert response.status == 401
    assert (await response.json())["error"]["code"] == "unauthorized"
    assert (await client.get("/app/me", headers={"Remote-User": "bob"})).status == 200


async def test_headers_from_an_untrusted_peer_are_ignored(
    start_api: StartApi, database: TestDatabase
) -> None:
    client = await start_api(server={"anonymous_user": "",
                                     "trusted_proxies": (ipaddress_net("10.0.0.0/8"),)})
    response = await client.get("/app/me", headers={"Remote-User": "mallory"})
    assert response.status == 401
    assert _users(database) == []


async def test_untrusted_peer_with_anonymous_user_gets_the_anonymous_user(
    start_api: StartApi,
) -> None:
    client = await start_api(server={"trusted_proxies": (ipaddress_net("10.0.0.0/8"),)})
    response = await client.get("/app/me", headers={"Remote-User": "mallory"})
    assert (await response.json())["login"] == "local"


def ipaddress_net(text: str) -> object:
    import ipaddress  # noqa: PLC0415

    return ipaddress.ip_network(text)


@pytest.mark.parametrize(("header", "value"), [
    ("Remote-User", "x" * 256),
    ("Remote-Name", "n" * 256),
    ("Remote-Email", "e" * 250 + "@x.org"),
])
async def test_overlong_identity_is_refused(
    client: Client, database: TestDatabase, header: str, value: str
) -> None:
    headers = {"Remote-User": "alice", header: value}
    response = await client.get("/app/me", headers=headers)
    assert response.status == 400
    error = (await response.json())["error"]
    assert error["code"] == "bad_identity"
    assert value not in error["message"]
    assert _users(database) == []


async def test_longest_allowed_login_is_accepted(client: Client) -> None:
    response = await client.get("/app/me", headers={"Remote-User": "x" * 255})
    assert response.status == 200


async def _raw_get(client: Client, extra_headers: bytes) -> bytes:
    """A GET sent byte by byte: clients refuse to send control characters themselves."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(b"GET /app/me HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                     + extra_headers + b"\r\n")
        await writer.drain()
        return await asyncio.wait_for(reader.read(), timeout=5)
    finally:
        writer.close()


# HTTP allows a tab inside a header value; other control characters are refused
# by aiohttp's parser before any handler runs.
@pytest.mark.parametrize("headers", [
    b"Remote-User: al\tice\r\n",
    b"Remote-User: alice\r\nRemote-Name: Al\tA\r\n",
    b"Remote-User: alice\r\nRemote-Email: a\tb@x.org\r\n",
])
async def test_control_characters_are_refused(
    client: Client, database: TestDatabase, headers: bytes
) -> None:
    answer = await _raw_get(client, headers)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b'"bad_identity"' in answer
    assert _users(database) == []


async def test_twenty_concurrent_first_requests_make_one_user(
    client: Client, database: TestDatabase
) -> None:
    responses = await asyncio.gather(*(
        client.get("/app/me", headers={"Remote-User": "carol", "Remote-Email": "c@x.org"})
        for _ in range(20)
    ))
    assert [r.status for r in responses] == [200] * 20
    ids = {(await r.json())["id"] for r in responses}
    assert len(ids) == 1
    assert _users(database) == [("carol", "", "c@x.org")]


async def test_email_of_another_user_is_dropped_not_refused(
    client: Client, database: TestDatabase
) -> None:
    await client.get("/app/me", headers={"Remote-User": "dave", "Remote-Email": "d@x.org"})
    response = await client.get("/app/me",
                                headers={"Remote-User": "eve", "Remote-Email": "d@x.org"})
    assert response.status == 200
    assert (await response.json())["email"] == ""
    assert _users(database) == [("dave", "", "d@x.org"), ("eve", "", "")]


async def test_openapi_needs_no_identity(start_api: StartApi) -> None:
    client = await start_api(server={"anonymous_user": ""})
    assert (await client.get("/app/openapi.json")).status == 200


@pytest.mark.parametrize("headers", [
    b"Remote-User: al\xffice\r\n",
    b"Remote-User: alice\r\nRemote-Name: \xc3\x28\r\n",
    b"Remote-User: alice\r\nRemote-Email: a\xed\xa0\x80@x.org\r\n",  # an encoded surrogate
])
async def test_invalid_utf8_is_400_not_500(
    client: Client, database: TestDatabase, headers: bytes
) -> None:
    answer = await _raw_get(client, headers)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b'"bad_identity"' in answer
    assert _users(database) == []


@pytest.mark.parametrize("headers", [
    b"Remote-User: alice\r\nRemote-User: mallory\r\n",
    b"Remote-User: alice\r\nRemote-Name: A\r\nRemote-Name: B\r\n",
    b"Remote-User: alice\r\nRemote-Email: a@x.org\r\nRemote-Email: m@x.org\r\n",
])
async def test_a_repeated_identity_header_is_400(
    client: Client, database: TestDatabase, headers: bytes
) -> None:
    answer = await _raw_get(client, headers)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b"more than once" in answer
    assert _users(database) == []


@pytest.mark.parametrize("login", ["ali\u200bce", "alice\u202e", "\ufeffalice", "al\u2066ice"])
async def test_format_characters_in_a_login_are_refused(
    client: Client, database: TestDatabase, login: str
) -> None:
    answer = await _raw_get(client, b"Remote-User: " + login.encode() + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert _users(database) == []


async def test_logins_are_nfc_normalized(client: Client, database: TestDatabase) -> None:
    composed = await _raw_get(client, "Remote-User: jos\u00e9\r\n".encode())
    decomposed = await _raw_get(client, "Remote-User: jose\u0301\r\n".encode())
    assert composed.startswith(b"HTTP/1.1 200")
    assert decomposed.startswith(b"HTTP/1.1 200")
    assert _users(database) == [("jos\u00e9", "", "")]


async def test_repeats_from_an_untrusted_peer_are_ignored_like_the_rest(
    start_api: StartApi,
) -> None:
    client = await start_api(server={"trusted_proxies": (ipaddress_net("10.0.0.0/8"),)})
    answer = await _raw_get(client, b"Remote-User: a\r\nRemote-User: b\r\n")
    assert answer.startswith(b"HTTP/1.1 200")
    assert b'"login":"local"' in answer


# Look-alikes of "alice" that draw the same: each would have been a second
# account (or, with white space stripped, alice herself).
LOOK_ALIKES = [
    "alice\u3164",    # HANGUL FILLER
    "\u115falice",    # HANGUL CHOSEONG FILLER
    "ali\uffa0ce",    # HALFWIDTH HANGUL FILLER
    "alice\u2800",    # BRAILLE PATTERN BLANK
    "alic\u034fe",    # COMBINING GRAPHEME JOINER
    "alice\ufe0f",    # VARIATION SELECTOR-16
    "alice\u00a0",    # NO-BREAK SPACE: was stripped, so it *was* alice
    "\u2003alice",    # EM SPACE
    "alice\u3000",    # IDEOGRAPHIC SPACE
    "al ice",         # a plain space inside
    "alice\U000e0041",  # TAG LATIN CAPITAL LETTER A
    "alice\ue000",    # private use
    "alice\u0378",    # unassigned
]


@pytest.mark.parametrize("login", LOOK_ALIKES)
async def test_a_look_alike_login_is_refused_and_logged_without_it(
    client: Client, database: TestDatabase, login: str
) -> None:
    assert (await client.get("/app/me", headers={"Remote-User": "alice"})).status == 200
    with structlog.testing.capture_logs() as logs:
        answer = await _raw_get(client, b"Remote-User: " + login.encode() + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b'"bad_identity"' in answer
    assert login.encode() not in answer
    assert _users(database) == [("alice", "", "")]
    refused = [entry for entry in logs if entry["event"] == "identity_refused"]
    assert refused
    assert refused[0]["header"] == "Remote-User"
    assert login not in repr(logs)


async def test_logins_are_nfkc_normalized(client: Client, database: TestDatabase) -> None:
    fullwidth = await _raw_get(client, "Remote-User: \uff41\uff4c\uff49\uff43\uff45\r\n".encode())
    plain = await _raw_get(client, b"Remote-User: alice\r\n")
    assert fullwidth.startswith(b"HTTP/1.1 200")
    assert plain.startswith(b"HTTP/1.1 200")
    assert _users(database) == [("alice", "", "")]
