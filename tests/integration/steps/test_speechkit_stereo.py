"""SpeechKit on a stereo call, through the fake: the two-channel copy is uploaded
whole, the request is the mono one (OGG Opus: the channel count is in the file),
the answer comes per `channelTag` and each channel is its own speaker."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.audio import FIXTURES
from tests.helpers.pipeline import MakeActor
from tests.helpers.steps import AddRecord, drive, record_row, sk_table
from tests.helpers.stereo_audio import stereo_call
from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.domain.stages import Stage
from transcriber.domain.transcripts import STRUCTURE_ROW, load_structure
from transcriber.providers.object_store import S3ObjectStore
from transcriber.providers.speechkit import SpeechkitRecognizer
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.fake_speechkit import FakeSpeechkit


async def test_a_stereo_call_goes_whole_and_comes_back_per_channel(
    tmp_path: Path, add_record: AddRecord, make_actor: MakeActor,
    sk_settings: Settings, clock: FakeClock, readers: ReaderPool,
    store: S3ObjectStore, speechkit: FakeSpeechkit,
    recognizer: SpeechkitRecognizer,
) -> None:
    path = tmp_path / "call.wav"
    if stereo_call(path, seconds=12.0) is None:
        pytest.skip("apt-get install pocketsphinx-testdata")
    record_id = await add_record(path)
    await drive(make_actor(sk_table(recognizer, store), sk_settings), clock, readers, record_id)
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    [body] = speechkit.submits
    audio_format = body["recognitionModel"]["audioFormat"]
    assert audio_format == {"containerAudio": {"containerAudioType": "OGG_OPUS"}}
    # A call's speakers are its channels: no labeling asked (SpeechKit refuses it on stereo).
    assert "speakerLabeling" not in body
    [operation] = speechkit.operations.values()
    assert operation.channels == 2
    rows = await readers.fetch_all(q.recognition.SELECT_RECOGNITIONS, {"record_id": record_id})
    assert [(r["part_index"], r["channel"]) for r in rows] == [(0, None)]
    structure = await readers.fetch_one(q.results.SELECT_STRUCTURE,
                                        {"record_id": record_id, "version": STRUCTURE_ROW})
    assert structure is not None
    utterances = load_structure(structure["contents"])
    assert [(u.start_ms, u.channel, u.speaker) for u in utterances] == [
        (1000, 0, "S1"), (2700, 1, "S2"), (4000, 0, "S1"), (6200, 1, "S2")]
    assert all("channel 1" in u.text for u in utterances if u.channel == 1)


async def test_a_mono_record_stays_on_one_channel_its_speakers_labelled(
    add_record: AddRecord, make_actor: MakeActor, sk_settings: Settings,
    clock: FakeClock, readers: ReaderPool, store: S3ObjectStore,
    speechkit: FakeSpeechkit, recognizer: SpeechkitRecognizer,
) -> None:
    record_id = await add_record(FIXTURES / "two_speakers.mp3")
    await drive(make_actor(sk_table(recognizer, store), sk_settings), clock, readers, record_id)
    structure = await readers.fetch_one(q.results.SELECT_STRUCTURE,
                                        {"record_id": record_id, "version": STRUCTURE_ROW})
    assert structure is not None
    utterances = load_structure(structure["contents"])
    # One channel; the speakers are SpeechKit's labels (its `channelTag` on mono audio).
    assert [(u.channel, u.speaker) for u in utterances] == [(0, "S1"), (0, "S2")]
    [body] = speechkit.submits
    assert "speakerLabeling" in body
    [operation] = speechkit.operations.values()
    assert operation.channels == 1
