"""The SpeechKit path: real ffmpeg, a real S3 server (moto, loopback) and the fake
SpeechKit v3 server following the real wire formats; includes a > 4 h record split."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import boto3  # type: ignore[import-untyped]
import pytest

from tests.helpers.audio import FIXTURES
from tests.helpers.pipeline import MakeActor, sample
from tests.helpers.silence import CopyTranscoder, probe_duration_ms, silence_minutes
from tests.helpers.steps import AddRecord, drive, record_row, sk_table
from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.domain.stages import HaltReason, Stage
from transcriber.domain.transcripts import load_structure
from transcriber.ports import Utterance
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.object_store import S3ObjectStore
from transcriber.providers.quota import CallBudget
from transcriber.providers.speechkit import SpeechkitRecognizer
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.fake_speechkit import FakeSpeechkit

HOUR_MS = 3_600_000


async def test_speechkit_pipeline_uploads_submits_polls_and_parses(
    add_record: AddRecord, make_actor: MakeActor, sk_settings: Settings, clock: FakeClock,
    readers: ReaderPool, store: S3ObjectStore, speechkit: FakeSpeechkit,
    recognizer: SpeechkitRecognizer, bucket: str,
) -> None:
    record_id = await add_record(FIXTURES / "librivox_0880.mp3")
    reports = await drive(make_actor(sk_table(recognizer, store), sk_settings), clock,
                          readers, record_id)
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    key = f"transcriber/{record_id}/part-000.ogg"
    assert await store.exists(key)
    [body] = speechkit.submits
    assert body["uri"] == f"{sk_settings.s3.endpoint_url}/{bucket}/{key}"
    model = body["recognitionModel"]
    assert model["audioFormat"]["containerAudio"]["containerAudioType"] == "OGG_OPUS"
    assert model["textNormalization"]["literatureText"] is True
    assert model["languageRestriction"]["languageCode"] == ["ru-RU"]
    assert len(speechkit.polls) == 3  # two "not done", one done
    assert [r.outcome for r in reports].count("deferred") >= 2
    text = await readers.fetch_one(q.results.SELECT_TEXT,
                                   {"record_id": record_id, "kind": "transcript"})
    assert text is not None
    # finalRefinement (capitalised) wins over the raw final text.
    assert text["contents"].startswith("fake speech")


async def test_p17_speechkit_rejects_non_opus_audio_permanently(
    add_record: AddRecord, make_actor: MakeActor, sk_settings: Settings, clock: FakeClock,
    readers: ReaderPool, store: S3ObjectStore, speechkit: FakeSpeechkit,
    recognizer: SpeechkitRecognizer,
) -> None:
    record_id = await add_record(FIXTURES / "librivox_0880.mp3")
    table = sk_table(recognizer, store, transcoder=CopyTranscoder())  # MP3 stays MP3
    await drive(make_actor(table, sk_settings), clock, readers, record_id)
    row = await record_row(readers, record_id)
    assert row["halt_reason"] == HaltReason.STEP_FAILED.value
    assert row["state"] == Stage.SUBMITTED.value
    assert "INVALID_ARGUMENT" in row["error_text"]
    assert len(speechkit.submits) == 1


async def test_p17_speechkit_429_and_503_are_retried(
    add_record: AddRecord, make_actor: MakeActor, sk_settings: Settings, clock: FakeClock,
    readers: ReaderPool, store: S3ObjectStore, speechkit: FakeSpeechkit,
    recognizer: SpeechkitRecognizer,
) -> None:
    speechkit.fail_next("recognize", 429, 8)
    speechkit.fail_next("operation", 503, 14)
    speechkit.fail_operations.append(14)  # the first operation ends UNAVAILABLE: submit again
    record_id = await add_record(FIXTURES / "librivox_0880.mp3")
    reports = await drive(make_actor(sk_table(recognizer, store), sk_settings), clock,
                          readers, record_id)
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    assert [r.outcome for r in reports].count("failure") == 2
    assert len(speechkit.submits) == 2  # once more only for the failed operation
    rows = await readers.fetch_all(q.recognition.SELECT_RECOGNITIONS, {"record_id": record_id})
    assert len(rows) == 1
    assert rows[0]["external_id"] == list(speechkit.operations)[-1]


async def _structure(readers: ReaderPool, record_id: str) -> list[Utterance]:
    structure = await readers.fetch_one(q.results.SELECT_STRUCTURE,
                                        {"record_id": record_id, "version": 1})
    assert structure is not None
    return load_structure(structure["contents"])


async def test_speechkit_labels_the_speakers_of_a_mono_conversation(
    add_record: AddRecord, make_actor: MakeActor, sk_settings: Settings, clock: FakeClock,
    readers: ReaderPool, store: S3ObjectStore, speechkit: FakeSpeechkit,
    recognizer: SpeechkitRecognizer,
) -> None:
    # 17 s of two real speakers, normalized to mono Opus by the real ffmpeg.
    record_id = await add_record(FIXTURES / "two_speakers.mp3")
    await drive(make_actor(sk_table(recognizer, store), sk_settings), clock, readers, record_id)
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    [body] = speechkit.submits
    assert body["speakerLabeling"] == {"speakerLabeling": "SPEAKER_LABELING_ENABLED"}
    utterances = await _structure(readers, record_id)
    assert [(u.speaker, u.channel) for u in utterances] == [("S1", 0), ("S2", 0)]


async def test_speechkit_refusing_the_labeling_still_recognizes_without_speakers(
    add_record: AddRecord, make_actor: MakeActor, sk_settings: Settings, clock: FakeClock,
    readers: ReaderPool, store: S3ObjectStore, speechkit: FakeSpeechkit,
    recognizer: SpeechkitRecognizer,
) -> None:
    speechkit.labeling_refused_models.add(sk_settings.speechkit.model)
    record_id = await add_record(FIXTURES / "two_speakers.mp3")
    await drive(make_actor(sk_table(recognizer, store), sk_settings), clock, readers, record_id)
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    asked, plain = speechkit.submits
    assert "speakerLabeling" in asked
    assert "speakerLabeling" not in plain
    assert [u.speaker for u in await _structure(readers, record_id)] == [None, None]


async def test_speechkit_is_not_asked_for_speakers_when_diarization_is_off(
    add_record: AddRecord, make_actor: MakeActor, sk_settings: Settings, clock: FakeClock,
    readers: ReaderPool, store: S3ObjectStore, speechkit: FakeSpeechkit,
    recognizer: SpeechkitRecognizer,
) -> None:
    settings = replace(sk_settings, recognizer=replace(sk_settings.recognizer,
                                                       diarization="off"))
    record_id = await add_record(FIXTURES / "two_speakers.mp3")
    await drive(make_actor(sk_table(recognizer, store), settings), clock, readers, record_id)
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    [body] = speechkit.submits
    assert "speakerLabeling" not in body
    assert {u.speaker for u in await _structure(readers, record_id)} == {None}


@pytest.fixture(scope="session")
def silence_over_4h(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 h 5 min of OGG Opus silence."""
    return silence_minutes(tmp_path_factory.mktemp("long"), 245)


