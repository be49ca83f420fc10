"""The per-person quota of queued audio (`server.queued_audio_max_seconds_per_user`).

A 36 KB FLAC can carry hours of audio; what bounds one person's claim on the
recognizer is the audio they have waiting: records not done and not halted,
plus the new upload's probed duration. Over it: 429 `quota_exceeded`, nothing
stored.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.helpers.web import Client, StartApi, advance, halt, stored_files, upload
from transcriber.testing.transcoder import FakeTranscoder

TWENTY_FIVE_MINUTES_MS = 25 * 60 * 1000
HOUR = {"server": {"queued_audio_max_seconds_per_user": 3600}}


async def _post(client: Client, user: str = "local") -> tuple[int, dict[str, object]]:
    headers = {"X-Filename": "call.flac", "Content-Type": "application/octet-stream"}
    if user != "local":
        headers["Remote-User"] = user
    response = await client.post("/app/audiorecords", data=b"RIFF fake audio", headers=headers)
    body = await response.json()
    assert isinstance(body, dict)
    return response.status, body


async def test_an_upload_past_the_quota_is_429_and_nothing_is_stored(
        start_api: StartApi, transcoder: FakeTranscoder, data_dir: Path) -> None:
    transcoder.duration_ms = TWENTY_FIVE_MINUTES_MS
    client = await start_api(**HOUR)
    await upload(client)
    await upload(client)  # 50 min queued
    status, body = await _post(client)
    assert status == 429
    error = body["error"]
    assert isinstance(error, dict)
    assert error["code"] == "quota_exceeded"
    assert "0 h 50 min" in error["message"]
    assert "1 h 00 min" in error["message"]
    assert len(stored_files(data_dir)) == 2
    # Another person's queue is their own.
    status, _ = await _post(client, user="bob")
    assert status == 201


async def test_done_and_halted_records_leave_the_queue(
        start_api: StartApi, transcoder: FakeTranscoder) -> None:
    transcoder.duration_ms = TWENTY_FIVE_MINUTES_MS
    client = await start_api(**HOUR)
    first = await upload(client)
    second = await upload(client)
    assert (await _post(client))[0] == 429
    for _ in range(4):  # uploaded → normalized → submitted → transcribed → done
        await advance(client, str(first["id"]))
    assert (await _post(client))[0] == 201
    assert (await _post(client))[0] == 429
    await halt(client, str(second["id"]))
    assert (await _post(client))[0] == 201


async def test_two_uploads_at_once_cannot_both_squeeze_in(
        start_api: StartApi, transcoder: FakeTranscoder) -> None:
    """The sum is read in the writer's transaction that stores the record."""
    transcoder.duration_ms = TWENTY_FIVE_MINUTES_MS
    client = await start_api(**HOUR)
    await upload(client)  # 25 min queued: room for one more, not two
    statuses = sorted(status for status, _ in await asyncio.gather(_post(client), _post(client)))
    assert statuses == [201, 429]


async def test_zero_is_no_quota(start_api: StartApi, transcoder: FakeTranscoder) -> None:
    transcoder.duration_ms = 6 * 3600 * 1000
    client = await start_api(server={"queued_audio_max_seconds_per_user": 0})
    for _ in range(6):  # 36 h queued
        await upload(client)


async def test_the_default_quota_is_a_day(start_api: StartApi,
                                          transcoder: FakeTranscoder) -> None:
    transcoder.duration_ms = 6 * 3600 * 1000
    client = await start_api()
    for _ in range(4):
        await upload(client)
    assert (await _post(client))[0] == 429
