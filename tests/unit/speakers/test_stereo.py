"""Stereo calls (pure parts): the streamed measurement, the decision, the per-channel
parts, the merge on one timeline and the channels' speakers."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from tests.helpers.voices import RATE, speechlike, two_party_call
from transcriber.core.clock import format_time
from transcriber.db.commands.recognition import Recognition
from transcriber.db.reads.progress import PartProgress, ProgressRecord
from transcriber.pipeline.part_rows import channel_plans
from transcriber.pipeline.parts import PartPlan
from transcriber.pipeline.progress import progress_of
from transcriber.pipeline.steps.poll import channel_speakers, merge_channels
from transcriber.ports import Utterance
from transcriber.providers.ffmpeg import channels_in_log
from transcriber.providers.speakers.channels import (
    ChannelMeter,
    ChannelReport,
    ChannelVerdict,
    compare_channels,
    kept_channels,
)

MINUTE = 60_000


def _interleave(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    return np.stack([left, right], axis=1).reshape(-1).astype(np.float32)


@pytest.mark.parametrize("chunk", [1, 799, 1600, 4097, 10**6])
def test_the_streamed_meter_agrees_with_the_whole_file_at_any_chunk_size(chunk: int) -> None:
    left, right = two_party_call()
    meter = ChannelMeter(RATE)
    samples = _interleave(left, right)
    for start in range(0, samples.shape[0], chunk * 2):
        meter.feed(samples[start:start + chunk * 2])
    assert meter.report() == compare_channels(left, right, RATE)
    assert meter.report().verdict is ChannelVerdict.DIFFERENT


def test_the_meter_keeps_numbers_per_frame_not_samples() -> None:
    meter = ChannelMeter(RATE)
    voice = speechlike(3, seconds=60.0)
    meter.feed(_interleave(voice, voice))
    kept = sum(s.nbytes for s in meter._stats)
    assert kept == 60 * 20 * 3 * 8  # 20 frames a second, three float64 each
    assert meter.report().verdict is ChannelVerdict.SAME


@pytest.mark.parametrize(("verdict", "channels"), [
    (ChannelVerdict.DIFFERENT, 2), (ChannelVerdict.SAME, 1), (ChannelVerdict.ONE_SILENT, 1)])
def test_only_two_different_signals_keep_two_channels(verdict: ChannelVerdict,
                                                      channels: int) -> None:
    report = ChannelReport(verdict=verdict, correlation=0.5, level_spread_db=3.0,
                           active_frames=10)
    assert kept_channels(report) == channels


def test_a_mono_original_has_no_report_and_stays_mono() -> None:
    assert kept_channels(None) == 1


@pytest.mark.parametrize(("line", "channels"), [
    ("  Stream #0:0: Audio: mp3 (mp3float), 16000 Hz, mono, fltp, 48 kb/s", 1),
    ("  Stream #0:0: Audio: opus, 48000 Hz, stereo, fltp", 2),
    ("  Stream #0:0[0x1](und): Audio: aac (LC) (mp4a / 0x6134706D), 44100 Hz, stereo, fltp", 2),
    ("  Stream #0:1: Audio: pcm_s16le ([1][0][0][0] / 0x0001), 8000 Hz, 2 channels, s16", 2),
    ("  Stream #0:0: Audio: ac3, 48000 Hz, 5.1(side), fltp, 384 kb/s", 6),
    ("  Stream #0:0: Video: h264, yuv420p", None),
])
def test_the_input_channel_count_is_read_from_ffmpegs_description(
        line: str, channels: int | None) -> None:
    assert channels_in_log(f"Input #0, ogg, from 'x':\n{line}\n") == channels


def _row(index: int, offset: int, channel: int | None, saved: bool = False) -> Recognition:
    return Recognition(id=f"g{index}", record_id="r", part_index=index, offset_ms=offset,
                       provider="local", model="m", external_id=None, source_uri=None,
                       payload_file=f"f{index}" if saved else None, started_at=None,
                       finished_at=None, channel=channel)


def test_each_channel_of_a_stereo_record_has_the_same_parts_interleaved_in_time() -> None:
    # RegisterParts with channels=2: part k of channel c is part_index 2k + c.
    rows = [_row(2 * k + c, offset, c) for k, offset in enumerate((0, 10 * MINUTE, 20 * MINUTE))
            for c in (0, 1)]
    plans = channel_plans(rows, duration_ms=25 * MINUTE, overlap_ms=0)
    assert [(p.index, p.offset_ms, p.length_ms, c) for p, c in plans] == [
        (0, 0, 10 * MINUTE, 0), (1, 0, 10 * MINUTE, 1),
        (2, 10 * MINUTE, 10 * MINUTE, 0), (3, 10 * MINUTE, 10 * MINUTE, 1),
        (4, 20 * MINUTE, 5 * MINUTE, 0), (5, 20 * MINUTE, 5 * MINUTE, 1)]


def test_a_mono_record_keeps_its_parts_as_before() -> None:
    rows = [_row(k, offset, None) for k, offset in enumerate((0, 10 * MINUTE))]
    plans = channel_plans(rows, duration_ms=15 * MINUTE, overlap_ms=4000)
    assert [(p.index, p.offset_ms, p.length_ms, c) for p, c in plans] == [
        (0, 0, 10 * MINUTE + 4000, None), (1, 10 * MINUTE, 5 * MINUTE, None)]


def test_progress_counts_every_part_of_every_channel() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    parts = [
        PartProgress(part_index=2 * k + c, offset_ms=offset, channel=c, provider="local",
                     model="m", payload_file="f" if 2 * k + c < 3 else None,
                     started_at=format_time(now), finished_at=None)
        for k, offset in enumerate((0, 10 * MINUTE)) for c in (0, 1)]
    record = ProgressRecord(id="r", state="normalized", duration_ms=20 * MINUTE,
                            halted_at=None, state_entered_at=format_time(now),
                            created_at=format_time(now))
    progress = progress_of(record, parts, real_time_factor=0.5, normalize=None, planned=[],
                           overlap_ms=0, sequential=True, now=now)
    assert progress is not None
    assert (progress.done, progress.total) == (3, 4)
    # One part of ten minutes is left, at half real time.
    assert progress.eta_seconds == 300


def _u(start: int, end: int, text: str, channel: int = 0) -> Utterance:
    return Utterance(start_ms=start, end_ms=end, channel=channel, text=text)


def test_the_channels_merge_on_one_timeline_with_their_channel_and_speaker() -> None:
    first, second = PartPlan(index=0, offset_ms=0, length_ms=10_000), \
        PartPlan(index=2, offset_ms=10_000, length_ms=5_000)
    parts = [
        (first, 0, [_u(500, 2000, "hello"), _u(6000, 7000, "fine thanks")]),
        (PartPlan(index=1, offset_ms=0, length_ms=10_000), 1, [_u(2500, 5000, "how are you")]),
        (second, 0, [_u(1000, 2000, "bye")]),
        (PartPlan(index=3, offset_ms=10_000, length_ms=5_000), 1, [_u(0, 800, "see you")]),
    ]
    merged = channel_speakers(merge_channels(parts, overlap_ms=0))
    assert [(u.start_ms, u.channel, u.speaker, u.text) for u in merged] == [
        (500, 0, "S1", "hello"), (2500, 1, "S2", "how are you"),
        (6000, 0, "S1", "fine thanks"), (10_000, 1, "S2", "see you"),
        (11_000, 0, "S1", "bye")]


def test_speechkits_stereo_answer_keeps_its_channel_tags() -> None:
    # One part carrying both channels (channel None): the answer's channelTag stays.
    plan = PartPlan(index=0, offset_ms=0, length_ms=10_000)
    merged = channel_speakers(merge_channels(
        [(plan, None, [_u(100, 900, "a", 0), _u(1000, 1500, "b", 1)])], overlap_ms=4000))
    assert [(u.channel, u.speaker) for u in merged] == [(0, "S1"), (1, "S2")]
