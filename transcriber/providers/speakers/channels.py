"""Does a two-channel original carry two different signals, or one signal twice?

Measured over 50 ms frames where either channel carries sound (within 45 dB of
the file's loudest frame and above -65 dBFS, so silence and dither don't vote):

- `correlation`: the median |Pearson correlation| of the two channels per frame.
  A mono signal copied to both channels gives 1.0 whatever the gain or
  polarity; lossy joint-stereo coding of such a copy (MP3, AAC, Opus at
  speech bit rates) keeps it above 0.99; two people each on their own channel
  give near 0 (one speaks, the other channel carries noise or a faint echo).
- `level_spread`: the spread (90th minus 10th percentile) of the per-frame level
  difference between the channels, in dB. A copy differs by a constant gain
  (spread ≈ 0); a call's channels take turns being loud (spread of tens of dB).

`different` when correlation < 0.9 or level_spread > 12 dB: either alone shows
that the channels do not carry one signal. Measured (tests/unit/speakers/
test_channels.py keeps these cases): a copy, at any gain or inverted, and its
round trip through MP3 48k, AAC 48k and Opus 24k sit at (1.0, 0 dB); a call
with each speaker on a channel at (< 0.1, > 40 dB); a call with -20 dB
crosstalk at (0.997, 40 dB), caught by the spread alone. Not told apart: a
stereo room recording, where both microphones hear everybody (it is
`different`, yet each channel is not one speaker).
`one_silent` when one channel never rises above -65 dBFS: recognize the other.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

FRAME_SECONDS: Final = 0.05
SILENCE_DBFS: Final = -65.0
ACTIVE_RANGE_DB: Final = 45.0
CORRELATION_SAME: Final = 0.9
LEVEL_SPREAD_DB: Final = 12.0


class ChannelVerdict(enum.StrEnum):
    SAME = "same"
    DIFFERENT = "different"
    ONE_SILENT = "one_silent"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelReport:
    verdict: ChannelVerdict
    correlation: float
    level_spread_db: float
    active_frames: int


def _db(power: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    # Floor at -120 dBFS so digital silence does not stretch the spread without bound.
    return 10 * np.log10(power + 1e-12)


def frame_stats(
    left: npt.NDArray[np.float32], right: npt.NDArray[np.float32], sample_rate: int
) -> npt.NDArray[np.float64]:
    """Per 50 ms frame: the level of each channel (dB) and their |correlation|.

    Frames are independent, so a long file is measured chunk by chunk (a chunk a
    whole number of frames long) and only these three numbers a frame are kept.
    """
    size = max(1, int(sample_rate * FRAME_SECONDS))
    count = min(left.shape[0], right.shape[0]) // size
    a = left[: count * size].astype(np.float64).reshape(count, size)
    b = right[: count * size].astype(np.float64).reshape(count, size)
    level_a, level_b = _db((a**2).mean(axis=1)), _db((b**2).mean(axis=1))
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    denominator = np.sqrt((a**2).sum(axis=1) * (b**2).sum(axis=1)) + 1e-20
    correlation = np.abs((a * b).sum(axis=1)) / denominator
    return np.stack([level_a, level_b, correlation], axis=1)


def judge(stats: npt.NDArray[np.float64]) -> ChannelReport:
    """The verdict over the frames `frame_stats` measured (of one chunk or many)."""
    count = stats.shape[0]
    level_a, level_b, correlations = stats[:, 0], stats[:, 1], stats[:, 2]
    if count == 0 or level_a.max() < SILENCE_DBFS or level_b.max() < SILENCE_DBFS:
        silent = count > 0 and (level_a.max() >= SILENCE_DBFS or level_b.max() >= SILENCE_DBFS)
        return ChannelReport(
            verdict=ChannelVerdict.ONE_SILENT if silent else ChannelVerdict.SAME,
            correlation=0.0,
            level_spread_db=0.0,
            active_frames=0,
        )
    loudest = np.maximum(level_a, level_b)
    active = (loudest > SILENCE_DBFS) & (loudest > loudest.max() - ACTIVE_RANGE_DB)
    correlation = float(np.median(correlations[active]))
    difference = level_a[active] - level_b[active]
    spread = float(np.percentile(difference, 90) - np.percentile(difference, 10))
    different = correlation < CORRELATION_SAME or spread > LEVEL_SPREAD_DB
    return ChannelReport(
        verdict=ChannelVerdict.DIFFERENT if different else ChannelVerdict.SAME,
        correlation=round(correlation, 4),
        level_spread_db=round(spread, 2),
        active_frames=int(active.sum()),
    )


def compare_channels(
    left: npt.NDArray[np.float32], right: npt.NDArray[np.float32], sample_rate: int
) -> ChannelReport:
    """Measure the two channels of one recording (float samples, full scale 1.0)."""
    return judge(frame_stats(left, right, sample_rate))


class ChannelMeter:
    """Measures interleaved stereo samples fed in chunks of any size (ffmpeg's pipe):
    memory grows by 24 bytes per 50 ms frame, not with the samples."""

    def __init__(self, sample_rate: int) -> None:
        self._rate = sample_rate
        self._frame = max(1, int(sample_rate * FRAME_SECONDS)) * 2
        self._rest = np.zeros(0, dtype=np.float32)
        self._stats: list[npt.NDArray[np.float64]] = []

    def feed(self, interleaved: npt.NDArray[np.float32]) -> None:
        samples = np.concatenate([self._rest, interleaved])
        whole = samples.shape[0] // self._frame * self._frame
        self._rest = samples[whole:].copy()
        if whole:
            pairs = samples[:whole].reshape(-1, 2)
            self._stats.append(frame_stats(pairs[:, 0], pairs[:, 1], self._rate))

    def report(self) -> ChannelReport:
        stats = np.concatenate(self._stats) if self._stats else np.zeros((0, 3))
        return judge(stats)


def kept_channels(report: ChannelReport | None) -> int:
    """Pure: the channels the normalized copy keeps: both only when they differ (each
    is then recognized as its own speaker); a copy, a silent channel or a mono
    original (no report) is mixed down to one, as before stereo was told apart."""
    return 2 if report is not None and report.verdict is ChannelVerdict.DIFFERENT else 1
