"""End to end: the owner's edit survives the step's save (the seed's
"Правка владельца пережила сохранение шага", now over HTTP).

The real step table (normalize, submit, poll, finish) runs in the real
pipeline actor on the real writer; the transcoder holds the normalize step
inside its claim until the test lets it go. Meanwhile the title, brief and
topics are edited over HTTP: the edit answers at once, the claim stays the
step's, and when the step writes its result both the result and the edit are
stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import structlog
from pytest_aiohttp import AiohttpClient

from tests.helpers.database import TestDatabase
from tests.helpers.settings import SettingsFactory
from tests.helpers.web import Client, stored_files, upload
from transcriber.pipeline.steps import build_step_table
from transcriber.ports import Utterance
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.service.app import build_app
from transcriber.testing.recognizer import FakeRecognizer
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys

WAIT_SECONDS = 20


class HeldTranscoder(FakeTranscoder):
    """Normalizes only once `release` is set; `entered` says the step is inside.

    The output is written from what the source held when the step entered,
    into a folder made anew if need be (as ffmpeg writing its output would),
    so a record deleted meanwhile still gets a file placed afterwards.
    """

    def __init__(self) -> None:
        super().__init__(duration_ms=1500)
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def normalize(self, source: Path, target: Path, *, max_seconds: int,
                        on_progress: Callable[[int], Awaitable[None]] | None = None,
                        channels: int = 1) -> None:
        content = await asyncio.to_thread(source.read_bytes)
        self.entered.set()
        await self.release.wait()
        self.normalized.append((source, target))
        await asyncio.to_thread(target.parent.mkdir, parents=True, exist_ok=True)
        await asyncio.to_thread(target.write_bytes, content)


async def _held_app(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory
) -> tuple[Client, HeldTranscoder]:
    settings = make_settings(pipeline={"workers": 1, "idle_sleep_seconds": 0.05})
    transcoder = HeldTranscoder()
    recognizer = FakeRecognizer(utterances=(
        Utterance(start_ms=0, end_ms=900, channel=0, text="the step's own words"),))
    steps = build_step_table(transcoder=transcoder, cutter=FfmpegTranscoder(settings.ffmpeg),
                             recognizer=recognizer, store=None)
    app = build_app(settings, steps=steps, recognizer=recognizer)
    app[keys.TRANSCODER] = transcoder
    return await aiohttp_client(app), transcoder


def _claim_of(database: TestDatabase, record_id: str) -> tuple[str, str | None]:
    row = database.one("SELECT state, acquisition_id FROM audio_records WHERE id = :id",
                       {"id": record_id})
    assert row is not None
    return row[0], row[1]


async def test_an_edit_while_a_real_step_holds_the_record_keeps_both(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory, database: TestDatabase
) -> None:
    client, transcoder = await _held_app(aiohttp_client, make_settings)
    record_id = str((await upload(client))["id"])
    await asyncio.wait_for(transcoder.entered.wait(), WAIT_SECONDS)
    stage, token = _claim_of(database, record_id)
    assert (stage, token is not None) == ("uploaded", True)

    # The edit does not wait for the step (it is still held).
    response = await asyncio.wait_for(client.patch(
        f"/app/audiorecords/{record_id}",
        json={"title": "Renamed mid-step", "brief": "edited while normalizing",
              "topics": ["live"]}), 5)
    assert response.status == 200, await response.text()
    assert _claim_of(database, record_id) == ("uploaded", token)  # the claim is the step's

    transcoder.release.set()
    card: dict[str, object] = {}
    for _ in range(WAIT_SECONDS * 20):
        card = await (await client.get(f"/app/audiorecords/{record_id}")).json()
        if card["stage"] == "done":
            break
        await asyncio.sleep(0.05)
    assert card["stage"] == "done", card
    # The step's results…
    assert card["files"]["normalized"] is not None  # type: ignore[index]
    assert card["transcript"] == "the step's own words"
    timeline = card["timeline"]
    assert isinstance(timeline, list)
    assert [e["outcome"] for e in timeline if e["origin"] == "pipeline"] == ["done"] * 4
    # The edit is in the journal too, naming who made it (docs/sharing.md).
    assert [(e["step"], e["by"]) for e in timeline if e["origin"] == "human"] == [
        ("edited", "local")]
    # …and the owner's edit, both stored.
    assert (card["title"], card["brief"], card["topics"]) == (
        "Renamed mid-step", "edited while normalizing", ["live"])
    search = await (await client.get("/app/audiorecords?q=renamed")).json()
    assert [item["id"] for item in search["items"]] == [record_id]


async def test_a_record_deleted_under_a_real_step_stays_deleted(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory, data_dir: Path,
    database: TestDatabase,
) -> None:
    client, transcoder = await _held_app(aiohttp_client, make_settings)
    record_id = str((await upload(client))["id"])
    await asyncio.wait_for(transcoder.entered.wait(), WAIT_SECONDS)

    assert (await client.delete(f"/app/audiorecords/{record_id}")).status == 204
    with structlog.testing.capture_logs() as logs:
        transcoder.release.set()
        for _ in range(WAIT_SECONDS * 20):
            if any(e["event"] == "result_stale" for e in logs):
                break
            await asyncio.sleep(0.05)
    # The step finished its work, placed its file, and its advance found the token gone.
    assert [e["event"] for e in logs if e.get("record_id") == record_id] == ["result_stale"]
    assert len(transcoder.normalized) == 1
    assert stored_files(data_dir) == []  # its file was removed, not orphaned
    assert not (data_dir / "records" / record_id).exists()
    assert database.count("audio_records") == 0
    assert database.count("files") == 0
    assert (await client.get(f"/app/audiorecords/{record_id}")).status == 404
