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
import sqlite3
from pathlib import Path

from pytest_aiohttp import AiohttpClient

from tests.conftest import SettingsFactory
from tests.integration.web.helpers import upload
from transcriber import keys
from transcriber.db.connection import database_path
from transcriber.pipeline.steps import build_step_table
from transcriber.ports import Utterance
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.whisper import parse_local_payload
from transcriber.service.app import build_app
from transcriber.testing.recognizer import FakeRecognizer
from transcriber.testing.transcoder import FakeTranscoder

WAIT_SECONDS = 20


class HeldTranscoder(FakeTranscoder):
    """Normalizes only once `release` is set; `entered` says the step is inside."""

    def __init__(self) -> None:
        super().__init__(duration_ms=1500)
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def normalize(self, source: Path, target: Path, *, max_seconds: int) -> None:
        self.entered.set()
        await self.release.wait()
        await super().normalize(source, target, max_seconds=max_seconds)


def _claim_of(data_dir: Path, record_id: str) -> tuple[str, str | None]:
    with sqlite3.connect(database_path(data_dir)) as conn:
        row = conn.execute("SELECT state, acquisition_id FROM audio_records WHERE id = ?",
                           (record_id,)).fetchone()
    return row[0], row[1]


async def test_an_edit_while_a_real_step_holds_the_record_keeps_both(
    aiohttp_client: AiohttpClient, make_settings: SettingsFactory, data_dir: Path
) -> None:
    settings = make_settings(pipeline={"workers": 1, "idle_sleep_seconds": 0.05})
    transcoder = HeldTranscoder()
    recognizer = FakeRecognizer(utterances=(
        Utterance(start_ms=0, end_ms=900, channel=0, text="the step's own words"),))
    steps = build_step_table(transcoder=transcoder, cutter=FfmpegTranscoder(settings.ffmpeg),
                             recognizer=recognizer, store=None,
                             parsers={"fake": parse_local_payload})
    app = build_app(settings, steps=steps, recognizer=recognizer)
    app[keys.TRANSCODER] = transcoder
    client = await aiohttp_client(app)

    record_id = str((await upload(client))["id"])
    await asyncio.wait_for(transcoder.entered.wait(), WAIT_SECONDS)
    stage, token = _claim_of(data_dir, record_id)
    assert (stage, token is not None) == ("uploaded", True)

    # The edit does not wait for the step (it is still held).
    response = await asyncio.wait_for(client.patch(
        f"/app/audiorecords/{record_id}",
        json={"title": "Renamed mid-step", "brief": "edited while normalizing",
              "topics": ["live"]}), 5)
    assert response.status == 200, await response.text()
    assert _claim_of(data_dir, record_id) == ("uploaded", token)  # the claim is the step's

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
    assert [e["outcome"] for e in card["timeline"]] == ["done"] * 4  # type: ignore[attr-defined]
    # …and the owner's edit, both stored.
    assert (card["title"], card["brief"], card["topics"]) == (
        "Renamed mid-step", "edited while normalizing", ["live"])
    search = await (await client.get("/app/audiorecords?q=renamed")).json()
    assert [item["id"] for item in search["items"]] == [record_id]
