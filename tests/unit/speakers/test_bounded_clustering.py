"""Clustering long recordings: memory and time bounded, whatever the window count."""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import numpy.typing as npt
import pytest

from transcriber.providers.speakers.clustering import (
    MAX_CLUSTERED,
    absorb_small,
    agglomerate,
    cluster,
    first_appearance,
)

# The matrix of MAX_CLUSTERED^2 float64 distances (32 MB) and small change; a full
# matrix of the 20 000 windows below would be 3.2 GB.
PEAK_BOUND_BYTES = 48 << 20


def _turns(counts: list[int], *, turn: int = 40, spread: float = 0.3,
           seed: int = 0) -> tuple[npt.NDArray[np.float32], list[int]]:
    """Windows of `len(counts)` voices taking turns of about `turn` windows each."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 1, (len(counts), 256))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    left = list(counts)
    truth: list[int] = []
    while any(left):
        speaker = int(rng.choice([k for k, n in enumerate(left) if n]))
        length = min(left[speaker], int(rng.integers(turn // 2, turn * 2)))
        truth += [speaker] * length
        left[speaker] -= length
    noise = rng.normal(0, spread / 16, (len(truth), 256))
    return (centres[truth] + noise).astype(np.float32), truth


def test_twenty_thousand_windows_of_three_voices_in_bounded_memory_and_seconds() -> None:
    points, truth = _turns([9000, 7000, 4000])
    tracemalloc.start()
    started = time.perf_counter()
    labels = cluster(points)
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert first_appearance(labels) == first_appearance(truth)
    assert peak < PEAK_BOUND_BYTES, f"peak {peak / 2**20:.1f} MiB"
    assert seconds < 30, f"{seconds:.1f} s"  # 1-2 s alone on one core


def test_the_peak_does_not_grow_with_the_recording() -> None:
    peaks = []
    for total in (6000, 24_000):
        points, _ = _turns([total // 2, total // 2], seed=2)
        tracemalloc.start()
        cluster(points)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    # Four times the windows: only the per-window labels (a few hundred KB) grow.
    assert peaks[1] < peaks[0] * 1.3


@pytest.mark.parametrize("given", [2, 3, 5])
def test_a_given_count_holds_beyond_the_bound(given: int) -> None:
    points, truth = _turns([6000, 4000, 2000], seed=4)
    labels = cluster(points, num_speakers=given)
    assert len(set(labels)) == given
    if given == 3:
        assert first_appearance(labels) == first_appearance(truth)


def test_a_voice_heard_in_few_turns_is_still_found() -> None:
    # 3 % of the windows, in a handful of turns: the evenly chosen ones reach it.
    points, truth = _turns([12_000, 8000, 600], seed=6)
    labels = cluster(points)
    assert first_appearance(labels) == first_appearance(truth)


def test_within_the_bound_it_is_the_full_clustering() -> None:
    points, truth = _turns([700, 500, 300], spread=2.0, seed=8)
    assert points.shape[0] <= MAX_CLUSTERED
    # So noisy that a few windows stray into clusters of their own, which then join.
    assert len(set(agglomerate(points))) > 3
    assert cluster(points) == absorb_small(points, agglomerate(points))
    assert first_appearance(cluster(points)) == first_appearance(truth)
    assert cluster(points, num_speakers=4) == agglomerate(points, num_speakers=4)


def test_a_smaller_bound_keeps_the_same_speakers() -> None:
    points, truth = _turns([900, 600, 500], seed=9)
    assert first_appearance(cluster(points, limit=200)) == first_appearance(truth)
