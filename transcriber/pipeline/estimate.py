"""The arithmetic of an estimate: how far a running part is and how long the rest
takes, from times, audio lengths and a speed (seconds of work per second of audio).

Pure functions, no I/O and no clock of their own (`now` comes in), so a test
moves time by hand. `transcriber.pipeline.progress` puts them together.
"""

from __future__ import annotations

from datetime import datetime

# The share a running part may show before its answer is saved: the time-based
# guess never claims the part is done (only the saved answer does), and never
# reaches 100 % while the record is still on its way.
RUNNING_CAP = 0.95
# ffmpeg's normalization, seconds of work per second of audio, before it reports:
# about twice what it took in the long-recording bench (43 s for 60 min, 97 s for 3 h;
# docs/recognition.md).
NORMALIZE_REAL_TIME_FACTOR = 0.02
# A running part past its expected time still has this much left, at least: an
# estimate that ran out says "a moment", never "done" (only the saved answer is).
MIN_SECONDS_LEFT = 1.0


def elapsed_seconds(started_at: datetime | None, now: datetime) -> float:
    """Pure: seconds from `started_at` to `now` (0 without a start, never negative)."""
    return 0.0 if started_at is None else max((now - started_at).total_seconds(), 0.0)


def expected_seconds(duration_ms: int, speed: float) -> float:
    """Pure: the work `duration_ms` of audio takes at `speed`."""
    return max(duration_ms, 0) / 1000 * max(speed, 0.0)


def running_share(started_at: datetime | None, now: datetime, *, duration_ms: int,
                  speed: float) -> float:
    """Pure: the share of a part running since `started_at` that time says is done:
    the elapsed share of its expected work, growing with `now`, capped at
    `RUNNING_CAP` until its answer is saved. Not started: 0."""
    if started_at is None:
        return 0.0
    expected = expected_seconds(duration_ms, speed)
    if expected <= 0:
        return RUNNING_CAP
    return min(elapsed_seconds(started_at, now) / expected, 1.0) * RUNNING_CAP


def running_seconds_left(started_at: datetime | None, now: datetime, *, duration_ms: int,
                         speed: float) -> float:
    """Pure: how long a part running since `started_at` still needs: its expected work
    less the time spent; past that, a moment (`MIN_SECONDS_LEFT`), never nothing."""
    left = expected_seconds(duration_ms, speed) - elapsed_seconds(started_at, now)
    return max(left, MIN_SECONDS_LEFT)


def queue_wait_seconds(ahead_audio_ms: int, *, speed: float, parallel: int) -> float:
    """Pure: how long the recognition queued ahead of a record takes, `parallel`
    recognitions at a time (the local recognizer's `concurrency`)."""
    return expected_seconds(ahead_audio_ms, speed) / max(parallel, 1)
