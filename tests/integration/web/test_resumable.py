"""Resumable uploads (tus 1.0 at /app/uploads/): the real `tuspy` client in pieces,
a stop and a restart of the server in the middle, the one-shot upload's refusals.

`tuspy`'s synchronous client runs on a thread (its resuming HEAD is a blocking
`requests` call), against the test server on this loop.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import os
from collections.abc import AsyncIterator
from datetime import timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest
from prometheus_client import REGISTRY
from tusclient.client import TusClient
from yarl import URL

from tests.helpers.database import TestDatabase
from tests.helpers.s3 import Bucket
from tests.helpers.web import Client, StartApi, stored_files
from transcriber.core.errors import TransientFailure
from transcriber.service.uploads import UploadSweeper
from transcriber.testing.clock import FakeClock
from transcriber.testing.transcoder import NOT_AUDIO_MARKER, FakeTranscoder
from transcriber.web import keys, uploads
from transcriber.web.partials import PARTIALS

TUS = {"Tus-Resumable": "1.0.0"}
OCTETS = {**TUS, "Content-Type": "application/offset+octet-stream"}
# ~0.3 MB in five pieces of 64 KiB: five PATCHes, well inside the rate limit.
AUDIO = os.urandom(300_000)
PIECE = 64 * 1024


def _metadata(**pairs: str) -> str:
    return ",".join(f"{key} {base64.b64encode(value.encode()).decode()}"
                    for key, value in pairs.items())


async def _create(client: Client, length: int, **headers: str) -> str:
    response = await client.post("/app/uploads/", headers={
        **TUS, "Upload-Length": str(length),
        "Upload-Metadata": _metadata(filename="meeting.ogg"), **headers})
    assert response.status == 201, await response.text()
    location = response.headers["Location"]
    assert location.startswith("/app/uploads/")
    return location


async def _offset(client: Client, location: str, **headers: str) -> int:
    response = await client.head(location, headers={**TUS, **headers})
    assert response.status == 200
    return int(response.headers["Upload-Offset"])


def _tus(client: Client, data: bytes, **options: object) -> object:
    """A `tuspy` uploader of `data` to this server."""
    tus = TusClient(str(client.make_url("/app/uploads/")))
    return tus.uploader(file_stream=io.BytesIO(data), chunk_size=PIECE,
                        metadata={"filename": "встреча.ogg", "language": "ru"}, **options)


def _path(uploader: object) -> str:
    """The upload's path in the URL the client holds (the server's address aside)."""
    return URL(str(uploader.url)).path  # type: ignore[attr-defined]


def _stored(data_dir: Path) -> bytes:
    (original,) = stored_files(data_dir)
    return original.read_bytes()


def _no_partials(data_dir: Path) -> None:
    folder = data_dir / "uploads"
    assert not folder.exists() or list(folder.iterdir()) == []


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
    assert hashlib.sha256(_stored(data_dir)).digest() == hashlib.sha256(AUDIO).digest()
    _no_partials(data_dir)


async def test_a_stopped_upload_continues_from_the_stored_offset(
        client: Client, data_dir: Path) -> None:
    first = _tus(client, AUDIO)
    await asyncio.to_thread(first.upload, stop_at=2 * PIECE)  # type: ignore[attr-defined]
    location = _path(first)
    assert await _offset(client, location) == 2 * PIECE
    # A new client (another process, the next day) asks where to go on: no byte again.
    # Made on the thread: a client given a URL asks the server (HEAD) at once.
    second = await asyncio.to_thread(_tus, client, AUDIO, url=str(client.make_url(location)))
    assert second.offset == 2 * PIECE  # type: ignore[attr-defined]
    await asyncio.to_thread(second.upload)  # type: ignore[attr-defined]
    assert _stored(data_dir) == AUDIO


async def test_a_server_restart_in_the_middle_keeps_the_offset(
        start_api: StartApi, data_dir: Path) -> None:
    client = await start_api()
    first = _tus(client, AUDIO)
    await asyncio.to_thread(first.upload, stop_at=3 * PIECE)  # type: ignore[attr-defined]
    path = _path(first)
    await client.close()
    # The next server (another port) knows the upload from its row and partial file.
    client = await start_api()
    assert await _offset(client, path) == 3 * PIECE
    second = await asyncio.to_thread(_tus, client, AUDIO, url=str(client.make_url(path)))
    await asyncio.to_thread(second.upload)  # type: ignore[attr-defined]
    assert _stored(data_dir) == AUDIO
    _no_partials(data_dir)


async def _stalling(first: bytes, release: asyncio.Event) -> AsyncIterator[bytes]:
    yield first
    await release.wait()


async def test_a_body_that_stalls_keeps_what_arrived(
        start_api: StartApi, data_dir: Path) -> None:
    # A proxy timeout or a phone gone to sleep: the pace watch cuts the body, and the
    # bytes that did arrive are stored for good (the offset tells where to go on).
    client = await start_api(server={"upload_idle_seconds": 0.3})
    location = await _create(client, len(AUDIO))
    release = asyncio.Event()
    response = await client.patch(location, data=_stalling(AUDIO[:100_000], release),
                                  headers={**OCTETS, "Upload-Offset": "0"})
    release.set()
    assert response.status == 408
    assert await _offset(client, location) == 100_000
    done = await client.patch(location, data=AUDIO[100_000:],
                              headers={**OCTETS, "Upload-Offset": "100000"})
    assert done.status == 204
    assert done.headers["Upload-Offset"] == str(len(AUDIO))
    assert done.headers["X-Record-Id"]
    assert _stored(data_dir) == AUDIO


async def _dropping(first: bytes) -> AsyncIterator[bytes]:
    yield first
    raise ConnectionResetError("the phone lost its network")


async def test_a_connection_dropped_mid_patch_resumes_with_no_byte_lost(
        client: Client, data_dir: Path) -> None:
    location = await _create(client, len(AUDIO))
    with pytest.raises(Exception):  # noqa: B017, PT011 - whatever the client library says
        await client.patch(location, data=_dropping(AUDIO[:150_000]),
                           headers={**OCTETS, "Upload-Offset": "0"})
    # What the server kept before the connection went, not more than was sent.
    offset = await _offset(client, location)
    assert 0 <= offset <= 150_000
    done = await client.patch(location, data=AUDIO[offset:],
                              headers={**OCTETS, "Upload-Offset": str(offset)})
    assert done.status == 204
    assert _stored(data_dir) == AUDIO


async def test_a_long_patch_stores_its_offset_as_it_goes(
        client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    # A server killed in the middle of one long PATCH loses at most PERSIST_BYTES.
    monkeypatch.setattr(uploads, "PERSIST_BYTES", 32 * 1024)
    location = await _create(client, len(AUDIO))
    release = asyncio.Event()
    patching = asyncio.ensure_future(client.patch(
        location, data=_stalling(AUDIO[:200_000], release),
        headers={**OCTETS, "Upload-Offset": "0"}))
    try:
        for _ in range(100_000):
            if await _offset(client, location) >= 200_000 - 32 * 1024:
                break
            await asyncio.sleep(0)
        assert await _offset(client, location) >= 200_000 - 32 * 1024
    finally:
        release.set()
        (await patching).close()


async def test_concurrent_patches_one_wins_the_other_is_409(
        client: Client, data_dir: Path) -> None:
    location = await _create(client, len(AUDIO))
    release = asyncio.Event()
    first = asyncio.ensure_future(client.patch(
        location, data=_stalling(AUDIO[:1000], release),
        headers={**OCTETS, "Upload-Offset": "0"}))
    busy = client.app[PARTIALS].busy
    for _ in range(100_000):
        if busy:
            break
        await asyncio.sleep(0)
    assert busy
    second = await client.patch(location, data=AUDIO[:1000],
                                headers={**OCTETS, "Upload-Offset": "0"})
    assert second.status == 409
    assert second.headers["Upload-Offset"] == "0"
    release.set()
    assert (await first).status in (204, 408)
    # The loser continues from where the winner left the upload.
    offset = await _offset(client, location)
    assert offset == 1000
    done = await client.patch(location, data=AUDIO[offset:],
                              headers={**OCTETS, "Upload-Offset": str(offset)})
    assert done.status == 204
    assert _stored(data_dir) == AUDIO


async def test_a_patch_at_another_offset_is_409_with_the_stored_one(client: Client) -> None:
    location = await _create(client, 1000)
    assert (await client.patch(location, data=b"x" * 100,
                               headers={**OCTETS, "Upload-Offset": "0"})).status == 204
    for sent in ("0", "50", "101", "1000", "5000"):
        response = await client.patch(location, data=b"y",
                                      headers={**OCTETS, "Upload-Offset": sent})
        assert response.status == 409, sent
        assert response.headers["Upload-Offset"] == "100"
        assert response.headers["Tus-Resumable"] == "1.0.0"


@pytest.mark.parametrize(("length", "status"), [
    ("-1", 400), ("1e3", 400), (" ", 400), ("99999999999999999999", 400),
    ("0", 400), (str(8 * 1024**3 + 1), 413)])
async def test_hostile_lengths_are_refused(client: Client, database: TestDatabase,
                                           length: str, status: int) -> None:
    response = await client.post("/app/uploads/", headers={**TUS, "Upload-Length": length})
    assert response.status == status
    assert database.count("uploads") == 0


async def test_hostile_patches(client: Client, data_dir: Path) -> None:
    location = await _create(client, 1000)
    wrong_type = await client.patch(location, data=b"x", headers={
        **TUS, "Content-Type": "application/octet-stream", "Upload-Offset": "0"})
    assert wrong_type.status == 415
    no_version = await client.patch(location, data=b"x", headers={
        "Content-Type": "application/offset+octet-stream", "Upload-Offset": "0"})
    assert no_version.status == 412
    assert no_version.headers["Tus-Version"] == "1.0.0"
    for offset in ("-1", "abc", ""):
        response = await client.patch(location, data=b"x",
                                      headers={**OCTETS, "Upload-Offset": offset})
        assert response.status == 400, offset
    past_end = await client.patch(location, data=b"x" * 1001,
                                  headers={**OCTETS, "Upload-Offset": "0"})
    assert past_end.status == 413
    coded = await client.patch(location, data=b"x", headers={
        **OCTETS, "Upload-Offset": "0", "Content-Encoding": "gzip"})
    assert coded.status == 415
    bad_sum = await client.patch(location, data=b"x" * 10, headers={
        **OCTETS, "Upload-Offset": "0",
        "Upload-Checksum": "sha1 " + "A" * 27 + "="})
    assert bad_sum.status == 460
    assert await _offset(client, location) == 0
    assert (data_dir / "uploads").is_dir()
    assert [p.stat().st_size for p in (data_dir / "uploads").iterdir()] == [0]


async def test_someone_elses_upload_is_not_found(client: Client) -> None:
    location = await _create(client, 1000)
    mallory = {"Remote-User": "mallory"}
    assert (await client.head(location, headers={**TUS, **mallory})).status == 404
    patch = await client.patch(location, data=b"x",
                               headers={**OCTETS, **mallory, "Upload-Offset": "0"})
    assert patch.status == 404
    assert (await client.delete(location, headers={**TUS, **mallory})).status == 404
    assert await _offset(client, location) == 0


async def test_no_identity_and_another_site_are_refused(start_api: StartApi) -> None:
    client = await start_api(server={"anonymous_user": ""})
    anonymous = await client.post("/app/uploads/", headers={**TUS, "Upload-Length": "10"})
    assert anonymous.status == 401
    evil = await client.post("/app/uploads/", headers={
        **TUS, "Upload-Length": "10", "Remote-User": "bob",
        "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
    assert evil.status == 403


async def test_a_complete_upload_that_is_not_audio_leaves_nothing(
        client: Client, data_dir: Path, database: TestDatabase) -> None:
    content = NOT_AUDIO_MARKER + b"\0" * 100
    location = await _create(client, len(content))
    response = await client.patch(location, data=content,
                                  headers={**OCTETS, "Upload-Offset": "0"})
    assert response.status == 415
    assert (await response.json())["error"]["code"] == "not_audio"
    assert database.count("uploads") == 0
    assert database.count("audio_records") == 0
    _no_partials(data_dir)
    assert (await client.head(location, headers=TUS)).status == 404


async def test_the_quota_holds_for_resumable_uploads(
        start_api: StartApi, transcoder: FakeTranscoder, data_dir: Path) -> None:
    transcoder.duration_ms = 2 * 3600 * 1000
    client = await start_api(server={"queued_audio_max_seconds_per_user": 3600})
    location = await _create(client, 100)
    response = await client.patch(location, data=b"a" * 100,
                                  headers={**OCTETS, "Upload-Offset": "0"})
    assert response.status == 429
    assert (await response.json())["error"]["code"] == "quota_exceeded"
    assert stored_files(data_dir) == []
    _no_partials(data_dir)


async def test_open_uploads_per_person_are_capped(start_api: StartApi) -> None:
    client = await start_api(server={"resumable_open_per_user_max": 2})
    await _create(client, 10)
    await _create(client, 10)
    third = await client.post("/app/uploads/", headers={**TUS, "Upload-Length": "10"})
    assert third.status == 429
    assert (await third.json())["error"]["code"] == "too_many_open_uploads"
    # Somebody else's are their own.
    other = await client.post("/app/uploads/", headers={
        **TUS, "Upload-Length": "10", "Remote-User": "bob"})
    assert other.status == 201


async def test_delete_terminates_the_upload_and_its_bytes(
        client: Client, data_dir: Path, database: TestDatabase) -> None:
    location = await _create(client, 1000)
    await client.patch(location, data=b"x" * 10, headers={**OCTETS, "Upload-Offset": "0"})
    response = await client.delete(location, headers=TUS)
    assert response.status == 204
    assert database.count("uploads") == 0
    _no_partials(data_dir)
    assert (await client.head(location, headers=TUS)).status == 404


async def test_a_bad_metadata_or_language_is_refused(client: Client) -> None:
    for metadata in ("filename ***", "a b c", "filename YQ==,filename YQ=="):
        response = await client.post("/app/uploads/", headers={
            **TUS, "Upload-Length": "10", "Upload-Metadata": metadata})
        assert response.status == 400, metadata
    klingon = await client.post("/app/uploads/", headers={
        **TUS, "Upload-Length": "10", "Upload-Metadata": _metadata(language="tlh")})
    assert klingon.status == 400


async def test_an_abandoned_upload_expires_and_the_sweeper_removes_its_bytes(
        client: Client, clock: FakeClock, data_dir: Path, database: TestDatabase) -> None:
    kept = await _create(client, 1000)
    abandoned = await _create(client, 1000)
    await client.patch(abandoned, data=b"x" * 10, headers={**OCTETS, "Upload-Offset": "0"})
    head = await client.head(abandoned, headers=TUS)
    expires = parsedate_to_datetime(head.headers["Upload-Expires"])
    assert expires == clock.now() + timedelta(seconds=86400)
    # A day later the kept one is renewed by its PATCH; the other is left alone.
    # (`set` moves the time without waking the service's own sweeper.)
    clock.set(clock.now() + timedelta(seconds=86000))
    await client.patch(kept, data=b"y" * 10, headers={**OCTETS, "Upload-Offset": "0"})
    clock.set(clock.now() + timedelta(seconds=401))
    assert (await client.head(abandoned, headers=TUS)).status == 410
    assert (await client.patch(abandoned, data=b"x", headers={
        **OCTETS, "Upload-Offset": "10"})).status == 410
    app = client.app
    sweeper = UploadSweeper(readers=app[keys.READERS], writer=app[keys.WRITER],
                            partials=app[PARTIALS], clock=clock)
    before = REGISTRY.get_sample_value("transcriber_resumable_uploads_total",
                                       {"outcome": "expired"}) or 0.0
    assert await sweeper.sweep() == 1
    assert REGISTRY.get_sample_value("transcriber_resumable_uploads_total",
                                     {"outcome": "expired"}) == before + 1
    assert database.count("uploads") == 1
    assert [p.name for p in (data_dir / "uploads").iterdir()] == [f"{URL(kept).name}.part"]
    assert (await client.head(abandoned, headers=TUS)).status == 404
    assert await _offset(client, kept) == 10


async def test_partial_files_without_an_upload_are_removed(
        client: Client, clock: FakeClock, data_dir: Path) -> None:
    kept = await _create(client, 1000)
    folder = data_dir / "uploads"
    (folder / "01jz0000000000000000000000.part").write_bytes(b"left by a crash")
    (folder / "not-an-id.part").write_bytes(b"?")
    app = client.app
    sweeper = UploadSweeper(readers=app[keys.READERS], writer=app[keys.WRITER],
                            partials=app[PARTIALS], clock=clock)
    assert await sweeper.remove_orphans() == 2
    assert [p.name for p in folder.iterdir()] == [f"{URL(kept).name}.part"]


async def test_a_complete_upload_the_probe_could_not_take_now_is_finished_by_head(
        client: Client, transcoder: FakeTranscoder, data_dir: Path) -> None:
    # The last PATCH's bytes are kept when the file cannot be examined now (503);
    # the client's next HEAD (or an empty PATCH at the full offset) makes the record.
    location = await _create(client, 1000)
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
    assert _stored(data_dir) == b"a" * 1000
    _no_partials(data_dir)
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
        **TUS, "Upload-Defer-Length": "1", "Upload-Metadata": _metadata(filename="rec.webm")})
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
    assert _stored(data_dir) == AUDIO
    # Deferred and named at once is a contradiction.
    both = await client.post("/app/uploads/", headers={
        **TUS, "Upload-Defer-Length": "1", "Upload-Length": "10"})
    assert both.status == 400


@pytest.mark.parametrize("files_kind", ["s3"])
async def test_with_files_in_a_bucket_the_finished_upload_lands_there(
        client: Client, s3_bucket: Bucket, data_dir: Path) -> None:
    # The partial file lives on this host; the record's original goes to the bucket.
    location = await _create(client, len(AUDIO))
    for start in range(0, len(AUDIO), 100_000):
        answer = await client.patch(location, data=AUDIO[start:start + 100_000],
                                    headers={**OCTETS, "Upload-Offset": str(start)})
        assert answer.status == 204
    record_id = answer.headers["X-Record-Id"]
    (key,) = s3_bucket.record_keys(record_id)
    assert s3_bucket.get(key) == AUDIO
    _no_partials(data_dir)
