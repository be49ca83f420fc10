"""POST /app/audiorecords: streaming intake, limits, refusals that leave nothing behind."""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from prometheus_client import REGISTRY

from tests.helpers.database import TestDatabase
from tests.helpers.web import Client, StartApi, stored_files, upload
from transcriber.core.errors import TransientFailure
from transcriber.testing.transcoder import NOT_AUDIO_MARKER, FakeTranscoder
from transcriber.web import identity


def _nothing_stored(database: TestDatabase) -> None:
    assert stored_files(database.data_dir) == []
    assert database.count("audio_records") == 0
    assert database.count("files") == 0


async def test_multipart_upload_creates_record_and_file(
    client: Client, data_dir: Path, transcoder: FakeTranscoder
) -> None:
    transcoder.extension = ".mp3"  # what the probe found in the content
    form = aiohttp.FormData()
    form.add_field("note", "ignored field")
    form.add_field("file", b"multipart audio bytes", filename="Interview 1.MP3",
                   content_type="audio/mpeg")
    response = await client.post("/app/audiorecords", data=form)
    assert response.status == 201
    body = await response.json()
    assert response.headers["Location"] == f"/app/audiorecords/{body['id']}"
    assert body["original_filename"] == "Interview 1.MP3"
    assert body["stage"] == "uploaded"
    assert body["halt"] is None
    assert body["source"] == "http"
    assert body["size_bytes"] == len(b"multipart audio bytes")
    assert body["duration_ms"] == 1500
    files = stored_files(data_dir)
    assert len(files) == 1
    assert files[0].parent.name == body["id"]
    assert files[0].suffix == ".mp3"
    assert files[0].read_bytes() == b"multipart audio bytes"
    # The probe saw the file without the sender's extension (it would steer the demuxer).
    assert [p.with_suffix(".mp3") for p in transcoder.probed] == files
    assert transcoder.probed[0].suffix == ""
    # The disk name is nowhere in the answer.
    assert files[0].name not in await response.text()


async def test_raw_upload_with_percent_encoded_name(client: Client, data_dir: Path) -> None:
    # The fake transcoder finds OGG in every file.
    body = await upload(client, b"raw bytes", name="%D0%B7%D0%B2%D0%BE%D0%BD%D0%BE%D0%BA.ogg")
    assert body["original_filename"] == "звонок.ogg"
    assert [p.suffix for p in stored_files(data_dir)] == [".ogg"]


async def test_sender_name_is_cleaned_and_never_a_path(client: Client, data_dir: Path) -> None:
    long_name = "..%2F..%2Fetc%2F" + "x" * 300 + "%07.wav"
    body = await upload(client, b"bytes", name=long_name)
    assert body["original_filename"] == ("x" * 300 + ".wav")[:255]
    assert "/" not in str(body["original_filename"])
    (stored,) = stored_files(data_dir)
    assert stored.parent.parent == data_dir / "records"


@pytest.mark.parametrize("name", ["a." + "e" * 33, "evil.m3u8", "list.ffconcat", "a.srt"])
async def test_stored_extension_is_the_contents_never_the_senders(
    client: Client, data_dir: Path, transcoder: FakeTranscoder, name: str
) -> None:
    transcoder.extension = ".flac"
    await upload(client, b"bytes", name=name)
    (stored,) = stored_files(data_dir)
    assert stored.suffix == ".flac"


async def test_declared_length_over_limit_is_refused_before_reading(
    start_api: StartApi, database: TestDatabase, transcoder: FakeTranscoder
) -> None:
    client = await start_api(server={"upload_max_bytes": 100})
    response = await client.post("/app/audiorecords", data=b"x" * 101,
                                 headers={"X-Filename": "a.wav"})
    assert response.status == 413
    assert (await response.json())["error"]["code"] == "payload_too_large"
    assert transcoder.probed == []
    _nothing_stored(database)


