"""The submit step hands the recognizer's speech regions to the speaker turns found
beside it: a record recognized as one part asks for them, and whatever the
recognition does (hands them, fails first, never had any), the job is told
once it is over, so it never waits for regions that are not coming.

Real DB and ffmpeg; a recognizer that works like the local one and a separator
that notes what it is asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.helpers.audio import tone_mp3
from tests.helpers.pipeline import MakeActor
from tests.helpers.settings import SettingsFactory
from tests.helpers.steps import AddRecord, drive, record_row
from transcriber.core.errors import TransientFailure
from transcriber.db.readers import ReaderPool
from transcriber.domain.stages import Stage
from transcriber.domain.voices import VoiceWindows
from transcriber.pipeline.steps import build_step_table
from transcriber.ports import (
    AudioPart,
    Segment,
    Separation,
    Span,
    SpeakerLabels,
    SpeechSink,
    Submitted,
    Utterance,
)
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.settings import FfmpegSettings
from transcriber.testing.clock import FakeClock
from transcriber.testing.recognizer import FakeRecognizer

REGIONS = [Span(start_ms=500, end_ms=9_000), Span(start_ms=9_600, end_ms=19_500)]


@pytest.fixture(scope="module")
def tone_20s(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tone_mp3(tmp_path_factory.mktemp("audio"), 20)


class LocalLike(FakeRecognizer):
    """Answers as the local recognizer does (within `submit`), handing the part's
    speech regions on first when `hands` is set; fails the calls in `fail_calls`
    before its VAD."""

    provider = "local"
    # Its words are labelled by the speaker engine here, its parts cut in pauses.
    speakers = SpeakerLabels.WORDS
    part_overlap_ms = 0

    def __init__(self, *, hands: bool, max_part_ms: int | None = None) -> None:
        super().__init__(finishes_in_submit=True, max_part_ms=max_part_ms)
        self.hands = hands
        self.fail_calls: set[int] = set()
        self.calls = 0

    async def submit(self, part: AudioPart) -> Submitted:
        self.calls += 1
        if self.calls in self.fail_calls:
            raise TransientFailure("recognition cancelled")
        if self.hands and part.on_speech is not None:
            part.on_speech(REGIONS)
        return await super().submit(part)


class NotingSeparator:
    """A `SpeakerSeparator` that notes each `prepare` and what its sink is given, and
    labels every segment S1."""

    def __init__(self) -> None:
        self.prepared: list[bool] = []
        self.handed: list[Sequence[Span] | None] = []

    def prepare(self, audio: Path, *, num_speakers: int | None,
                speech_follows: bool = False) -> SpeechSink | None:
        assert audio.is_file()
        self.prepared.append(speech_follows)
        return self._hand if speech_follows else None

    def _hand(self, regions: Sequence[Span] | None, samples: object = None, /) -> None:
        self.handed.append(regions)

    async def separate(self, audio: Path, segments: Sequence[Segment], *,
                       num_speakers: int | None,
                       speech: Sequence[Span] | None = None) -> Separation:
        return Separation(utterances=[
            Utterance(start_ms=s.start_ms, end_ms=s.end_ms, channel=0, text=s.text,
                      speaker="S1") for s in segments])

    async def channel_voices(self, audio: Path,
                             utterances: Sequence[Utterance]) -> VoiceWindows:
        raise AssertionError("a mono record has no channels' voices")

    async def close(self) -> None:
        pass


async def _run(recognizer: LocalLike, separator: NotingSeparator, source: Path, *,
               add_record: AddRecord, make_actor: MakeActor,
               make_settings: SettingsFactory, clock: FakeClock, readers: ReaderPool) -> None:
    settings = make_settings(recognizer={"diarization": "on", "part_overlap_seconds": 0},
                             pipeline={"backoff_base_seconds": 1.0, "backoff_cap_seconds": 1.0})
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    steps = build_step_table(transcoder=ffmpeg, cutter=ffmpeg, recognizer=recognizer,
                             store=None, separator=separator)
    record_id = await add_record(source)
    await drive(make_actor(steps, settings), clock, readers, record_id)
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]


async def test_one_part_hands_its_regions_then_says_the_recognition_is_over(
        tone_20s: Path, add_record: AddRecord, make_actor: MakeActor,
        make_settings: SettingsFactory, clock: FakeClock, readers: ReaderPool) -> None:
    recognizer, separator = LocalLike(hands=True), NotingSeparator()
    recognizer.fail_calls = {1}  # the first attempt fails before its VAD
    await _run(recognizer, separator, tone_20s, add_record=add_record, make_actor=make_actor,
               make_settings=make_settings, clock=clock, readers=readers)
    assert separator.prepared == [True, True]  # every claim asks (a restart loses jobs)
    # Failed: told nothing is coming. Then the regions, and the end (ignored by a job).
    assert separator.handed == [None, REGIONS, None]


async def test_a_recognizer_that_hands_nothing_still_ends_the_wait(
        tone_20s: Path, add_record: AddRecord, make_actor: MakeActor,
        make_settings: SettingsFactory, clock: FakeClock, readers: ReaderPool) -> None:
    separator = NotingSeparator()
    await _run(LocalLike(hands=False), separator, tone_20s, add_record=add_record,
               make_actor=make_actor, make_settings=make_settings, clock=clock,
               readers=readers)
    assert separator.handed == [None]


async def test_a_record_of_several_parts_finds_its_own_speech(
        tone_20s: Path, add_record: AddRecord, make_actor: MakeActor,
        make_settings: SettingsFactory, clock: FakeClock, readers: ReaderPool) -> None:
    """Each part's VAD sees only that part: the job runs its own over the whole file."""
    recognizer, separator = LocalLike(hands=True, max_part_ms=8_000), NotingSeparator()
    await _run(recognizer, separator, tone_20s, add_record=add_record, make_actor=make_actor,
               make_settings=make_settings, clock=clock, readers=readers)
    assert recognizer.calls >= 3
    assert separator.prepared
    assert not any(separator.prepared)
    assert separator.handed == []
    assert all(part.on_speech is None for part in recognizer.submitted)
