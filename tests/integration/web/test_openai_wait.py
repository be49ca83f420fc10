"""How `POST /v1/audio/transcriptions` waits: woken by the settled news, looking now and
then without it, giving up after `server.openai_wait_seconds` (the fake clock's)."""

from __future__ import annotations

import asyncio

import aiohttp

from tests.helpers.tokens import bearer, make_token
from tests.helpers.web import Client, StartApi, advance, transcribe
from transcriber.db import reads
from transcriber.testing.clock import FakeClock
from transcriber.web import keys
from transcriber.web.openai_wait import LOOK_SECONDS


def _form(**fields: str) -> aiohttp.FormData:
    form = aiohttp.FormData()
    for name, value in fields.items():
        form.add_field(name, value)
    form.add_field("file", b"RIFF....WAVE fake audio", filename="talk.wav")
    return form


async def _started(client: Client, **fields: str) -> tuple[asyncio.Task[aiohttp.ClientResponse],
                                                           str]:
    """The request, waiting; and the id of the record it stored."""
    token = await make_token(client.app, "local")
    request = asyncio.ensure_future(client.post("/v1/audio/transcriptions",
                                                data=_form(**fields), headers=bearer(token)))
    owner = await reads.users.by_login(client.app[keys.READERS], login="local")
    assert owner is not None
    for _ in range(200):
        await asyncio.sleep(0.01)
        page = await reads.lists.owner_page(client.app[keys.READERS], owner_id=owner.id,
                                            limit=1, after=None)
        if page:
            return request, page[0].id
    raise AssertionError("the record was not stored")


async def _resting(client: Client, clock: FakeClock, before: int) -> None:
    """The door's wait has made its first look and rests on the clock: news written
    from now on is news to it (before, its first look could find the record done
    and answer at once, as it should, which is not what these tests are about)."""
    for _ in range(500):
        if client.app[keys.SETTLED].watched and clock.sleepers > before:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the wait never rested")


async def _stays_waiting(request: asyncio.Task[aiohttp.ClientResponse]) -> None:
    await asyncio.sleep(0.2)
    assert not request.done()


async def test_the_settled_news_answers_at_once(client: Client, clock: FakeClock) -> None:
    before = clock.sleepers
    request, record_id = await _started(client)
    await _resting(client, clock, before)
    await transcribe(client, record_id)
    await advance(client, record_id)  # done, but nobody said so
    await _stays_waiting(request)
    client.app[keys.SETTLED].settled(record_id)
    response = await asyncio.wait_for(request, 5)
    assert response.status == 200
    assert (await response.json())["text"].startswith("Hello there, archive.")
    assert clock.monotonic() == 0  # no time passed on the clock: the news woke it


async def test_without_news_it_looks_again_every_few_seconds(client: Client,
                                                             clock: FakeClock) -> None:
    before = clock.sleepers
    request, record_id = await _started(client, response_format="text")
    await _resting(client, clock, before)
    await transcribe(client, record_id)
    await advance(client, record_id)
    await _stays_waiting(request)
    clock.advance(LOOK_SECONDS)
    response = await asyncio.wait_for(request, 5)
    assert response.status == 200
    assert (await response.text()).startswith("Hello there, archive.")


async def test_past_the_wait_504_names_the_record(start_api: StartApi,
                                                  clock: FakeClock) -> None:
    wait_seconds = 30.0
    client = await start_api(server={"openai_wait_seconds": wait_seconds})
    request, record_id = await _started(client)
    for _ in range(int(wait_seconds / LOOK_SECONDS) - 1):
        clock.advance(LOOK_SECONDS)
        await asyncio.sleep(0.02)
    assert not request.done()
    clock.advance(LOOK_SECONDS)
    response = await asyncio.wait_for(request, 5)
    assert response.status == 504
    assert response.headers["x-should-retry"] == "false"
    error = (await response.json())["error"]
    assert (error["type"], error["code"], error["record_id"]) == (
        "server_error", "timeout", record_id)
    assert record_id in error["message"]
    assert client.app[keys.SETTLED].watched == 0


async def test_a_record_deleted_while_waited_for_is_404(client: Client) -> None:
    request, record_id = await _started(client)
    assert (await client.delete(f"/app/audiorecords/{record_id}")).status == 204
    client.app[keys.SETTLED].settled(record_id)
    response = await asyncio.wait_for(request, 5)
    assert response.status == 404
    assert set((await response.json())["error"]) == {"message", "type", "param", "code"}


async def test_a_client_that_hangs_up_stops_the_wait(client: Client, clock: FakeClock) -> None:
    request, record_id = await _started(client)
    await _stays_waiting(request)
    assert client.app[keys.SETTLED].watched == 1
    request.cancel()  # the client closes its connection
    for _ in range(100):
        await asyncio.sleep(0.02)
        clock.advance(LOOK_SECONDS)
        if client.app[keys.SETTLED].watched == 0:
            break
    assert client.app[keys.SETTLED].watched == 0
    state = await reads.records.state(client.app[keys.READERS], record_id=record_id)
    assert state is not None  # the record goes on
