"""Personal access tokens over real HTTP: who a bearer is, from any address; what it may do."""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
from pathlib import Path

import pytest
import structlog

from tests.helpers.database import TestDatabase
from tests.helpers.tokens import bearer, make_token
from tests.helpers.web import Client, StartApi, upload
from transcriber.db.commands.tokens import TOKENS_PER_USER_MAX
from transcriber.testing.clock import FakeClock

UNTRUSTED = {"trusted_proxies": (ipaddress.ip_network("10.0.0.0/8"),), "anonymous_user": ""}
RAW = {"X-Filename": "a.wav", "Content-Type": "application/octet-stream"}


def _database_bytes(data_dir: Path) -> bytes:
    """The database's files as they are on disk (the WAL too)."""
    return b"".join(p.read_bytes() for p in sorted(data_dir.glob("transcriber.sqlite3*")))


def _tables_holding(database: TestDatabase, text: str) -> list[str]:
    """PostgreSQL's tables with a row holding `text` in any column (a row as text shows
    every column; bytea as hex, so the hex of the text is looked for too)."""
    tables = database.rows("SELECT table_name FROM information_schema.tables"
                           " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'")
    assert len(tables) > 20  # the schema's, all of them
    return [table for (table,) in tables if database.scalar(
        f"SELECT count(*) FROM {table} AS t"
        " WHERE strpos(t::text, :text) > 0 OR strpos(t::text, :hex) > 0",
        {"text": text, "hex": text.encode().hex()})]


def _stored_anywhere(database: TestDatabase, text: str) -> bool:
    """Whether the database holds `text`: anywhere in SQLite's files on disk; in any
    column of any table on PostgreSQL (whose files are the server's, not the test's)."""
    if database.engine == "sqlite":
        return text.encode() in _database_bytes(database.data_dir)
    return bool(_tables_holding(database, text))


async def _me(client: Client, **headers: str) -> tuple[int, dict[str, object]]:
    response = await client.get("/app/me", headers=headers)
    body = await response.json()
    assert isinstance(body, dict)
    return response.status, body


async def test_made_in_the_web_app_shown_once_and_stored_as_its_hash_only(
    client: Client, database: TestDatabase,
) -> None:
    response = await client.post("/app/tokens", json={"name": "phone", "scope": "read",
                                                      "expires_days": 30})
    assert response.status == 201
    assert response.headers["Cache-Control"] == "no-store"
    made = await response.json()
    token = made["token"]
    assert token.startswith("tx_")
    assert len(token) == 46
    assert (made["name"], made["scope"], made["last_used_at"]) == ("phone", "read", None)
    assert made["expires_at"] == "2026-01-31T00:00:00Z"  # the fake clock's day + 30
    listed = (await (await client.get("/app/tokens")).json())["items"]
    assert listed == [{k: v for k, v in made.items() if k != "token"}]
    token_hash = hashlib.sha256(token.encode()).hexdigest()
    assert database.rows("SELECT token_hash FROM api_tokens") == [(token_hash,)]
    assert _stored_anywhere(database, token_hash)  # the search would find what is there
    assert not _stored_anywhere(database, token)
    assert not _stored_anywhere(database, token[3:])


async def test_a_token_is_its_owner_from_an_untrusted_address(start_api: StartApi) -> None:
    client = await start_api(server=UNTRUSTED)
    token = await make_token(client.app, "alice")
    assert (await _me(client))[0] == 401
    status, me = await _me(client, **bearer(token))
    assert (status, me["login"]) == (200, "alice")
    # From an untrusted peer Remote-User is not believed; the token still is.
    status, me = await _me(client, **bearer(token), **{"Remote-User": "mallory"})
    assert (status, me["login"]) == (200, "alice")
    created = await upload(client, headers=bearer(token))
    card = await client.get(f"/app/audiorecords/{created['id']}", headers=bearer(token))
    assert card.status == 200


async def test_a_token_wins_over_a_trusted_proxys_remote_user(client: Client) -> None:
    token = await make_token(client.app, "alice")
    status, me = await _me(client, **bearer(token), **{"Remote-User": "bob"})
    assert (status, me["login"]) == (200, "alice")


@pytest.mark.parametrize("presented", [
    "tx_" + "A" * 43,  # well formed, unknown
    "tx_short",  # malformed
    "",  # a bearer header without credentials
    "sk-not-ours",
])
async def test_a_bad_token_is_401_never_the_anonymous_user(client: Client,
                                                           presented: str) -> None:
    response = await client.get("/app/me", headers={"Authorization": f"Bearer {presented}"})
    assert response.status == 401
    assert response.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
    assert (await response.json())["error"]["code"] == "unauthorized"


async def test_two_authorization_headers_are_refused(client: Client) -> None:
    token = await make_token(client.app)
    response = await client.get("/app/me", headers=[("Authorization", f"Bearer {token}"),
                                                    ("Authorization", "Basic eDp5")])
    assert response.status == 401


async def test_another_scheme_is_left_to_the_proxy(client: Client) -> None:
    status, me = await _me(client, Authorization="Basic YWxpY2U6eA==")
    assert (status, me["login"]) == (200, "local")


async def test_revoked_at_once_and_only_by_its_owner(client: Client) -> None:
    token = await make_token(client.app, "alice")
    created = await (await client.post("/app/tokens", json={})).json()
    # Another person's token is not found, and stays valid.
    alices = (await (await client.get("/app/tokens", headers=bearer(token))).json())["items"]
    assert (await client.delete(f"/app/tokens/{alices[0]['id']}")).status == 404
    assert (await _me(client, **bearer(token)))[0] == 200
    assert (await client.delete(f"/app/tokens/{created['id']}")).status == 204
    assert (await client.delete(f"/app/tokens/{created['id']}")).status == 404
    assert (await client.delete("/app/tokens/nope")).status == 404
    assert (await _me(client, **bearer(created["token"])))[0] == 401