@pytest.fixture(scope="session")
def silence_5h(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """5 h of OGG Opus silence."""
    return silence_minutes(tmp_path_factory.mktemp("five"), 300)


@pytest.mark.slow
async def test_p13_record_over_4h_is_split_into_overlapping_parts_and_stitched(
    add_record: AddRecord, make_actor: MakeActor, sk_settings: Settings, clock: FakeClock,
    readers: ReaderPool, store: S3ObjectStore, speechkit: FakeSpeechkit,
    recognizer: SpeechkitRecognizer,
    silence_over_4h: Path,
) -> None:
    assert probe_duration_ms(silence_over_4h) > 4 * HOUR_MS
    record_id = await add_record(silence_over_4h)
    table = sk_table(recognizer, store, transcoder=CopyTranscoder())
    await drive(make_actor(table, sk_settings), clock, readers, record_id)
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    rows = await readers.fetch_all(q.recognition.SELECT_RECOGNITIONS, {"record_id": record_id})
    overlap = sk_settings.speechkit.part_overlap_seconds * 1000
    assert [(r["part_index"], r["offset_ms"]) for r in rows] == [(0, 0),
                                                                 (1, 4 * HOUR_MS - overlap)]
    assert len(speechkit.submits) == 2
    for index in (0, 1):
        assert await store.exists(f"transcriber/{record_id}/part-{index:03d}.ogg")
    structure = await readers.fetch_one(q.results.SELECT_STRUCTURE,
                                        {"record_id": record_id, "version": 1})
    assert structure is not None
    starts = [u.start_ms for u in load_structure(structure["contents"])]
    # The fake answers 1.0–2.5 s and 4.0–6.0 s of every part. Part 1's first one lies in
    # the overlap's first half, which belongs to part 0: dropped as a duplicate. Its
    # second one is kept, shifted onto the record's timeline.
    assert starts == [1000, 4000, 4 * HOUR_MS - overlap + 4000]


@pytest.mark.slow
async def test_a_5_hour_records_parts_and_their_overlaps_cover_every_second(
    add_record: AddRecord, make_actor: MakeActor, sk_settings: Settings, clock: FakeClock,
    readers: ReaderPool, store: S3ObjectStore, recognizer: SpeechkitRecognizer,
    silence_5h: Path, tmp_path: Path, s3_endpoint: str, bucket: str,
) -> None:
    """Parts of at most an hour: every part the fake was given, as uploaded and measured,
    and the parts together hold the whole normalized copy."""
    settings = replace(sk_settings, speechkit=replace(sk_settings.speechkit,
                                                      max_part_seconds=3600))
    hourly = SpeechkitRecognizer(settings.speechkit, budget=CallBudget(
        limit=settings.speechkit.status_checks_per_hour, window_seconds=3600, clock=clock))
    try:
        duration = probe_duration_ms(silence_5h)
        record_id = await add_record(silence_5h)
        table = sk_table(hourly, store, transcoder=CopyTranscoder())
        await drive(make_actor(table, settings), clock, readers, record_id)
    finally:
        await hourly.close()
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    rows = await readers.fetch_all(q.recognition.SELECT_RECOGNITIONS, {"record_id": record_id})
    assert len(rows) == 6  # 5 h in parts of 1 h that overlap by 5 s
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")
    reached = 0
    for recognition in rows:
        part = tmp_path / f"part-{recognition['part_index']}.ogg"
        client.download_file(bucket, f"transcriber/{record_id}/part-"
                             f"{recognition['part_index']:03d}.ogg", str(part))
        measured = probe_duration_ms(part)
        assert measured <= 3600 * 1000 + 1000
        # No gap before this part: it starts where the last one had reached, or earlier.
        assert recognition["offset_ms"] <= reached
        reached = max(reached, recognition["offset_ms"] + measured)
    assert reached >= duration - 1000


async def test_a_plan_that_leaves_audio_out_halts_the_record_and_is_counted(
    add_record: AddRecord, make_actor: MakeActor, sk_settings: Settings, clock: FakeClock,
    readers: ReaderPool, store: S3ObjectStore, recognizer: SpeechkitRecognizer,
    speechkit: FakeSpeechkit, silence_over_4h: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from transcriber.pipeline.parts import plan_parts  # noqa: PLC0415

    monkeypatch.setattr("transcriber.pipeline.steps.submit.plan_parts",
                        lambda *args, **kwargs: plan_parts(*args, **kwargs)[:-1])
    before = sample("transcriber_recognition_uncovered_seconds_total",
                    {"provider": "speechkit", "after": "parts"})
    record_id = await add_record(silence_over_4h)
    await drive(make_actor(sk_table(recognizer, store, transcoder=CopyTranscoder()),
                           sk_settings), clock, readers, record_id)
    row = await record_row(readers, record_id)
    assert row["halt_reason"] == HaltReason.STEP_FAILED.value
    assert "leave" in row["error_text"]
    assert not speechkit.submits  # nothing paid for a record that would come back short
    assert sample("transcriber_recognition_uncovered_seconds_total",
                  {"provider": "speechkit", "after": "parts"}) - before >= 60.0


async def test_a_part_cut_short_is_not_sent_and_is_counted(
    add_record: AddRecord, make_actor: MakeActor, sk_settings: Settings, clock: FakeClock,
    readers: ReaderPool, store: S3ObjectStore, recognizer: SpeechkitRecognizer,
    speechkit: FakeSpeechkit, silence_over_4h: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def short_cut(self: FfmpegTranscoder, source: Path, target: Path, *,
                        start_ms: int, length_ms: int, channel: int | None = None) -> int:
        await asyncio.to_thread(target.write_bytes, b"")
        return length_ms // 2  # as if the cut had stopped half way

    monkeypatch.setattr(FfmpegTranscoder, "cut", short_cut)
    before = sample("transcriber_recognition_uncovered_seconds_total",
                    {"provider": "speechkit", "after": "cut"})
    record_id = await add_record(silence_over_4h)
    table = sk_table(recognizer, store, transcoder=CopyTranscoder())
    await drive(make_actor(table, sk_settings), clock, readers, record_id)
    row = await record_row(readers, record_id)
    assert row["halt_reason"] == HaltReason.ATTEMPTS_EXHAUSTED.value  # retried, never sent
    assert not speechkit.submits
    assert sample("transcriber_recognition_uncovered_seconds_total",
                  {"provider": "speechkit", "after": "cut"}) - before >= 3600.0
