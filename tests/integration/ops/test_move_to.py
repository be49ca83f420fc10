"""`transcriber move-to`: an SQLite archive made through the service, copied into a
fresh PostgreSQL database (and a moto bucket), checked, and served from there; a copy
interrupted in its rows or its files and run again ends whole, without duplicates."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import orjson
import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from tests.helpers.archive import kept_logging, tamper
from tests.helpers.s3 import Bucket
from tests.helpers.settings import SettingsFactory
from tests.helpers.tokens import bearer, make_token
from tests.helpers.web import Client, ServeLikeServer, advance, transcribe, upload
from transcriber.cli import main
from transcriber.db.connection import database_path
from transcriber.db.move import TABLES, open_source, unknown_tables
from transcriber.maintenance.move import MoveError, MoveHooks, move_to, plan_files
from transcriber.ports import Utterance
from transcriber.providers.local_files import RECORDS_DIR, take_instance_lock
from transcriber.service.app import build_app
from transcriber.settings import Secret, Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys

BUDGET = (Utterance(start_ms=0, end_ms=2000, channel=0, speaker="S1",
                    text="The quarterly budgets were cut"),
          Utterance(start_ms=2000, end_ms=4000, channel=0, speaker="S2",
                    text="and nobody said a word."))
WEATHER = (Utterance(start_ms=0, end_ms=2000, channel=0, text="Rain tomorrow in the hills"),)


@dataclasses.dataclass
class Archive:
    settings: Settings
    records: dict[str, bytes]  # record id -> its original's bytes
    token: str


@contextlib.asynccontextmanager
async def serving(aiohttp_client: AiohttpClient, settings: Settings) -> AsyncIterator[Client]:
    app = build_app(settings, clock=FakeClock())
    app[keys.TRANSCODER] = FakeTranscoder(duration_ms=1500)
    client: TestClient[Any, Any] = await aiohttp_client(ServeLikeServer(app, settings.server))
    try:
        yield client
    finally:
        await client.close()


async def make_archive(aiohttp_client: AiohttpClient, make_settings: SettingsFactory,
                       bucket: Bucket | None = None, *, files_in_bucket: bool = False
                       ) -> Archive:
    """Three records through the service on SQLite (files local unless `files_in_bucket`):
    two transcribed (one with a title, topics and a speaker's name), one still waiting; a
    personal token."""
    sections: dict[str, Any] = {"pipeline": {"workers": 0}}
    if bucket is not None:
        sections["s3"] = bucket.settings()  # the bucket is known, the files still local
        if files_in_bucket:
            sections["storage"] = {"files": "s3"}
    settings = make_settings(**sections)
    records: dict[str, bytes] = {}
    async with serving(aiohttp_client, settings) as client:
        for n, words in enumerate((BUDGET, WEATHER, None)):
            body = b"RIFF....WAVEfmt fake audio bytes " + bytes([n]) * (2000 + 300 * n)
            record_id = str((await upload(client, body, name=f"talk {n}.wav"))["id"])
            records[record_id] = body
            if words is not None:
                await transcribe(client, record_id, words)
                await advance(client, record_id)  # done: the next one is claimable
        first = next(iter(records))
        edited = await client.patch(f"/app/audiorecords/{first}", json={
            "title": "Money talk", "topics": ["finance", "plans"], "speakers": {"S1": "Anna"}})
        assert edited.status == 200, await edited.text()
        token = await make_token(client.app, "local")
    # What no step of a fake pipeline writes: bytes, reals, a webhook and its delivery.
    owner = "(SELECT id FROM users WHERE provider_login = 'local')"
    first = next(iter(records))
    tamper(database_path(settings.storage.data_dir),
           "INSERT INTO recognition_speed VALUES ('local', 'small', 0.25, 3, '2026-01-01')",
           f"INSERT INTO voice_profiles VALUES ('v1', {owner}, 'Anna', X'00ff10', X'0102', "
           "1500, 1, '2026-01-01', '2026-01-01')",
           f"INSERT INTO record_voices VALUES ('{first}', 'S1', 1500, X'00ff10', X'', 'v1', "
           "0.875, '[]')",
           f"INSERT INTO webhooks VALUES ('w1', {owner}, 'https://example.test/hook', 's', "
           "'[\"record.done\"]', '2026-01-01', NULL, NULL, 0, NULL, NULL, NULL)",
           f"INSERT INTO webhook_deliveries VALUES ('d1', 'w1', 'record.done', '{first}', "
           "'{}', X'7b7d', 'delivered', 1, '2026-01-01', 200, NULL, '2026-01-01', "
           "'2026-01-01')")
    return Archive(settings=settings, records=records, token=token)


def on_postgres(archive: Archive, url: str, bucket: Bucket | None) -> Settings:
    """The archive's settings after the move: the database, and the bucket's files."""
    storage: dict[str, Any] = {"database_url": Secret(url)}
    if bucket is not None:
        storage["files"] = "s3"
    return dataclasses.replace(archive.settings, storage=dataclasses.replace(
        archive.settings.storage, **storage))


async def rows_of(url: str, sql: str) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(url)
    try:
        return list(await conn.fetch(sql))
    finally:
        await conn.close()


async def test_the_archive_moves_with_its_files_and_is_served_from_postgres_and_the_bucket(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory, postgres_url: str,
    s3_bucket: Bucket,
) -> None:
    archive = await make_archive(aiohttp_client, make_settings, s3_bucket)
    report = await move_to(archive.settings, postgres_url, to_bucket=True)

    assert report.ok, report.problems
    assert report.files_at == "s3"
    assert report.tables["audio_records"] == {"sqlite": 3, "postgresql": 3}
    assert report.tables["texts"]["postgresql"] >= 2
    assert report.tables["record_topics"] == {"sqlite": 2, "postgresql": 2}
    assert report.tables["api_tokens"] == {"sqlite": 1, "postgresql": 1}
    assert set(report.tables) == set(TABLES)
    for table in ("voice_profiles", "record_voices", "webhooks", "webhook_deliveries",
                  "recognition_speed"):
        assert report.tables[table] == {"sqlite": 1, "postgresql": 1}, table
    voice = (await rows_of(postgres_url, "SELECT centroid, similarity FROM record_voices"))[0]
    assert (bytes(voice["centroid"]), voice["similarity"]) == (b"\x00\xff\x10", 0.875)
    assert report.files["files"] == report.files["copied"] == 3
    assert report.search == {"records": 3, "refreshed": 3}
    stored = {key.rsplit("/", 2)[1]: s3_bucket.get(key) for key in s3_bucket.record_keys()}
    assert stored == archive.records  # one object per record, its bytes
    assert (await rows_of(postgres_url, "SELECT count(*) AS n FROM record_search "
                                        "WHERE stale = 0"))[0]["n"] == 3

    first = next(iter(archive.records))
    async with serving(aiohttp_client, on_postgres(archive, postgres_url, s3_bucket)) as client:
        card = await client.get(f"/app/audiorecords/{first}")
        assert card.status == 200
        body = await card.json()
        assert body["title"] == "Money talk"
        assert sorted(body["topics"]) == ["finance", "plans"]
        download = await client.get(f"/app/audiorecords/{first}/file")
        assert download.status == 200
        assert await download.read() == archive.records[first]
        # A word form: "budget" finds the record that says "budgets"; "Anna" its speaker.
        for query in ("budget", "anna", "money"):
            found = await (await client.get("/app/audiorecords", params={"q": query})).json()
            assert [item["id"] for item in found["items"]] == [first], query
        me = await client.get("/app/me", headers=bearer(archive.token))
        assert me.status == 200


async def test_an_interrupted_move_runs_again_to_a_whole_copy(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory, postgres_url: str,
    s3_bucket: Bucket,
) -> None:
    archive = await make_archive(aiohttp_client, make_settings, s3_bucket)

    class Crash(Exception):
        pass

    def crash_at(table: str) -> MoveHooks:
        def on_batch(name: str, _rows: int) -> None:
            if name == table:
                raise Crash
        return MoveHooks(on_batch=on_batch)

    # Killed after the texts' batch: users, files, records, topics and texts are in, the
    # tables after them (structures, ..., tokens) not.
    with pytest.raises(Crash):
        await move_to(archive.settings, postgres_url, to_bucket=True, hooks=crash_at("texts"))
    assert len(await rows_of(postgres_url, "SELECT id FROM audio_records")) == 3
    assert len(await rows_of(postgres_url, "SELECT * FROM texts")) == 2
    assert await rows_of(postgres_url, "SELECT * FROM structures") == []
    assert await rows_of(postgres_url, "SELECT * FROM api_tokens") == []

    # Then in the files: one object went up; another one is there with other bytes of
    # the same size (not this file: it is replaced).
    done: list[int] = []

    def one_file(size: int) -> None:
        done.append(size)
        raise Crash

    with pytest.raises(Crash):
        await move_to(archive.settings, postgres_url, to_bucket=True,
                      hooks=MoveHooks(on_file=one_file))
    assert len(s3_bucket.record_keys()) == 1
    second, body = list(archive.records.items())[1]
    file_name = next(p.name for p in (archive.settings.storage.data_dir / RECORDS_DIR
                                      / second).iterdir())
    s3_bucket.put(f"{s3_bucket.prefix}records/{second}/{file_name}", b"x" * len(body))

    report = await move_to(archive.settings, postgres_url, to_bucket=True)
    assert report.ok, report.problems
    assert (report.files["in_place"], report.files["copied"]) == (1, 2)
    assert all(n["sqlite"] == n["postgresql"] for n in report.tables.values())
    assert s3_bucket.get(f"{s3_bucket.prefix}records/{second}/{file_name}") == body
    assert (await rows_of(postgres_url, "SELECT count(*) AS n FROM record_search "
                                        "WHERE stale = 0"))[0]["n"] == 3

    # Once more: nothing left to copy, the same check passes.
    again = await move_to(archive.settings, postgres_url, to_bucket=True)
    assert again.ok
    assert (again.files["in_place"], again.files["copied"]) == (3, 0)
    assert again.tables == report.tables


async def test_the_command_moves_rows_only_and_exits_1_when_the_copy_differs(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory, postgres_url: str,
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    archive = await make_archive(aiohttp_client, make_settings)
    config = tmp_path / "transcriber.toml"
    config.write_text(f'[storage]\ndata_dir = "{archive.settings.storage.data_dir}"\n')
    argv = ["move-to", "--config", str(config), "--database-url", postgres_url, "--json"]
    capsys.readouterr()  # the service's log of making the archive

    with kept_logging():
        assert await asyncio.to_thread(main, argv) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert report["ok"]
    assert report["files_at"] == "local"
    assert report["files"]["copied"] == 0
    assert report["files"]["files"] == 3
    assert report["tables"]["audio_records"] == {"sqlite": 3, "postgresql": 3}

    # A record's search row lost, a record's file changed: named, exit 1.
    first, second = list(archive.records)[:2]
    conn = await asyncpg.connect(postgres_url)
    try:
        await conn.execute("DELETE FROM record_search WHERE record_id = $1", first)
    finally:
        await conn.close()
    local = next((archive.settings.storage.data_dir / RECORDS_DIR / second).iterdir())
    local.write_bytes(local.read_bytes() + b"more")
    with kept_logging():
        assert await asyncio.to_thread(main, argv) == 1
    captured = capsys.readouterr()
    problems = orjson.loads(captured.out)["problems"]
    assert problems["search"] == [f"record {first}: search row missing"]
    assert len(problems["wrong_size"]) == 1
    assert second in problems["wrong_size"][0]
    assert "talk" not in captured.err  # the sender's file names never show


async def test_what_cannot_be_moved_is_refused(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory, postgres_url: str,
) -> None:
    archive = await make_archive(aiohttp_client, make_settings)
    with pytest.raises(MoveError, match="already"):
        await move_to(on_postgres(archive, postgres_url, None), postgres_url, to_bucket=False)
    with pytest.raises(MoveError, match=r"s3\.bucket"):
        await move_to(archive.settings, postgres_url, to_bucket=True)
    fd, alone = take_instance_lock(archive.settings.storage.data_dir)
    assert alone
    try:
        with pytest.raises(MoveError, match="stop the service"):
            await move_to(archive.settings, postgres_url, to_bucket=False)
    finally:
        os.close(fd)
    # Refused before anything was written: not even migrated.
    assert (await rows_of(postgres_url, "SELECT to_regclass('users') AS t"))[0]["t"] is None


def test_the_hash_of_a_file_larger_than_a_chunk(tmp_path: Path) -> None:
    from transcriber.db.reads.maintenance import FileEntry  # noqa: PLC0415
    from transcriber.maintenance.move_files import _local_sha256  # noqa: PLC0415

    body = bytes(range(256)) * 40000  # larger than one chunk
    folder = tmp_path / RECORDS_DIR / "r1"
    folder.mkdir(parents=True)
    (folder / "f1.wav").write_bytes(body)
    entry = FileEntry(record_id="r1", file_name="f1.wav", size_bytes=len(body))
    assert _local_sha256(tmp_path, entry) == (len(body), hashlib.sha256(body).hexdigest())


def test_every_table_of_the_schema_is_copied_or_left_out_on_purpose(migrated: Path) -> None:
    with contextlib.closing(open_source(migrated)) as conn:
        assert unknown_tables(conn) == []
    # A table of a newer version this one does not know: refused, never lost quietly.
    tamper(migrated, "CREATE TABLE newer_things (id TEXT PRIMARY KEY)")
    with pytest.raises(MoveError, match="newer_things"):
        open_source(migrated)


def test_where_the_files_end_up(make_settings: SettingsFactory) -> None:
    bucket = {"s3": {"bucket": "archive"}}
    assert plan_files(make_settings(**bucket), to_bucket=True) == ("s3", True)
    assert plan_files(make_settings(**bucket), to_bucket=False) == ("local", False)
    # In the bucket already: they stay, whatever the flag; only the rows move.
    in_bucket = make_settings(storage={"files": "s3"}, **bucket)
    assert plan_files(in_bucket, to_bucket=True) == ("s3", False)
    assert plan_files(in_bucket, to_bucket=False) == ("s3", False)
    with pytest.raises(MoveError, match=r"s3\.bucket"):
        plan_files(make_settings(), to_bucket=True)


async def test_files_already_in_the_bucket_stay_and_are_checked_there(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory, postgres_url: str,
    s3_bucket: Bucket,
) -> None:
    archive = await make_archive(aiohttp_client, make_settings, s3_bucket,
                                 files_in_bucket=True)
    keys = s3_bucket.record_keys()
    report = await move_to(archive.settings, postgres_url, to_bucket=False)
    assert report.ok, report.problems
    assert report.files_at == "s3"
    assert (report.files["files"], report.files["copied"]) == (3, 0)
    assert s3_bucket.record_keys() == keys

    s3_bucket.delete(keys[0])
    report = await move_to(archive.settings, postgres_url, to_bucket=False)
    assert report.problems == {"missing_objects": [keys[0].removeprefix(s3_bucket.prefix)]}
