"""P13 (paid steps check what is done) and P11 (a resumed stuck record polls the same
operation), with the real DB, real ffmpeg cuts and recording fakes for the provider."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.audio import tone_mp3
from tests.helpers.pipeline import MakeActor
from tests.helpers.settings import SettingsFactory
from tests.helpers.steps import AddRecord, drive, record_row
from transcriber.core.errors import TransientFailure
from transcriber.db import queries as q
from transcriber.db.commands.pipeline import Resume
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.stages import HaltReason, Stage
from transcriber.pipeline.steps import build_step_table
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.settings import FfmpegSettings, Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.object_store import FakeObjectStore
from transcriber.testing.recognizer import FakeRecognizer


@pytest.fixture(scope="session")
def tone_30s(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tone_mp3(tmp_path_factory.mktemp("audio"), 30)


def _table(recognizer: FakeRecognizer, store: FakeObjectStore | None) -> dict:  # type: ignore[type-arg]
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    return build_step_table(transcoder=ffmpeg, cutter=ffmpeg, recognizer=recognizer, store=store)


def _fast(make_settings: SettingsFactory, **pipeline: float) -> Settings:
    return make_settings(pipeline={"backoff_base_seconds": 1.0, "backoff_cap_seconds": 1.0,
                                   "poll_first_delay_seconds": 10.0,
                                   "poll_delay_seconds": 5.0, **pipeline})


async def test_p13_provider_answered_then_failure_retry_does_not_submit_twice(
    add_record: AddRecord, make_actor: MakeActor, make_settings: SettingsFactory, clock: FakeClock,
    readers: ReaderPool, tone_30s: Path,
) -> None:
    recognizer = FakeRecognizer(finishes_in_submit=False, needs_object_store=True,
                                max_part_ms=20_000)
    store = FakeObjectStore()
    record_id = await add_record(tone_30s)
    key1 = f"transcriber/{record_id}/part-001.ogg"
    store.upload_faults_by_key[key1] = TransientFailure("object storage upload failed: 503")
    reports = await drive(make_actor(_table(recognizer, store), _fast(make_settings)),
                          clock, readers, record_id)
    assert "failure" in [r.outcome for r in reports]
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value
    # Part 0 was paid for once; part 1 once after its upload was retried.
    assert [p.uri for p in recognizer.submitted] == [store.uri(f"transcriber/{record_id}/"
                                                               "part-000.ogg"), store.uri(key1)]
    assert store.uploads == [f"transcriber/{record_id}/part-000.ogg", key1]
    rows = await readers.fetch_all(q.recognition.SELECT_RECOGNITIONS, {"record_id": record_id})
    assert [(r["part_index"], r["offset_ms"]) for r in rows] == [(0, 0), (1, 15_000)]
    assert row["recognition_id"] == rows[0]["id"]


async def test_p13_uploaded_then_submit_failed_retry_uploads_nothing(
    add_record: AddRecord, make_actor: MakeActor, make_settings: SettingsFactory, clock: FakeClock,
    readers: ReaderPool, tone_30s: Path,
) -> None:
    recognizer = FakeRecognizer(finishes_in_submit=False, needs_object_store=True)
    recognizer.submit_faults.append(TransientFailure("SpeechKit answered HTTP 503"))
    store = FakeObjectStore()
    record_id = await add_record(tone_30s)
    await drive(make_actor(_table(recognizer, store), _fast(make_settings)), clock, readers,
                record_id)
    assert (await record_row(readers, record_id))["state"] == Stage.DONE.value
    assert store.uploads == [f"transcriber/{record_id}/part-000.ogg"]  # HEAD found it on retry
    assert len(recognizer.submitted) == 1
    assert store.heads.count(f"transcriber/{record_id}/part-000.ogg") == 2


async def test_p11_p12_resumed_stuck_record_polls_the_same_operation(
    add_record: AddRecord, make_actor: MakeActor, make_settings: SettingsFactory, clock: FakeClock,
    readers: ReaderPool, writer: Writer, tone_30s: Path,
) -> None:
    recognizer = FakeRecognizer(finishes_in_submit=False, pending_checks=10_000)
    settings = _fast(make_settings, foreign_work_limit_minutes=2.0)
    actor = make_actor(_table(recognizer, None), settings)
    record_id = await add_record(tone_30s)
    await drive(actor, clock, readers, record_id, until=Stage.SUBMITTED)
    entered = (await record_row(readers, record_id))["state_entered_at"]
    reports = await drive(actor, clock, readers, record_id, until=Stage.TRANSCRIBED)
    row = await record_row(readers, record_id)
    assert row["halt_reason"] == HaltReason.STUCK.value
    assert row["state"] == Stage.SUBMITTED.value
    assert row["state_entered_at"] == entered  # deferrals never moved it (P12)
    assert "deferred" in [r.outcome for r in reports]
    assert row["attempts"] <= 1  # deferrals spend no attempts
    polled_before = len(recognizer.fetched)
    assert polled_before >= 2

    await writer.ask(Resume(record_id=record_id))
    recognizer.pending_checks = 0
    await drive(actor, clock, readers, record_id)
    assert (await record_row(readers, record_id))["state"] == Stage.DONE.value
    assert len(recognizer.submitted) == 1
    assert set(recognizer.fetched) == {"fake-op-1"}
    assert len(recognizer.fetched) == polled_before + 1
