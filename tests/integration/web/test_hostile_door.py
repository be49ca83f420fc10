"""Hostile input, round 4, at the web door (docs/hostile-input.md, rows "Rate limit
multiplied by tokens", "100 Continue before the checks", "/v1 waits without a cap",
"Private answers in caches"): each attack as it was reported, and what holds now."""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp

from tests.helpers.tokens import bearer, make_token
from tests.helpers.web import Client, StartApi, advance, transcribe, upload
from transcriber.db import reads
from transcriber.testing.clock import FakeClock
from transcriber.web import keys

V1 = "/v1/audio/transcriptions"


async def _me(client: Client, **headers: str) -> int:
    return (await client.get("/app/me", headers=headers)).status


# Row 5: the rate limit counts per person; tokens cannot be minted in a loop.

async def test_a_persons_tokens_share_one_budget(start_api: StartApi) -> None:
    client = await start_api(server={"rate_limit_requests": 4})
    tokens = [await make_token(client.app, "alice") for _ in range(3)]
    # Each token had its own 4 before: 12 answers. Now 4 in all, whichever token asks,
    # a token never seen before included (charged right after its lookup).
    statuses = [await _me(client, **bearer(tokens[n % 2])) for n in range(4)]
    assert statuses == [200] * 4
    refused = await client.get("/app/me", headers=bearer(tokens[2]))
    assert refused.status == 429
    assert int(refused.headers["Retry-After"]) >= 1
    assert await _me(client, **bearer(tokens[0])) == 429
    # Another person's token spends another budget.
    assert await _me(client, **bearer(await make_token(client.app, "bob"))) == 200


async def test_minting_and_revoking_buys_neither_requests_nor_tokens(
    start_api: StartApi, clock: FakeClock
) -> None:
    client = await start_api(server={"rate_limit_requests": 40,
                                     "token_creations_per_hour": 3})
    answered = 0
    for _ in range(3):
        made = await client.post("/app/tokens", json={})
        assert made.status == 201
        token = (await made.json())
        answered += sum([await _me(client, **bearer(token["token"])) == 200
                         for _ in range(20)])
        assert (await client.delete(f"/app/tokens/{token['id']}")).status == 204
    # All the tokens were one person's: 40 answers in all, not 3 × 40 (making and
    # revoking them spent the address's budget, another bucket).
    assert answered == 40
    refused = await client.post("/app/tokens", json={})
    assert refused.status == 429
    assert (await refused.json())["error"]["code"] == "rate_limited"
    assert 1 <= int(refused.headers["Retry-After"]) <= 1200  # one creation per 20 min
    clock.advance(1200)
    assert (await client.post("/app/tokens", json={})).status == 201


async def test_a_person_holds_at_most_the_setting_of_tokens(start_api: StartApi) -> None:
    client = await start_api(server={"tokens_per_user_max": 2})
    assert [(await client.post("/app/tokens", json={})).status for _ in range(3)] == [
        201, 201, 409]


# Row 8: `100 Continue` comes after the checks a request without a body gets.

