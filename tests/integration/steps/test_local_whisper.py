"""The whole pipeline with real ffmpeg and the real local Whisper (the embedded default).

Kept to a few short fixtures: the model loads once per session (≈1–2 s).
Quality is asserted by WER/CER thresholds, never exact text.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson

from tests.helpers.audio import FIXTURES
from tests.helpers.pipeline import MakeActor, sample
from tests.helpers.steps import AddRecord, drive, record_row
from tests.helpers.textmetrics import cer, wer
from transcriber.core.hashing import sha256_of
from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.domain.stages import Stage
from transcriber.domain.transcripts import load_structure
from transcriber.pipeline.steps import build_step_table
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.providers.whisper_bundle import BUNDLED_MODEL_SHA256
from transcriber.settings import FfmpegSettings, Settings
from transcriber.testing.clock import FakeClock

LIBRIVOX_TEXT = "he was not an ill disposed young man"
RUSSIAN_TEXT = "Привет. Сегодня мы проверяем распознавание русской речи."
ESPEAK_TEXT = ("The quick brown fox jumps over the lazy dog. "
               "Our archive keeps every recording safe.")


def _steps(whisper: WhisperRecognizer) -> dict:  # type: ignore[type-arg]
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    return build_step_table(transcoder=ffmpeg, cutter=ffmpeg, recognizer=whisper, store=None)


async def _transcribe(fixture: Path, add_record: AddRecord, make_actor: MakeActor,
                      settings: Settings, clock: FakeClock, readers: ReaderPool,
                      whisper: WhisperRecognizer) -> tuple[str, str]:
    record_id = await add_record(fixture)
    await drive(make_actor(_steps(whisper), settings), clock, readers, record_id)
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    text = await readers.fetch_one(q.results.SELECT_TEXT,
                                   {"record_id": record_id, "kind": "transcript"})
    assert text is not None
    assert row["transcript_text_id"] == text["id"]
    return record_id, text["contents"]


async def test_bundled_model_is_joined_and_verified(whisper: WhisperRecognizer) -> None:
    await asyncio.to_thread(whisper.load)
    assert sha256_of(whisper._cache_dir / "model.bin") == BUNDLED_MODEL_SHA256
    assert whisper.load_seconds is not None


async def test_local_pipeline_transcribes_real_english_speech(
    add_record: AddRecord, make_actor: MakeActor, settings: Settings, clock: FakeClock,
    readers: ReaderPool, whisper: WhisperRecognizer, record_files: LocalRecordFiles,
) -> None:
    factors = sample("transcriber_recognition_realtime_factor_count", {"provider": "local"})
    record_id, text = await _transcribe(FIXTURES / "librivox_0880.mp3", add_record, make_actor,
                                        settings, clock, readers, whisper)
    assert wer(LIBRIVOX_TEXT, text) <= 0.25, text
    # One recognition, one real-time factor (a few seconds of audio: well above 0).
    assert sample("transcriber_recognition_realtime_factor_count",
                  {"provider": "local"}) == factors + 1
    assert sample("transcriber_recognition_realtime_factor_sum", {"provider": "local"}) > 0
    structure = await readers.fetch_one(q.results.SELECT_STRUCTURE,
                                        {"record_id": record_id, "version": 1})
    assert structure is not None
    utterances = load_structure(structure["contents"])
    assert utterances
    assert 0 <= utterances[0].start_ms < utterances[-1].end_ms <= 3500
    # The raw answer is a file of the record, pointed at by its recognitions row.
    recognition = await readers.fetch_one(q.recognition.SELECT_RECOGNITIONS,
                                          {"record_id": record_id})
    assert recognition is not None
    assert recognition["provider"] == "local"
    assert recognition["external_id"].startswith("local-")
    payload_row = await readers.fetch_one(q.records.SELECT_FILE,
                                          {"id": recognition["payload_file"]})
    assert payload_row is not None
    payload = orjson.loads(record_files.path_of(record_id, payload_row["file_name"]).read_bytes())
    assert payload["language"] == "en"


async def test_local_pipeline_russian_character_error_rate(
    add_record: AddRecord, make_actor: MakeActor, settings: Settings, clock: FakeClock,
    readers: ReaderPool, whisper: WhisperRecognizer,
) -> None:
    _, text = await _transcribe(FIXTURES / "festival_ru.m4a", add_record, make_actor,
                                settings, clock, readers, whisper)
    rate = cer(RUSSIAN_TEXT, text)
    print(f"russian CER={rate:.3f}")  # reported in docs/recognition.md
    assert rate <= 0.25, text


async def test_local_pipeline_synthetic_english_keywords(
    add_record: AddRecord, make_actor: MakeActor, settings: Settings, clock: FakeClock,
    readers: ReaderPool, whisper: WhisperRecognizer,
) -> None:
    _, text = await _transcribe(FIXTURES / "espeak_en.ogg", add_record, make_actor,
                                settings, clock, readers, whisper)
    assert wer(ESPEAK_TEXT, text) <= 0.25, text
    for keyword in ("fox", "lazy", "archive", "recording"):
        assert keyword in text.lower()
