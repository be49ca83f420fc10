"""DELETE /app/audiorecords/{id}: every row, the search row, the folder, the objects
(SpeechKit's parts, and the record files themselves with `storage.files = s3`)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import structlog
from pytest_aiohttp import AiohttpClient

from tests.helpers.database import TestDatabase
from tests.helpers.s3 import Bucket
from tests.helpers.settings import SettingsFactory
from tests.helpers.web import Client, advance, claim, stored_files, transcribe, upload
from transcriber.core.errors import ClaimLost
from transcriber.db.commands.edits import DeleteRecord
from transcriber.db.commands.pipeline import RenewLease
from transcriber.db.commands.recognition import RegisterRecognition
from transcriber.maintenance.bucket import sweep_bucket
from transcriber.pipeline.effects import AddFile, SetColumns
from transcriber.providers.s3_files import S3RecordFiles
from transcriber.service.app import build_app
from transcriber.service.storage import sweep_at_start
from transcriber.testing.clock import FakeClock
from transcriber.testing.object_store import FakeObjectStore
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys

TABLES = {"audio_records": "id", "files": "record_id", "texts": "record_id",
          "structures": "record_id", "structure_revisions": "record_id",
          "recognitions": "record_id", "record_events": "record_id",
          "record_topics": "record_id"}
# A record's row of the search index: FTS5's key table on SQLite (`record_search` is the
# FTS5 table itself), the tsvector row on PostgreSQL.
SEARCH_KEYS = {"sqlite": "record_search_keys", "postgresql": "record_search"}


def _tables(database: TestDatabase) -> dict[str, str]:
    return {**TABLES, SEARCH_KEYS[database.engine]: "record_id"}


def _rows(database: TestDatabase, record_id: str) -> dict[str, int]:
    counts = {table: int(database.scalar(f"SELECT count(*) FROM {table} WHERE {column} = :id",
                                         {"id": record_id}))
              for table, column in _tables(database).items()}
    counts["search_rows"] = database.count("record_search")
    return counts


async def _full_record(client: Client) -> str:
    """A done record with topics, a correction, events and a recognition row."""
    record_id = str((await upload(client))["id"])
    await transcribe(client, record_id)
    await advance(client, record_id)
    await client.patch(f"/app/audiorecords/{record_id}",
                       json={"title": "doomed", "topics": ["bin"]})
    card = await (await client.get(f"/app/audiorecords/{record_id}")).json()
    response = await client.patch(f"/app/audiorecords/{record_id}/transcript", json={
        "revision": card["revision"], "utterances": [{"index": 0, "text": "fixed"}]})
    assert response.status == 200
    return record_id


async def test_delete_removes_everything_and_then_404_everywhere(
    client: Client, data_dir: Path, database: TestDatabase
) -> None:
    record_id = await _full_record(client)
    keep = str((await upload(client))["id"])
    database.execute("INSERT INTO recognitions (id, record_id, provider, created_at, updated_at)"
                     " VALUES ('rc1', :id, 'fake', 't', 't')", {"id": record_id})
    counts = _rows(database, record_id)
    tables = _tables(database)
    assert all(counts[t] for t in tables), counts
    assert (data_dir / "records" / record_id).is_dir()

    with structlog.testing.capture_logs() as logs:
        response = await client.delete(f"/app/audiorecords/{record_id}")
    assert response.status == 204
    assert [e for e in logs if e["event"] == "record_deleted"] == [
        {"event": "record_deleted", "record_id": record_id, "log_level": "info"}]

    after = _rows(database, record_id)
    assert {t: after[t] for t in tables} == dict.fromkeys(tables, 0)
    assert after["search_rows"] == counts["search_rows"] - 1  # the kept record's row stays
    assert not (data_dir / "records" / record_id).exists()
    base = f"/app/audiorecords/{record_id}"
    for method, path in (("GET", base), ("GET", f"{base}/file"), ("GET", f"{base}/transcript"),
                         ("PATCH", base), ("DELETE", base), ("POST", f"{base}/resume")):
        response = await client.request(method, path, json={"title": "x"})
        assert response.status == 404, (method, path)
    listed = await (await client.get("/app/audiorecords")).json()
    assert [item["id"] for item in listed["items"]] == [keep]
    assert (await (await client.get("/app/audiorecords?q=doomed")).json())["items"] == []
    topics = await (await client.get("/app/topics")).json()
    assert topics == {"items": [], "next_cursor": None}  # no record carries it any more


async def test_another_persons_record_is_404_and_nothing_is_removed(
    client: Client, data_dir: Path, database: TestDatabase
) -> None:
    record_id = str((await upload(client, headers={"Remote-User": "alice"}))["id"])
    before = _rows(database, record_id)
    response = await client.delete(f"/app/audiorecords/{record_id}",
                                   headers={"Remote-User": "bob"})
    assert response.status == 404
    assert (await response.json())["error"]["code"] == "not_found"
    assert _rows(database, record_id) == before
    assert stored_files(data_dir)
    assert (await client.delete("/app/audiorecords/nope")).status == 404


async def test_a_claim_holder_loses_its_claim(client: Client) -> None:
    record_id = str((await upload(client))["id"])
    claimed = await claim(client, record_id)
    assert (await client.delete(f"/app/audiorecords/{record_id}")).status == 204
    try:
        await client.app[keys.WRITER].ask(RenewLease(record_id=record_id, token=claimed.token,
                                                     lease_seconds=60))
    except ClaimLost:
        pass
    else:
        raise AssertionError("the holder's write landed on a deleted record")


async def test_its_objects_in_object_storage_are_removed(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory, clock: FakeClock
) -> None:
    store = FakeObjectStore()
    app = build_app(make_settings(pipeline={"workers": 0}), clock=clock)
    app[keys.TRANSCODER] = FakeTranscoder(duration_ms=1500)
    app[keys.OBJECT_STORE] = store
    client = await aiohttp_client(app)
    record_id = str((await upload(client))["id"])
    claimed = await claim(client, record_id)
    for part in (0, 1):
        await client.app[keys.WRITER].ask(RegisterRecognition(
            record_id=record_id, token=claimed.token, part_index=part, offset_ms=part * 1000,
            provider="speechkit", model="general", source_uri=f"s3://b/{part}"))
    assert (await client.delete(f"/app/audiorecords/{record_id}")).status == 204
    prefix = client.app[keys.SETTINGS].s3.prefix
    assert store.deletes == [f"{prefix}{record_id}/part-000.ogg",
                             f"{prefix}{record_id}/part-001.ogg"]


async def test_files_left_by_a_crash_after_the_rows_go_at_the_next_start(
    client: Client, data_dir: Path
) -> None:
    """Crash-safety: the rows go first; a folder whose record is gone is swept at start."""
    record_id = str((await upload(client))["id"])
    folder = data_dir / "records" / record_id
    me = await (await client.get("/app/me")).json()
    await client.app[keys.WRITER].ask(DeleteRecord(record_id=record_id, owner_id=me["id"]))
    assert any(folder.iterdir())  # the process "died" before removing the files
    await sweep_at_start(data_dir, client.app[keys.READERS], before=time.time() + 1)
    assert not folder.exists()


@pytest.mark.parametrize("files_kind", ["s3"])
async def test_with_files_in_a_bucket_its_objects_are_removed(
    client: Client, s3_bucket: Bucket, data_dir: Path
) -> None:
    record_id = str((await upload(client))["id"])
    keep = str((await upload(client))["id"])
    files = client.app[keys.FILES]
    file_id, temp = files.temp_path(record_id, ".ogg")
    temp.write_bytes(b"OggS normalized")
    placed = await files.finalize(record_id, file_id, temp)
    await advance(client, record_id, AddFile.of(placed),
                  SetColumns(values={"normalized_file_id": file_id}))
    assert len(s3_bucket.record_keys(record_id)) == 2
    assert (data_dir / "work" / record_id).is_dir()  # this host's working copy
    assert not (data_dir / "records").exists()

    assert (await client.delete(f"/app/audiorecords/{record_id}")).status == 204
    assert s3_bucket.record_keys(record_id) == []
    assert len(s3_bucket.record_keys(keep)) == 1
    assert not (data_dir / "work" / record_id).exists()


@pytest.mark.parametrize("files_kind", ["s3"])
async def test_objects_left_by_a_crash_after_the_rows_go_at_the_next_start(
    client: Client, s3_bucket: Bucket
) -> None:
    record_id = str((await upload(client))["id"])
    keep = str((await upload(client))["id"])
    me = await (await client.get("/app/me")).json()
    await client.app[keys.WRITER].ask(DeleteRecord(record_id=record_id, owner_id=me["id"]))
    assert s3_bucket.record_keys(record_id)  # the process "died" before removing them
    files = client.app[keys.FILES]
    assert isinstance(files, S3RecordFiles)
    await sweep_bucket(files, client.app[keys.READERS],
                       before=datetime.now(UTC) + timedelta(seconds=1))
    assert s3_bucket.record_keys(record_id) == []
    assert len(s3_bucket.record_keys(keep)) == 1