async def test_undeclared_length_over_limit_is_caught_while_reading(
    start_api: StartApi, database: TestDatabase
) -> None:
    client = await start_api(server={"upload_max_bytes": 1000})

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(20):
            yield b"y" * 100

    response = await client.post("/app/audiorecords", data=chunks(),
                                 headers={"X-Filename": "a.wav"})
    assert response.status == 413
    assert (await response.json())["error"]["code"] == "payload_too_large"
    _nothing_stored(database)


async def test_multipart_over_limit_is_caught_while_reading(
    start_api: StartApi, database: TestDatabase
) -> None:
    client = await start_api(server={"upload_max_bytes": 1000})
    form = aiohttp.FormData()
    form.add_field("file", b"z" * 5000, filename="big.wav")
    response = await client.post("/app/audiorecords", data=form)
    assert response.status == 413
    _nothing_stored(database)


async def _raw_exchange(client: Client, head: bytes, body: bytes = b"") -> bytes:
    """Send bytes over a fresh socket and read what comes back until the server closes."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(head + body)
        await writer.drain()
        if body:
            writer.close()  # the client vanishes mid-body
        return await asyncio.wait_for(reader.read(65536), timeout=5)
    finally:
        writer.close()


def _requests_counted(route: str, status: str) -> float:
    value = REGISTRY.get_sample_value("transcriber_http_requests_total",
                                      {"route": route, "status": status})
    return value or 0.0


async def test_body_shorter_than_declared_leaves_nothing(
    client: Client, database: TestDatabase
) -> None:
    def ended() -> float:
        # The client gone mid-body: 499, never a 400 or a 5xx.
        return _requests_counted("/app/audiorecords", "499")

    others = [_requests_counted("/app/audiorecords", s) for s in ("400", "500")]

    before = ended()
    head = (b"POST /app/audiorecords HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filename: a.wav\r\n"
            b"Content-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n")
    _, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(head + b"only a little")
    await writer.drain()
    writer.close()
    await writer.wait_closed()
    # The handler finds the connection gone; wait until it has ended.
    for _ in range(500):
        if ended() > before:
            break
        await asyncio.sleep(0.01)
    assert ended() == before + 1
    assert [_requests_counted("/app/audiorecords", s) for s in ("400", "500")] == others
    _nothing_stored(database)


async def test_expect_continue_over_limit_is_refused_without_the_body(
    start_api: StartApi, database: TestDatabase
) -> None:
    client = await start_api(server={"upload_max_bytes": 100})
    head = (b"POST /app/audiorecords HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n"
            b"Content-Type: application/octet-stream\r\nContent-Length: 5000\r\n\r\n")
    answer = await _raw_exchange(client, head)
    assert answer.startswith(b"HTTP/1.1 413")
    assert b"100 Continue" not in answer
    assert b'"payload_too_large"' in answer
    _nothing_stored(database)


async def test_expect_continue_within_limit_proceeds(client: Client, data_dir: Path) -> None:
    response = await client.post(
        "/app/audiorecords", data=b"audio", expect100=True,
        headers={"X-Filename": "a.wav", "Content-Type": "application/octet-stream"})
    assert response.status == 201
    assert len(stored_files(data_dir)) == 1


async def test_not_audio_is_415_and_nothing_stays(client: Client, database: TestDatabase) -> None:
    response = await client.post("/app/audiorecords", data=NOT_AUDIO_MARKER + b" text",
                                 headers={"X-Filename": "notes.txt"})
    assert response.status == 415
    error = (await response.json())["error"]
    assert error["code"] == "not_audio"
    assert "audio" in error["message"]
    _nothing_stored(database)


async def test_probe_that_cannot_run_now_is_503(
    client: Client, database: TestDatabase, transcoder: FakeTranscoder
) -> None:
    transcoder.probe_failure = TransientFailure("ffmpeg could not start")
    response = await client.post("/app/audiorecords", data=b"audio",
                                 headers={"X-Filename": "a.wav"})
    assert response.status == 503
    assert response.headers["Retry-After"] == "30"
    _nothing_stored(database)


async def test_empty_file_is_400(client: Client, database: TestDatabase) -> None:
    form = aiohttp.FormData()
    form.add_field("file", b"", filename="empty.wav")
    response = await client.post("/app/audiorecords", data=form)
    assert response.status == 400
    assert (await response.json())["error"]["code"] == "empty_file"
    _nothing_stored(database)


async def test_form_without_file_field_is_400(client: Client, database: TestDatabase) -> None:
    form = aiohttp.FormData()
    form.add_field("other", b"zzz", filename="x.wav")
    response = await client.post("/app/audiorecords", data=form)
    assert response.status == 400
    assert "file" in (await response.json())["error"]["message"]
    _nothing_stored(database)


async def test_malformed_multipart_is_400(client: Client, database: TestDatabase) -> None:
    response = await client.post(
        "/app/audiorecords", data=b"garbage without boundaries",
        headers={"Content-Type": "multipart/form-data; boundary=xyz"})
    assert response.status == 400
    assert (await response.json())["error"]["code"] == "bad_request"
    _nothing_stored(database)


async def test_writer_failure_removes_the_file(
    client: Client, database: TestDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An owner id the foreign key refuses: the record row fails after the file was placed.
    real = identity.UserDirectory.resolve

    async def ghost(self: identity.UserDirectory, app: object, claimed: object) -> object:
        user = await real(self, app, claimed)  # type: ignore[arg-type]
        return type(user)(id="0" * 26, login=user.login, name="", email="",
                          created_at=user.created_at)

    monkeypatch.setattr(identity.UserDirectory, "resolve", ghost)
    response = await client.post("/app/audiorecords", data=b"audio",
                                 headers={"X-Filename": "a.wav"})
    assert response.status == 500
    text = await response.text()
    assert "FOREIGN KEY" not in text.upper()
    assert (await response.json())["error"] == {"code": "internal", "message": "internal error"}
    _nothing_stored(database)


async def test_upload_streams_without_buffering(client: Client, data_dir: Path) -> None:
    size = 24 * 1024 * 1024
    chunk = b"\x01" * (256 * 1024)

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(size // len(chunk)):
            yield chunk

    tracemalloc.start()
    try:
        response = await client.post("/app/audiorecords", data=chunks(),
                                     headers={"X-Filename": "big.wav"})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.status == 201
    (stored,) = stored_files(data_dir)
    assert stored.stat().st_size == size
    # Client and server share this process; neither may hold the file.
    assert peak < size // 4, f"peak {peak} bytes while moving {size}"


async def test_audio_over_record_max_seconds_is_refused_with_413(
    client: Client, database: TestDatabase, transcoder: FakeTranscoder
) -> None:
    transcoder.duration_ms = 6 * 3600 * 1000 + 1  # the default limit is 6 h
    response = await client.post("/app/audiorecords", data=b"long audio",
                                 headers={"X-Filename": "long.wav"})
    assert response.status == 413
    error = (await response.json())["error"]
    assert error["code"] == "too_long"
    assert "21600 s" in error["message"]
    _nothing_stored(database)


async def test_audio_sampled_below_8_khz_is_refused_with_415(
    client: Client, database: TestDatabase, transcoder: FakeTranscoder
) -> None:
    transcoder.sample_rate = 1  # the 1 Hz WAV that declares 27.8 h
    response = await client.post("/app/audiorecords", data=b"slow audio",
                                 headers={"X-Filename": "slow.wav"})
    assert response.status == 415
    assert (await response.json())["error"]["code"] == "sample_rate_too_low"
    _nothing_stored(database)


async def test_record_max_seconds_is_a_setting(
    start_api: StartApi, database: TestDatabase, transcoder: FakeTranscoder
) -> None:
    client = await start_api(server={"record_max_seconds": 1})
    transcoder.duration_ms = 1001
    response = await client.post("/app/audiorecords", data=b"audio",
                                 headers={"X-Filename": "a.wav"})
    assert response.status == 413
    _nothing_stored(database)
