"""Local recognition in checkpointed parts: one part per claim, resumed at the first
unfinished part, each part's own audio only; progress after every part.

Real DB, real ffmpeg (normalize and cut), a recording fake recognizer that works
like the local one (the answer comes with `submit`) and spends fake-clock time.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.helpers.audio import tone_mp3
from tests.helpers.pipeline import MakeActor
from tests.helpers.settings import SettingsFactory
from tests.helpers.steps import AddRecord, drive, record_row
from transcriber.core.errors import TransientFailure
from transcriber.db import queries as q
from transcriber.db import reads
from transcriber.db.readers import ReaderPool
from transcriber.domain.stages import Stage
from transcriber.pipeline.progress import load_progress
from transcriber.pipeline.steps import build_step_table
from transcriber.ports import AudioPart, Submitted
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.settings import FfmpegSettings, Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.recognizer import FakeRecognizer

PART_MS = 12_000
REAL_TIME_FACTOR = 0.25


@pytest.fixture(scope="session")
def tone_40s(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tone_mp3(tmp_path_factory.mktemp("audio"), 40)


class PartRecognizer(FakeRecognizer):
    """Answers "part N" for the Nth call, spends REAL_TIME_FACTOR of the part's length
    on the fake clock, notes the size of the audio it was given, fails where told."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(finishes_in_submit=True, max_part_ms=PART_MS)
        self.clock = clock
        self.sizes: list[int] = []
        self.fail_calls: set[int] = set()
        self.calls = 0

    async def submit(self, part: AudioPart) -> Submitted:
        self.calls += 1
        if self.calls in self.fail_calls:
            raise TransientFailure("recognition cancelled")
        assert part.path is not None
        self.sizes.append(part.path.stat().st_size)
        self.clock.advance(part.duration_ms / 1000 * REAL_TIME_FACTOR)
        return await super().submit(part)

    def payload_for(self, part_number: int) -> bytes:
        return orjson.dumps({"segments": [
            {"start_ms": 4000, "end_ms": 5000, "text": f"part {part_number}"}]})


def _table(recognizer: FakeRecognizer) -> dict:  # type: ignore[type-arg]
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    return build_step_table(transcoder=ffmpeg, cutter=ffmpeg, recognizer=recognizer, store=None)


def _settings(make_settings: SettingsFactory) -> Settings:
    return make_settings(pipeline={"backoff_base_seconds": 1.0, "backoff_cap_seconds": 1.0})


async def _transcript(readers: ReaderPool, record_id: str) -> str:
    text = await readers.fetch_one(q.results.SELECT_TEXT,
                                   {"record_id": record_id, "kind": "transcript"})
    assert text is not None
    return str(text["contents"])


async def test_one_claim_recognizes_one_part_reading_only_its_audio(
    add_record: AddRecord, make_actor: MakeActor, make_settings: SettingsFactory,
    clock: FakeClock, readers: ReaderPool, tone_40s: Path,
) -> None:
    recognizer = PartRecognizer(clock)
    settings = _settings(make_settings)
    record_id = await add_record(tone_40s)
    actor = make_actor(_table(recognizer), settings)
    fractions: list[float] = []
    done: list[int] = []
    for _ in range(30):
        row = await record_row(readers, record_id)
        if row["state"] == Stage.DONE.value:
            break
        report = await actor.run_once()
        progress = await load_progress(readers, record_id, settings=settings, now=clock.now(),
                                       capabilities=recognizer.capabilities)
        if progress is not None:
            fractions.append(progress.fraction)
            if report.step == "submit":
                done.append(progress.done)
                assert progress.total == 4
                # The ETA follows the speed measured on the parts done so far.
                assert progress.eta_seconds is not None
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    rows = await readers.fetch_all(q.recognition.SELECT_RECOGNITIONS, {"record_id": record_id})
    # 40 s of a tone (no pause to cut in): cuts every 12 s, parts overlapping by 5 s
    # around each cut.
    assert [r["offset_ms"] for r in rows] == [0, 9500, 21_500, 33_500]
    assert all(r["payload_file"] is not None for r in rows)
    # One part per claim, each recognized once, progress after every one of them.
    assert recognizer.calls == 4
    assert done == [1, 2, 3, 4]
    assert fractions == sorted(fractions)
    assert fractions[-1] == 1.0
    normalized = await readers.fetch_one(q.records.SELECT_FILE,
                                         {"id": row["normalized_file_id"]})
    assert normalized is not None
    assert max(recognizer.sizes) < normalized["size_bytes"] * 0.5
    # Stitched on one timeline, in order, each part's words once.
    assert await _transcript(readers, record_id) == "\n".join(f"part {n}" for n in range(4))
    speed = await readers.fetch_one(q.progress.SELECT_SPEED,
                                    {"provider": "fake", "model": "fake"})
    assert speed is not None
    assert speed["real_time_factor"] == pytest.approx(REAL_TIME_FACTOR, abs=0.01)
    assert speed["samples"] == 4