async def test_an_expired_token_is_401(client: Client, clock: FakeClock) -> None:
    token = await make_token(client.app, expires_in_seconds=3600)
    assert (await _me(client, **bearer(token)))[0] == 200
    clock.advance(3600)
    assert (await _me(client, **bearer(token)))[0] == 401


async def test_a_read_token_reads_and_is_403_on_every_change(
    client: Client, database: TestDatabase
) -> None:
    record = await upload(client)
    token = await make_token(client.app, "local", scope="read")
    auth = bearer(token)
    assert (await client.get("/app/audiorecords", headers=auth)).status == 200
    assert (await client.get(f"/app/audiorecords/{record['id']}", headers=auth)).status == 200
    refused = [
        await client.post("/app/audiorecords", data=b"audio", headers={**RAW, **auth}),
        await client.patch(f"/app/audiorecords/{record['id']}", json={"title": "x"},
                           headers=auth),
        await client.delete(f"/app/audiorecords/{record['id']}", headers=auth),
        await client.post(f"/app/audiorecords/{record['id']}/resume", headers=auth),
        await client.post("/app/tokens", json={}, headers=auth),
    ]
    assert [r.status for r in refused] == [403] * 5
    assert {(await r.json())["error"]["code"] for r in refused} == {"forbidden"}
    assert database.rows("SELECT count(*), max(title) FROM audio_records") == [(1, "")]


async def test_tokens_neither_make_nor_revoke_tokens(client: Client) -> None:
    token = await make_token(client.app, "local")
    other = await (await client.post("/app/tokens", json={})).json()
    assert (await client.post("/app/tokens", json={}, headers=bearer(token))).status == 403
    response = await client.delete(f"/app/tokens/{other['id']}", headers=bearer(token))
    assert response.status == 403
    assert (await _me(client, **bearer(other["token"])))[0] == 200


async def test_a_bearer_request_skips_the_same_origin_check(client: Client) -> None:
    token = await make_token(client.app, "local")
    hostile = {**RAW, "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
    refused = await client.post("/app/audiorecords", data=b"audio", headers=hostile)
    assert refused.status == 403
    accepted = await client.post("/app/audiorecords", data=b"audio",
                                 headers={**hostile, **bearer(token)})
    assert accepted.status == 201


async def test_the_rate_limit_counts_per_token_and_charges_guesses_to_the_address(
    start_api: StartApi,
) -> None:
    client = await start_api(server={"rate_limit_requests": 3})
    first, second = await make_token(client.app, "a"), await make_token(client.app, "b")
    for token in (first, second):
        assert [(await _me(client, **bearer(token)))[0] for _ in range(4)] == [
            200, 200, 200, 429]
    guesses = [(await _me(client, Authorization=f"Bearer tx_{n:043d}"))[0] for n in range(4)]
    assert guesses == [401, 401, 401, 429]
    assert (await _me(client))[0] == 429  # the address's budget went on the guesses


async def test_last_used_is_written_at_most_once_a_minute(
    client: Client, clock: FakeClock, database: TestDatabase,
) -> None:
    token = await make_token(client.app, "local")

    async def last_used() -> object:
        for _ in range(100):  # the touch is queued to the writer, not awaited
            await asyncio.sleep(0.01)
            rows = database.rows("SELECT last_used_at FROM api_tokens")
            if rows[0][0] is not None:
                break
        return rows[0][0]

    assert database.rows("SELECT last_used_at FROM api_tokens") == [(None,)]
    await _me(client, **bearer(token))
    assert await last_used() == "2026-01-01T00:00:00Z"
    clock.advance(59)
    for _ in range(3):
        await _me(client, **bearer(token))
    await asyncio.sleep(0.1)
    assert await last_used() == "2026-01-01T00:00:00Z"
    clock.advance(2)
    await _me(client, **bearer(token))
    for _ in range(100):
        if await last_used() == "2026-01-01T00:01:01Z":
            break
    assert await last_used() == "2026-01-01T00:01:01Z"


async def test_bad_token_requests_are_logged_without_the_token(client: Client) -> None:
    guess = "tx_" + "B" * 43
    with structlog.testing.capture_logs() as logs:
        await client.get("/app/me", headers=bearer(guess))
    refused = [e for e in logs if e["event"] == "token_refused"]
    assert refused == [{"event": "token_refused", "reason": "unknown", "log_level": "info"}]
    assert guess not in repr(logs)
    assert "B" * 10 not in repr(logs)


@pytest.mark.parametrize("body", [
    {"scope": "admin"}, {"expires_days": 0}, {"expires_days": 3651}, {"expires_days": True},
    {"name": "a\u202eb"}, {"name": "x" * 101}, {"color": "red"}, ["name"],
])
async def test_a_bad_token_request_is_400_and_makes_nothing(
    client: Client, database: TestDatabase, body: object
) -> None:
    response = await client.post("/app/tokens", json=body)
    assert response.status == 400
    assert database.count("api_tokens") == 0


async def test_a_person_holds_at_most_the_limit_of_tokens(client: Client) -> None:
    for _ in range(TOKENS_PER_USER_MAX):
        await make_token(client.app, "local")
    response = await client.post("/app/tokens", json={})
    assert response.status == 409
    assert (await response.json())["error"]["code"] == "conflict"
