"""The real model on a short multi-part recording, and on one that provokes loops.

Parts of 12 s (the production default is 600 s): the record is cut in pauses,
recognized one part per claim, joined with no word lost or doubled at a cut.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import speech_audio
from tests.helpers.pipeline import MakeActor
from tests.helpers.settings import SettingsFactory
from tests.helpers.speech_audio import Piece
from tests.helpers.steps import AddRecord, drive, record_row
from tests.helpers.textmetrics import wer
from tests.helpers.whisper import MakeWhisper
from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.domain.stages import Stage
from transcriber.domain.transcripts import load_structure
from transcriber.pipeline.steps import build_step_table
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.settings import FfmpegSettings, RecognizerSettings
from transcriber.testing.clock import FakeClock

pytestmark = pytest.mark.slow

PARTS = RecognizerSettings(language="en", part_seconds=12)


@pytest.fixture(scope="module")
def whisper(make_whisper: MakeWhisper) -> Iterator[WhisperRecognizer]:
    recognizer = make_whisper(PARTS)
    yield recognizer
    asyncio.run(recognizer.close())


async def _run(source: Path, whisper: WhisperRecognizer, add_record: AddRecord,
               make_actor: MakeActor, make_settings: SettingsFactory, clock: FakeClock,
               readers: ReaderPool) -> tuple[str, list[str], int]:
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    steps = build_step_table(transcoder=ffmpeg, cutter=ffmpeg, recognizer=whisper, store=None)
    settings = make_settings(recognizer={"language": "en", "part_seconds": 12})
    record_id = await add_record(source)
    await drive(make_actor(steps, settings), clock, readers, record_id)
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    text = await readers.fetch_one(q.results.SELECT_TEXT,
                                   {"record_id": record_id, "kind": "transcript"})
    structure = await readers.fetch_one(q.results.SELECT_STRUCTURE,
                                        {"record_id": record_id, "version": 1})
    parts = await readers.fetch_all(q.recognition.SELECT_RECOGNITIONS, {"record_id": record_id})
    assert text is not None
    assert structure is not None
    return (text["contents"], [u.text for u in load_structure(structure["contents"])],
            len(parts))


async def test_a_multi_part_recording_is_stitched_without_losing_words(
    whisper: WhisperRecognizer, add_record: AddRecord, make_actor: MakeActor,
    make_settings: SettingsFactory, clock: FakeClock, readers: ReaderPool, tmp_path: Path,
) -> None:
    source = tmp_path / "talk.mp3"
    known = speech_audio.build(speech_audio.speech_minutes(0.5), source)
    text, _, parts = await _run(source, whisper, add_record, make_actor, make_settings, clock,
                                readers)
    assert parts >= 3
    assert wer(known, text) <= 0.25, text


async def test_silence_and_music_between_speech_make_no_loop(
    whisper: WhisperRecognizer, add_record: AddRecord, make_actor: MakeActor,
    make_settings: SettingsFactory, clock: FakeClock, readers: ReaderPool, tmp_path: Path,
) -> None:
    source = tmp_path / "gaps.mp3"
    known = speech_audio.build([
        Piece(fixture="espeak_en.ogg", silence_s=15), Piece(noise_s=20),
        Piece(fixture="librivox_0880.mp3", noise_s=25), Piece(silence_s=10),
        Piece(fixture="espeak_en.ogg", noise_s=15),
    ], source)
    text, utterances, _ = await _run(source, whisper, add_record, make_actor, make_settings,
                                     clock, readers)
    runs = [len(list(group)) for _, group in itertools.groupby(
        u.casefold().strip(" .!?") for u in utterances)]
    assert max(runs) <= 3, utterances
    assert wer(known, text) <= 0.35, text