async def _head_answer(client: Client, head: bytes) -> bytes:
    """What the service says to a head with `Expect: 100-continue`, the body held back."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(head)
        await writer.drain()
        return await asyncio.wait_for(reader.read(65536), timeout=5)
    finally:
        writer.close()


def _expecting(path: str = "/app/audiorecords", length: int = 10**15, **headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Expect: 100-continue",
             "Content-Type: application/octet-stream", f"Content-Length: {length}",
             "X-Filename: a.wav"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    if "Host" not in headers:
        lines.append("Host: 127.0.0.1")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def test_no_identity_learns_nothing_of_the_free_space(start_api: StartApi) -> None:
    # The reported attack: no identity, a declared length searched between 413 (over the
    # upload limit) and 507 (over the free space) to read the disk's free bytes.
    client = await start_api(server={"anonymous_user": "", "upload_max_bytes": 10**18})
    for length in (10**15, 10**6):
        answer = await _head_answer(client, _expecting(length=length))
        assert answer.startswith(b"HTTP/1.1 401"), answer[:40]
        assert b"100 Continue" not in answer
    # With the identity, the same head reaches the room check.
    answer = await _head_answer(client, _expecting(Remote_User="alice"))
    assert answer.startswith(b"HTTP/1.1 507")


async def test_a_json_route_too_answers_100_continue_only_to_whom_may_send(
    start_api: StartApi,
) -> None:
    client = await start_api(server={"anonymous_user": ""})
    body = b'{"title": "x"}'
    head = ("PATCH /app/audiorecords/01jabcdefghjkmnpqrstvwxyz0 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Expect: 100-continue\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n").encode()
    answer = await _head_answer(client, head + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 401"), answer[:40]
    assert b"100 Continue" not in answer
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(head + b"Remote-User: alice\r\nX-Transcriber-Client: web\r\n\r\n")
        await writer.drain()
        first = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5)
        assert first == b"HTTP/1.1 100 Continue\r\n\r\n"
        writer.write(body)
        await writer.drain()
        answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5)
        assert answer.startswith(b"HTTP/1.1 404")  # read, then no such record
    finally:
        writer.close()


async def test_each_check_comes_before_100_continue(start_api: StartApi) -> None:
    client = await start_api(server={"rate_limit_requests": 2, "upload_max_bytes": 100})
    refusals = {
        b"HTTP/1.1 421": _expecting(Host="rebind.evil.example"),
        b"HTTP/1.1 403": _expecting(Origin="https://evil.example"),
        b"HTTP/1.1 401": _expecting(path=V1),  # OpenAI's door takes only a token
    }
    for status, head in refusals.items():
        answer = await _head_answer(client, head)
        assert answer.startswith(status), answer[:40]
        assert b"100 Continue" not in answer
    answer = await _head_answer(client, _expecting())  # the budget's last request: 413
    assert answer.startswith(b"HTTP/1.1 413")
    answer = await _head_answer(client, _expecting())
    assert answer.startswith(b"HTTP/1.1 429")
    assert b"100 Continue" not in answer


async def test_a_head_that_passes_gets_100_continue_then_its_record(client: Client) -> None:
    body = b"RIFF....WAVE fake audio"
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(_expecting(length=len(body)))
        await writer.drain()
        first = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5)
        assert first == b"HTTP/1.1 100 Continue\r\n\r\n"
        writer.write(body)
        await writer.drain()
        answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5)
        assert answer.startswith(b"HTTP/1.1 201")
    finally:
        writer.close()


# Row 12: `/v1` waits are capped, and a revoked token's wait ends without the answer.

def _form() -> aiohttp.FormData:
    form = aiohttp.FormData()
    form.add_field("file", b"RIFF....WAVE fake audio", filename="talk.wav")
    return form


async def _waiting(client: Client, token: str, login: str
                   ) -> tuple[asyncio.Task[aiohttp.ClientResponse], str]:
    """A transcription request of `login`'s token, waiting; and its record's id."""
    owner = await reads.users.by_login(client.app[keys.READERS], login=login)
    assert owner is not None
    before = len(await reads.lists.owner_page(client.app[keys.READERS], owner_id=owner.id,
                                              limit=100, after=None))
    request = asyncio.ensure_future(client.post(V1, data=_form(), headers=bearer(token)))
    for _ in range(300):
        await asyncio.sleep(0.01)
        page = await reads.lists.owner_page(client.app[keys.READERS], owner_id=owner.id,
                                            limit=100, after=None)
        if len(page) > before:
            return request, page[0].id
    raise AssertionError("the record was not stored")


async def test_waits_are_capped_per_person_and_in_all(start_api: StartApi) -> None:
    client = await start_api(server={"openai_waits_per_user_max": 1, "openai_waits_max": 2})
    alice, bob, carol = [await make_token(client.app, login) for login in ("a", "b", "c")]
    first = await _waiting(client, alice, "a")
    again = await client.post(V1, data=_form(), headers=bearer(alice))
    assert again.status == 429
    assert again.headers["Retry-After"] == "30"
    assert (await again.json())["error"]["code"] == "too_many_transcriptions"
    second = await _waiting(client, bob, "b")
    full = await client.post(V1, data=_form(), headers=bearer(carol))
    assert full.status == 429
    assert full.headers["Retry-After"] == "30"
    assert client.app[keys.SETTLED].watched == 2  # the refused ones stored nothing
    await _hang_up(client, first, second)


async def _hang_up(client: Client, *waiting: tuple[asyncio.Task[aiohttp.ClientResponse], str]
                   ) -> None:
    """The askers hang up and their waits end. Serve does not cancel a handler whose
    client left: the handler sees it at its next look, which on the fake clock comes
    only with the record's news. Without that news the server's shutdown waited its
    whole 60 s grace for each handler (two teardowns of 60 s each)."""
    for request, _ in waiting:
        request.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await request
    settled = client.app[keys.SETTLED]
    for _ in range(500):
        if settled.watched == 0:
            return
        for _, record_id in waiting:
            settled.settled(record_id)
        await asyncio.sleep(0.01)
    raise AssertionError("a wait outlived its asker")


async def test_a_revoked_token_ends_its_wait_without_the_answer(client: Client) -> None:
    token = await make_token(client.app, "local")
    request, record_id = await _waiting(client, token, "local")
    listed = (await (await client.get("/app/tokens")).json())["items"]
    assert (await client.delete(f"/app/tokens/{listed[0]['id']}")).status == 204
    await transcribe(client, record_id)
    await advance(client, record_id)  # done: before, the revoked token got the transcript
    client.app[keys.SETTLED].settled(record_id)
    response = await asyncio.wait_for(request, 5)
    assert response.status == 401
    assert "Hello" not in await response.text()
    assert client.app[keys.SETTLED].watched == 0
    # The record is the owner's still, in the archive.
    assert await reads.records.state(client.app[keys.READERS], record_id=record_id)


# Private answers: `Cache-Control: no-store` and `Vary` on who asks; public ones cache.

def _private(response: aiohttp.ClientResponse) -> bool:
    vary = {v.strip().lower() for v in response.headers.get("Vary", "").split(",")}
    return (response.headers.get("Cache-Control") == "no-store"
            and {"authorization", "cookie", "remote-user"} <= vary)


async def test_every_private_answer_is_no_store(client: Client) -> None:
    record = await upload(client)
    await transcribe(client, str(record["id"]))
    token = await make_token(client.app, "local")
    answers = [
        await client.get("/app/me"),
        await client.get("/app/audiorecords"),
        await client.get(f"/app/audiorecords/{record['id']}"),
        await client.get(f"/app/audiorecords/{record['id']}/transcript?format=srt"),
        await client.get(f"/app/audiorecords/{record['id']}/file"),
        await client.get("/app/audiorecords/nope"),  # errors too
        await client.post("/app/tokens", json={}),
        await client.get("/v1/models", headers=bearer(token)),
    ]
    assert [r.status for r in answers] == [200, 200, 200, 200, 200, 404, 201, 200]
    assert all(_private(r) for r in answers), [dict(r.headers) for r in answers]


async def test_public_answers_keep_their_caching(client: Client) -> None:
    described = await client.get("/app/openapi.json")
    assert described.status == 200
    assert described.headers.get("Cache-Control") != "no-store"
    page = await client.get("/")
    assert page.headers["Cache-Control"] == "no-cache"