async def test_a_failure_mid_record_resumes_at_the_first_unfinished_part(
    add_record: AddRecord, make_actor: MakeActor, make_settings: SettingsFactory,
    clock: FakeClock, readers: ReaderPool, tone_40s: Path,
) -> None:
    recognizer = PartRecognizer(clock)
    recognizer.fail_calls = {3, 4}  # part 2 fails twice (a crash, a cancelled step)
    record_id = await add_record(tone_40s)
    reports = await drive(make_actor(_table(recognizer), _settings(make_settings)), clock,
                          readers, record_id)
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    assert [r.outcome for r in reports].count("failure") == 2
    # Four parts answered, none twice: the failed calls never answered.
    assert len(recognizer.submitted) == 4
    lengths = [p.duration_ms for p in recognizer.submitted]
    assert lengths[:3] == [14_500, 17_000, 17_000]
    assert lengths[3] == pytest.approx(6_500, abs=100)  # the encoder's padding
    assert await _transcript(readers, record_id) == "\n".join(f"part {n}" for n in range(4))


async def test_ffmpeg_reports_normalization_progress(tone_40s: Path, tmp_path: Path) -> None:
    reports: list[int] = []

    async def heard(done_ms: int) -> None:
        reports.append(done_ms)

    await FfmpegTranscoder(FfmpegSettings()).normalize(
        tone_40s, tmp_path / "out.ogg", max_seconds=3600, on_progress=heard)
    assert reports
    assert reports == sorted(set(reports))
    assert reports[-1] == pytest.approx(40_000, abs=500)


async def test_the_normalize_step_saves_its_progress_for_the_doors(
    add_record: AddRecord, make_actor: MakeActor, make_settings: SettingsFactory,
    clock: FakeClock, readers: ReaderPool, tone_40s: Path,
) -> None:
    record_id = await add_record(tone_40s)
    await drive(make_actor(_table(PartRecognizer(clock)), _settings(make_settings)), clock,
                readers, record_id, until=Stage.NORMALIZED)
    row = await readers.fetch_one(q.progress.SELECT_NORMALIZE_PROGRESS, {"record_id": record_id})
    assert row is not None
    assert 0 < row["done_ms"] <= 40_500


class ReportingRecognizer(PartRecognizer):
    """Each part says what the local recognizer says of its work (part-relative)."""

    def payload_for(self, part_number: int) -> bytes:
        return orjson.dumps({
            "segments": [{"start_ms": 4000, "end_ms": 5000, "text": f"part {part_number}",
                          "words": [{"start_ms": 4000, "end_ms": 5000,
                                     "text": f" part{part_number}", "probability": 0.3}]}],
            "speech": [[0, 12_000]], "unclear": [[1000, 2000]], "repeats_removed": 1})


async def test_the_quality_report_places_each_parts_unclear_speech_on_the_timeline(
    add_record: AddRecord, make_actor: MakeActor, make_settings: SettingsFactory,
    clock: FakeClock, readers: ReaderPool, tone_40s: Path,
) -> None:
    recognizer = ReportingRecognizer(clock)
    record_id = await add_record(tone_40s)
    actor = make_actor(_table(recognizer), _settings(make_settings))
    for _ in range(30):
        if (await record_row(readers, record_id))["state"] == Stage.DONE.value:
            break
        await actor.run_once()
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    report = await reads.records.quality(readers, record_id=record_id)
    assert report is not None
    # Parts at 0, 9.5, 21.5 and 33.5 s: each part's [1, 2] s moves by its offset.
    assert [(s.start_ms, s.end_ms) for s in report.unclear_spans] == [
        (1000, 2000), (10_500, 11_500), (22_500, 23_500), (34_500, 35_500)]
    assert report.unclear_ms == 4000
    assert report.repeats_removed == 4
    assert report.low_confidence_share == 1.0
    assert (report.verdict, report.reasons) == (
        "check", ("unclear_speech", "low_confidence", "repeats_removed"))
    # The words reach the stored structure on the record's timeline, with their probability.
    utterances = await reads.transcripts.utterances(readers, record_id=record_id)
    assert utterances
    assert all(len(u.words) == 1 and u.words[0].probability == 0.3
               and u.words[0].start_ms == u.start_ms for u in utterances)
