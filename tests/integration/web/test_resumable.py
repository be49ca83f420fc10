"""Resumable uploads (tus 1.0 at /app/uploads/): the real `tuspy` client in pieces,
a stop and a restart of the server in the middle, a stall, a dropped connection, two
PATCHes at once, a deferred length, a bucket (refusals: test_resumable_refusals.py).

`tuspy`'s synchronous client runs on a thread (its resuming HEAD is a blocking
`requests` call), against the test server on this loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tusclient.client import TusClient
from yarl import URL

from tests.helpers.pipeline import until
from tests.helpers.s3 import Bucket
from tests.helpers.tus import (
    OCTETS,
    TUS,
    create,
    metadata,
    no_partials,
    offset_of,
    stored,
)
from tests.helpers.web import Client, StartApi, stored_files
from transcriber.core.errors import TransientFailure
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys, upload_bytes
from transcriber.web.partials import PARTIALS

# ~0.3 MB in five pieces of 64 KiB: five PATCHes, well inside the rate limit.
AUDIO = os.urandom(300_000)
PIECE = 64 * 1024


def _tus(client: Client, data: bytes, **options: object) -> object:
    """A `tuspy` uploader of `data` to this server."""
    tus = TusClient(str(client.make_url("/app/uploads/")))
    return tus.uploader(file_stream=io.BytesIO(data), chunk_size=PIECE,
                        metadata={"filename": "встреча.ogg", "language": "ru"}, **options)


def _path(uploader: object) -> str:
    """The upload's path in the URL the client holds (the server's address aside)."""
    return URL(str(uploader.url)).path  # type: ignore[attr-defined]


async def test_options_advertises_the_protocol(client: Client) -> None:
    response = await client.options("/app/uploads/")
    assert response.status == 204
    assert response.headers["Tus-Version"] == "1.0.0"
    assert response.headers["Tus-Resumable"] == "1.0.0"
    extensions = set(response.headers["Tus-Extension"].split(","))
    assert {"creation", "termination", "expiration", "checksum"} <= extensions
    assert int(response.headers["Tus-Max-Size"]) == 8 * 1024**3
    assert "sha1" in response.headers["Tus-Checksum-Algorithm"].split(",")


async def test_tuspy_uploads_in_pieces_and_the_record_holds_every_byte(
        client: Client, data_dir: Path) -> None:
    uploader = _tus(client, AUDIO, upload_checksum=True)
    await asyncio.to_thread(uploader.upload)  # type: ignore[attr-defined]
    location = _path(uploader)
    head = await client.head(location, headers=TUS)
    assert head.status == 200
    assert head.headers["Upload-Offset"] == head.headers["Upload-Length"] == str(len(AUDIO))
    record_id = head.headers["X-Record-Id"]
    card = await (await client.get(f"/app/audiorecords/{record_id}")).json()
    assert card["original_filename"] == "встреча.ogg"
    assert card["language"]["requested"] == "ru"
    assert card["size_bytes"] == len(AUDIO)
    assert hashlib.sha256(stored(data_dir)).digest() == hashlib.sha256(AUDIO).digest()
    no_partials(data_dir)


async def test_a_stopped_upload_continues_from_the_storedoffset_of(
        client: Client, data_dir: Path) -> None:
    first = _tus(client, AUDIO)
    await asyncio.to_thread(first.upload, stop_at=2 * PIECE)  # type: ignore[attr-defined]
    location = _path(first)
    assert await offset_of(client, location) == 2 * PIECE
    # A new client (another process, the next day) asks where to go on: no byte again.
    # Made on the thread: a client given a URL asks the server (HEAD) at once.
    second = await asyncio.to_thread(_tus, client, AUDIO, url=str(client.make_url(location)))
    assert second.offset == 2 * PIECE  # type: ignore[attr-defined]
    await asyncio.to_thread(second.upload)  # type: ignore[attr-defined]
    assert stored(data_dir) == AUDIO


async def test_a_server_restart_in_the_middle_keeps_theoffset_of(
        start_api: StartApi, data_dir: Path) -> None:
    client = await start_api()
    first = _tus(client, AUDIO)
    await asyncio.to_thread(first.upload, stop_at=3 * PIECE)  # type: ignore[attr-defined]
    path = _path(first)
    await client.close()
    # The next server (another port) knows the upload from its row and partial file.
    client = await start_api()
    assert await offset_of(client, path) == 3 * PIECE
    second = await asyncio.to_thread(_tus, client, AUDIO, url=str(client.make_url(path)))
    await asyncio.to_thread(second.upload)  # type: ignore[attr-defined]
    assert stored(data_dir) == AUDIO
    no_partials(data_dir)


async def _stalling(first: bytes, release: asyncio.Event) -> AsyncIterator[bytes]:
    yield first
    await release.wait()


async def test_a_body_that_stalls_keeps_what_arrived(
        start_api: StartApi, data_dir: Path) -> None:
    # A proxy timeout or a phone gone to sleep: the pace watch cuts the body, and the
    # bytes that did arrive are stored for good (the offset tells where to go on).
    client = await start_api(server={"upload_idle_seconds": 0.3})
    location = await create(client, len(AUDIO))
    release = asyncio.Event()
    response = await client.patch(location, data=_stalling(AUDIO[:100_000], release),
                                  headers={**OCTETS, "Upload-Offset": "0"})
    release.set()
    assert response.status == 408
    assert await offset_of(client, location) == 100_000
    done = await client.patch(location, data=AUDIO[100_000:],
                              headers={**OCTETS, "Upload-Offset": "100000"})
    assert done.status == 204
    assert done.headers["Upload-Offset"] == str(len(AUDIO))
    assert done.headers["X-Record-Id"]
    assert stored(data_dir) == AUDIO


async def _dropping(first: bytes) -> AsyncIterator[bytes]:
    yield first
    raise ConnectionResetError("the phone lost its network")


async def test_a_connection_dropped_mid_patch_resumes_with_no_byte_lost(
        client: Client, data_dir: Path) -> None:
    location = await create(client, len(AUDIO))
    with pytest.raises(Exception):  # noqa: B017, PT011 - whatever the client library says
        await client.patch(location, data=_dropping(AUDIO[:150_000]),
                           headers={**OCTETS, "Upload-Offset": "0"})
    # What the server kept before the connection went, not more than was sent.
    offset = await offset_of(client, location)
    assert 0 <= offset <= 150_000
    done = await client.patch(location, data=AUDIO[offset:],
                              headers={**OCTETS, "Upload-Offset": str(offset)})
    assert done.status == 204
    assert stored(data_dir) == AUDIO


async def test_a_long_patch_stores_its_offset_as_it_goes(
        client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    # A server killed in the middle of one long PATCH loses at most PERSIST_BYTES.
    monkeypatch.setattr(upload_bytes, "PERSIST_BYTES", 32 * 1024)
    location = await create(client, len(AUDIO))
    release = asyncio.Event()
    patching = asyncio.ensure_future(client.patch(
        location, data=_stalling(AUDIO[:200_000], release),
        headers={**OCTETS, "Upload-Offset": "0"}))
    readers = client.app[keys.READERS]
    upload_id = location.rstrip("/").rsplit("/", 1)[-1]

    async def kept_enough() -> bool:
        # The row itself, not HEAD: polling HEAD would spend the rate limit's budget.
        row = await readers.fetch_one("SELECT received FROM uploads WHERE id = :id",
                                      {"id": upload_id})
        return row is not None and int(row["received"]) >= 200_000 - 32 * 1024

    try:
        await until(kept_enough, within=120)  # the server's fsyncs, in a thread
        assert await offset_of(client, location) >= 200_000 - 32 * 1024
    finally:
        release.set()
        (await patching).close()


async def test_concurrent_patches_one_wins_the_other_is_409(
        client: Client, data_dir: Path) -> None:
    location = await create(client, len(AUDIO))
    release = asyncio.Event()
    first = asyncio.ensure_future(client.patch(
        location, data=_stalling(AUDIO[:1000], release),
        headers={**OCTETS, "Upload-Offset": "0"}))
    busy = client.app[PARTIALS].busy
    await until(lambda: bool(busy), within=60)
    second = await client.patch(location, data=AUDIO[:1000],
                                headers={**OCTETS, "Upload-Offset": "0"})
    assert second.status == 409
    assert second.headers["Upload-Offset"] == "0"
    release.set()
    assert (await first).status in (204, 408)
    # The loser continues from where the winner left the upload.
    offset = await offset_of(client, location)
    assert offset == 1000
    done = await client.patch(location, data=AUDIO[offset:],
                              headers={**OCTETS, "Upload-Offset": str(offset)})
    assert done.status == 204
    assert stored(data_dir) == AUDIO


async def test_a_complete_upload_the_probe_could_not_take_now_is_finished_by_head(
        client: Client, transcoder: FakeTranscoder, data_dir: Path) -> None:
    # The last PATCH's bytes are kept when the file cannot be examined now (503);
    # the client's next HEAD (or an empty PATCH at the full offset) makes the record.
    location = await create(client, 1000)
    transcoder.probe_failure = TransientFailure("ffmpeg could not start")
    last = await client.patch(location, data=b"a" * 1000,
                              headers={**OCTETS, "Upload-Offset": "0"})
    assert last.status == 503
    again = await client.patch(location, data=b"",
                               headers={**OCTETS, "Upload-Offset": "1000"})
    assert again.status == 503
    transcoder.probe_failure = None
    head = await client.head(location, headers=TUS)
    assert head.status == 200
    assert head.headers["Upload-Offset"] == "1000"
    record_id = head.headers["X-Record-Id"]
    assert (await client.get(f"/app/audiorecords/{record_id}")).status == 200
    assert stored(data_dir) == b"a" * 1000
    no_partials(data_dir)
    # Asked again, the same record: nothing is made twice.
    repeat = await client.patch(location, data=b"",
                                headers={**OCTETS, "Upload-Offset": "1000"})
    assert repeat.status == 204
    assert repeat.headers["X-Record-Id"] == record_id
    assert len(stored_files(data_dir)) == 1


async def test_a_recording_going_on_defers_its_length_until_the_last_piece(
        client: Client, data_dir: Path) -> None:
    # What the web app's recorder does: pieces are sent while the length is unknown.
    response = await client.post("/app/uploads/", headers={
        **TUS, "Upload-Defer-Length": "1", "Upload-Metadata": metadata(filename="rec.webm")})
    assert response.status == 201
    location = response.headers["Location"]
    first = await client.patch(location, data=AUDIO[:100_000],
                               headers={**OCTETS, "Upload-Offset": "0"})
    assert first.status == 204
    head = await client.head(location, headers=TUS)
    assert head.headers["Upload-Defer-Length"] == "1"
    assert "Upload-Length" not in head.headers
    assert "X-Record-Id" not in head.headers
    below = await client.patch(location, data=b"", headers={
        **OCTETS, "Upload-Offset": "100000", "Upload-Length": "99999"})
    assert below.status == 409
    last = await client.patch(location, data=AUDIO[100_000:], headers={
        **OCTETS, "Upload-Offset": "100000", "Upload-Length": str(len(AUDIO))})
    assert last.status == 204
    assert last.headers["Upload-Length"] == str(len(AUDIO))
    assert last.headers["X-Record-Id"]
    assert stored(data_dir) == AUDIO
    # Deferred and named at once is a contradiction.
    both = await client.post("/app/uploads/", headers={
        **TUS, "Upload-Defer-Length": "1", "Upload-Length": "10"})
    assert both.status == 400


@pytest.mark.parametrize("files_kind", ["s3"])
async def test_with_files_in_a_bucket_the_finished_upload_lands_there(
        client: Client, s3_bucket: Bucket, data_dir: Path) -> None:
    # The partial file lives on this host; the record's original goes to the bucket.
    location = await create(client, len(AUDIO))
    for start in range(0, len(AUDIO), 100_000):
        answer = await client.patch(location, data=AUDIO[start:start + 100_000],
                                    headers={**OCTETS, "Upload-Offset": str(start)})
        assert answer.status == 204
    record_id = answer.headers["X-Record-Id"]
    (key,) = s3_bucket.record_keys(record_id)
    assert s3_bucket.get(key) == AUDIO
    no_partials(data_dir)
