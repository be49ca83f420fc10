"""A short record has an estimate from the first second (issue 38, item 5), on both
engines: queued (behind another record too) and while its one part is recognized,
the bar moving with time; the speed its recognition measured is stored and is what
the next record's estimate uses.

Real steps (ffmpeg), a fake recognizer that works like the local one and spends
fake-clock time; progress read as every door reads it (`load_progress`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.audio import tone_mp3
from tests.helpers.pipeline import MakeActor, sample
from tests.helpers.settings import SettingsFactory
from tests.helpers.steps import add_record, drive, record_row
from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.stages import Stage
from transcriber.pipeline.estimate import NORMALIZE_REAL_TIME_FACTOR
from transcriber.pipeline.progress import Progress, load_progress
from transcriber.pipeline.steps import build_step_table
from transcriber.ports import AudioPart, Submitted
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.settings import FfmpegSettings, Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.recognizer import FakeRecognizer

SECONDS = 20
WARMUP = 0.5  # the fake recognizer's warm-up figure
MEASURED = 0.25  # what its recognition really takes, on the fake clock


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def tone_20s(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tone_mp3(tmp_path_factory.mktemp("audio"), SECONDS)


class WatchedRecognizer(FakeRecognizer):
    """Spends MEASURED of the audio on the fake clock, in two halves, reading the
    record's progress at the start, half way and at the end of its work."""

    def __init__(self, clock: FakeClock, readers: ReaderPool, settings: Settings) -> None:
        super().__init__(finishes_in_submit=True, max_part_ms=600_000,
                         expected_real_time_factor=WARMUP)
        self.clock, self.readers, self.settings = clock, readers, settings
        self.record_id = ""
        self.seen: list[Progress | None] = []

    async def look(self) -> None:
        self.seen.append(await load_progress(self.readers, self.record_id,
                                             settings=self.settings, now=self.clock.now(),
                                             capabilities=self.capabilities))

    async def submit(self, part: AudioPart) -> Submitted:
        half = part.duration_ms / 1000 * MEASURED / 2
        await self.look()
        self.clock.advance(half)
        await self.look()
        self.clock.advance(half)
        await self.look()
        return await super().submit(part)


async def _add(writer: Writer, record_files: LocalRecordFiles, source: Path) -> str:
    """A record as the doors accept it: its duration probed at intake."""
    return await add_record(writer, record_files, source, duration_ms=SECONDS * 1000)


async def test_a_short_record_shows_an_estimate_queued_and_recognizing_and_teaches_the_next(
    writer: Writer, readers: ReaderPool, record_files: LocalRecordFiles, make_actor: MakeActor,
    make_settings: SettingsFactory, clock: FakeClock, tone_20s: Path,
) -> None:
    settings = make_settings()
    recognizer = WatchedRecognizer(clock, readers, settings)
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    actor = make_actor(build_step_table(transcoder=ffmpeg, cutter=ffmpeg,
                                        recognizer=recognizer, store=None), settings)

    async def progress(record_id: str) -> Progress | None:
        return await load_progress(readers, record_id, settings=settings, now=clock.now(),
                                   capabilities=recognizer.capabilities)

    first = await _add(writer, record_files, tone_20s)
    clock.advance(1)
    second = await _add(writer, record_files, tone_20s)
    own = round(SECONDS * NORMALIZE_REAL_TIME_FACTOR + SECONDS * WARMUP)  # 10 s
    queued = await progress(first)
    assert queued is not None
    assert (queued.stage, queued.eta_seconds) == ("queue", own)
    # The second waits for the first one's recognition too.
    behind = await progress(second)
    assert behind is not None
    assert (behind.stage, behind.eta_seconds) == ("queue", own + SECONDS * WARMUP)

    await drive(actor, clock, readers, first, until=Stage.NORMALIZED)
    prepared = await progress(first)
    assert prepared is not None
    assert (prepared.stage, prepared.eta_seconds) == ("queue", SECONDS * WARMUP)

    recognizer.record_id = first
    used = {"provider": "fake", "outcome": "used"}
    samples_before = sample("transcriber_recognition_speed_samples_total", used)
    await drive(actor, clock, readers, first)
    assert (await record_row(readers, first))["state"] == Stage.DONE.value
    start, half, end = recognizer.seen
    assert start is not None
    assert half is not None
    assert end is not None
    assert start.stage == half.stage == end.stage == "recognize"
    # The bar moves with time while the one part runs, and never reaches the end.
    assert start.fraction < half.fraction < end.fraction < 1.0
    assert start.eta_seconds == SECONDS * WARMUP
    assert half.eta_seconds == pytest.approx(SECONDS * WARMUP - SECONDS * MEASURED / 2, abs=1)
    assert half.eta_seconds is not None
    assert end.eta_seconds is not None
    assert end.eta_seconds < half.eta_seconds
    assert await progress(first) is None  # done: no progress

    speed = await readers.fetch_one(q.progress.SELECT_SPEED,
                                    {"provider": "fake", "model": "fake"})
    assert speed is not None
    assert speed["real_time_factor"] == pytest.approx(MEASURED, abs=0.01)
    assert speed["samples"] == 1
    assert sample("transcriber_recognition_speed_samples_total", used) == samples_before + 1
    # The next record's estimate follows what this host measured, not the warm-up.
    after = await progress(second)
    assert after is not None
    assert (await record_row(readers, second))["state"] == Stage.UPLOADED.value
    assert after.eta_seconds == pytest.approx(
        SECONDS * NORMALIZE_REAL_TIME_FACTOR + SECONDS * MEASURED, abs=1)
