"""The bounds on media: intake's pure decision on readable audio (the promised 6 h,
speech-capable sampling), unguessable file ids, the submit step's outer time limit."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import SimpleNamespace

import pytest
from ulid import ULID

from transcriber.core.ids import new_id, new_unguessable_id
from transcriber.pipeline.intake import MIN_SAMPLE_RATE, AudioLimits, audio_refusal
from transcriber.pipeline.steps.submit import SubmitStep
from transcriber.ports import AudioProbe
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.settings import FfmpegSettings, load_settings
from transcriber.testing.recognizer import FakeRecognizer

SIX_HOURS = 6 * 3600


def _probe(duration_ms: int, sample_rate: int = 16000, channels: int = 1) -> AudioProbe:
    return AudioProbe(extension=".wav", duration_ms=duration_ms, sample_rate=sample_rate,
                      channels=channels)


@pytest.mark.parametrize(("probe", "refusal"), [
    (_probe(SIX_HOURS * 1000), None),
    (_probe(SIX_HOURS * 1000 + 1), "too_long"),
    (_probe(1000, MIN_SAMPLE_RATE), None),
    (_probe(1000, MIN_SAMPLE_RATE - 1), "sample_rate_too_low"),
    (_probe(100_000 * 1000, 1), "sample_rate_too_low"),  # the 1 Hz WAV declaring 27.8 h
    (_probe(1000, 0), "sample_rate_too_low"),  # a stream without a rate
    (_probe(1000, 192_000), None),
    (_probe(1000, 192_001), "sample_rate_too_high"),
    (_probe(30_000, 1_048_575, 8), "sample_rate_too_high"),  # the 16.7 KB FLAC, 4.9 s to convert
    (_probe(1000, 2_147_483_647), "sample_rate_too_high"),  # the WAV ffmpeg cannot resample
    (_probe(1000, 48_000, 8), None),
    (_probe(1000, 48_000, 9), "too_many_channels"),
    (_probe(SIX_HOURS * 1000 + 1, 48_000, 9), "too_many_channels"),
])
def test_audio_refusal(probe: AudioProbe, refusal: str | None) -> None:
    assert audio_refusal(probe, AudioLimits(max_seconds=SIX_HOURS)) == refusal


def test_audio_limits_follow_the_settings() -> None:
    settings = load_settings(environ={"TRANSCRIBER_SERVER_MAX_SAMPLE_RATE": "48000",
                                      "TRANSCRIBER_SERVER_MAX_CHANNELS": "2"})
    limits = AudioLimits.of(settings.server)
    assert audio_refusal(_probe(1000, 48_001), limits) == "sample_rate_too_high"
    assert audio_refusal(_probe(1000, 48_000, 3), limits) == "too_many_channels"
    assert limits.queued_max_seconds == 24 * 3600


def test_file_ids_are_not_derivable_from_record_ids(tmp_path: Path) -> None:
    """The original's id used to be the record id plus one (one monotonic ULID stream)."""
    files = LocalRecordFiles(tmp_path)
    for _ in range(50):
        record_id = new_id()
        file_id, _ = files.temp_path(record_id, "")
        assert abs(_number(file_id) - _number(record_id)) > 2**40


def test_unguessable_ids_are_far_apart_even_within_one_millisecond() -> None:
    numbers = sorted(_number(new_unguessable_id()) for _ in range(1000))
    assert min(b - a for a, b in itertools.pairwise(numbers)) > 2**40


def _number(value: str) -> int:
    return int(ULID.from_str(value.upper()))


def test_submit_steps_outer_time_limit_follows_record_max_seconds() -> None:
    asked: list[int | None] = []

    class Recognizer(FakeRecognizer):
        def time_limit_seconds(self, duration_ms: int | None) -> float | None:
            asked.append(duration_ms)
            return 1.0

    step = SubmitStep(Recognizer(), store=None, cutter=FfmpegTranscoder(FfmpegSettings()))
    settings = load_settings(environ={"TRANSCRIBER_SERVER_RECORD_MAX_SECONDS": "60"})
    step.time_limit_seconds(SimpleNamespace(settings=settings))  # type: ignore[arg-type]
    assert asked == [60_000]
