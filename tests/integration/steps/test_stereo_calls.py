"""Stereo calls through real ffmpeg and the real model: the channels measured at
normalization, each channel recognized as its own speaker part by part, and a mono
recording copied to both channels kept mono.

Audio: two real speakers from Debian's pocketsphinx-testdata (the LibriVox reader
on the left channel, the `cards` speaker on the right; `tests/helpers/stereo_audio.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.helpers.audio import FIXTURES
from tests.helpers.der import Segment
from tests.helpers.pipeline import MakeActor
from tests.helpers.settings import SettingsFactory
from tests.helpers.speaker_audio import decode
from tests.helpers.steps import AddRecord, drive, record_row
from tests.helpers.stereo_audio import copied_to_stereo, stereo_call, write_stereo
from tests.helpers.whisper import MakeWhisper
from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.domain.stages import Stage
from transcriber.domain.transcripts import STRUCTURE_ROW, load_structure, to_json
from transcriber.domain.voices import VoiceWindows
from transcriber.pipeline.steps import build_step_table
from transcriber.ports import AudioPart, Separation, Span, Submitted, Utterance
from transcriber.ports import Segment as WordSegment
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.providers.speakers.channels import ChannelVerdict
from transcriber.providers.speakers.separator import LocalSpeakerSeparator
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.settings import FfmpegSettings, RecognizerSettings
from transcriber.testing.clock import FakeClock

PARTS = RecognizerSettings(language="en", part_seconds=12)
CARD_WORDS = ("club", "heart", "spade", "diamond", "queen", "king", "ace", "jack", "seven",
              "eight", "four", "three", "two", "five", "six", "nine", "ten")


class CountingWhisper(WhisperRecognizer):
    """The real recognizer, counting what it is asked to recognize."""

    heard: list[Path]

    async def submit(self, part: AudioPart) -> Submitted:
        assert part.path is not None
        self.heard.append(part.path)
        return await super().submit(part)


class NoClustering:
    """A speaker separator that must not be asked: a stereo call's speakers are its
    channels."""

    calls = 0
    voiced: list[set[int]] = []  # noqa: RUF012 - counted across instances, as `calls`

    def prepare(self, audio: Path, *, num_speakers: int | None,
                speech_follows: bool = False) -> None:
        NoClustering.calls += 1
        raise AssertionError("the mono clustering was prepared for a stereo call")

    async def separate(self, audio: Path, segments: Sequence[WordSegment], *,
                       num_speakers: int | None,
                       speech: Sequence[Span] | None = None) -> Separation:
        NoClustering.calls += 1
        raise AssertionError("the mono clustering ran on a stereo call")

    async def channel_voices(self, audio: Path,
                             utterances: Sequence[Utterance]) -> VoiceWindows:
        # The channels' voices are embedded (the real engine's), never clustered.
        NoClustering.voiced.append({u.channel for u in utterances})
        return await LocalSpeakerSeparator().channel_voices(audio, utterances)

    async def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def whisper(make_whisper: MakeWhisper) -> Iterator[CountingWhisper]:
    recognizer = make_whisper(PARTS, kind=CountingWhisper)
    recognizer.heard = []
    yield recognizer
    asyncio.run(recognizer.close())


@pytest.fixture(scope="module")
def call(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Segment]]:
    path = tmp_path_factory.mktemp("call") / "call.wav"
    turns = stereo_call(path, seconds=30.0)
    if turns is None:
        pytest.skip("apt-get install pocketsphinx-testdata")
    return path, turns


async def test_a_call_with_a_speaker_per_channel_keeps_both_channels(
        call: tuple[Path, list[Segment]], tmp_path: Path) -> None:
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    report = await ffmpeg.measure_channels(call[0], max_seconds=3600)
    assert report is not None
    assert report.verdict is ChannelVerdict.DIFFERENT
    print(f"call: correlation={report.correlation} spread={report.level_spread_db} dB")
    copy = tmp_path / "copy.ogg"
    await ffmpeg.normalize(call[0], copy, max_seconds=3600,
                           channels=await ffmpeg.kept_channels(call[0], max_seconds=3600))
    assert await ffmpeg.input_channels(copy) == 2
    left = tmp_path / "left.wav"
    await ffmpeg.cut(copy, left, start_ms=0, length_ms=5000, channel=0)
    assert await ffmpeg.input_channels(left) == 1


async def test_a_mono_recording_copied_to_both_channels_stays_mono(
    tmp_path: Path, add_record: AddRecord, make_actor: MakeActor,
    make_settings: SettingsFactory, clock: FakeClock, readers: ReaderPool,
    whisper: CountingWhisper, record_files: LocalRecordFiles,
) -> None:
    source = tmp_path / "copied.mp3"
    copied_to_stereo(FIXTURES / "librivox_0880.mp3", source)
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    assert await ffmpeg.input_channels(source) == 2
    report = await ffmpeg.measure_channels(source, max_seconds=3600)
    assert report is not None
    assert report.verdict is ChannelVerdict.SAME
    print(f"copy: correlation={report.correlation} spread={report.level_spread_db} dB")
    steps = build_step_table(transcoder=ffmpeg, cutter=ffmpeg, recognizer=whisper, store=None)
    record_id = await add_record(source)
    actor = make_actor(steps, make_settings(recognizer={"language": "en", "part_seconds": 12}))
    await drive(actor, clock, readers, record_id, until=Stage.NORMALIZED)
    step_record = await readers.fetch_one(q.results.SELECT_STEP_RECORD,
                                          {"record_id": record_id})
    assert step_record is not None
    assert step_record["normalized_channels"] == 1
    copy = record_files.path_of(record_id, step_record["normalized_file_name"])
    assert await ffmpeg.input_channels(copy) == 1


@pytest.mark.slow
async def test_a_stereo_call_is_recognized_channel_by_channel_part_by_part(
    call: tuple[Path, list[Segment]], add_record: AddRecord, make_actor: MakeActor,
    make_settings: SettingsFactory, clock: FakeClock, readers: ReaderPool,
    whisper: CountingWhisper,
) -> None:
    path, turns = call
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    settings = make_settings(recognizer={"language": "en", "part_seconds": 12})

    def steps() -> dict:  # type: ignore[type-arg]
        return build_step_table(transcoder=ffmpeg, cutter=ffmpeg, recognizer=whisper,
                                store=None, separator=NoClustering())

    NoClustering.voiced.clear()
    record_id = await add_record(path)
    await drive(make_actor(steps(), settings), clock, readers, record_id,
                until=Stage.NORMALIZED)
    step_record = await readers.fetch_one(q.results.SELECT_STEP_RECORD,
                                          {"record_id": record_id})
    assert step_record is not None
    assert step_record["normalized_channels"] == 2

    # One claim recognizes one part of one channel; then a "restart" (a fresh actor
    # and step table) continues with the first unfinished one.
    whisper.heard.clear()
    first = make_actor(steps(), settings)
    for claims in (1, 2):
        report = await first.run_once()
        assert report.outcome == "deferred", report
        rows = await readers.fetch_all(q.recognition.SELECT_RECOGNITIONS,
                                       {"record_id": record_id})
        assert [r["payload_file"] is not None for r in rows][:claims + 1] == \
            [True] * claims + [False]
    assert len(rows) >= 6  # three parts of 12 s or so, each twice
    assert [r["channel"] for r in rows] == [0, 1] * (len(rows) // 2)
    assert [r["offset_ms"] for r in rows[0::2]] == [r["offset_ms"] for r in rows[1::2]]
    await drive(make_actor(steps(), settings), clock, readers, record_id)
    assert len(whisper.heard) == len(rows)  # no part of any channel recognized twice
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    assert NoClustering.calls == 0
    # Known voices: each channel's speaker has a print, saved with the transcript.
    assert NoClustering.voiced == [{0, 1}]
    voices = await readers.fetch_all(q.voices.RECORD_VOICES, {"record_id": record_id})
    assert sorted(v["speaker"] for v in voices) == ["S1", "S2"]

    structure = await readers.fetch_one(q.results.SELECT_STRUCTURE,
                                        {"record_id": record_id, "version": STRUCTURE_ROW})
    assert structure is not None
    utterances = load_structure(structure["contents"])
    assert {(u.channel, u.speaker) for u in utterances} == {(0, "S1"), (1, "S2")}
    assert [u.start_ms for u in utterances] == sorted(u.start_ms for u in utterances)
    # Each utterance shares more time with its channel's speaker's turns than with the
    # other's (Whisper may join two turns of one channel across the other's answer).
    speaker_of = {0: "A", 1: "B"}

    def shared(u: Utterance, speaker: str) -> int:
        return sum(max(0, min(u.end_ms, t.end_ms) - max(u.start_ms, t.start_ms))
                   for t in turns if t.speaker == speaker)

    for u in utterances:
        own = speaker_of[u.channel]
        assert shared(u, own) > shared(u, "B" if own == "A" else "A"), (u, turns)
    right = " ".join(u.text.lower() for u in utterances if u.channel == 1)
    assert sum(word in right for word in CARD_WORDS) >= 3, right
    # The JSON export carries each utterance's channel.
    assert '"channel":1' in to_json(utterances)


async def test_a_recording_with_one_silent_channel_stays_mono(tmp_path: Path) -> None:
    source = tmp_path / "one_side.wav"
    voice = decode(FIXTURES / "librivox_0880.mp3")
    write_stereo(source, voice, voice * 0)
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    report = await ffmpeg.measure_channels(source, max_seconds=3600)
    assert report is not None
    assert report.verdict is ChannelVerdict.ONE_SILENT
    assert await ffmpeg.kept_channels(source, max_seconds=3600) == 1
    assert await ffmpeg.kept_channels(FIXTURES / "librivox_0880.mp3", max_seconds=3600) == 1
