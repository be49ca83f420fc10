"""Resumable uploads' refusals and endings: hostile lengths, offsets and headers, another
person's upload, no identity, another site, not audio, the quota, the cap on open
uploads, termination, expiry with a fake clock and the sweeper."""

from __future__ import annotations

from datetime import timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest
from prometheus_client import REGISTRY
from yarl import URL

from tests.helpers.database import TestDatabase
from tests.helpers.tus import OCTETS, TUS, create, metadata, no_partials, offset_of
from tests.helpers.web import Client, StartApi, stored_files
from transcriber.service.uploads import UploadSweeper
from transcriber.testing.clock import FakeClock
from transcriber.testing.transcoder import NOT_AUDIO_MARKER, FakeTranscoder
from transcriber.web import keys
from transcriber.web.partials import PARTIALS


async def test_a_patch_at_another_offset_is_409_with_the_stored_one(client: Client) -> None:
    location = await create(client, 1000)
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
    location = await create(client, 1000)
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
    assert await offset_of(client, location) == 0
    assert (data_dir / "uploads").is_dir()
    assert [p.stat().st_size for p in (data_dir / "uploads").iterdir()] == [0]


async def test_someone_elses_upload_is_not_found(client: Client) -> None:
    location = await create(client, 1000)
    mallory = {"Remote-User": "mallory"}
    assert (await client.head(location, headers={**TUS, **mallory})).status == 404
    patch = await client.patch(location, data=b"x",
                               headers={**OCTETS, **mallory, "Upload-Offset": "0"})
    assert patch.status == 404
    assert (await client.delete(location, headers={**TUS, **mallory})).status == 404
    assert await offset_of(client, location) == 0


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
    location = await create(client, len(content))
    response = await client.patch(location, data=content,
                                  headers={**OCTETS, "Upload-Offset": "0"})
    assert response.status == 415
    assert (await response.json())["error"]["code"] == "not_audio"
    assert database.count("uploads") == 0
    assert database.count("audio_records") == 0
    no_partials(data_dir)
    assert (await client.head(location, headers=TUS)).status == 404


async def test_the_quota_holds_for_resumable_uploads(
        start_api: StartApi, transcoder: FakeTranscoder, data_dir: Path) -> None:
    transcoder.duration_ms = 2 * 3600 * 1000
    client = await start_api(server={"queued_audio_max_seconds_per_user": 3600})
    location = await create(client, 100)
    response = await client.patch(location, data=b"a" * 100,
                                  headers={**OCTETS, "Upload-Offset": "0"})
    assert response.status == 429
    assert (await response.json())["error"]["code"] == "quota_exceeded"
    assert stored_files(data_dir) == []
    no_partials(data_dir)


async def test_open_uploads_per_person_are_capped(start_api: StartApi) -> None:
    client = await start_api(server={"resumable_open_per_user_max": 2})
    await create(client, 10)
    await create(client, 10)
    third = await client.post("/app/uploads/", headers={**TUS, "Upload-Length": "10"})
    assert third.status == 429
    assert (await third.json())["error"]["code"] == "too_many_open_uploads"
    # Somebody else's are their own.
    other = await client.post("/app/uploads/", headers={
        **TUS, "Upload-Length": "10", "Remote-User": "bob"})
    assert other.status == 201


async def test_delete_terminates_the_upload_and_its_bytes(
        client: Client, data_dir: Path, database: TestDatabase) -> None:
    location = await create(client, 1000)
    await client.patch(location, data=b"x" * 10, headers={**OCTETS, "Upload-Offset": "0"})
    response = await client.delete(location, headers=TUS)
    assert response.status == 204
    assert database.count("uploads") == 0
    no_partials(data_dir)
    assert (await client.head(location, headers=TUS)).status == 404


async def test_a_bad_metadata_or_language_is_refused(client: Client) -> None:
    for header in ("filename ***", "a b c", "filename YQ==,filename YQ=="):
        response = await client.post("/app/uploads/", headers={
            **TUS, "Upload-Length": "10", "Upload-Metadata": header})
        assert response.status == 400, header
    klingon = await client.post("/app/uploads/", headers={
        **TUS, "Upload-Length": "10", "Upload-Metadata": metadata(language="tlh")})
    assert klingon.status == 400


async def test_an_abandoned_upload_expires_and_the_sweeper_removes_its_bytes(
        client: Client, clock: FakeClock, data_dir: Path, database: TestDatabase) -> None:
    kept = await create(client, 1000)
    abandoned = await create(client, 1000)
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
    assert await offset_of(client, kept) == 10


async def test_partial_files_without_an_upload_are_removed(
        client: Client, clock: FakeClock, data_dir: Path) -> None:
    kept = await create(client, 1000)
    folder = data_dir / "uploads"
    (folder / "01jz0000000000000000000000.part").write_bytes(b"left by a crash")
    (folder / "not-an-id.part").write_bytes(b"?")
    app = client.app
    sweeper = UploadSweeper(readers=app[keys.READERS], writer=app[keys.WRITER],
                            partials=app[PARTIALS], clock=clock)
    assert await sweeper.remove_orphans() == 2
    assert [p.name for p in folder.iterdir()] == [f"{URL(kept).name}.part"]
