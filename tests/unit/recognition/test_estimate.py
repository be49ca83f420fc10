"""The estimate from the first second (issue 38, item 5), pure and on a hand-moved clock:
a short record queued or recognizing has an ETA, its bar moves with time and stays
below the end until its answer is saved; the work queued ahead is waited for; the
measured speed follows finished parts with outliers bounded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from transcriber.core.clock import format_time
from transcriber.db.commands.progress import (
    OUTLIER_RATIO,
    SPEED_WEIGHT,
    next_real_time_factor,
    sample_kind,
)
from transcriber.db.reads.progress import NormalizeProgress, PartProgress, ProgressRecord
from transcriber.pipeline.estimate import (
    MIN_SECONDS_LEFT,
    NORMALIZE_REAL_TIME_FACTOR,
    RUNNING_CAP,
    queue_wait_seconds,
    running_seconds_left,
    running_share,
)
from transcriber.pipeline.parts import plan_parts
from transcriber.pipeline.progress import NORMALIZE_SHARE, Progress, progress_of

T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)
SHORT_MS = 20_000
SPEED = 0.5  # 20 s of audio: 10 s of work


def _record(state: str, *, duration_ms: int = SHORT_MS) -> ProgressRecord:
    return ProgressRecord(id="r", state=state, duration_ms=duration_ms, halted_at=None,
                          state_entered_at=format_time(T0), created_at=format_time(T0))


def _part(*, started: datetime | None, saved: bool = False) -> PartProgress:
    return PartProgress(part_index=0, offset_ms=0, channel=None, provider="local", model="m",
                        payload_file="f" if saved else None,
                        started_at=None if started is None else format_time(started),
                        finished_at=None)


def _progress(state: str, parts: list[PartProgress], *, now: datetime,
              normalize: NormalizeProgress | None = None, queue_ms: int = 0,
              parallel: int = 1, sequential: bool = True,
              speed: float | None = SPEED) -> Progress:
    planned = plan_parts(SHORT_MS, max_part_ms=600_000, overlap_ms=0)
    progress = progress_of(_record(state), parts, real_time_factor=speed, normalize=normalize,
                           planned=planned, overlap_ms=0, sequential=sequential, now=now,
                           queue_ms=queue_ms, parallel=parallel)
    assert progress is not None
    return progress


def test_the_running_share_grows_with_time_and_stops_below_the_whole() -> None:
    shares = [running_share(T0, T0 + timedelta(seconds=s), duration_ms=SHORT_MS, speed=SPEED)
              for s in range(0, 30)]
    assert shares[0] == 0.0
    assert shares[5] == pytest.approx(RUNNING_CAP / 2)  # half of the expected 10 s
    assert shares == sorted(shares)
    assert max(shares) == RUNNING_CAP  # past the expected time: held, never done
    assert running_share(None, T0, duration_ms=SHORT_MS, speed=SPEED) == 0.0
    # The clock behind the start (another host's clock): nothing done, not negative.
    assert running_share(T0, T0 - timedelta(seconds=5), duration_ms=SHORT_MS,
                         speed=SPEED) == 0.0


def test_the_time_left_of_a_running_part_counts_down_to_a_moment() -> None:
    lefts = [running_seconds_left(T0, T0 + timedelta(seconds=s), duration_ms=SHORT_MS,
                                  speed=SPEED) for s in (0, 4, 9, 10, 60)]
    assert lefts == [10.0, 6.0, MIN_SECONDS_LEFT, MIN_SECONDS_LEFT, MIN_SECONDS_LEFT]


def test_the_queue_ahead_is_shared_by_the_recognitions_at_once() -> None:
    assert queue_wait_seconds(600_000, speed=0.1, parallel=1) == pytest.approx(60.0)
    assert queue_wait_seconds(600_000, speed=0.1, parallel=2) == pytest.approx(30.0)
    assert queue_wait_seconds(600_000, speed=0.1, parallel=0) == pytest.approx(60.0)


def test_a_short_record_just_uploaded_is_queued_with_an_estimate() -> None:
    progress = _progress("uploaded", [], now=T0)
    assert (progress.stage, progress.fraction) == ("queue", 0.0)
    # Its normalization (warm-up figure) and its own recognition.
    assert progress.eta_seconds == round(20 * NORMALIZE_REAL_TIME_FACTOR + 20 * SPEED)


def test_a_queued_record_waits_for_the_local_work_ahead_of_it() -> None:
    alone = _progress("normalized", [], now=T0)
    assert (alone.stage, alone.eta_seconds) == ("queue", 10)
    behind = _progress("normalized", [], now=T0, queue_ms=120_000)
    assert behind.eta_seconds == 10 + 60
    assert _progress("normalized", [], now=T0, queue_ms=120_000, parallel=2).eta_seconds == 40
    uploaded = _progress("uploaded", [], now=T0, queue_ms=120_000)
    assert uploaded.eta_seconds == round(20 * NORMALIZE_REAL_TIME_FACTOR + 60 + 10)


def test_normalizing_counts_the_recognition_after_it() -> None:
    report = NormalizeProgress(record_id="r", done_ms=10_000, total_ms=SHORT_MS,
                               started_at=format_time(T0), updated_at=format_time(T0))
    progress = _progress("uploaded", [], now=T0 + timedelta(seconds=1), normalize=report)
    assert progress.stage == "normalize"
    assert progress.fraction == pytest.approx(NORMALIZE_SHARE / 2)
    assert progress.eta_seconds == 1 + 10  # ffmpeg's pace, then the recognition


def test_a_short_record_recognizing_moves_until_its_answer_is_saved() -> None:
    running = [_part(started=T0)]
    seen = [_progress("normalized", running, now=T0 + timedelta(seconds=s))
            for s in (0, 2, 5, 8, 15, 60)]
    fractions = [p.fraction for p in seen]
    etas = [p.eta_seconds for p in seen]
    assert all(p.stage == "recognize" for p in seen)
    assert fractions[0] == NORMALIZE_SHARE
    assert fractions == sorted(fractions)
    assert fractions[2] == pytest.approx(NORMALIZE_SHARE + (1 - NORMALIZE_SHARE)
                                         * RUNNING_CAP / 2, abs=1e-4)
    assert max(fractions) < 1.0
    assert etas == [10, 8, 5, 2, 1, 1]
    done = _progress("normalized", [_part(started=T0, saved=True)],
                     now=T0 + timedelta(seconds=9))
    assert (done.fraction, done.eta_seconds, done.done) == (1.0, 0, 1)


def test_a_running_remote_part_moves_too() -> None:
    progress = _progress("submitted", [_part(started=T0)], now=T0 + timedelta(seconds=5),
                         sequential=False, queue_ms=10_000_000)
    assert progress.stage == "recognize"
    assert progress.eta_seconds == 5  # remote work does not wait for the local queue
    assert NORMALIZE_SHARE < progress.fraction < 1.0


def test_no_speed_no_eta_and_no_motion() -> None:
    progress = _progress("normalized", [_part(started=T0)], now=T0 + timedelta(seconds=5),
                         speed=None)
    assert (progress.fraction, progress.eta_seconds) == (NORMALIZE_SHARE, None)


def test_the_speed_is_a_moving_average_weighted_by_the_part_and_bounded() -> None:
    # The first measurement is taken as it is.
    assert next_real_time_factor(None, audio_ms=60_000, work_ms=6000) == pytest.approx(0.1)
    # A minute-long part moves it by the whole weight.
    assert next_real_time_factor(0.1, audio_ms=60_000, work_ms=12_000) == pytest.approx(
        0.1 + SPEED_WEIGHT * 0.1)
    # A 20-second record by a third of it.
    assert next_real_time_factor(0.1, audio_ms=20_000, work_ms=4000) == pytest.approx(
        0.1 + SPEED_WEIGHT / 3 * 0.1)
    # An outlier (a part that waited 100 s for the machine) counts as OUTLIER_RATIO off.
    assert next_real_time_factor(0.1, audio_ms=60_000, work_ms=100_000) == pytest.approx(
        0.1 + SPEED_WEIGHT * (0.1 * OUTLIER_RATIO - 0.1))
    assert next_real_time_factor(0.1, audio_ms=60_000, work_ms=0) == pytest.approx(
        0.1 + SPEED_WEIGHT * (0.1 / OUTLIER_RATIO - 0.1))
    # Under a second of audio says nothing of the speed.
    assert next_real_time_factor(0.1, audio_ms=500, work_ms=5000) == 0.1
    assert next_real_time_factor(None, audio_ms=500, work_ms=5000) is None
    # How each is counted on /metrics.
    assert sample_kind(0.1, audio_ms=60_000, work_ms=12_000) == "used"
    assert sample_kind(None, audio_ms=60_000, work_ms=100_000) == "used"
    assert sample_kind(0.1, audio_ms=60_000, work_ms=100_000) == "outlier"
    assert sample_kind(0.1, audio_ms=60_000, work_ms=0) == "outlier"
    assert sample_kind(0.1, audio_ms=500, work_ms=50) == "skipped"


def test_a_host_that_became_slower_is_learned_in_a_few_records() -> None:
    factor: float | None = 0.1
    for _ in range(12):
        factor = next_real_time_factor(factor, audio_ms=60_000, work_ms=60_000)
    assert factor == pytest.approx(1.0, rel=0.05)


def test_no_duration_known_no_eta() -> None:
    progress = progress_of(_record("uploaded", duration_ms=0), [], real_time_factor=SPEED,
                           normalize=None, planned=[], overlap_ms=0, sequential=True, now=T0)
    assert progress is not None
    assert (progress.stage, progress.eta_seconds) == ("queue", None)
