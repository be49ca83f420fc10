"""Progress and ETA of a record (pure): parts done, fraction, the measured speed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from transcriber.core.clock import format_time
from transcriber.db.commands.progress import next_real_time_factor
from transcriber.db.reads.progress import NormalizeProgress, PartProgress, ProgressRecord
from transcriber.pipeline.parts import plan_parts
from transcriber.pipeline.progress import NORMALIZE_SHARE, progress_of
from transcriber.pipeline.steps.normalize import due
from transcriber.providers.ffmpeg import progress_ms

NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
MINUTE = 60_000
HOUR = 60 * MINUTE


def _record(state: str, *, duration_ms: int = HOUR, halted: bool = False) -> ProgressRecord:
    return ProgressRecord(id="r", state=state, duration_ms=duration_ms,
                          halted_at=format_time(NOW) if halted else None,
                          state_entered_at=format_time(NOW), created_at=format_time(NOW))


def _parts(duration_ms: int, *, saved: int, started: datetime | None = None,
           part_ms: int = 10 * MINUTE, overlap_ms: int = 4000) -> list[PartProgress]:
    plans = plan_parts(duration_ms, max_part_ms=part_ms, overlap_ms=overlap_ms)
    return [PartProgress(part_index=p.index, offset_ms=p.offset_ms, channel=None,
                         provider="local", model="m",
                         payload_file=f"f{p.index}" if p.index < saved else None,
                         started_at=format_time(started) if started else None,
                         finished_at=None) for p in plans]


def _normalize(done_ms: int, *, started: datetime) -> NormalizeProgress:
    return NormalizeProgress(record_id="r", done_ms=done_ms, total_ms=HOUR,
                             started_at=format_time(started), updated_at=format_time(NOW))


def _progress(record: ProgressRecord, parts: list[PartProgress], *,
              rtf: float | None = 0.1, normalize: NormalizeProgress | None = None,
              sequential: bool = True, now: datetime = NOW) -> Any:
    planned = plan_parts(record.duration_ms, max_part_ms=10 * MINUTE, overlap_ms=4000)
    return progress_of(record, parts, real_time_factor=rtf, normalize=normalize,
                       planned=planned, overlap_ms=4000, sequential=sequential, now=now)


@pytest.mark.parametrize("state", ["transcribed", "done"])
def test_no_progress_once_recognized(state: str) -> None:
    assert _progress(_record(state), _parts(HOUR, saved=7)) is None


def test_no_progress_while_halted() -> None:
    assert _progress(_record("normalized", halted=True), _parts(HOUR, saved=2)) is None


def test_recognition_counts_saved_parts_and_the_eta_follows_the_measured_speed() -> None:
    parts = _parts(HOUR, saved=3)
    progress = _progress(_record("normalized"), parts)
    assert (progress.stage, progress.done, progress.total) == ("recognize", 3, 7)
    assert 0.05 < progress.fraction < 0.6
    left_ms = HOUR - 3 * (10 * MINUTE - 4000)  # the audio of the parts not saved yet
    assert progress.eta_seconds == pytest.approx(left_ms / 1000 * 0.1, abs=2)


def test_no_measured_speed_no_eta() -> None:
    assert _progress(_record("normalized"), _parts(HOUR, saved=1), rtf=None).eta_seconds is None


def test_before_the_parts_are_registered_the_plan_gives_the_total() -> None:
    progress = _progress(_record("normalized"), [])
    assert (progress.done, progress.total, progress.fraction) == (0, 7, NORMALIZE_SHARE)
    assert progress.eta_seconds == pytest.approx(HOUR / 1000 * 0.1 + 7 * 4 * 0.1, abs=5)


def test_remote_parts_run_side_by_side_the_slowest_decides() -> None:
    started = NOW - timedelta(seconds=100)
    parts = _parts(2 * HOUR, saved=0, started=started, part_ms=HOUR)
    progress = progress_of(_record("submitted", duration_ms=2 * HOUR), parts,
                           real_time_factor=0.1, normalize=None, planned=[], overlap_ms=4000,
                           sequential=False, now=NOW)
    assert progress is not None
    assert progress.eta_seconds == pytest.approx(HOUR / 1000 * 0.1 - 100, abs=1)


def test_normalization_reports_its_own_share_and_pace() -> None:
    started = NOW - timedelta(seconds=30)
    progress = _progress(_record("uploaded"), [], normalize=_normalize(20 * MINUTE,
                                                                       started=started))
    assert progress.stage == "normalize"
    assert progress.fraction == pytest.approx(NORMALIZE_SHARE / 3, abs=1e-4)
    # A third in 30 s: two thirds in 60 s; then the recognition of the planned parts.
    planned_audio_s = (HOUR + 6 * 4000) / 1000
    assert progress.eta_seconds == round(60 + planned_audio_s * 0.1)
    assert _progress(_record("uploaded"), [], normalize=None).fraction == 0.0


def test_fraction_never_goes_backwards_along_the_way() -> None:
    seen = []
    for done_ms in range(0, HOUR + 1, 5 * MINUTE):
        seen.append(_progress(_record("uploaded"), [],
                              normalize=_normalize(done_ms, started=NOW)).fraction)
    seen.append(_progress(_record("normalized"), []).fraction)
    for saved in range(8):
        seen.append(_progress(_record("normalized"), _parts(HOUR, saved=saved)).fraction)
    seen.append(_progress(_record("submitted"), _parts(HOUR, saved=7)).fraction)
    assert seen == sorted(seen)
    assert seen[0] == 0.0
    assert seen[-1] == 1.0


def test_speed_moves_towards_new_measurements() -> None:
    assert next_real_time_factor(None, audio_ms=10_000, work_ms=1500) == 0.15
    moved = next_real_time_factor(0.15, audio_ms=10_000, work_ms=500)
    assert moved is not None
    assert 0.05 < moved < 0.15
    assert next_real_time_factor(0.15, audio_ms=0, work_ms=500) == 0.15


@pytest.mark.parametrize(("line", "expected"), [
    (b"out_time_us=12500000\n", 12_500), (b"out_time_ms=2000\n", 2),
    (b"out_time_us=N/A\n", None), (b"progress=continue\n", None), (b"out_time_us=-5\n", 0),
])
def test_ffmpeg_progress_lines(line: bytes, expected: int | None) -> None:
    assert progress_ms(line) == expected


def test_normalize_reports_are_throttled() -> None:
    assert due(None, 0.0)
    assert not due(0.0, 9.9)
    assert due(0.0, 10.0)
