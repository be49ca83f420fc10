"""A full disk: refused before the first byte, and a disk that fills mid-write.

The disk is a fault-injecting file layer (`LocalRecordFiles(free_bytes=…,
opener=…)`): a "disk" of a fixed number of bytes shared by every file opened
through it, whose write raises ENOSPC past the end, as a real one does. The
machine's own disk is never filled.
"""

from __future__ import annotations

import errno
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from tests.helpers.settings import SettingsFactory
from tests.helpers.small_disk import SmallDisk
from tests.helpers.web import stored_files, upload
from transcriber.core.errors import StorageFull, TransientFailure
from transcriber.pipeline.policy import RetryDecision, decide
from transcriber.providers import local_files as files_module
from transcriber.providers.local_files import LocalRecordFiles, has_room
from transcriber.service.app import build_app
from transcriber.settings import PipelineSettings
from transcriber.testing.clock import FakeClock
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys

Client = TestClient[web.Request, web.Application]
MARGIN = 1000


def _layer(data_dir: Path, disk: SmallDisk, margin: int = MARGIN) -> LocalRecordFiles:
    return LocalRecordFiles(data_dir, min_free_bytes=margin, free_bytes=disk.free_bytes,
                       opener=disk.open)


async def _chunks(total: int, size: int = 100) -> AsyncIterator[bytes]:
    for start in range(0, total, size):
        yield b"x" * min(size, total - start)


def test_room_is_the_size_plus_the_margin() -> None:
    assert has_room(free=1500, size=500, margin=1000)
    assert not has_room(free=1499, size=500, margin=1000)
    assert has_room(free=1000, size=None, margin=1000)
    assert not has_room(free=999, size=None, margin=1000)


async def test_a_write_that_cannot_fit_is_refused_before_anything_is_read(
        data_dir: Path) -> None:
    disk = SmallDisk(capacity=1400)
    files = _layer(data_dir, disk)
    read = 0

    async def counted() -> AsyncIterator[bytes]:
        nonlocal read
        async for chunk in _chunks(500):
            read += len(chunk)
            yield chunk

    with pytest.raises(StorageFull):
        await files.place_stream("r1", counted(), ext=".mp3", limit=10**6, expected_size=500)
    assert read == 0
    assert stored_files(data_dir) == []


async def test_a_disk_that_fills_mid_write_keeps_what_was_stored_and_leaves_no_part(
        data_dir: Path) -> None:
    disk = SmallDisk(capacity=3000)
    files = _layer(data_dir, disk, margin=0)
    kept = await files.place_stream("r1", _chunks(2000), ext=".mp3", limit=10**6)
    with pytest.raises(StorageFull) as caught:  # no size declared: the check cannot know
        await files.place_stream("r2", _chunks(2000), ext=".mp3", limit=10**6)
    assert isinstance(caught.value, TransientFailure)  # the steps retry it (P17)
    assert stored_files(data_dir) == [kept.path]
    assert kept.path.read_bytes() == b"x" * 2000
    assert not (data_dir / "records" / "r2").exists()


@pytest.fixture
def start_full(aiohttp_client: AiohttpClient, make_settings: SettingsFactory,
               clock: FakeClock, data_dir: Path) -> object:
    async def start(disk: SmallDisk) -> Client:
        settings = make_settings(pipeline={"workers": 0}, storage={"min_free_bytes": MARGIN})
        app = build_app(settings, clock=clock)
        app[keys.TRANSCODER] = FakeTranscoder(duration_ms=1500)
        app[keys.FILES] = _layer(data_dir, disk)
        return await aiohttp_client(app)

    return start


async def test_upload_without_room_is_507_before_the_body(start_full: object,
                                                          data_dir: Path) -> None:
    assert callable(start_full)
    client: Client = await start_full(SmallDisk(capacity=MARGIN + 100))
    response = await client.post("/app/audiorecords", data=b"a" * 200,
                                 headers={"X-Filename": "talk.wav"})
    assert response.status == 507
    body = await response.json()
    assert body["error"]["code"] == "insufficient_storage"
    assert response.headers["Retry-After"] == "300"
    assert stored_files(data_dir) == []


async def test_upload_that_fills_the_disk_mid_body_is_507_and_stores_nothing(
        start_full: object, data_dir: Path) -> None:
    assert callable(start_full)
    disk = SmallDisk(capacity=MARGIN + 5000)
    client: Client = await start_full(disk)
    first = await upload(client, content=b"RIFF" + b"a" * 1000)
    kept = stored_files(data_dir)
    disk.capacity = disk.used + MARGIN + 300  # someone else filled the disk meanwhile

    async def body() -> AsyncIterator[bytes]:  # no declared length: chunked, 2000 bytes
        for _ in range(10):
            yield b"b" * 200

    response = await client.post("/app/audiorecords", data=body(),
                                 headers={"X-Filename": "talk.wav"})
    assert response.status == 507
    assert stored_files(data_dir) == kept
    listing = await (await client.get("/app/audiorecords")).json()
    assert [item["id"] for item in listing["items"]] == [first["id"]]


async def test_metrics_show_the_free_bytes(start_full: object) -> None:
    assert callable(start_full)
    client: Client = await start_full(SmallDisk(capacity=123456))
    text = await (await client.get("/metrics")).text()
    assert "transcriber_storage_free_bytes 123456.0" in text
    assert f"transcriber_storage_min_free_bytes {float(MARGIN)}" in text


async def test_a_step_copy_that_meets_a_full_disk_is_transient(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = LocalRecordFiles(data_dir)
    file_id, temp = files.temp_path("r1", ".ogg")  # what normalize's ffmpeg wrote
    temp.write_bytes(b"ogg")

    def no_room(source: Path, final: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files_module, "_fsync_and_rename", no_room)
    with pytest.raises(StorageFull) as caught:
        await files.finalize("r1", file_id, temp)
    assert isinstance(caught.value, TransientFailure)
    decision = decide(caught.value, attempts=1, settings=PipelineSettings())
    assert isinstance(decision, RetryDecision)  # retried with backoff, never halted (P17)
    assert decision.error_class == "StorageFull"
